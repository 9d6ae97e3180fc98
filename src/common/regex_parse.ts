/**
 * A parser for JavaScript regular expressions, as Grep accepts them (with or without the `u` flag), into a
 * tree that `src/common/regex.ts` rewrites for V8's linear-time engine.
 *
 * The parser runs only on patterns V8 has already compiled, so it reports no syntax errors; it implements
 * the syntax V8 accepts, including the legacy forms of non-Unicode mode (`\8`, octal escapes, a `{` that does
 * not start a quantifier, `[\w-z]`). Case-insensitivity is applied while parsing: every character and class
 * becomes the set of characters it matches under `i`, so the tree needs no flag. Lookarounds and
 * backreferences are reported as unsupported: no linear-time engine can run them.
 *
 * @module
 */
import { caseClosure, type CharSet, complement, LINE_TERMINATORS, singleton, union } from "./char_sets.ts";
import { RegexCursor } from "./regex_cursor.ts";

/** Where an assertion holds: `^`, `$` (both per line), `\b`, `\B`. */
export type AssertionKind = "line-start" | "line-end" | "word-boundary" | "not-word-boundary";

/** A regular expression as a tree, with case folding already applied. */
export type RegexNode =
  | { type: "empty" }
  | { type: "set"; set: CharSet }
  | { type: "sequence"; items: RegexNode[] }
  | { type: "alternation"; alternatives: RegexNode[] }
  | { type: "repeat"; body: RegexNode; min: number; max: number; greedy: boolean }
  | { type: "assertion"; kind: AssertionKind }
  | { type: "capture"; body: RegexNode };

/** The outcome of `parseRegex`: the tree, or a construct that cannot be supported and why. */
export type ParseResult =
  | { ok: true; node: RegexNode }
  | {
    ok: false;
    /** The construct as the model should read it, e.g. `lookahead "(?="` or `backreference "\1"`. */
    construct: string;
    /** Why, completing "because …". */
    reason: string;
  };

/** Options of `parseRegex`. */
export interface ParseOptions {
  /** Parse with the syntax and semantics of the `u` flag (code points, `\p{…}`, `\u{…}`). */
  unicode: boolean;
  /** Apply the `i` flag. */
  ignoreCase: boolean;
}

/** Parses a pattern that V8 compiles with the same flags. */
export function parseRegex(source: string, options: ParseOptions): ParseResult {
  try {
    const parser = new Parser(source, options.unicode);
    return { ok: true, node: parser.parse({ ignoreCase: options.ignoreCase, dotAll: false }) };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, construct: error.construct, reason: error.reason };
    throw error;
  }
}

const LINEAR_TIME = "every search must finish in linear time";

class Unsupported extends Error {
  construct: string;
  reason: string;
  constructor(construct: string, reason = LINEAR_TIME) {
    super(construct);
    this.construct = construct;
    this.reason = reason;
  }
}

interface Flags {
  ignoreCase: boolean;
  dotAll: boolean;
}

/** A class member: one character (which may start a range) or a set such as `\d`. */
type ClassAtom = { code: number } | { set: CharSet };

const QUANTIFIER_BRACES = /\{(\d+)(?:(,)(\d*))?\}/y;
const MODIFIERS = /\?([ims]*)(?:-([ims]*))?:/y;

class Parser {
  #at: RegexCursor;
  #groupCount: number;
  #namedGroups: boolean;

  constructor(source: string, unicode: boolean) {
    this.#at = new RegexCursor(source, unicode);
    const groups = countGroups(source);
    this.#groupCount = groups.count;
    this.#namedGroups = groups.named;
  }

  parse(flags: Flags): RegexNode {
    const node = this.#disjunction(flags);
    if (this.#at.position < this.#at.source.length) {
      throw new SyntaxError(`Unexpected "${this.#at.source[this.#at.position]}" at ${this.#at.position}`);
    }
    return node;
  }

