/**
 * Finding the first line that matches, in bounded steps: Grep's inner loop.
 *
 * One regex call cannot be interrupted (Deno cannot stop a worker inside it), so a regex is never run on more
 * than a chunk of text at a time, sized so that one call stays under ~200 ms even in the worst case:
 * backtracking that stops just short of V8's fallback threshold costs about 50,000 × chunk length steps,
 * and the linear-time engine ~15 ns per unit of the automaton per character. Between two calls the matcher
 * returns `PAUSED` when the caller's time slice is used up, so the caller can yield, notice a cancellation,
 * and stop at its deadline.
 *
 * Chunks are whole lines, cut at line breaks, so `^`, `$` and `\b` see the same neighbours as in the whole
 * text. A line longer than a chunk is searched in windows that overlap by half a chunk. A window's edges are
 * not the line's, so a candidate that starts at a window's start (for `^`, `\b`, `\B`) or ends at its end
 * (for `$`, `\b`, `\B`) is not trusted and the search goes on. In such a line a match can be missed when it is
 * longer than the overlap (at least 3,000 characters), or when a pattern with `$`, `\b` or `\B` yields several
 * untrusted candidates in a row and the real match starts before the next window.
 *
 * @module
 */

/** Returned by `LineMatcher.next` when the time slice is used up: call it again from `resumeAt`. */
export const PAUSED = -2;

/** How Grep finds the first match on a line. */
export interface LineMatcher {
  /**
   * Index of the first match at or after `from` (a line start) that lies within one line; -1 when there is
   * none; `PAUSED` when the caller should yield, then call again with `from = resumeAt`.
   */
  next(text: string, from: number): number;
  /** Where to continue after `PAUSED`. */
  resumeAt: number;
  /**
   * Whether texts must have CRLF turned into LF first: with the `m` flag, `^` and `$` also match next to a
   * lone `\r`, so "^$" would match at the end of every CRLF line.
   */
  normalizeCrlf: boolean;
}

/** Tells the matcher when the caller's time slice is used up. */
export interface SliceClock {
  due(): boolean;
}

/** Characters one regex call searches at most, whatever the pattern (see the module comment). */
export const MAX_CHUNK_CHARACTERS = 8_192;
/** Units × characters one call may cost in the linear engine: ~180 ms at ~15 ns each. */
const LINEAR_BUDGET = 12_000_000;
/** Candidates at a window's edge re-examined before moving to the next window. */
const MAX_EDGE_RETRIES = 8;

/** Where a pattern's assertions look: `^` at a match's start, `$` at its end, `\b` and `\B` at both. */
export interface AssertionSides {
  start: boolean;
  end: boolean;
}

/** A matcher for a literal string: `indexOf` cannot backtrack, so it needs no chunks. */
export function literalMatcher(literal: string): LineMatcher {
  return { next: (text, from) => text.indexOf(literal, from), resumeAt: 0, normalizeCrlf: false };
}

/** Options of `regexMatcher`. */
export interface RegexMatcherOptions {
  /** Size of the regex's automaton (see `src/common/regex.ts`). */
  units: number;
  /** Which assertions the pattern has, which a window's edges would fool: `^` (start), `$` (end), both. */
  assertions: AssertionSides;
  /** See `LineMatcher.normalizeCrlf`: true when the pattern has `^` or `$`. */
  normalizeCrlf: boolean;
  clock: SliceClock;
}

/** A matcher for a global, multiline regex that V8 can run in linear time (from `src/common/regex.ts`). */
export function regexMatcher(regex: RegExp, options: RegexMatcherOptions): LineMatcher {
  return new ChunkedRegexMatcher(regex, options);
}

/** The chunk length for a regex of `units` units. */
export function chunkLength(units: number): number {
  return Math.max(256, Math.min(MAX_CHUNK_CHARACTERS, Math.floor(LINEAR_BUDGET / Math.max(units, 1))));
}

/** Where a paused search of a long line goes on. */
interface LongLine {
  text: string;
  start: number;
  end: number;
  window: number;
}

