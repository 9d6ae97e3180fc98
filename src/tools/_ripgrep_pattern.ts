/**
 * A Grep pattern as ripgrep's pattern: the lines ripgrep reports must include every line Grep's own matcher
 * (`_grep_matcher.ts`) matches. The translation starts from the same parse Grep's linear-time rewrite uses
 * (`src/common/regex_parse.ts`: every character and class is already the set of characters it matches,
 * case folding applied), and writes each set out as explicit code-point ranges, so that ripgrep's Rust regex
 * has nothing left to interpret: no `\w`, `\s`, `.`, `(?i)` or Unicode classes of its own.
 *
 * Where JavaScript and ripgrep see a line differently, the translation is widened and the result marked
 * inexact, and the runtime checks each reported line with Grep's matcher (which also finds the column):
 * - Grep decodes invalid UTF-8 as U+FFFD; ripgrep matches the bytes. A set holding U+FFFD also accepts one to
 *   three bytes 0x80–0xFF (an invalid sequence becomes at most three U+FFFD).
 * - With `m`, JavaScript's `^` and `$` also hold next to a lone `\r`, U+2028 and U+2029. A `^` that starts the
 *   pattern (or one of its top-level alternatives) also accepts one of those characters before it, a `$`
 *   that ends it one after it; any other `^` or `$` is dropped (always true).
 * - Without the `u` flag JavaScript matches UTF-16 code units, so a set may match half of a character above
 *   U+FFFF. A set holding surrogates becomes optional and also accepts any such character whole; a high
 *   surrogate set followed by a low one (an emoji written in the pattern) becomes the characters they encode,
 *   exactly.
 * `\b` and `\B` are ASCII in Grep's rewrite, as `(?-u:\b)` is in ripgrep. Grep searches lines, so a set never
 * matches `\n` (ripgrep refuses a pattern that could). A literal pattern (Grep's `indexOf`) becomes a regex of
 * escaped characters, exact, unless it holds U+FFFD: not `--fixed-strings`, which would also make the search's
 * second pattern (`\x00`, see `grep_ripgrep.ts`) literal text. Or of its tail, inexact (`searchedTail`).
 *
 * @module
 */
import { type CharSet, clip, contains, MAX_CODE_POINT, union } from "../common/char_sets.ts";
import { type AssertionKind, parseRegex, type RegexNode } from "../common/regex_parse.ts";
import { assertNever } from "../common/errors.ts";
import { grepLiteral } from "./_grep_matcher.ts";

/** A Grep pattern as ripgrep arguments. */
export interface RipgrepPattern {
  /** The arguments that select the pattern: `--regexp REGEX`. */
  args: string[];
  /**
   * Whether ripgrep reports exactly the lines Grep's matcher matches (lines longer than the matcher's chunk
   * aside, where Grep can miss a match): then only such long lines need checking.
   */
  exact: boolean;
}