  #disjunction(flags: Flags): RegexNode {
    const alternatives = [this.#alternative(flags)];
    while (this.#at.peek() === "|") {
      this.#at.position++;
      alternatives.push(this.#alternative(flags));
    }
    return alternatives.length === 1 ? alternatives[0]! : { type: "alternation", alternatives };
  }

  #alternative(flags: Flags): RegexNode {
    const items: RegexNode[] = [];
    while (this.#at.position < this.#at.source.length && this.#at.peek() !== "|" && this.#at.peek() !== ")") {
      items.push(this.#term(flags));
    }
    if (items.length === 0) return { type: "empty" };
    return items.length === 1 ? items[0]! : { type: "sequence", items };
  }

  #term(flags: Flags): RegexNode {
    const char = this.#at.peek();
    if (char === "^" || char === "$") {
      this.#at.position++;
      return { type: "assertion", kind: char === "^" ? "line-start" : "line-end" };
    }
    if (char === "\\" && (this.#at.peek(1) === "b" || this.#at.peek(1) === "B")) {
      this.#at.position += 2;
      return { type: "assertion", kind: this.#at.peek(-1) === "b" ? "word-boundary" : "not-word-boundary" };
    }
    const atom = char === "(" ? this.#group(flags) : this.#atom(flags);
    return this.#quantified(atom);
  }

  #quantified(body: RegexNode): RegexNode {
    let min: number;
    let max: number;
    const char = this.#at.peek();
    if (char === "*" || char === "+" || char === "?") {
      this.#at.position++;
      [min, max] = char === "*" ? [0, Infinity] : char === "+" ? [1, Infinity] : [0, 1];
    } else if (char === "{") {
      QUANTIFIER_BRACES.lastIndex = this.#at.position;
      const match = QUANTIFIER_BRACES.exec(this.#at.source);
      // Without `u`, a "{" that does not start a quantifier is a literal (V8 has accepted the pattern).
      if (match === null) return body;
      this.#at.position += match[0].length;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    } else {
      return body;
    }
    const greedy = this.#at.peek() !== "?";
    if (!greedy) this.#at.position++;
    return { type: "repeat", body, min, max, greedy };
  }

  #group(flags: Flags): RegexNode {
    this.#at.position++; // "("
    let inner = flags;
    if (this.#at.startsWith("?=") || this.#at.startsWith("?!")) {
      throw new Unsupported(
        `lookahead "(${this.#at.source.slice(this.#at.position, this.#at.position + 2)}"`,
      );
    }
    if (this.#at.startsWith("?<=") || this.#at.startsWith("?<!")) {
      throw new Unsupported(
        `lookbehind "(${this.#at.source.slice(this.#at.position, this.#at.position + 3)}"`,
      );
    }
    if (this.#at.startsWith("?:")) {
      this.#at.position += 2;
    } else if (this.#at.startsWith("?<")) {
      this.#at.position = this.#at.source.indexOf(">", this.#at.position) + 1;
    } else if (this.#at.peek() === "?") {
      MODIFIERS.lastIndex = this.#at.position;
      const match = MODIFIERS.exec(this.#at.source);
      if (match === null) throw new SyntaxError(`Unknown group at ${this.#at.position}`);
      this.#at.position += match[0].length;
      const [, added = "", removed = ""] = match;
      if (removed.includes("m")) {
        throw new Unsupported(
          'the modifier "(?-m:"',
          '"^" and "$" always match at the start and end of each line',
        );
      }
      inner = {
        ignoreCase: added.includes("i") || (flags.ignoreCase && !removed.includes("i")),
        dotAll: added.includes("s") || (flags.dotAll && !removed.includes("s")),
      };
    }
    const body = this.#disjunction(inner);
    if (this.#at.peek() !== ")") throw new SyntaxError(`Unterminated group at ${this.#at.position}`);
    this.#at.position++;
    return body;
  }

  #atom(flags: Flags): RegexNode {
    const char = this.#at.peek();
    if (char === ".") {
      this.#at.position++;
      return this.#setNode(
        flags.dotAll ? [0, this.#at.max] : complement(LINE_TERMINATORS, this.#at.max),
        flags,
      );
    }
    if (char === "[") return this.#setNode(this.#class(flags), { ...flags, ignoreCase: false });
    if (char === "\\") {
      this.#at.position++;
      const escaped = this.#atomEscape(flags);
      return "code" in escaped
        ? this.#setNode(singleton(escaped.code), flags)
        : this.#setNode(escaped.set, flags);
    }
    return this.#setNode(singleton(this.#at.sourceCharacter()), flags);
  }

  #setNode(set: CharSet, flags: Flags): RegexNode {
    return { type: "set", set: flags.ignoreCase ? caseClosure(set, this.#at.unicode) : set };
  }

  // After "\" outside a class: an escape that matches a character or a set.
  #atomEscape(flags: Flags): ClassAtom {
    const char = this.#at.peek();
    const set = this.#at.setEscape(char, flags.ignoreCase);
    if (set !== null) return { set };
    if (char >= "1" && char <= "9") {
      const digits = /\d+/y;
      digits.lastIndex = this.#at.position;
      const number = digits.exec(this.#at.source)![0];
      if (this.#at.unicode || Number(number) <= this.#groupCount) {
        throw new Unsupported(`backreference "\\${number}"`);
      }
      return { code: this.#at.legacyEscape() };
    }
    if (char === "k" && (this.#at.unicode || this.#namedGroups)) {
      const end = this.#at.source.indexOf(">", this.#at.position);
      throw new Unsupported(`backreference "\\${this.#at.source.slice(this.#at.position, end + 1)}"`);
    }
    return { code: this.#at.characterEscape(false) };
  }

  // Inside a class, after "\".
  #classEscape(flags: Flags): ClassAtom {
    const char = this.#at.peek();
    if (char === "b") {
      this.#at.position++;
      return { code: 0x08 };
    }
    const set = this.#at.setEscape(char, flags.ignoreCase);
    if (set !== null) return { set };
    if (char >= "1" && char <= "9" && !this.#at.unicode) return { code: this.#at.legacyEscape() };
    return { code: this.#at.characterEscape(true) };
  }

  // "[…]": the set of what it matches (case folding applied here, before a "^" complements it).
  #class(flags: Flags): CharSet {
    this.#at.position++; // "["
    const negated = this.#at.peek() === "^";
    if (negated) this.#at.position++;
    const parts: CharSet[] = [];
    while (this.#at.peek() !== "]") {
      if (this.#at.position >= this.#at.source.length) throw new SyntaxError("Unterminated class");
      const first = this.#classAtom(flags);
      if (this.#at.peek() === "-" && this.#at.peek(1) !== "]" && this.#at.peek(1) !== "") {
        this.#at.position++;
        const second = this.#classAtom(flags);
        if ("code" in first && "code" in second) {
          parts.push([first.code, second.code]);
          continue;
        }
        // Without `u`, "[\w-z]" is \w, "-" and "z".
        parts.push(atomSet(first), singleton(0x2d), atomSet(second));
        continue;
      }
      parts.push(atomSet(first));
    }
    this.#at.position++; // "]"
    let set = union(...parts);
    if (flags.ignoreCase) set = caseClosure(set, this.#at.unicode);
    return negated ? complement(set, this.#at.max) : set;
  }

  #classAtom(flags: Flags): ClassAtom {
    if (this.#at.peek() !== "\\") return { code: this.#at.sourceCharacter() };
    this.#at.position++;
    return this.#classEscape(flags);
  }
}

function atomSet(atom: ClassAtom): CharSet {
  return "code" in atom ? singleton(atom.code) : atom.set;
}

/** Counts capturing groups (a "\N" up to this count is a backreference) and notes named groups. */
function countGroups(source: string): { count: number; named: boolean } {
  let count = 0;
  let named = false;
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === "\\") {
      index++;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    if (char === "[") inClass = true;
    if (char !== "(") continue;
    if (source[index + 1] !== "?") {
      count++;
    } else if (source[index + 2] === "<" && source[index + 3] !== "=" && source[index + 3] !== "!") {
      count++;
      named = true;
    }
  }
  return { count, named };
}
