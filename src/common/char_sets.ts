/**
 * Sets of characters for the regex rewriter (`src/common/regex.ts`): ranges of code points, the escapes' sets, case
 * folding and Unicode properties, and their emission as regex source without the `i` and `u` flags.
 *
 * Case folding and property sets are computed once from V8 itself (single-character regexes), so the rewrite
 * folds exactly as the engine would with the flag.
 *
 * @module
 */

/**
 * A set of code points (or UTF-16 code units in non-Unicode mode) as sorted, disjoint, non-adjacent inclusive
 * ranges, flattened: `[start0, end0, start1, end1, …]`.
 */
export type CharSet = readonly number[];

/** The largest code unit: non-Unicode patterns match UTF-16 code units. */
export const MAX_CODE_UNIT = 0xffff;
/** The largest code point: Unicode patterns match code points. */
export const MAX_CODE_POINT = 0x10ffff;

const SURROGATE_START = 0xd800;
const SURROGATE_END = 0xdfff;

/** `\n`, `\r`, U+2028 and U+2029: what `.` and `$` treat as line ends. */
export const LINE_TERMINATORS: CharSet = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];
/** `\d`. */
export const DIGITS: CharSet = [0x30, 0x39];
/** `\w` without case folding. */
export const WORD_CHARACTERS: CharSet = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
/** `\s`: white space and line terminators, as ECMAScript defines them. */
export const WHITE_SPACE: CharSet = [
  0x09,
  0x0d,
  0x20,
  0x20,
  0xa0,
  0xa0,
  0x1680,
  0x1680,
  0x2000,
  0x200a,
  0x2028,
  0x2029,
  0x202f,
  0x202f,
  0x205f,
  0x205f,
  0x3000,
  0x3000,
  0xfeff,
  0xfeff,
];

/** The set of one code point. */
export function singleton(code: number): CharSet {
  return [code, code];
}

/** Whether the set contains `code`. */
export function contains(set: CharSet, code: number): boolean {
  let low = 0;
  let high = set.length / 2 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (code < set[middle * 2]!) high = middle - 1;
    else if (code > set[middle * 2 + 1]!) low = middle + 1;
    else return true;
  }
  return false;
}

/** The union of sets. */
export function union(...sets: CharSet[]): CharSet {
  const ranges: [number, number][] = [];
  for (const set of sets) {
    for (let index = 0; index < set.length; index += 2) ranges.push([set[index]!, set[index + 1]!]);
  }
  return normalize(ranges);
}

/** The code points up to `max` that are not in the set. */
export function complement(set: CharSet, max: number): CharSet {
  const result: number[] = [];
  let next = 0;
  for (let index = 0; index < set.length && set[index]! <= max; index += 2) {
    if (set[index]! > next) result.push(next, set[index]! - 1);
    next = set[index + 1]! + 1;
  }
  if (next <= max) result.push(next, max);
  return result;
}

/** The part of the set between `low` and `high`. */
export function clip(set: CharSet, low: number, high: number): CharSet {
  const result: number[] = [];
  for (let index = 0; index < set.length; index += 2) {
    const start = Math.max(set[index]!, low);
    const end = Math.min(set[index + 1]!, high);
    if (start <= end) result.push(start, end);
  }
  return result;
}

/** The number of code points in the set. */
export function size(set: CharSet): number {
  let total = 0;
  for (let index = 0; index < set.length; index += 2) total += set[index + 1]! - set[index]! + 1;
  return total;
}

function normalize(ranges: [number, number][]): CharSet {
  ranges.sort((a, b) => a[0] - b[0]);
  const result: number[] = [];
  for (const [start, end] of ranges) {
    const last = result.length - 1;
    if (last > 0 && start <= result[last]! + 1) result[last] = Math.max(result[last]!, end);
    else result.push(start, end);
  }
  return result;
}

/** Characters that have other characters equal to them under case folding, and those classes. */
interface CaseTable {
  /** Sorted code points whose class has more than one member. */
  codes: Int32Array;
  /** Each member's class (shared arrays). */
  classes: Map<number, readonly number[]>;
}

const caseTables = new Map<boolean, CaseTable>();

// Pairs equal under Unicode simple case folding that no single-character toUpperCase/toLowerCase links.
const EXTRA_FOLD_PAIRS: readonly (readonly [number, number])[] = [
  [0x0390, 0x1fd3],
  [0x03b0, 0x1fe3],
  [0xfb05, 0xfb06],
];

