/**
 * Turns the bytes a terminal sends in raw mode into key events. Input arrives in chunks that may end anywhere —
 * inside a UTF-8 character, an escape sequence or a bracketed paste — so the decoder keeps what it cannot read
 * yet and says what it is waiting for; the reader calls `flush()` once nothing more arrived within its timeout,
 * which is how a lone Esc press is told from the start of an escape sequence.
 *
 * What is understood:
 * - Text: UTF-8 (invalid bytes become U+FFFD). A run of printable characters is one `text` event.
 * - Control bytes: CR → Enter; LF → Ctrl+J; TAB → Tab; DEL and BS → Backspace; NUL → Ctrl+Space;
 *   0x01–0x1A → Ctrl+A…Ctrl+Z (Ctrl+C, Ctrl+D arrive this way in raw mode).
 * - Alt: ESC before a key (`ESC b` → Alt+B, `ESC DEL` → Alt+Backspace, `ESC CR` → Alt+Enter, which is what
 *   iTerm2, VS Code and terminals set up for Claude Code send for Shift+Enter); `ESC ESC [ …` → Alt + the key.
 * - CSI `ESC [ … final` and SS3 `ESC O x`: arrows (A B C D), Home/End (H F, `1~ 7~`/`4~ 8~`), Insert `2~`,
 *   Delete `3~`, Page Up/Down `5~ 6~`, Shift+Tab `Z`, keypad Enter `ESC O M`; xterm modifiers as the second
 *   parameter (`ESC [1;5C` is Ctrl+Right; the value minus one is a bit set: Shift 1, Alt 2, Ctrl 4).
 * - Keys sent as code points: the kitty keyboard protocol `CSI code;mod u` (`ESC [13;2u` is Shift+Enter) and
 *   xterm's modifyOtherKeys `CSI 27;mod;code ~` (`ESC [27;2;13~` is Shift+Enter).
 * - Bracketed paste: everything between `ESC [200~` and `ESC [201~` is one `paste` event with CR LF and CR
 *   turned into LF, however the chunks split it; control characters inside are kept (the editor shows them
 *   harmlessly).
 * Anything else that is a complete sequence becomes an `unknown` event, which an editor ignores.
 *
 * @module
 */
import { concatBytes, indexOfBytes, joinBytes } from "../../common/bytes.ts";

/** Letters, which arrive with Ctrl (control bytes) or Alt (after ESC). */
export type Letter =
  | "a"
  | "b"
  | "c"
  | "d"
  | "e"
  | "f"
  | "g"
  | "h"
  | "i"
  | "j"
  | "k"
  | "l"
  | "m"
  | "n"
  | "o"
  | "p"
  | "q"
  | "r"
  | "s"
  | "t"
  | "u"
  | "v"
  | "w"
  | "x"
  | "y"
  | "z";

/** A key that is not text. */
export type KeyName =
  | "enter"
  | "tab"
  | "backspace"
  | "delete"
  | "insert"
  | "escape"
  | "space"
  | "up"
  | "down"
  | "left"
  | "right"
  | "home"
  | "end"
  | "page-up"
  | "page-down"
  | Letter;

/** A key press with its modifiers, as far as the terminal reports them. */
export interface KeyPress {
  type: "key";
  name: KeyName;
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
}

/** One decoded piece of input. */
export type KeyEvent =
  | { type: "text"; text: string }
  | { type: "paste"; text: string }
  | KeyPress
  | { type: "unknown"; sequence: string };

/** What the decoder holds that it cannot decode yet: nothing, part of a key, or an open bracketed paste. */
export type PendingInput = "none" | "sequence" | "paste";

/** A key's name with its modifiers, in the order ctrl, alt, shift: "ctrl-a", "shift-enter", "alt-left", "up". */
export function describeKey(key: KeyPress): string {
  return `${key.ctrl ? "ctrl-" : ""}${key.alt ? "alt-" : ""}${key.shift ? "shift-" : ""}${key.name}`;
}

const ESC = 0x1b;
const PASTE_END = new Uint8Array([0x1b, 0x5b, 0x32, 0x30, 0x31, 0x7e]); // ESC [ 2 0 1 ~
/** An escape sequence longer than this without its final byte is garbage, not a key still arriving. */
const MAX_SEQUENCE_BYTES = 32;

