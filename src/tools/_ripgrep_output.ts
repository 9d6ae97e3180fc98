/**
 * Reading what the ripgrep script printed (`src/sandbox/ripgrep_command.ts`): the header, the lines of each
 * file (`path\0N:text` for a match, `path\0N-text` for context, `--` between groups), binary notices, the
 * `--stats` block, and the NUL-byte scan after a search that found nothing; anything on standard error is
 * one of ripgrep's errors. A line of any other shape makes the report unusable (`malformed`), and the caller
 * then searches itself.
 *
 * @module
 */

/** What ripgrep printed for one file. */
export interface RipgrepFile {
  /** Numbers of the printed lines (matches and their context), ascending as ripgrep prints them. */
  numbers: number[];
  /** The text of each printed line, without its line break. */
  texts: string[];
  /** Indexes (into `numbers` and `texts`) of the lines ripgrep reported as matching. */
  matches: number[];
  /** Offset of the first NUL byte when ripgrep found the file binary, else null. */
  binaryOffset: number | null;
}

/** Everything the script printed, by kind. */
export interface RipgrepReport {
  /** The directory the script searched (its real path). */
  start: string;
  /** The flag the script chose about parent ignore files: "--no-ignore-parent" or "". */
  parentFlag: string;
  /** Files with printed lines or a binary notice, by path relative to the start. */
  files: Map<string, RipgrepFile>;
  /** "N files searched" of `--stats`, or null when missing. */
  searched: number | null;
  /** First NUL byte of each file that has one, when the scan ran (the search matched nothing). */
  nulOffsets: Map<string, number> | null;
  /** Lines on standard error: ripgrep's errors. */
  errors: string[];
  /** Whether a line had an unknown shape. */
  malformed: boolean;
}

const HEADER = "mewcode-rg\0";
const NUL_MARKER = "\0mewcode-rg-nul";
const BINARY_NOTICE = /^(.*): binary file matches \(found "\\0" byte around offset (\d+)\)$/s;
const STATS_LINE =
  /^(?:\d+ (?:matches|matched lines|files contained matches|bytes printed|bytes searched)|[\d.]+ seconds(?: spent searching)?)$/;
const SEARCHED = /^(\d+) files searched$/;
/** Reads the script's standard output and error. */
export function readRipgrepOutput(stdout: string, stderr: string): RipgrepReport {
  const report: RipgrepReport = {
    start: "",
    parentFlag: "",
    files: new Map(),
    searched: null,
    nulOffsets: null,
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
    if (line === NUL_MARKER) {
      report.nulOffsets = readNulScan(stdout.slice(at).split("\n"), report);
      break;
    }
    if (line === "" || line === "--" || STATS_LINE.test(line)) continue;
    const searched = SEARCHED.exec(line);
    if (searched !== null) {
      report.searched = Number(searched[1]);
      continue;
    }
    const binary = BINARY_NOTICE.exec(line);
    if (binary !== null) {
      fileOf(report, relative(binary[1]!)).binaryOffset = Number(binary[2]);
      continue;
    }
    report.malformed = true;
  }
  return report;
}

// "N:text" (a match) or "N-text" (context) at `start`; false when the line has another shape.
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
  if (kind === ":") file.matches.push(file.numbers.length);
  file.numbers.push(number);
  file.texts.push(stdout.slice(at + 1, end));
  return true;
}

// "path\0OFFSET:\0" per NUL byte on the first line that has one; the smallest offset counts.
function readNulScan(lines: string[], report: RipgrepReport): Map<string, number> {
  const offsets = new Map<string, number>();
  for (const line of lines) {
    const nul = line.indexOf("\0");
    const offset = nul === -1 ? null : /^(\d+):/.exec(line.slice(nul + 1));
    if (offset === null || offset === undefined) {
      if (line !== "") report.malformed = true;
      continue;
    }
    const path = relative(line.slice(0, nul));
    const value = Number(offset[1]);
    offsets.set(path, Math.min(value, offsets.get(path) ?? Infinity));
  }
  return offsets;
}

function fileOf(report: RipgrepReport, path: string): RipgrepFile {
  let file = report.files.get(path);
  if (file === undefined) {
    file = { numbers: [], texts: [], matches: [], binaryOffset: null };
    report.files.set(path, file);
  }
  return file;
}

function relative(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}