/**
 * The classes of characters that the `i` flag makes equal, for Unicode (`u`) or non-Unicode mode. Built from
 * single-character toUpperCase/toLowerCase links, each confirmed by V8 with a one-character `i` regex (the
 * two modes fold differently: non-Unicode mode never maps a non-ASCII character to an ASCII one).
 */
function caseTable(unicode: boolean): CaseTable {
  const cached = caseTables.get(unicode);
  if (cached !== undefined) return cached;
  // Astral cased letters (Deseret … Adlam) end below U+1F000; non-Unicode mode sees only code units.
  const limit = unicode ? 0x1f000 : MAX_CODE_UNIT + 1;
  const parent = new Int32Array(limit);
  for (let code = 0; code < limit; code++) parent[code] = code;
  const find = (code: number): number => {
    let root = code;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[code] !== root) {
      const next = parent[code]!;
      parent[code] = root;
      code = next;
    }
    return root;
  };
  const flags = unicode ? "ui" : "i";
  const link = (a: number, b: number): void => {
    if (a === b || b >= limit || find(a) === find(b)) return;
    if (new RegExp(escapeForTest(a, unicode), flags).test(String.fromCodePoint(b))) parent[find(a)] = find(b);
  };
  for (let code = 0; code < limit; code++) {
    if (code >= SURROGATE_START && code <= SURROGATE_END) continue;
    const text = String.fromCodePoint(code);
    for (const other of [text.toUpperCase(), text.toLowerCase()]) {
      const otherCode = other.codePointAt(0)!;
      if (other.length === String.fromCodePoint(otherCode).length) link(code, otherCode);
    }
  }
  if (unicode) {
    for (const [a, b] of EXTRA_FOLD_PAIRS) link(a, b);
  }
  const members = new Map<number, number[]>();
  for (let code = 0; code < limit; code++) {
    const root = find(code);
    if (root === code) continue;
    let list = members.get(root);
    if (list === undefined) members.set(root, list = [root]);
    list.push(code);
  }
  const classes = new Map<number, readonly number[]>();
  const codes: number[] = [];
  for (const list of members.values()) {
    list.sort((a, b) => a - b);
    for (const code of list) {
      classes.set(code, list);
      codes.push(code);
    }
  }
  codes.sort((a, b) => a - b);
  const table = { codes: Int32Array.from(codes), classes };
  caseTables.set(unicode, table);
  return table;
}

