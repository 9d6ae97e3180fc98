/**
 * Glob patterns compiled to regexes that V8 can always finish in linear time (see `src/common/regex.ts`): a glob from
 * the model, such as "*a*a*a*…b" against a long file name, must not spin a worker that Deno cannot stop.
 *
 * The syntax is what Glob and Grep document, with picomatch's meaning (which they used before): `*` and `?`
 * within one path segment (dotfiles included), `**` as a whole segment for any number of directories
 * ("a/**" also matches "a"; a leading "**" glued to a name, as in "**.ts", searches every directory), `[…]`,
 * `[!…]`, `[^…]` and POSIX classes such as `[[:alpha:]]`, `{a,b}` alternatives (nested, and numeric or
 * letter ranges such as `{1..5}`), `\` escapes, and a leading `!` that negates the pattern. Parentheses and
 * `|` are literal characters.
 *
 * @module
 */
import { type CharSet, complement, MAX_CODE_UNIT, singleton, union } from "./char_sets.ts";
import { compileTree, type RegexNode } from "./regex.ts";
import { assertNever } from "./errors.ts";

/** Values one brace range ("{1..200}") may stand for at most. */
export const MAX_BRACE_RANGE = 256;
/** Characters of a glob pattern at most. */
export const MAX_GLOB_LENGTH = 1_000;

/** A compiled glob. */
export type GlobMatcher = (path: string) => boolean;

/** A glob, or why it cannot be used (the message completes `Invalid pattern "…": `). */
export type GlobResult = { ok: true; matches: GlobMatcher } | { ok: false; message: string };

/** Options of `compileGlob`. */
export interface GlobOptions {
  /** A pattern without "/" is matched against the last segment of the path only. Default false. */
  basename?: boolean;
}

/** Compiles a glob into a matcher for paths relative to the search directory ("src/a.ts"). */
export function compileGlob(pattern: string, options: GlobOptions = {}): GlobResult {
  if (pattern.length > MAX_GLOB_LENGTH) {
    return { ok: false, message: `it is longer than ${MAX_GLOB_LENGTH} characters; shorten it` };
  }
  let body = pattern;
  let negated = false;
  while (body.startsWith("!")) {
    negated = !negated;
    body = body.slice(1);
  }
  while (body.startsWith("./")) body = body.slice(2);
  let tree: RegexNode;
  try {
    tree = new GlobParser(body).parse();
  } catch (error) {
    if (error instanceof GlobError) return { ok: false, message: error.message };
    throw error;
  }
  const anchored: RegexNode = {
    type: "sequence",
    items: [{ type: "assertion", kind: "line-start" }, tree, { type: "assertion", kind: "line-end" }],
  };
  const compiled = compileTree(anchored, { flags: "" });
  if (!compiled.ok) {
    switch (compiled.reason) {
      case "too-large":
        return {
          ok: false,
          message: "it is too complex (too many wildcards, classes or alternatives); simplify it",
        };
      case "not-linear":
        return {
          ok: false,
          message: `it cannot be matched in linear time (${compiled.message}); simplify it`,
        };
      default:
        return assertNever(compiled);
    }
  }
  const regex = compiled.regex;
  const byName = options.basename === true && !body.includes("/");
  const matches: GlobMatcher = byName
    ? (path) => regex.test(path.slice(path.lastIndexOf("/") + 1)) !== negated
    : (path) => regex.test(path) !== negated;
  return { ok: true, matches };
}

/**
 * The leading directories of a pattern that contain no wildcard ("src/tools" of "src/tools/**\/*.ts"; the
 * directory of a pattern without any), so a walk can start there; "" when there are none or the pattern is
 * negated.
 */
export function globBase(pattern: string): string {
  if (pattern.startsWith("!")) return "";
  const segments = pattern.split("/");
  const directories: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}\\]/.test(segment)) return directories.join("/");
    directories.push(segment);
  }
  return directories.join("/");
}

class GlobError extends Error {}

/** Any character but "/": what `*` and `?` match. */
export const NOT_SLASH: CharSet = complement(singleton(0x2f), MAX_CODE_UNIT);
/** Any character. */
export const ANY_CHARACTER: CharSet = [0, MAX_CODE_UNIT];

