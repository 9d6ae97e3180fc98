/**
 * Text for a terminal: what a line of model or API text must not do (send escapes, move the cursor) and
 * how many cells it takes. Shared by the status line and the stderr reporter.
 *
 * @module
 */
import { EMOJI_STYLE, escapeHiddenInJson, HIDDEN_RANGES } from "../common/hidden_chars.ts";

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

// C0 controls, DEL and lone surrogates too: JSON.stringify escapes those itself.
const TERMINAL_HIDDEN = new RegExp(
  `(${EMOJI_STYLE})|[\\u0000-\\u001f\\u007f\\ud800-\\udfff${HIDDEN_RANGES}]`,
  "gu",
);

/**
 * Replaces what a terminal would act on instead of showing, so that text from the model (a command, a path, a
 * tool name) or the API cannot move the cursor, send escapes or hide part of itself: C0 controls become their
 * control pictures (ESC → ␛, CR → ␍, LF → ␊), DEL becomes ␡, and C1 controls, bidirectional controls,
 * invisible characters (zero-width ones, the zero-width joiner of emoji sequences included; fillers; tag
 * characters; variation selectors, except an emoji's presentation selector) and lone surrogates become �.
 * A tab becomes a space.
 */
export function sanitize(text: string): string {
  return text.replace(TERMINAL_HIDDEN, visible);
}

/** JSON text with every character a terminal may act on, reorder or hide escaped (see `escapeHiddenInJson`). */
export const terminalSafeJson: (json: string) => string = escapeHiddenInJson;

/**
 * `sanitize` line by line: the line breaks stay, nothing else a terminal would act on does. For the text
 * mewcode's commands print, which may quote what a repository holds (its settings' rules, its folder's name).
 */
export function sanitizeLines(text: string): string {
  return text.split("\n").map(sanitize).join("\n");
}

function visible(match: string, emoji: string | undefined): string {
  if (emoji !== undefined) return emoji;
  const code = match.codePointAt(0) ?? 0;
  if (code === 0x09) return " ";
  if (code < 0x20) return String.fromCodePoint(0x2400 + code);
  if (code === 0x7f) return "␡";
  return "\ufffd";
}