class ChunkedRegexMatcher implements LineMatcher {
  resumeAt = 0;
  normalizeCrlf: boolean;
  #regex: RegExp;
  #chunk: number;
  #assertions: AssertionSides;
  #clock: SliceClock;
  #calls = 0;
  #longLine: LongLine | null = null;

  constructor(regex: RegExp, options: RegexMatcherOptions) {
    this.#regex = regex;
    this.#chunk = chunkLength(options.units);
    this.#assertions = options.assertions;
    this.#clock = options.clock;
    this.normalizeCrlf = options.normalizeCrlf;
  }

  next(text: string, from: number): number {
    this.#calls = 0;
    let position = from;
    const pending = this.#longLine;
    this.#longLine = null;
    if (pending !== null && pending.text === text && pending.start === from) {
      const found = this.#searchLongLine(pending);
      if (found !== -1) return found;
      position = pending.end + 1;
    }
    while (position <= text.length) {
      if (this.#pause(position)) return PAUSED;
      const limit = position + this.#chunk;
      let end = text.length;
      if (limit < text.length) {
        end = text.lastIndexOf("\n", limit);
        if (end < position) {
          const newline = text.indexOf("\n", position);
          const lineEnd = newline === -1 ? text.length : newline;
          const line: LongLine = { text, start: position, end: lineEnd, window: position };
          const found = this.#searchLongLine(line);
          if (found !== -1) return found;
          position = line.end + 1;
          continue;
        }
      }
      const found = this.#searchChunk(text, position, end);
      if (found !== -1) return found;
      position = end + 1;
    }
    return -1;
  }

  #pause(position: number): boolean {
    if (this.#calls === 0 || !this.#clock.due()) return false;
    this.resumeAt = position;
    return true;
  }

  #exec(text: string, from: number): RegExpExecArray | null {
    this.#calls++;
    this.#regex.lastIndex = from;
    return this.#regex.exec(text);
  }

  /**
   * The first match within one line among the whole lines of `text[start, end)`: a match that crosses a line
   * break does not count; its first line is tested alone, and the search resumes on the next line, so the
   * result equals a line-by-line search.
   */
  #searchChunk(text: string, start: number, end: number): number {
    const chunk = text.slice(start, end);
    let at = 0;
    while (at <= chunk.length) {
      if (this.#pause(start + at)) return PAUSED;
      const match = this.#exec(chunk, at);
      if (match === null) return -1;
      if (!match[0].includes("\n")) return start + match.index;
      const lineStart = match.index === 0 ? 0 : chunk.lastIndexOf("\n", match.index - 1) + 1;
      const newline = chunk.indexOf("\n", match.index);
      const alone = this.#exec(chunk.slice(lineStart, newline), 0);
      if (alone !== null) return start + lineStart + alone.index;
      at = newline + 1;
    }
    return -1;
  }

  // Searches a line longer than a chunk in overlapping windows; -1, an index, or PAUSED (state kept).
  #searchLongLine(line: LongLine): number {
    const stride = this.#chunk - (this.#chunk >> 1);
    while (true) {
      if (this.#pause(line.start)) {
        this.#longLine = line;
        return PAUSED;
      }
      const windowEnd = Math.min(line.window + this.#chunk, line.end);
      const found = this.#searchWindow(line, windowEnd);
      if (found !== -1) return found;
      if (windowEnd === line.end) return -1;
      line.window += stride;
    }
  }

  // A match in text[window, windowEnd) of a long line that the window's edges cannot have faked.
  #searchWindow(line: LongLine, windowEnd: number): number {
    const text = line.text.slice(line.window, windowEnd);
    const atLineStart = line.window === line.start;
    const atLineEnd = windowEnd === line.end;
    let at = 0;
    for (let retries = 0; retries <= MAX_EDGE_RETRIES; retries++) {
      const match = this.#exec(text, at);
      if (match === null) return -1;
      // Without assertions a match of the window is a match of the line; with them, only away from the edges.
      const fakeStart = this.#assertions.start && match.index === 0 && !atLineStart;
      const fakeEnd = this.#assertions.end && match.index + match[0].length === text.length && !atLineEnd;
      if (!fakeStart && !fakeEnd) return line.window + match.index;
      at = match.index + 1;
      if (at > text.length) return -1;
    }
    return -1;
  }
}
