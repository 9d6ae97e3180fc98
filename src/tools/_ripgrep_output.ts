/**
 * Reading what the ripgrep script printed (`src/sandbox/ripgrep_command.ts`): the header, the lines of each
 * file (`path\0N:OFFSET:text` for a match, `path\0N-OFFSET-text` for context, `--` between groups) and the
 * `--stats` block; anything on standard error is one of ripgrep's errors. A line of any other shape makes the
 * report unusable (`malformed`), and the caller then searches itself.
 *
 * ripgrep searches every file as text with a second pattern, `\x00`, so every line holding a NUL byte is
 * printed: the first such line of a file locates the file's first NUL byte, which tells binary files apart.
 *
 * The output is read as bytes, as it arrives (`RipgrepOutputReader.push`), and only what the report needs is
 * kept: each printed line of a text file, decoded on its own (a line holds no part of another's UTF-8
 * sequence). Reports run to millions of bytes, and they were once held three times over: the bytes, the text
 * (in two bytes per character as soon as one invalid sequence in a binary file's line became U+FFFD), and
 * slices of it. The lines of a file known to be binary are never decoded, and the first NUL byte's offset is
 * exact.
 *
 * @module
 */
import { joinBytes } from "../common/bytes.ts";

/** What ripgrep printed for one file. */
export interface RipgrepFile {
  /** Numbers of the printed lines kept (matches and their context), ascending as ripgrep prints them. */
  numbers: number[];
  /** The text of each printed line kept, without its line break. */
  texts: string[];
  /** Indexes (into `numbers` and `texts`) of the lines kept that ripgrep reported as matching. */
  matches: number[];
  /**
   * Matching lines not kept, which match for sure: without a NUL byte, and short (see the reader's
   * `textsAbove`); always 0 when every line is kept.
   */
  sureMatches: number;
  /**
   * The offset in bytes of the file's first NUL byte, from the start ripgrep saw (after a UTF-8 BOM), or null
   * when it has none. When it lies below the reader's `binaryBelow`, the file is binary and its lines are
   * dropped: `numbers`, `texts` and `matches` are empty.
   */
  nul: number | null;
}

/** Everything the script printed, by kind. */
export interface RipgrepReport {
  /** The directory the script searched (its real path). */
  start: string;
  /** The flag the script chose about parent ignore files: "--no-ignore-parent" or "". */
  parentFlag: string;
  /** Files with printed lines, by path relative to the start. */
  files: Map<string, RipgrepFile>;
  /** "N files searched" of `--stats`, or null when missing. */
  searched: number | null;
  /** "N bytes searched" of `--stats` (with `--text`, the sizes of the searched files added up), or null. */
  bytesSearched: number | null;
  /** Lines on standard error: ripgrep's errors. */
  errors: string[];
  /** Whether a line had an unknown shape. */
  malformed: boolean;
}

const HEADER = "mewcode-rg\0";
const STATS_LINE =
  /^(?:\d+ (?:matches|matched lines|files contained matches|bytes printed)|[\d.]+ seconds(?: spent searching)?)$/;
const SEARCHED = /^(\d+) files searched$/;
const BYTES_SEARCHED = /^(\d+) bytes searched$/;
const NEWLINE = 0x0a;
const NUL = 0x00;
const COLON = 0x3a;
const DASH = 0x2d;