/** What one step of decoding produced: an event, the start of a paste, or nothing (a stray paste end). */
type Produced = KeyEvent | "paste-start" | null;
interface Step {
  produced: Produced;
  next: number;
}

/** A streaming decoder of terminal input; see the module documentation for what it understands. */
export class KeyDecoder {
  #buffer: Uint8Array = new Uint8Array(0);
  #pasting = false;
  #pasteChunks: Uint8Array[] = [];
  #textDecoder = new TextDecoder();

  /** What is held back until more input or `flush()`. */
  get pending(): PendingInput {
    if (this.#pasting) return "paste";
    return this.#buffer.length > 0 ? "sequence" : "none";
  }

  /** Decodes a chunk, returning the events it completes; an incomplete tail is kept for the next chunk. */
  feed(chunk: Uint8Array): KeyEvent[] {
    this.#buffer = concatBytes(this.#buffer, chunk);
    return this.#drain(false);
  }

  /**
   * Decodes what is held back as if no more input would follow: a lone ESC becomes Escape, a partial
   * sequence its best reading, a partial character U+FFFD, and an open paste a paste of what arrived.
   */
  flush(): KeyEvent[] {
    return this.#drain(true);
  }

  #drain(final: boolean): KeyEvent[] {
    const events: KeyEvent[] = [];
    const bytes = this.#buffer;
    let index = 0;
    while (index < bytes.length) {
      if (this.#pasting) {
        const end = indexOfBytes(bytes, PASTE_END, index);
        if (end === -1) {
          const keep = final ? 0 : partialMarkerLength(bytes, index);
          this.#pasteChunks.push(bytes.slice(index, bytes.length - keep));
          index = bytes.length - keep;
          break;
        }
        this.#pasteChunks.push(bytes.slice(index, end));
        events.push(this.#endPaste());
        index = end + PASTE_END.length;
        continue;
      }
      const step = decodeKey(bytes, index, final, this.#textDecoder);
      if (step === null) break;
      index = step.next;
      if (step.produced === "paste-start") this.#pasting = true;
      else if (step.produced !== null) pushMerged(events, step.produced);
    }
    if (final && this.#pasting) events.push(this.#endPaste());
    this.#buffer = bytes.slice(index);
    return events;
  }

  #endPaste(): KeyEvent {
    const text = this.#textDecoder.decode(joinBytes(this.#pasteChunks)).replace(/\r\n?/g, "\n");
    this.#pasting = false;
    this.#pasteChunks = [];
    return { type: "paste", text };
  }
}

/** Appends an event, joining it to a text event just before it. */
function pushMerged(events: KeyEvent[], event: KeyEvent): void {
  const last = events.at(-1);
  if (event.type === "text" && last?.type === "text") {
    last.text += event.text;
    return;
  }
  events.push(event);
}

/** Decodes the key at `index`, or returns null when its bytes have not all arrived (and `final` is false). */
function decodeKey(bytes: Uint8Array, index: number, final: boolean, decoder: TextDecoder): Step | null {
  const byte = bytes[index] ?? 0;
  if (byte === ESC) return decodeEscape(bytes, index, final);
  if (byte < 0x20 || byte === 0x7f) return { produced: controlKey(byte, false), next: index + 1 };
  if (byte < 0x80) {
    let end = index;
    while (end < bytes.length && (bytes[end] ?? 0) >= 0x20 && (bytes[end] ?? 0) < 0x7f) end++;
    return { produced: text(decoder.decode(bytes.subarray(index, end))), next: end };
  }
  return decodeUtf8(bytes, index, final, decoder);
}

function decodeUtf8(bytes: Uint8Array, index: number, final: boolean, decoder: TextDecoder): Step | null {
  const lead = bytes[index] ?? 0;
  const length = lead >= 0xc2 && lead <= 0xdf
    ? 2
    : lead >= 0xe0 && lead <= 0xef
    ? 3
    : lead >= 0xf0 && lead <= 0xf4
    ? 4
    : 0;
  if (length === 0) return { produced: text("\ufffd"), next: index + 1 };
  const available = Math.min(length, bytes.length - index);
  for (let offset = 1; offset < available; offset++) {
    const byte = bytes[index + offset] ?? 0;
    if (byte < 0x80 || byte > 0xbf) return { produced: text("\ufffd"), next: index + 1 };
  }
  if (available < length) return final ? { produced: text("\ufffd"), next: bytes.length } : null;
  // The decoder turns overlong forms and surrogates into U+FFFD.
  return { produced: text(decoder.decode(bytes.subarray(index, index + length))), next: index + length };
}

function decodeEscape(bytes: Uint8Array, index: number, final: boolean): Step | null {
  if (index + 1 >= bytes.length) return final ? { produced: key("escape"), next: index + 1 } : null;
  const next = bytes[index + 1] ?? 0;
  if (next === 0x5b) return decodeCsi(bytes, index, final);
  if (next === 0x4f) return decodeSs3(bytes, index, final);
  if (next === ESC) {
    // ESC ESC [ … is how some terminals (macOS Terminal, rxvt) send Alt with an arrow.
    if (index + 2 >= bytes.length) return final ? { produced: key("escape"), next: index + 1 } : null;
    const third = bytes[index + 2];
    if (third !== 0x5b && third !== 0x4f) return { produced: key("escape"), next: index + 1 };
    const inner = third === 0x5b ? decodeCsi(bytes, index + 1, final) : decodeSs3(bytes, index + 1, final);
    if (inner === null) return null;
    return { produced: withAlt(inner.produced, bytes, index, inner.next), next: inner.next };
  }
  if (next < 0x20 || next === 0x7f) return { produced: controlKey(next, true), next: index + 2 };
  if (next >= 0x80) return { produced: key("escape"), next: index + 1 };
  const char = String.fromCharCode(next);
  if (char === " ") return { produced: key("space", { alt: true }), next: index + 2 };
  const lower = char.toLowerCase();
  if (isLetter(lower)) {
    return { produced: key(lower, { alt: true, shift: char !== lower }), next: index + 2 };
  }
  return { produced: unknown(bytes, index, index + 2), next: index + 2 };
}

/** Decodes `ESC [ params intermediates final` starting at the ESC. */
function decodeCsi(bytes: Uint8Array, index: number, final: boolean): Step | null {
  let end = index + 2;
  while (end < bytes.length && inRange(bytes[end], 0x30, 0x3f)) end++;
  const paramsEnd = end;
  while (end < bytes.length && inRange(bytes[end], 0x20, 0x2f)) end++;
  if (end >= bytes.length) {
    if (!final && end - index < MAX_SEQUENCE_BYTES) return null;
    return { produced: unknown(bytes, index, end), next: end };
  }
  const finalByte = bytes[end] ?? 0;
  // A byte that cannot end a sequence breaks it off; that byte is read again as input of its own.
  if (!inRange(finalByte, 0x40, 0x7e)) return { produced: unknown(bytes, index, end), next: end };
  const params = String.fromCharCode(...bytes.subarray(index + 2, paramsEnd));
  const intermediates = paramsEnd < end;
  const produced = intermediates
    ? unknown(bytes, index, end + 1)
    : csiKey(params, String.fromCharCode(finalByte));
  return { produced: produced === undefined ? unknown(bytes, index, end + 1) : produced, next: end + 1 };
}

const CURSOR_KEYS: Readonly<Record<string, KeyName>> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
};

const TILDE_KEYS: Readonly<Record<number, KeyName>> = {
  1: "home",
  2: "insert",
  3: "delete",
  4: "end",
  5: "page-up",
  6: "page-down",
  7: "home",
  8: "end",
};

/** The key a CSI sequence stands for; undefined when it names none this decoder knows. */
function csiKey(params: string, finalChar: string): Produced | undefined {
  if (/^[<=>?]/.test(params)) return undefined;
  // Kitty adds sub-parameters after ":" (alternate keys, event types); the first value is the one that counts.
  const fields = params.split(";").map((field) => Number.parseInt(field.split(":")[0] ?? "", 10));
  const first = fields[0];
  const modifier = fields[1];
  const cursorKey = CURSOR_KEYS[finalChar];
  if (cursorKey !== undefined) return key(cursorKey, modifiers(modifier));
  if (finalChar === "Z") return key("tab", { shift: true });
  if (finalChar === "u" && first !== undefined) return codePointKey(first, modifier);
  if (finalChar !== "~" || first === undefined) return undefined;
  if (first === 200) return "paste-start";
  if (first === 201) return null;
  if (first === 27) return fields[2] === undefined ? undefined : codePointKey(fields[2], modifier);
  const name = TILDE_KEYS[first];
  return name === undefined ? undefined : key(name, modifiers(modifier));
}

/** A key reported as a Unicode code point with a modifier parameter (kitty `u`, xterm `27;…~`). */
function codePointKey(code: number, modifier: number | undefined): KeyEvent | undefined {
  const flags = modifiers(modifier);
  const named: Partial<Record<number, KeyName>> = {
    8: "backspace",
    9: "tab",
    13: "enter",
    27: "escape",
    32: "space",
    127: "backspace",
  };
  const name = named[code];
  if (name !== undefined) return key(name, flags);
  if (!Number.isInteger(code) || code < 0x20 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return undefined;
  }
  const char = String.fromCodePoint(code);
  const lower = char.toLowerCase();
  if ((flags.ctrl || flags.alt) && isLetter(lower)) {
    return key(lower, { ...flags, shift: flags.shift || char !== lower });
  }
  if (flags.ctrl || flags.alt) return undefined;
  return text(char);
}

/** Decodes `ESC O x` (keys in application cursor mode). */
function decodeSs3(bytes: Uint8Array, index: number, final: boolean): Step | null {
  if (index + 2 >= bytes.length) {
    // ESC O and nothing after it is what Alt+Shift+O sends.
    return final ? { produced: key("o", { alt: true, shift: true }), next: index + 2 } : null;
  }
  const char = String.fromCharCode(bytes[index + 2] ?? 0);
  const name = char === "M" ? "enter" : CURSOR_KEYS[char];
  return { produced: name === undefined ? unknown(bytes, index, index + 3) : key(name), next: index + 3 };
}

/** The key of a control byte (below 0x20, or DEL). */
function controlKey(byte: number, alt: boolean): KeyEvent {
  switch (byte) {
    case 0x00:
      return key("space", { ctrl: true, alt });
    case 0x08:
    case 0x7f:
      return key("backspace", { alt });
    case 0x09:
      return key("tab", { alt });
    case 0x0d:
      return key("enter", { alt });
  }
  if (byte <= 0x1a) {
    const letter = String.fromCharCode(byte + 0x60);
    if (isLetter(letter)) return key(letter, { ctrl: true, alt });
  }
  return { type: "unknown", sequence: (alt ? "\x1b" : "") + String.fromCharCode(byte) };
}

function withAlt(produced: Produced, bytes: Uint8Array, start: number, end: number): Produced {
  if (produced !== null && produced !== "paste-start" && produced.type === "key") {
    return { ...produced, alt: true };
  }
  return unknown(bytes, start, end);
}

/** The modifiers encoded in an xterm modifier parameter: one plus a bit set of Shift 1, Alt 2, Ctrl 4. */
function modifiers(parameter: number | undefined): { ctrl: boolean; alt: boolean; shift: boolean } {
  const bits = parameter === undefined || Number.isNaN(parameter) || parameter < 1 ? 0 : parameter - 1;
  return { shift: (bits & 1) !== 0, alt: (bits & 2) !== 0, ctrl: (bits & 4) !== 0 };
}

function key(name: KeyName, flags: Partial<{ ctrl: boolean; alt: boolean; shift: boolean }> = {}): KeyPress {
  return {
    type: "key",
    name,
    ctrl: flags.ctrl ?? false,
    alt: flags.alt ?? false,
    shift: flags.shift ?? false,
  };
}

function text(value: string): KeyEvent {
  return { type: "text", text: value };
}

function unknown(bytes: Uint8Array, start: number, end: number): KeyEvent {
  return { type: "unknown", sequence: String.fromCharCode(...bytes.subarray(start, end)) };
}

function isLetter(char: string): char is Letter {
  return char.length === 1 && char >= "a" && char <= "z";
}

function inRange(byte: number | undefined, low: number, high: number): boolean {
  return byte !== undefined && byte >= low && byte <= high;
}

/** How many bytes at the end of `bytes` could be the start of the paste end marker. */
function partialMarkerLength(bytes: Uint8Array, from: number): number {
  for (let length = Math.min(PASTE_END.length - 1, bytes.length - from); length > 0; length--) {
    const start = bytes.length - length;
    if (PASTE_END.subarray(0, length).every((byte, offset) => bytes[start + offset] === byte)) return length;
  }
  return 0;
}
