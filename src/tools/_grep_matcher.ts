/**
 * How Grep matches a line: `indexOf` for a literal pattern, else a regex rewritten for V8's linear-time
 * engine (`src/common/regex.ts`) and run in bounded chunks (`_line_search.ts`). The ripgrep path checks the
 * lines ripgrep reports with this same matcher, so both paths agree on what matches.
 *
 * @module
 */
import { compileSearchPattern } from "../common/regex.ts";
import {
  chunkLength,
  type LineMatcher,
  literalMatcher,
  regexMatcher,
  type SliceClock,
} from "./_line_search.ts";

/** A compiled Grep pattern. */
export interface GrepMatcher {
  ok: true;
  /** A fresh matcher (it keeps state between calls) that pauses when `clock` says the slice is used up. */
  build: (clock: SliceClock) => LineMatcher;
  /** The literal searched with `indexOf`, or null for a regex. */
  literal: string | null;
  /**
   * Characters of a line searched in one regex call; a longer line is searched in overlapping windows, where
   * a match can be missed (`_line_search.ts`). Infinity for a literal.
   */
  chunk: number;
  /** Whether texts have CRLF turned into LF before matching (the pattern has `^` or `$`). */
  normalizeCrlf: boolean;
}

const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/** The literal Grep searches with `indexOf` for a pattern, or null when the pattern is a regex. */
export function grepLiteral(pattern: string, caseInsensitive: boolean): string | null {
  return !caseInsensitive && !REGEX_SYNTAX.test(pattern) && !pattern.includes("\n") ? pattern : null;
}

/** Compiles a Grep pattern; the message says why it cannot be used. */
export function compileGrepMatcher(
  pattern: string,
  caseInsensitive: boolean,
): GrepMatcher | { ok: false; message: string } {
  const literal = grepLiteral(pattern, caseInsensitive);
  if (literal !== null) {
    return { ok: true, build: () => literalMatcher(literal), literal, chunk: Infinity, normalizeCrlf: false };
  }
  const compiled = compileSearchPattern(pattern, { ignoreCase: caseInsensitive, flags: "gm" });
  if (!compiled.ok) return compiled;
  const { regex, units, assertions } = compiled;
  const normalizeCrlf = /[$^]/.test(pattern);
  return {
    ok: true,
    build: (clock) => regexMatcher(regex, { units, assertions, normalizeCrlf, clock }),
    literal: null,
    chunk: chunkLength(units),
    normalizeCrlf,
  };
}