/** One or more characters of a segment: a directory name in "**". */
export const SEGMENT: RegexNode = {
  type: "repeat",
  body: { type: "set", set: NOT_SLASH },
  min: 1,
  max: Infinity,
  greedy: true,
};
/** "*": any characters within a segment. */
export const STAR: RegexNode = {
  type: "repeat",
  body: { type: "set", set: NOT_SLASH },
  min: 0,
  max: Infinity,
  greedy: true,
};
/** Any characters, "/" included. */
export const ANYTHING: RegexNode = {
  type: "repeat",
  body: { type: "set", set: ANY_CHARACTER },
  min: 0,
  max: Infinity,
  greedy: true,
};

/** Zero or more whole directories ("**\/"): "(?:[^/]+/)*". */
export const DIRECTORIES: RegexNode = {
  type: "repeat",
  body: { type: "sequence", items: [SEGMENT, literal("/")] },
  min: 0,
  max: Infinity,
  greedy: true,
};

/** A node matching one character. */
export function literal(char: string): RegexNode {
  return { type: "set", set: singleton(char.charCodeAt(0)) };
}

const POSIX_CLASSES: Readonly<Record<string, CharSet>> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0x00, 0x7f],
  blank: [0x09, 0x09, 0x20, 0x20],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x09, 0x0d, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
};

/**
 * Parses a bracket expression starting at `start` ("["): `[abc]`, `[a-z]`, `[!…]` or `[^…]` (never matching
 * "/"), a leading "]" taken literally, `\` escapes and POSIX classes. Null when it is not closed (the "[" is
 * then a literal).
 */
export function parseBracket(pattern: string, start: number): { set: CharSet; end: number } | null {
  let position = start + 1;
  const negated = pattern[position] === "!" || pattern[position] === "^";
  if (negated) position++;
  const parts: CharSet[] = [];
  let first = true;
  while (position < pattern.length) {
    const char = pattern[position]!;
    if (char === "]" && !first) {
      const set = union(...parts);
      return {
        set: negated ? complement(union(set, singleton(0x2f)), MAX_CODE_UNIT) : set,
        end: position + 1,
      };
    }
    first = false;
    if (char === "[" && pattern[position + 1] === ":") {
      const close = pattern.indexOf(":]", position + 2);
      const posix = close === -1 ? undefined : POSIX_CLASSES[pattern.slice(position + 2, close)];
      if (posix !== undefined) {
        parts.push(posix);
        position = close + 2;
        continue;
      }
    }
    let low = char;
    if (char === "\\" && position + 1 < pattern.length) low = pattern[++position]!;
    position++;
    if (pattern[position] === "-" && position + 1 < pattern.length && pattern[position + 1] !== "]") {
      let high = pattern[position + 1]!;
      position += 2;
      if (high === "\\" && position < pattern.length) high = pattern[position++]!;
      const [a, b] = [low.charCodeAt(0), high.charCodeAt(0)];
      if (a <= b) parts.push([a, b]);
      continue;
    }
    parts.push(singleton(low.charCodeAt(0)));
  }
  return null;
}

class GlobParser {
  #pattern: string;
  #depth: number;
  #position = 0;

  /** `depth` > 0 inside a brace alternative, where "**" is a plain "*". */
  constructor(pattern: string, depth = 0) {
    this.#pattern = pattern;
    this.#depth = depth;
  }