function escapeForTest(code: number, unicode: boolean): string {
  if (unicode) return `\\u{${code.toString(16)}}`;
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** The set plus every character the `i` flag makes equal to one of its members. */
export function caseClosure(set: CharSet, unicode: boolean): CharSet {
  const table = caseTable(unicode);
  const added: number[] = [];
  for (const code of table.codes) {
    if (!contains(set, code)) continue;
    for (const other of table.classes.get(code)!) added.push(other, other);
  }
  return added.length === 0 ? set : union(set, added);
}

/** Word characters (`\w`, and what `\b` looks at) in a pattern's mode; with `u` and `i`, also ſ and K. */
export function wordCharacters(unicode: boolean, ignoreCase: boolean): CharSet {
  return ignoreCase ? caseClosure(WORD_CHARACTERS, unicode) : WORD_CHARACTERS;
}

const propertySets = new Map<string, CharSet | null>();

/**
 * The Basic Multilingual Plane part of a Unicode property (`\p{…}`, given as its body, e.g. "L" or
 * "Script=Greek"), or null when V8 does not know it. Characters above U+FFFF (emoji, historic scripts) are
 * left out: their surrogate pairs would multiply the pattern's size.
 */
export function propertySet(body: string): CharSet | null {
  const cached = propertySets.get(body);
  if (cached !== undefined) return cached;
  let regex: RegExp;
  try {
    regex = new RegExp(`\\p{${body}}+`, "gu");
  } catch {
    propertySets.set(body, null);
    return null;
  }
  // One call per run of matching characters, over the code points below and above the surrogates.
  const result: number[] = [];
  for (const [start, text] of bmpTexts()) {
    for (const match of text.matchAll(regex)) {
      result.push(start + match.index, start + match.index + match[0].length - 1);
    }
  }
  propertySets.set(body, result);
  return result;
}

let bmp: [number, string][] | null = null;

function bmpTexts(): [number, string][] {
  if (bmp !== null) return bmp;
  const text = (start: number, end: number) =>
    String.fromCharCode(...Array.from({ length: end - start + 1 }, (_, index) => start + index));
  bmp = [[0, text(0, SURROGATE_START - 1)], [SURROGATE_END + 1, text(SURROGATE_END + 1, MAX_CODE_UNIT)]];
  return bmp;
}

/** Regex source for a set, and its cost in units of the linear engine's automaton. */
export interface SetSource {
  source: string;
  /** Whether `source` is one atom (a character or a class) that a quantifier may follow directly. */
  atom: boolean;
  units: number;
}

/**
 * Emits a set as regex source for a pattern compiled without `u`. In non-Unicode mode the set holds code units
 * and becomes one class. In Unicode mode it holds code points: the part below U+10000 becomes a class
 * (without lone surrogates, which decoded text never contains), and higher code points become surrogate
 * pairs in an alternation, so that one code point is still matched as one unit.
 */
export function setSource(set: CharSet, unicode: boolean): SetSource {
  if (!unicode) return { source: classSource(set), atom: true, units: 1 };
  const low = union(clip(set, 0, SURROGATE_START - 1), clip(set, SURROGATE_END + 1, MAX_CODE_UNIT));
  const high = clip(set, MAX_CODE_UNIT + 1, MAX_CODE_POINT);
  const alternatives = surrogatePairs(high);
  if (alternatives.length === 0) return { source: classSource(low), atom: true, units: 1 };
  if (low.length > 0) alternatives.unshift(classSource(low));
  const units = 2 * alternatives.length + 1;
  if (alternatives.length === 1) return { source: alternatives[0]!, atom: false, units };
  return { source: `(?:${alternatives.join("|")})`, atom: true, units };
}

// Astral ranges as "high surrogate(s) then low surrogate range" sources, grouped by their low range.
function surrogatePairs(set: CharSet): string[] {
  const byLow = new Map<string, number[]>();
  const add = (highStart: number, highEnd: number, lowStart: number, lowEnd: number): void => {
    const key = classSource([lowStart, lowEnd]);
    const highs = byLow.get(key) ?? [];
    highs.push(highStart, highEnd);
    byLow.set(key, highs);
  };
  for (let index = 0; index < set.length; index += 2) {
    const start = set[index]! - 0x10000;
    const end = set[index + 1]! - 0x10000;
    const [startHigh, startLow] = [0xd800 + (start >> 10), 0xdc00 + (start & 0x3ff)];
    const [endHigh, endLow] = [0xd800 + (end >> 10), 0xdc00 + (end & 0x3ff)];
    if (startHigh === endHigh) {
      add(startHigh, startHigh, startLow, endLow);
      continue;
    }
    let firstFull = startHigh;
    let lastFull = endHigh;
    if (startLow !== 0xdc00) {
      add(startHigh, startHigh, startLow, 0xdfff);
      firstFull++;
    }
    if (endLow !== 0xdfff) {
      add(endHigh, endHigh, 0xdc00, endLow);
      lastFull--;
    }
    if (firstFull <= lastFull) add(firstFull, lastFull, 0xdc00, 0xdfff);
  }
  return [...byLow].map(([low, highs]) => `${classSource(union(highs))}${low}`);
}

/** One class (or character) matching exactly the set's code units; an empty set never matches. */
function classSource(set: CharSet): string {
  if (set.length === 2 && set[0] === set[1]) return literalSource(set[0]!);
  const parts: string[] = [];
  for (let index = 0; index < set.length; index += 2) {
    const start = set[index]!;
    const end = set[index + 1]!;
    parts.push(classCharacter(start));
    if (end > start + 1) parts.push("-");
    if (end > start) parts.push(classCharacter(end));
  }
  return `[${parts.join("")}]`;
}

const PLAIN_OUTSIDE_CLASS = /^[A-Za-z0-9 _,:;=!"'#%&~`<>@-]$/;
const PLAIN_IN_CLASS = /^[A-Za-z0-9 _,:;=!"'#%&~`<>@]$/;

/** A code unit (below U+10000) as a regex atom outside a class. */
export function literalSource(code: number): string {
  const text = String.fromCharCode(code);
  return code < 0x80 && PLAIN_OUTSIDE_CLASS.test(text) ? text : unitEscape(code);
}

function classCharacter(code: number): string {
  const text = String.fromCharCode(code);
  return code < 0x80 && PLAIN_IN_CLASS.test(text) ? text : unitEscape(code);
}

function unitEscape(code: number): string {
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}
