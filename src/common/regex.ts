/**
 * Regular expressions that V8 can always finish in linear time.
 *
 * Deno cannot stop a worker stuck in one long regex call, so every regex that a tool runs on model or
 * repository input is rewritten into a form that V8's linear-time engine accepts: no `i` flag (case folding
 * is expanded into classes), no `u` flag (`\p{…}` becomes ranges of the Basic Multilingual Plane, astral
 * characters become surrogate pairs), counted repetition expanded by hand (the engine refuses replication
 * beyond 16). Lookarounds and backreferences cannot be rewritten and are refused. The source is checked once
 * with the `l` flag (which throws for anything the linear engine cannot run), then compiled without it: V8's
 * backtracking engine is 10–100× faster, and with `--enable-experimental-regexp-engine-on-excessive-backtracks`
 * (scripts/runtime_flags.txt) it hands a call that backtracks too much to the linear engine, which it can
 * only do for such a source.
 *
 * The rewrite matches what V8 matches, with two exceptions too rare to cost more code: with both `u` and `i`,
 * V8's `\b` also counts ſ (U+017F) and K (U+212A) as word characters; and where the body of a counted
 * repetition can match empty, the match found can be longer or shorter than V8's (not whether or where it
 * starts, which is all Grep uses).
 *
 * @module
 */
import { setSource } from "./char_sets.ts";
import { parseRegex, type RegexNode } from "./regex_parse.ts";
import { assertNever } from "./errors.ts";

export type { RegexNode } from "./regex_parse.ts";

/**
 * The largest automaton, in units (about one per character, class, quantifier, alternative or assertion
 * after expansion), that a pattern may compile to. The linear engine spends ~15 ns per unit per character
 * of text, so this also sets how much text one call may search (see `_line_search.ts`).
 */
export const MAX_PATTERN_UNITS = 2_000;

/** A compiled regex and the size of its automaton. */
export interface LinearRegex {
  ok: true;
  regex: RegExp;
  /** Size of the automaton in units (see `MAX_PATTERN_UNITS`). */
  units: number;
  /** Whether the regex has assertions that look at a match's start (`^`, `\b`, `\B`) or end (`$`, `\b`, `\B`). */
  assertions: { start: boolean; end: boolean };
}

/** Why a tree could not be compiled: too large, or refused by the linear engine (a bug of the rewrite). */
export type TreeFailure =
  | { ok: false; reason: "too-large"; units: number }
  | { ok: false; reason: "not-linear"; message: string };

/** Options of `compileTree`. */
export interface CompileOptions {
  /** Flags of the result, from "g", "m", "y" and "d" (never "i", "u" or "v"). */
  flags: string;
  /** Refuse trees larger than this many units. Default `MAX_PATTERN_UNITS`. */
  maxUnits?: number;
  /** Whether sets hold code points (a pattern parsed with `u`) rather than code units. Default false. */
  unicode?: boolean;
}

/** Compiles a tree into a regex that V8's linear-time engine can run, checking that it can. */
export function compileTree(node: RegexNode, options: CompileOptions): LinearRegex | TreeFailure {
  const maxUnits = options.maxUnits ?? MAX_PATTERN_UNITS;
  let emitted: Emitted;
  const emitter = new Emitter(options.unicode ?? false, maxUnits);
  try {
    emitted = emitter.emit(node);
  } catch (error) {
    if (error instanceof TooLarge) return { ok: false, reason: "too-large", units: error.units };
    throw error;
  }
  const problem = linearProblem(emitted.source, options.flags);
  if (problem !== null) return { ok: false, reason: "not-linear", message: problem };
  return {
    ok: true,
    regex: new RegExp(emitted.source, options.flags),
    units: Math.max(emitted.units, 1),
    assertions: emitter.assertions,
  };
}

/** The size in units of the regex a tree compiles to, or null when it is larger than `maxUnits`. */
export function treeUnits(node: RegexNode, maxUnits: number = MAX_PATTERN_UNITS): number | null {
  try {
    return new Emitter(false, maxUnits).emit(node).units;
  } catch (error) {
    if (error instanceof TooLarge) return null;
    throw error;
  }
}

/** Options of `compileSearchPattern`. */
export interface SearchPatternOptions {
  ignoreCase: boolean;
  /** Flags of the result, as for `compileTree`. */
  flags: string;
}

/**
 * Compiles a regular expression from the model with JavaScript semantics (the `u` flag applies when the
 * pattern needs it: `\p{…}`, `\u{…}`, or syntax only valid with it). On failure, the message completes
 * `Cannot search with pattern "…": ` or, for invalid syntax, is a whole sentence.
 */
export function compileSearchPattern(
  pattern: string,
  options: SearchPatternOptions,
): LinearRegex | { ok: false; message: string } {
  const baseFlags = options.ignoreCase ? "i" : "";
  const attempts = UNICODE_ESCAPES.test(pattern) ? [true] : [false, true];
  let unicode: boolean | null = null;
  let failure = "";
  for (const attempt of attempts) {
    try {
      new RegExp(pattern, attempt ? `${baseFlags}u` : baseFlags);
      unicode = attempt;
      break;
    } catch (error) {
      failure ||= error instanceof Error ? error.message : String(error);
    }
  }
  if (unicode === null) return { ok: false, message: `Invalid pattern "${pattern}": ${failure}` };
  const parsed = parseRegex(pattern, { unicode, ignoreCase: options.ignoreCase });
  const prefix = `Cannot search with pattern "${pattern}": `;
  if (!parsed.ok) {
    return {
      ok: false,
      message: `${prefix}${parsed.construct} is not supported, because ${parsed.reason}; rewrite the ` +
        `pattern without it, or use Bash with "grep -P"`,
    };
  }
  const compiled = compileTree(parsed.node, { flags: options.flags, unicode });
  if (compiled.ok) return compiled;
  switch (compiled.reason) {
    case "too-large":
      return {
        ok: false,
        message: `${prefix}it is too large once expanded (more than ${MAX_PATTERN_UNITS} steps): counted ` +
          `repetitions such as "{100}" and case-insensitive matching multiply its size; shorten it, or ` +
          `use Bash with "grep -E"`,
      };
    case "not-linear":
      return {
        ok: false,
        message: `${prefix}it cannot be run in linear time (${compiled.message}); simplify it, or use ` +
          `Bash with "grep -E"`,
      };
    default:
      return assertNever(compiled);
  }
}

