/**
 * Grep's line logic: finding the matching lines of a text with a `LineMatcher` (pausing when the time slice is
 * used up) and formatting them with their context lines.
 *
 * @module
 */
import { type LineMatcher, PAUSED } from "./_line_search.ts";
import type { TimeSlicer } from "./_time_slicer.ts";

/** Characters of a matching or context line shown; longer lines are shortened around the match. */
export const MAX_GREP_LINE_CHARACTERS = 500;

/** A matching line: its 1-based number, where it starts and ends in the text, and where the match is. */
export interface LineMatch {
  line: number;
  start: number;
  end: number;
  column: number;
}

// A match at the very end of a text that ends with a line break would be on a line that does not exist.
function isPastLastLine(text: string, index: number): boolean {
  return index >= text.length && (text.length === 0 || text.charCodeAt(text.length - 1) === 10);
}

// The next match from `from`, yielding whenever the matcher pauses; null when the slicer says stop.
async function nextMatch(
  text: string,
  from: number,
  matcher: LineMatcher,
  slicer: TimeSlicer,
): Promise<number | null> {
  let index = matcher.next(text, from);
  while (index === PAUSED) {
    if (await slicer.pause()) return null;
    index = matcher.next(text, matcher.resumeAt);
  }
  return index;
}

/**
 * Counts matching lines, stopping at `max` (1 answers "does the file match?"); null when the slicer says stop.
 */
export async function countMatchingLines(
  text: string,
  matcher: LineMatcher,
  options: { slicer: TimeSlicer; max?: number },
): Promise<number | null> {
  const max = options.max ?? Infinity;
  let count = 0;
  let from = 0;
  while (count < max && from <= text.length) {
    const index = await nextMatch(text, from, matcher, options.slicer);
    if (index === null) return null;
    if (index === -1 || isPastLastLine(text, index)) break;
    count++;
    const newline = text.indexOf("\n", index);
    if (newline === -1) break;
    from = newline + 1;
  }
  return count;
}

/** The first `max` matching lines; null when the slicer says stop. */
export async function findMatchingLines(
  text: string,
  matcher: LineMatcher,
  options: { slicer: TimeSlicer; max: number },
): Promise<LineMatch[] | null> {
  const found: LineMatch[] = [];
  let from = 0;
  let line = 1;
  let counted = 0;
  while (found.length < options.max && from <= text.length) {
    const index = await nextMatch(text, from, matcher, options.slicer);
    if (index === null) return null;
    if (index === -1 || isPastLastLine(text, index)) break;
    const start = index === 0 ? 0 : text.lastIndexOf("\n", index - 1) + 1;
    const newline = text.indexOf("\n", index);
    const end = newline === -1 ? text.length : newline;
    for (let at = text.indexOf("\n", counted); at !== -1 && at < start; at = text.indexOf("\n", at + 1)) {
      line++;
    }
    counted = start;
    found.push({ line, start, end, column: index });
    if (newline === -1) break;
    from = newline + 1;
  }
  return found;
}

/** Appends "path:line: text" for matches and "path-line- text" for context, with "--" between groups. */
export function formatContent(
  out: string[],
  text: string,
  path: string,
  matches: LineMatch[],
  context: number,
): void {
  if (context === 0) {
    for (const match of matches) {
      out.push(outputLine(path, ":", match.line, shorten(text, match.start, match.end, match.column)));
    }
    return;
  }
  if (out.length > 0) out.push("--");
  let printed = 0; // the last line number printed
  let printedEnd = -1; // where that line ends in the text
  const printAfter = (upTo: number) => {
    while (printed < upTo && printedEnd < text.length) {
      const start = printedEnd + 1;
      if (isPastLastLine(text, start)) return;
      const newline = text.indexOf("\n", start);
      const end = newline === -1 ? text.length : newline;
      printed++;
      printedEnd = end;
      out.push(outputLine(path, "-", printed, shorten(text, start, end, start)));
    }
  };
  for (const match of matches) {
    if (printed > 0) printAfter(Math.min(printed + context, match.line - 1));
    const first = Math.max(printed + 1, match.line - context);
    if (printed > 0 && first > printed + 1) out.push("--");
    const before: string[] = [];
    let start = match.start;
    for (let line = match.line - 1; line >= first; line--) {
      const end = start - 1;
      start = end === 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
      before.push(outputLine(path, "-", line, shorten(text, start, end, start)));
    }
    out.push(...before.reverse());
    out.push(outputLine(path, ":", match.line, shorten(text, match.start, match.end, match.column)));
    printed = match.line;
    printedEnd = match.end;
  }
  printAfter(printed + context);
}

// "path:12: text" or "path-12- text". Built with join, which copies: a template literal would keep a
// reference to the slice, and through it to the whole text of the file, until the output is returned.
function outputLine(path: string, marker: ":" | "-", line: number, text: string): string {
  return [path, marker, String(line), marker, " ", text].join("");
}

// The line without its "\r", shortened to a window around `focus` when it is too long.
function shorten(text: string, start: number, end: number, focus: number): string {
  let lineEnd = end;
  if (lineEnd > start && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
  if (lineEnd - start <= MAX_GREP_LINE_CHARACTERS) return text.slice(start, lineEnd);
  const windowStart = Math.max(start, Math.min(focus - 100, lineEnd - MAX_GREP_LINE_CHARACTERS));
  const windowEnd = windowStart + MAX_GREP_LINE_CHARACTERS;
  const head = windowStart > start ? "…" : "";
  const tail = windowEnd < lineEnd ? "…" : "";
  return `${head}${text.slice(windowStart, windowEnd)}${tail} [line of ${
    lineEnd - start
  } characters shortened]`;
}
