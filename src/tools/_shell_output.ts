/**
 * The shell's output as the model sees it: bounded (head and tail kept, the middle counted) and clean
 * (escape sequences and control characters removed, invalid UTF-8 replaced, line endings normalised).
 * Private to src/tools/.
 *
 * @module
 */

/** Characters of output kept: the first 2,000 and the last 8,000, with a count of what was cut. */
export const BASH_OUTPUT_LIMIT = 10_000;
const HEAD_CHARS = 2_000;
const TAIL_CHARS = BASH_OUTPUT_LIMIT - HEAD_CHARS;

/** Text kept of a command's output, and how many characters were cut from its middle. */
export interface Output {
  text: string;
  /** Characters cut from the middle. */
  cut: number;
}

/**
 * Keeps the first HEAD_CHARS and a rolling last TAIL_CHARS of the output, so memory stays bounded
 * however much a command prints.
 */
export class OutputCollector {
  #head = "";
  #headFull = false;
  #tail: string[] = [];
  #tailLength = 0;
  #total = 0;

  push(text: string): void {
    if (text === "") return;
    this.#total += text.length;
    if (!this.#headFull) {
      let room = HEAD_CHARS - this.#head.length;
      if (text.length <= room) {
        this.#head += text;
        return;
      }
      if (isHighSurrogate(text.charCodeAt(room - 1))) room -= 1;
      this.#head += text.slice(0, room);
      text = text.slice(room);
      this.#headFull = true;
    }
    this.#tail.push(text);
    this.#tailLength += text.length;
    if (this.#tailLength > 4 * TAIL_CHARS) {
      const kept = this.#tail.join("").slice(-TAIL_CHARS);
      this.#tail = [kept];
      this.#tailLength = kept.length;
    }
  }

  finish(): Output {
    const tail = this.#tail.join("");
    if (this.#total <= BASH_OUTPUT_LIMIT) return { text: this.#head + tail, cut: 0 };
    let kept = tail.slice(-TAIL_CHARS);
    if (isLowSurrogate(kept.charCodeAt(0))) kept = kept.slice(1);
    const cut = this.#total - this.#head.length - kept.length;
    const marker = `\n... [${cut} characters cut from the middle of the output] ...\n`;
    return { text: this.#head + marker + kept, cut };
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

// CSI, OSC (ended by BEL or ST), DCS/SOS/PM/APC strings, other two-character escapes (not the
// introducers [ ] P X ^ _, so an unfinished sequence is not mistaken for one), and 8-bit CSI.
const ANSI_SEQUENCE =
  // deno-lint-ignore no-control-regex -- matching escape sequences is the point
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-OQ-WYZ\\`-~])|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and newline (carriage returns are handled first), DEL and C1 controls.
// deno-lint-ignore no-control-regex -- removing control characters is the point
const CONTROL_CHARACTERS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** An escape sequence this long without its end is not one: its ESC is dropped as a stray control. */
const MAX_PENDING_ESCAPE = 1024;

/**
 * Turns a byte stream into clean text: invalid UTF-8 becomes U+FFFD, escape sequences (even split
 * across chunks) and other control characters are removed, CRLF and lone CR become LF.
 */
export class TextSanitizer {
  #decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  #pending = "";

  write(bytes: Uint8Array): string {
    const text = this.#pending + this.#decoder.decode(bytes, { stream: true });
    const split = incompleteSuffixStart(text);
    this.#pending = text.slice(split);
    return clean(text.slice(0, split));
  }

  end(): string {
    const text = this.#pending + this.#decoder.decode();
    this.#pending = "";
    return clean(text);
  }
}

/** Where a trailing fragment starts that the next chunk may complete (an escape sequence, or CR before LF). */
function incompleteSuffixStart(text: string): number {
  if (text.endsWith("\r")) return text.length - 1;
  const escape = Math.max(text.lastIndexOf("\x1b"), text.lastIndexOf("\x9b"));
  if (escape === -1 || text.length - escape > MAX_PENDING_ESCAPE) return text.length;
  ANSI_SEQUENCE.lastIndex = escape;
  const match = ANSI_SEQUENCE.exec(text);
  ANSI_SEQUENCE.lastIndex = 0;
  if (match !== null && match.index === escape) return text.length;
  return escape;
}

function clean(text: string): string {
  if (text.includes("\x1b") || text.includes("\x9b")) text = text.replace(ANSI_SEQUENCE, "");
  if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
  return text.replace(CONTROL_CHARACTERS, "");
}