/** Escapes whose meaning needs the `u` flag (without it, `\p{L}` would silently match "p{L}"). */
const UNICODE_ESCAPES = /\\[pP]\{|\\u\{/;

let linearFlag: boolean | null = null;

/**
 * Why V8's linear engine refuses the source, or null when it accepts it. When V8 runs without
 * `--enable-experimental-regexp-engine` (the `l` flag is unknown) nothing can be checked: null.
 */
function linearProblem(source: string, flags: string): string | null {
  linearFlag ??= supportsLinearFlag();
  if (!linearFlag) return null;
  try {
    new RegExp(source, `${flags}l`);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function supportsLinearFlag(): boolean {
  try {
    // deno-lint-ignore no-invalid-regexp -- "l" exists only with --enable-experimental-regexp-engine
    new RegExp("", "l");
    return true;
  } catch {
    return false;
  }
}

interface Emitted {
  source: string;
  /** Whether a quantifier may follow `source` directly. */
  atom: boolean;
  /** Whether `source` is a top-level alternation, to be wrapped before anything is appended. */
  alternation: boolean;
  units: number;
}

class TooLarge extends Error {
  units: number;
  constructor(units: number) {
    super(`the pattern has more than ${units} units`);
    this.units = units;
  }
}

/** Characters of regex source at most, whatever the units. */
const MAX_SOURCE_CHARACTERS = 1 << 20;

const ASSERTIONS = { "line-start": "^", "line-end": "$", "word-boundary": "\\b", "not-word-boundary": "\\B" };

class Emitter {
  /** Whether an assertion was emitted. */
  assertions = { start: false, end: false };
  #unicode: boolean;
  #maxUnits: number;

  constructor(unicode: boolean, maxUnits: number) {
    this.#unicode = unicode;
    this.#maxUnits = maxUnits;
  }

  emit(node: RegexNode): Emitted {
    const emitted = this.#node(node);
    this.#check(emitted.units, emitted.source.length);
    return emitted;
  }

  // Large classes (\p{L} is ~5,000 characters of source) can make a small automaton a huge source.
  #check(units: number, length: number): void {
    if (units > this.#maxUnits || length > MAX_SOURCE_CHARACTERS) throw new TooLarge(units);
  }

  #node(node: RegexNode): Emitted {
    switch (node.type) {
      case "empty":
        return { source: "", atom: false, alternation: false, units: 0 };
      case "set": {
        const emitted = setSource(node.set, this.#unicode);
        return { source: emitted.source, atom: emitted.atom, alternation: false, units: emitted.units };
      }
      case "assertion":
        if (node.kind !== "line-end") this.assertions.start = true;
        if (node.kind !== "line-start") this.assertions.end = true;
        return { source: ASSERTIONS[node.kind], atom: false, alternation: false, units: 1 };
      case "capture": {
        const body = this.#node(node.body);
        return { source: `(${body.source})`, atom: true, alternation: false, units: body.units + 1 };
      }
      case "sequence": {
        const parts = node.items.map((item) => this.#node(item));
        const units = parts.reduce((total, part) => total + part.units, 0);
        this.#check(units, parts.reduce((total, part) => total + part.source.length, 0));
        const source = parts.map((part) => part.alternation ? `(?:${part.source})` : part.source).join("");
        return { source, atom: false, alternation: false, units };
      }
      case "alternation": {
        const parts = node.alternatives.map((alternative) => this.#node(alternative));
        const units = parts.reduce((total, part) => total + part.units, 0) + parts.length - 1;
        this.#check(units, parts.reduce((total, part) => total + part.source.length, 0));
        return { source: parts.map((part) => part.source).join("|"), atom: false, alternation: true, units };
      }
      case "repeat":
        return this.#repeat(node);
      default:
        return assertNever(node);
    }
  }

  // x{m,n} becomes m copies of x and n−m nested optionals, so no counted repetition is left.
  #repeat(node: RegexNode & { type: "repeat" }): Emitted {
    const body = this.#node(node.body);
    const { min, max } = node;
    const lazy = node.greedy ? "" : "?";
    const copies = max === Infinity ? Math.max(min, 1) : max;
    const units = body.units * copies + (max === Infinity ? 1 : max - min);
    this.#check(units, (body.source.length + 6) * copies);
    if (max === 0 || body.source === "") return { source: "", atom: false, alternation: false, units: 0 };
    const item = body.atom ? body.source : `(?:${body.source})`;
    let source: string;
    if (max === Infinity) {
      source = min === 0 ? `${item}*${lazy}` : `${item.repeat(min - 1)}${item}+${lazy}`;
    } else if (min === 0 && max === 1) {
      source = `${item}?${lazy}`;
    } else {
      let optional = "";
      for (let count = 0; count < max - min; count++) optional = `(?:${item}${optional})?${lazy}`;
      source = item.repeat(min) + optional;
    }
    return { source, atom: false, alternation: false, units };
  }
}