const UNICODE_ESCAPES = /\\[pP]\{|\\u\{/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FFFD = 0xfffd;
const HIGH_SURROGATES: CharSet = [0xd800, 0xdbff];
const LOW_SURROGATES: CharSet = [0xdc00, 0xdfff];
/** Characters of the astral planes, which non-Unicode JavaScript sees as two code units. */
const ASTRAL = "[\\x{10000}-\\x{10FFFF}]";
/** One to three bytes that are not ASCII: what an invalid UTF-8 sequence that Grep shows as U+FFFD can be. */
const INVALID_BYTES = "(?-u:[\\x80-\\xFF]){1,3}";
/** What JavaScript's multiline `^` and `$` also stop at, besides the line's own start and end. */
const LINE_BREAKS = "[\\r\\x{2028}\\x{2029}]";
/** Pairs of surrogate sets expanded at most into the characters they encode. */
const MAX_PAIR_UNITS = 1024;

/** A Rust regex matching exactly `literal`: every character but ASCII letters, digits and "_" escaped. */
export function literalRegex(literal: string): string {
  let source = "";
  for (const character of literal) {
    source += /^\w$/.test(character) ? character : `\\x{${character.codePointAt(0)!.toString(16)}}`;
  }
  return source;
}

/**
 * Characters by how often they occur in source code, most common first (measured over TypeScript, JavaScript,
 * Python, C and Perl sources, averaged): from " " (21% of the bytes) and "e" (6.6%) down to "G" (0.17%).
 * Past the first few, each ten places down are about half as common; characters not listed are rarer still.
 */
const BY_FREQUENCY = " etsnrioalcd_pufhm)(.,gES=ybT:A';kICw0\"*NxRLO/v#{}P-$1>DFMB25U9[]G";
/** Places down `BY_FREQUENCY` a character must be to count as at most half as common. */
const HALF_AS_COMMON = 10;
/** The tail searched instead of a literal keeps at least this many characters, and half of the literal. */
const MIN_TAIL = 6;

/**
 * What ripgrep searches for a literal: the literal, or its tail from its rarest character in source code
 * (`BY_FREQUENCY`) when that is at most half as common as its first, keeping at least half of the literal
 * (and `MIN_TAIL` characters).
 *
 * Why: the search's second pattern (`\x00`, see `grep_ripgrep.ts`) is one byte long, so ripgrep's search for
 * several literals at once (Teddy) screens each position by the first byte of each literal alone, and stops
 * at every byte like the literal's first: every "p" for `parseConfigOverride`, a few in a hundred bytes of
 * code. From a rarer character it stops at a third as many ("C" of "ConfigOverride" against "p"), or fewer.
 * Measured on the benchmark's tree: `noSuchIdentifierAnywhere` with `\x00` took 294 ms, its tail
 * `IdentifierAnywhere` with `\x00` 235 ms, the literal alone 237 ms. The lines ripgrep reports are then a
 * superset, each checked with Grep's matcher (the pattern is inexact); a longer tail leaves fewer lines that
 * hold it without the literal.
 */
export function searchedTail(literal: string): string {
  const characters = [...literal];
  const last = characters.length - Math.max(MIN_TAIL, Math.ceil(characters.length / 2));
  const rarity = (character: string) => {
    const place = BY_FREQUENCY.indexOf(character);
    return place === -1 ? BY_FREQUENCY.length : place;
  };
  let best = 0;
  for (let index = 1; index <= last; index++) {
    if (rarity(characters[index]!) > rarity(characters[best]!)) best = index;
  }
  return best > 0 && rarity(characters[best]!) >= rarity(characters[0]!) + HALF_AS_COMMON
    ? characters.slice(best).join("")
    : literal;
}

/** The ripgrep pattern for a Grep pattern that Grep accepts, or null when there is none. */
export function ripgrepPattern(pattern: string, caseInsensitive: boolean): RipgrepPattern | null {
  if (LONE_SURROGATE.test(pattern)) return null;
  const literal = grepLiteral(pattern, caseInsensitive);
  if (literal !== null) {
    if (literal.includes("\uFFFD") || literal.includes("\0")) return null;
    const searched = searchedTail(literal);
    return { args: ["--regexp", literalRegex(searched)], exact: searched === literal };
  }
  const unicode = unicodeMode(pattern, caseInsensitive);
  if (unicode === null) return null;
  const parsed = parseRegex(pattern, { unicode, ignoreCase: caseInsensitive });
  if (!parsed.ok) return null;
  const writer = new RustWriter(unicode);
  try {
    const source = writer.top(parsed.node);
    return { args: ["--regexp", source], exact: writer.exact };
  } catch (error) {
    if (error instanceof Untranslatable) return null;
    throw error;
  }
}

// The mode compileSearchPattern chooses: `u` when the pattern needs it or is valid only with it.
function unicodeMode(pattern: string, caseInsensitive: boolean): boolean | null {
  const flags = caseInsensitive ? "i" : "";
  for (const unicode of UNICODE_ESCAPES.test(pattern) ? [true] : [false, true]) {
    try {
      new RegExp(pattern, unicode ? `${flags}u` : flags);
      return unicode;
    } catch {
      // Try the next mode.
    }
  }
  return null;
}

class Untranslatable extends Error {}

/** Writes a tree as Rust regex source; `exact` turns false when a construct is widened. */
class RustWriter {
  exact = true;
  #unicode: boolean;

  constructor(unicode: boolean) {
    this.#unicode = unicode;
  }

  /** The whole pattern: `^` and `$` at the edges of its top-level alternatives get their edge forms. */
  top(node: RegexNode): string {
    const alternatives = node.type === "alternation" ? node.alternatives : [node];
    return alternatives.map((alternative) => this.#edges(alternative)).join("|");
  }

  #edges(node: RegexNode): string {
    const items = node.type === "sequence" ? node.items : [node];
    return items.map((item, index) => {
      if (item.type === "assertion" && item.kind === "line-start" && index === 0) {
        this.exact = false;
        return `(?:^|${LINE_BREAKS})`;
      }
      if (item.type === "assertion" && item.kind === "line-end" && index === items.length - 1) {
        this.exact = false;
        return `(?:$|${LINE_BREAKS})`;
      }
      return this.#node(item);
    }).join("");
  }

  #node(node: RegexNode): string {
    switch (node.type) {
      case "empty":
        return "(?:)";
      case "set":
        return this.#set(node.set);
      case "sequence":
        return this.#sequence(node.items);
      case "alternation":
        return `(?:${node.alternatives.map((alternative) => this.#node(alternative)).join("|")})`;
      case "repeat":
        return `(?:${this.#node(node.body)})${quantifier(node.min, node.max)}`;
      case "assertion":
        return this.#assertion(node.kind);
      case "capture":
        return `(?:${this.#node(node.body)})`;
      default:
        return assertNever(node);
    }
  }

  // `^` and `$` inside the pattern are dropped (see the module comment).
  #assertion(kind: AssertionKind): string {
    switch (kind) {
      case "word-boundary":
        return "(?-u:\\b)";
      case "not-word-boundary":
        return "(?-u:\\B)";
      case "line-start":
      case "line-end":
        this.exact = false;
        return "(?:)";
      default:
        return assertNever(kind);
    }
  }

  #sequence(items: readonly RegexNode[]): string {
    const parts: string[] = [];
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      const next = items[index + 1];
      if (!this.#unicode && item.type === "set" && next?.type === "set") {
        const pair = surrogatePair(item.set, next.set);
        if (pair !== null) {
          parts.push(pair);
          index++;
          continue;
        }
      }
      parts.push(this.#node(item));
    }
    return `(?:${parts.join("")})`;
  }

  #set(set: CharSet): string {
    const withoutNewline = withoutCode(set, 0x0a);
    const surrogates = clip(withoutNewline, 0xd800, 0xdfff);
    const characters = union(clip(withoutNewline, 0, 0xd7ff), clip(withoutNewline, 0xe000, MAX_CODE_POINT));
    const alternatives: string[] = [];
    if (characters.length > 0) alternatives.push(classSource(characters));
    if (contains(characters, FFFD)) {
      this.exact = false;
      alternatives.push(INVALID_BYTES);
    }
    // With `u`, decoded text has no lone surrogates: such a set part can never match.
    if (!this.#unicode && surrogates.length > 0) {
      this.exact = false;
      alternatives.push(ASTRAL);
      return `(?:${alternatives.join("|")})?`;
    }
    if (alternatives.length === 0) throw new Untranslatable("a set that matches nothing on a line");
    return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
  }
}