  parse(): RegexNode {
    const pattern = this.#pattern;
    const items: RegexNode[] = [];
    while (this.#position < pattern.length) {
      const char = pattern[this.#position]!;
      switch (char) {
        case "\\":
          this.#position++;
          items.push(literal(pattern[this.#position++] ?? "\\"));
          break;
        case "*":
          this.#star(items);
          break;
        case "?":
          this.#position++;
          items.push({ type: "set", set: NOT_SLASH });
          break;
        case "[": {
          const bracket = parseBracket(pattern, this.#position);
          if (bracket === null) {
            this.#position++;
            items.push(literal("["));
          } else {
            this.#position = bracket.end;
            items.push({ type: "set", set: bracket.set });
          }
          break;
        }
        case "{":
          items.push(this.#brace());
          break;
        default:
          this.#position++;
          items.push(literal(char));
      }
    }
    return { type: "sequence", items };
  }

  #star(items: RegexNode[]): void {
    const pattern = this.#pattern;
    const start = this.#position;
    while (pattern[this.#position] === "*") this.#position++;
    if (this.#position - start !== 2 || this.#depth > 0) {
      items.push(STAR);
      return;
    }
    const atSegmentStart = start === 0 || (pattern[start - 1] === "/" && !isEscaped(pattern, start - 1));
    const atSegmentEnd = this.#position === pattern.length || pattern[this.#position] === "/";
    if (atSegmentStart && atSegmentEnd) {
      if (this.#position < pattern.length) {
        this.#position++; // the "/" after "**"
        items.push(DIRECTORIES);
        return;
      }
      // "a/**/**" is "a/**".
      let slash = start - 1;
      while (items[items.length - 1] === DIRECTORIES) {
        items.pop();
        slash -= 3;
      }
      const last = items[items.length - 1];
      const previousSegment = pattern.slice(pattern.lastIndexOf("/", slash - 1) + 1, Math.max(slash, 0));
      if (slash < 0 || last === undefined || last.type !== "set" || /(^|[^\\])\*/.test(previousSegment)) {
        items.push(ANYTHING);
        return;
      }
      // "a/**" matches "a" and everything below it (unless a "*" precedes, as in picomatch): the "/" before
      // becomes part of an optional tail.
      items.pop();
      items.push({
        type: "repeat",
        body: { type: "sequence", items: [literal("/"), ANYTHING] },
        min: 0,
        max: 1,
        greedy: true,
      });
      return;
    }
    // A leading "**" glued to a name ("**.ts") searches every directory, as picomatch does.
    if (start === 0) items.push(DIRECTORIES);
    items.push(STAR);
  }

  // "{a,b}" or "{1..5}"; a brace without a comma or range is a literal "{" (its "}" is read as a literal).
  #brace(): RegexNode {
    const pattern = this.#pattern;
    const start = this.#position;
    const end = closingBrace(pattern, start);
    const inner = end === -1 ? "" : pattern.slice(start + 1, end);
    const range = end === -1 ? null : braceRange(inner);
    if (range !== null) {
      this.#position = end + 1;
      return { type: "alternation", alternatives: range.map(literalSequence) };
    }
    const alternatives = end === -1 ? [] : splitAlternatives(inner);
    if (alternatives.length < 2) {
      this.#position++;
      return literal("{");
    }
    this.#position = end + 1;
    return {
      type: "alternation",
      alternatives: alternatives.map((alternative) => new GlobParser(alternative, this.#depth + 1).parse()),
    };
  }
}

function literalSequence(text: string): RegexNode {
  return { type: "sequence", items: [...text].map(literal) };
}

function isEscaped(pattern: string, index: number): boolean {
  let backslashes = 0;
  for (let at = index - 1; at >= 0 && pattern[at] === "\\"; at--) backslashes++;
  return backslashes % 2 === 1;
}

function closingBrace(pattern: string, start: number): number {
  let depth = 0;
  for (let index = start; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === "\\") index++;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return index;
  }
  return -1;
}

// The alternatives of a brace's inside, split at its top-level commas.
function splitAlternatives(inner: string): string[] {
  const alternatives: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < inner.length; index++) {
    const char = inner[index];
    if (char === "\\") index++;
    else if (char === "{") depth++;
    else if (char === "}") depth--;
    else if (char === "," && depth === 0) {
      alternatives.push(inner.slice(start, index));
      start = index + 1;
    }
  }
  alternatives.push(inner.slice(start));
  return alternatives;
}

// "1..5", "-2..2", "a..e": the values, or null when the text is not a range.
function braceRange(inner: string): string[] | null {
  const numbers = /^(-?\d+)\.\.(-?\d+)$/.exec(inner);
  const letters = /^([A-Za-z])\.\.([A-Za-z])$/.exec(inner);
  if (numbers === null && letters === null) return null;
  const [from, to] = numbers !== null
    ? [Number(numbers[1]), Number(numbers[2])]
    : [letters![1]!.charCodeAt(0), letters![2]!.charCodeAt(0)];
  const count = Math.abs(to - from) + 1;
  if (count > MAX_BRACE_RANGE) {
    throw new GlobError(
      `the range "{${inner}}" has ${count} values (at most ${MAX_BRACE_RANGE}); use "*" instead`,
    );
  }
  const step = from <= to ? 1 : -1;
  const values: string[] = [];
  for (let value = from; value !== to + step; value += step) {
    values.push(numbers !== null ? String(value) : String.fromCharCode(value));
  }
  return values;
}
