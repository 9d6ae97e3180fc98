/**
 * Text for a terminal: what a line of model or API text must not do (send escapes, move the cursor) and
 * how many cells it takes. Shared by the status line and the stderr reporter.
 *
 * @module
 */

/** Which end of a text to keep when it must be cut: the start of a command, the end of a path. */
export type Keep = "start" | "end";

/** Cuts text to `width` cells, keeping its start or its end and marking the cut with "…". */
export function cut(text: string, width: number, keep: Keep): string {
  if (displayWidth(text) <= width) return text;
  const chars = keep === "start" ? [...text] : [...text].reverse();
  const kept: string[] = [];
  let used = 1; // the ellipsis
  for (const char of chars) {
    used += cellWidth(char);
    if (used > width) break;
    kept.push(char);
  }
  return keep === "start" ? `${kept.join("")}…` : `…${kept.reverse().join("")}`;
}

export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += cellWidth(char);
  return width;
}

/**
 * Code points of the main East Asian wide blocks and of emoji, which terminals draw two cells wide. Counting
 * any other code point (combining marks included) as one cell can only overcount, which cuts early but never
 * wraps.
 */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1faff],
  [0x20000, 0x3fffd],
];

function cellWidth(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  // Combining marks and variation selectors draw on the character before them.
  if ((code >= 0x300 && code <= 0x36f) || code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f)) return 0;
  return WIDE_RANGES.some(([low, high]) => code >= low && code <= high) ? 2 : 1;
}

/**
 * Replaces what a terminal would act on instead of showing, so that text from the model (a command, a path, a
 * tool name) or the API cannot move the cursor or send escapes: C0 controls become their control pictures
 * (ESC → ␛, CR → ␍, LF → ␊), DEL becomes ␡, and C1 controls, bidirectional overrides, invisible separators
 * and lone surrogates become �. A tab becomes a space.
 */
export function sanitize(text: string): string {
  let clean = "";
  for (const char of text) clean += visible(char);
  return clean;
}

/** What JSON.stringify leaves raw that a terminal may act on: C1 controls, line separators, bidi controls. */
const JSON_INVISIBLE = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text with every character a terminal may act on or reorder escaped (`\u202e`): the same value for a
 * parser, and nothing that moves the display of whoever reads it on a terminal. JSON.stringify escapes C0
 * controls itself; these can appear only inside strings, where an escape means the same character.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(JSON_INVISIBLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * `sanitize` line by line: the line breaks stay, nothing else a terminal would act on does. For the text
 * mewcode's commands print, which may quote what a repository holds (its settings' rules, its folder's name).
 */
export function sanitizeLines(text: string): string {
  return text.split("\n").map(sanitize).join("\n");
}

function visible(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code === 0x09) return " ";
  if (code < 0x20) return String.fromCodePoint(0x2400 + code);
  if (code === 0x7f) return "␡";
  if (isInvisibleControl(code)) return "\ufffd";
  return char;
}

function isInvisibleControl(code: number): boolean {
  return (code >= 0x80 && code <= 0x9f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x206f) ||
    code === 0xfeff ||
    (code >= 0xd800 && code <= 0xdfff);
}