function quantifier(min: number, max: number): string {
  if (max === Infinity) return min === 0 ? "*" : min === 1 ? "+" : `{${min},}`;
  if (min === 0 && max === 1) return "?";
  return min === max ? `{${min}}` : `{${min},${max}}`;
}

// A high-surrogate set followed by a low-surrogate set: the characters above U+FFFF they encode together.
function surrogatePair(high: CharSet, low: CharSet): string | null {
  if (!isWithin(high, HIGH_SURROGATES) || !isWithin(low, LOW_SURROGATES)) return null;
  const ranges: number[] = [];
  let units = 0;
  for (let index = 0; index < high.length; index += 2) {
    for (let unit = high[index]!; unit <= high[index + 1]!; unit++) {
      if (++units > MAX_PAIR_UNITS) return null;
      const base = 0x10000 + ((unit - 0xd800) << 10);
      for (let at = 0; at < low.length; at += 2) {
        ranges.push(base + low[at]! - 0xdc00, base + low[at + 1]! - 0xdc00);
      }
    }
  }
  return classSource(union(ranges));
}

function isWithin(set: CharSet, range: CharSet): boolean {
  return set.length > 0 && set[0]! >= range[0]! && set[set.length - 1]! <= range[1]!;
}

function withoutCode(set: CharSet, code: number): CharSet {
  if (!contains(set, code)) return set;
  return union(clip(set, 0, code - 1), clip(set, code + 1, MAX_CODE_POINT));
}

/** A Rust class of the set's code points, each written as `\x{…}`. */
function classSource(set: CharSet): string {
  const parts: string[] = [];
  for (let index = 0; index < set.length; index += 2) {
    const start = set[index]!;
    const end = set[index + 1]!;
    parts.push(start === end ? hex(start) : `${hex(start)}-${hex(end)}`);
  }
  return `[${parts.join("")}]`;
}

function hex(code: number): string {
  return `\\x{${code.toString(16).toUpperCase()}}`;
}