/** Reads the script's standard output as it arrives, a piece at a time (`push`), then its end (`finish`). */
export class RipgrepOutputReader {
  #report: RipgrepReport = {
    start: "",
    parentFlag: "",
    files: new Map(),
    searched: null,
    bytesSearched: null,
    errors: [],
    malformed: false,
  };
  #limit: number;
  #binaryBelow: number;
  // A line may begin with U+FEFF: it is text, not a byte order mark to drop.
  #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Bytes pushed so far. */
  #bytes = 0;
  /** The pieces of a line whose end has not arrived yet. */
  #pending: Uint8Array[] = [];
  #headerRead = false;
  /** Set after a malformed header: nothing else is read. */
  #skipping = false;
  /** The file of the last line read, and its line prefix (the path and its NUL) in `#key`'s first bytes. */
  #file: RipgrepFile | null = null;
  #key = new Uint8Array(256);
  #keyLength = 0;
  /** The file whose lines are being read (a `--` between groups does not end it). */
  #open: RipgrepFile | null = null;
  #textsAbove: number;

  /**
   * `limit`: bytes read at most (more makes the report `overflowed`); `binaryBelow`: a file whose first NUL
   * byte lies below this offset is binary, and its lines are not kept; `textsAbove`: matching lines without a
   * NUL byte of at most this many bytes are only counted (`sureMatches`), for a caller to whom such a line's
   * length says all (an exact pattern, no lines shown: ripgrep printed a line without a NUL byte for the
   * pattern). Default: all are kept.
   */
  constructor(options: { limit?: number; binaryBelow?: number; textsAbove?: number } = {}) {
    this.#limit = options.limit ?? Infinity;
    this.#binaryBelow = options.binaryBelow ?? 0;
    this.#textsAbove = options.textsAbove ?? -1;
  }

  /** Whether more than the limit arrived (the rest was not read). */
  get overflowed(): boolean {
    return this.#bytes > this.#limit;
  }

  /** Reads the next piece of standard output (whose buffer the caller may reuse: what is kept is copied). */
  push(bytes: Uint8Array): void {
    if (bytes.length === 0 || this.overflowed || this.#skipping) return;
    this.#bytes += bytes.length;
    if (this.overflowed) {
      this.#pending = [];
      this.#report.files.clear();
      return;
    }
    let at = 0;
    if (this.#pending.length > 0) {
      const end = bytes.indexOf(NEWLINE);
      if (end === -1) {
        this.#pending.push(bytes.slice());
        return;
      }
      const line = joinBytes([...this.#pending, bytes.subarray(0, end)]);
      this.#pending = [];
      this.#line(line, 0, line.length);
      at = end + 1;
    }
    while (at < bytes.length && !this.#skipping) {
      const end = bytes.indexOf(NEWLINE, at);
      if (end === -1) {
        // A copy: the piece itself is not kept.
        this.#pending.push(bytes.slice(at));
        return;
      }
      this.#line(bytes, at, end);
      at = end + 1;
    }
  }

  /** The report, once the script has ended: `rest` is output not pushed yet, `stderr` its standard error. */
  finish(rest: Uint8Array | string, stderr: string): RipgrepReport {
    this.push(typeof rest === "string" ? new TextEncoder().encode(rest) : rest);
    const report = this.#report;
    // The last line may lack its line break; the header may not.
    if (!this.#skipping && this.#headerRead && this.#pending.length > 0) {
      const line = joinBytes(this.#pending);
      this.#line(line, 0, line.length);
    }
    this.#pending = [];
    if (this.#open !== null) close(this.#open);
    this.#open = null;
    if (!this.#headerRead) report.malformed = true;
    report.errors = stderr.split("\n").filter((line) => line !== "");
    return report;
  }

  #line(bytes: Uint8Array, at: number, end: number): void {
    const report = this.#report;
    if (!this.#headerRead) {
      this.#headerRead = true;
      const header = this.#decoder.decode(bytes.subarray(at, end));
      if (!header.startsWith(HEADER)) {
        report.malformed = true;
        this.#skipping = true;
        return;
      }
      [report.start = "", report.parentFlag = ""] = header.slice(HEADER.length).split("\0");
      return;
    }
    let textAt = -1;
    if (this.#file !== null && this.#keyAt(bytes, at, end)) {
      textAt = at + this.#keyLength;
    } else {
      // Past `end` it is the next line's.
      const nul = bytes.indexOf(NUL, at);
      if (nul > at && nul < end) {
        this.#setKey(bytes, at, nul + 1);
        this.#file = this.#enter(relative(this.#decoder.decode(bytes.subarray(at, nul))));
        textAt = nul + 1;
      }
    }
    if (textAt !== -1) {
      if (!this.#addLine(this.#file!, bytes, textAt, end)) report.malformed = true;
      return;
    }
    const line = this.#decoder.decode(bytes.subarray(at, end));
    this.#file = null;
    if (line === "" || line === "--" || STATS_LINE.test(line)) return;
    const searched = SEARCHED.exec(line);
    if (searched !== null) {
      report.searched = Number(searched[1]);
      return;
    }
    const bytesSearched = BYTES_SEARCHED.exec(line);
    if (bytesSearched !== null) {
      report.bytesSearched = Number(bytesSearched[1]);
      return;
    }
    report.malformed = true;
  }

  /** The file of a line's path, which the following lines are of. */
  #enter(path: string): RipgrepFile {
    const files = this.#report.files;
    let file = files.get(path);
    if (file !== undefined && file === this.#open) return file;
    if (this.#open !== null) close(this.#open);
    if (file === undefined) {
      file = { numbers: NONE, texts: NONE, matches: NONE, sureMatches: 0, nul: null };
      files.set(path, file);
    } else {
      // ripgrep prints each file's lines together: lines of a file already read make the report unusable.
      this.#report.malformed = true;
    }
    this.#open = file;
    return file;
  }

  // Whether the line at `at` begins with the key.
  #keyAt(bytes: Uint8Array, at: number, end: number): boolean {
    const length = this.#keyLength;
    if (end - at < length) return false;
    const key = this.#key;
    for (let index = 0; index < length; index++) {
      if (bytes[at + index] !== key[index]) return false;
    }
    return true;
  }

  // Copies a line's prefix into the key (no new buffer for each file).
  #setKey(bytes: Uint8Array, at: number, end: number): void {
    const length = end - at;
    if (length > this.#key.length) this.#key = new Uint8Array(length * 2);
    const key = this.#key;
    for (let index = 0; index < length; index++) key[index] = bytes[at + index]!;
    this.#keyLength = length;
  }

  // "N:OFFSET:text" (a match) or "N-OFFSET-text" (context) at `start`; false when the line has another shape.
  #addLine(file: RipgrepFile, bytes: Uint8Array, start: number, end: number): boolean {
    let number = 0;
    let at = start;
    for (; at < end; at++) {
      const code = bytes[at]!;
      if (code < 48 || code > 57) break;
      number = number * 10 + code - 48;
    }
    const kind = bytes[at];
    if (at === start || (kind !== COLON && kind !== DASH)) return false;
    let offset = 0;
    const offsetAt = ++at;
    for (; at < end; at++) {
      const code = bytes[at]!;
      if (code < 48 || code > 57) break;
      offset = offset * 10 + code - 48;
    }
    if (at === offsetAt || bytes[at] !== kind) return false;
    const textAt = at + 1;
    // Past `end` it is the next line's (`nul` is then not this line's).
    let nul = bytes.indexOf(NUL, textAt);
    if (nul >= end) nul = -1;
    if (file.nul === null && nul !== -1) file.nul = offset + nul - textAt;
    if (file.nul !== null && file.nul < this.#binaryBelow) {
      // Binary: none of its lines will be looked at.
      file.numbers = file.texts = file.matches = NONE;
      file.sureMatches = 0;
      return true;
    }
    if (kind === COLON && nul === -1 && end - textAt <= this.#textsAbove) {
      file.sureMatches++;
      return true;
    }
    if (file.texts === NONE) {
      file.numbers = [];
      file.texts = [];
      file.matches = [];
    }
    if (kind === COLON) file.matches.push(file.numbers.length);
    file.numbers.push(number);
    file.texts.push(this.#decoder.decode(bytes.subarray(textAt, end)));
    return true;
  }
}

/** Reads the script's whole standard output and error at once. */
export function readRipgrepOutput(stdout: Uint8Array | string, stderr: string): RipgrepReport {
  return new RipgrepOutputReader().finish(stdout, stderr);
}

/**
 * The lines of a file that has none kept: shared, never written (a file's first line kept gives it arrays of
 * its own). Most files print a line or two, and an array grows by 17 slots from its first element.
 */
const NONE: never[] = [];

/** A file's lines are all read: drops the arrays' spare room. */
function close(file: RipgrepFile): void {
  if (file.texts === NONE) return;
  file.numbers = file.numbers.slice();
  file.texts = file.texts.slice();
  file.matches = file.matches.slice();
}

function relative(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}
