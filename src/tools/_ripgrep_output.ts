/**
 * Reading what the ripgrep script printed (`src/sandbox/ripgrep_command.ts`): the header, the lines of each
 * file (`path\0N:OFFSET:text` for a match, `path\0N-OFFSET-text` for context, `--` between groups) and the
 * `--stats` block; anything on standard error is one of ripgrep's errors. A line of any other shape makes the
 * report unusable (`malformed`), and the caller then searches itself.
 *
 * ripgrep searches every file as text with a second pattern, `\x00`, so every line holding a NUL byte is
 * printed: the first such line of a file locates the file's first NUL byte, which tells binary files apart.
 * Its offset in bytes is known only within bounds, since the output arrives decoded (an invalid byte sequence
 * became one U+FFFD, which stood for one to three bytes).
 *
 * @module
 */

/** Where a file's first NUL byte is, in bytes from the start ripgrep saw (after a UTF-8 BOM): at least, at most. */
export interface NulBounds {
  lower: number;
  upper: number;
}

/** What ripgrep printed for one file. */
export interface RipgrepFile {
  /** Numbers of the printed lines (matches and their context), ascending as ripgrep prints them. */
  numbers: number[];
  /** The text of each printed line, without its line break. */
  texts: string[];
  /** Indexes (into `numbers` and `texts`) of the lines ripgrep reported as matching. */
  matches: number[];
  /** Where the file's first NUL byte is, or null when it has none. */
  nul: NulBounds | null;
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
/** Reads the script's standard output and error. */
export function readRipgrepOutput(stdout: string, stderr: string): RipgrepReport {
  const report: RipgrepReport = {
    start: "",
    parentFlag: "",
    files: new Map(),
    searched: null,
    bytesSearched: null,
    errors: stderr.split("\n").filter((line) => line !== ""),
    malformed: false,
  };
  const headerEnd = stdout.indexOf("\n");
  if (!stdout.startsWith(HEADER) || headerEnd === -1) {
    report.malformed = true;
    return report;
  }
  [report.start = "", report.parentFlag = ""] = stdout.slice(HEADER.length, headerEnd).split("\0");
  // One pass over the text, slicing only each line's text: outputs run to millions of characters.
  let file: RipgrepFile | null = null;
  let key = "";
  let at = headerEnd + 1;
  while (at < stdout.length) {
    let end = stdout.indexOf("\n", at);
    if (end === -1) end = stdout.length;
    let textAt = -1;
    if (file !== null && stdout.startsWith(key, at)) {
      textAt = at + key.length;
    } else {
      const nul = stdout.indexOf("\0", at);
      if (nul !== -1 && nul < end && nul > at) {
        key = stdout.slice(at, nul + 1);
        file = fileOf(report, relative(key.slice(0, -1)));
        textAt = nul + 1;
      }
    }
    if (textAt !== -1) {
      if (!addLine(file!, stdout, textAt, end)) report.malformed = true;
      at = end + 1;
      continue;
    }
    const line = stdout.slice(at, end);
    at = end + 1;
    file = null;
    if (line === "" || line === "--" || STATS_LINE.test(line)) continue;
    const searched = SEARCHED.exec(line);
    if (searched !== null) {
      report.searched = Number(searched[1]);
      continue;
    }
    const bytes = BYTES_SEARCHED.exec(line);
    if (bytes !== null) {
      report.bytesSearched = Number(bytes[1]);
      continue;
    }
    report.malformed = true;
  }
  return report;
}

// "N:OFFSET:text" (a match) or "N-OFFSET-text" (context) at `start`; false when the line has another shape.
function addLine(file: RipgrepFile, stdout: string, start: number, end: number): boolean {
  let number = 0;
  let at = start;
  for (; at < end; at++) {
    const code = stdout.charCodeAt(at);
    if (code < 48 || code > 57) break;
    number = number * 10 + code - 48;
  }
  const kind = stdout[at];
  if (at === start || (kind !== ":" && kind !== "-")) return false;
  let offset = 0;
  const offsetAt = ++at;
  for (; at < end; at++) {
    const code = stdout.charCodeAt(at);
    if (code < 48 || code > 57) break;
    offset = offset * 10 + code - 48;
  }
  if (at === offsetAt || stdout[at] !== kind) return false;
  if (kind === ":") file.matches.push(file.numbers.length);
  file.numbers.push(number);
  const text = stdout.slice(at + 1, end);
  file.texts.push(text);
  if (file.nul === null) {
    const nul = text.indexOf("\0");
    if (nul !== -1) file.nul = nulBounds(text, nul, offset);
  }
  return true;
}

/** The bounds of the byte offset of `text[index]`, for a line that starts at byte `offset`. */
export function nulBounds(text: string, index: number, offset: number): NulBounds {
  let lower = offset;
  let upper = offset;
  for (let at = 0; at < index; at++) {
    const code = text.charCodeAt(at);
    // A surrogate is half of a 4-byte character; U+FFFD may be one to three bytes that were not UTF-8.
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdfff ? 2 : 3;
    lower += code === 0xfffd ? 1 : size;
    upper += size;
  }
  return { lower, upper };
}

function fileOf(report: RipgrepReport, path: string): RipgrepFile {
  let file = report.files.get(path);
  if (file === undefined) {
    file = { numbers: [], texts: [], matches: [], nul: null };
    report.files.set(path, file);
  }
  return file;
}

function relative(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}
