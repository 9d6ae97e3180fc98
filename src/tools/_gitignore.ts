/**
 * `.gitignore` rules, compiled to regexes that V8 can always finish in linear time: a repository may be
 * hostile, and a rule such as "*a*a*a*…b" against a long file name must not spin a worker that Deno cannot
 * stop. Case-sensitive, as git on Linux (core.ignoreCase is false there).
 *
 * Semantics follow gitignore(5): blank lines and "#" comments are skipped; trailing spaces are dropped unless
 * escaped with "\"; "!" re-includes; a trailing "/" matches directories only; a rule with a "/" at the start
 * or in the middle is relative to the ignore file's directory, any other matches a name at any depth; `*`,
 * `?` and `[…]` never match "/"; "**\/" at the start, "/**" at the end and "/**\/" in the middle span
 * directories, any other "**" is a "*"; "\" escapes a character. Within a file the last matching rule wins.
 *
 * Literal rules ("node_modules", "/dist") are looked up in maps and "*.ext" rules compared as suffixes; the
 * others are grouped into a few alternations (one regex call per group and path), each alternative marked by
 * a capture group so that the highest-priority match is found in one call.
 *
 * @module
 */
import { compileTree, MAX_PATTERN_UNITS, type RegexNode, treeUnits } from "../common/regex.ts";
import {
  ANY_CHARACTER,
  ANYTHING,
  DIRECTORIES,
  literal,
  NOT_SLASH,
  parseBracket,
  STAR,
} from "../common/glob.ts";
import { assertNever } from "../common/errors.ts";

/** What the last matching rule of a file says about a path: ignore it, re-include it ("!"), or nothing. */
export type IgnoreVerdict = "ignored" | "unignored" | null;

/** Bytes of an ignore file that are read; the rest is left out, with a problem reported. */
export const MAX_IGNORE_FILE_BYTES = 1 << 20;
/** Rules of one ignore file that are applied at most. */
export const MAX_IGNORE_RULES = 10_000;
/** Characters of one rule at most; longer rules are skipped. */
export const MAX_RULE_LENGTH = 1_000;
/**
 * Units (see `src/common/regex.ts`) of all wildcard rules of one file together. Every path is tested against them, and
 * the linear engine costs ~15 ns per unit per character: this keeps one test of a 4,096-character path under
 * ~1 s even when a hostile file makes every rule backtrack.
 */
export const MAX_IGNORE_UNITS = 8_000;

interface Rule {
  negated: boolean;
  directoryOnly: boolean;
}

interface Group {
  regex: RegExp;
  /** Rule index of each capture group, in the order of the alternatives (highest priority first). */
  indices: number[];
  /** The highest rule index in the group: when a better match is already known, the group is skipped. */
  highest: number;
}

/** Matchers for one target: a path's last segment (name) or the whole path from the ignore file's directory. */
class TargetMatchers {
  exact = new Map<string, number>();
  exactDirectory = new Map<string, number>();
  suffixes: { suffix: string; index: number; directoryOnly: boolean }[] = [];
  groups: Group[] = [];
  pending: { node: RegexNode; index: number; units: number }[] = [];

  isEmpty(): boolean {
    return this.exact.size === 0 && this.exactDirectory.size === 0 && this.suffixes.length === 0 &&
      this.groups.length === 0;
  }

  /** The highest index above `best` of a rule matching `text`, else `best`. */
  best(text: string, isDirectory: boolean, best: number): number {
    const exact = this.exact.get(text);
    if (exact !== undefined && exact > best) best = exact;
    if (isDirectory) {
      const directory = this.exactDirectory.get(text);
      if (directory !== undefined && directory > best) best = directory;
    }
    for (const { suffix, index, directoryOnly } of this.suffixes) {
      if (index > best && (isDirectory || !directoryOnly) && text.endsWith(suffix)) best = index;
    }
    for (const group of this.groups) {
      if (group.highest <= best) continue;
      const match = group.regex.exec(isDirectory ? `${text}/` : text);
      if (match === null) continue;
      for (let capture = 1; capture < match.length; capture++) {
        if (match[capture] === undefined) continue;
        best = Math.max(best, group.indices[capture - 1]!);
        break;
      }
    }
    return best;
  }
}

/** The compiled rules of one ignore file (a `.gitignore` or `.git/info/exclude`). */
export class IgnoreRules {
  /** Why rules were left out (too long, too many, too complex), for a notice; empty when none were. */
  readonly problems: string[] = [];
  #rules: Rule[] = [];
  #names = new TargetMatchers();
  #paths = new TargetMatchers();

  /** Whether some rule names a path (has a "/"), so `test` needs the path and not only the name. */
  get needsPath(): boolean {
    return !this.#paths.isEmpty();
  }

  /** Whether the file has no rules at all. */
  get isEmpty(): boolean {
    return this.#rules.length === 0;
  }

  /**
   * What the file's rules say about an entry: `name` is its last segment, `path` its path relative to the
   * ignore file's directory (used only when `needsPath`), both without a trailing "/".
   */
  test(name: string, path: string, isDirectory: boolean): IgnoreVerdict {
    let best = this.#names.best(name, isDirectory, -1);
    if (this.needsPath) best = this.#paths.best(path, isDirectory, best);
    if (best === -1) return null;
    return this.#rules[best]!.negated ? "unignored" : "ignored";
  }

  /** Whether the rules ignore a directory given by its path relative to the file's directory, or one above it. */
  ignoresDirectory(path: string): boolean {
    const segments = path.split("/");
    for (let count = 1; count <= segments.length; count++) {
      const prefix = segments.slice(0, count).join("/");
      if (this.test(segments[count - 1]!, prefix, true) === "ignored") return true;
    }
    return false;
  }

  /** Compiles the rules of an ignore file's text. */
  static parse(text: string): IgnoreRules {
    const rules = new IgnoreRules();
    const lines = text.split(/\r?\n/);
    let units = 0;
    let skippedLong = 0;
    let skippedComplex = 0;
    for (const [lineIndex, line] of lines.entries()) {
      if (line.length > MAX_RULE_LENGTH) {
        skippedLong++;
        continue;
      }
      const parsed = parseRule(line);
      if (parsed === null) continue;
      if (rules.#rules.length === MAX_IGNORE_RULES) {
        rules.problems.push(
          `the rules from line ${lineIndex + 1} on were not applied (at most ${MAX_IGNORE_RULES} rules)`,
        );
        break;
      }
      const index = rules.#rules.length;
      const target = parsed.byName ? rules.#names : rules.#paths;
      switch (parsed.kind.type) {
        case "exact":
          (parsed.rule.directoryOnly ? target.exactDirectory : target.exact).set(parsed.kind.text, index);
          break;
        case "suffix":
          target.suffixes.push({ suffix: parsed.kind.text, index, directoryOnly: parsed.rule.directoryOnly });
          break;
        case "regex": {
          const node = withDirectoryMarker(parsed.kind.node, parsed.rule.directoryOnly);
          const size = treeUnits(node);
          if (size === null || units + size > MAX_IGNORE_UNITS) {
            skippedComplex++;
            continue;
          }
          units += size;
          target.pending.push({ node, index, units: size });
          break;
        }
        default:
          assertNever(parsed.kind);
      }
      rules.#rules.push(parsed.rule);
    }
    if (skippedLong > 0) {
      rules.problems.push(`${skippedLong} rule(s) longer than ${MAX_RULE_LENGTH} characters were skipped`);
    }
    for (const target of [rules.#names, rules.#paths]) skippedComplex += groupRules(target);
    if (skippedComplex > 0) {
      rules.problems.push(`${skippedComplex} rule(s) with too many wildcards were skipped`);
    }
    return rules;
  }
}

// Combines pending wildcard rules into alternations of at most MAX_PATTERN_UNITS units, highest index first;
// returns how many rules were dropped because V8's linear engine refused their group (never expected).
function groupRules(target: TargetMatchers): number {
  const pending = target.pending.reverse();
  target.pending = [];
  let dropped = 0;
  let start = 0;
  while (start < pending.length) {
    let end = start;
    let units = 0;
    while (end < pending.length && (end === start || units + pending[end]!.units + 2 <= MAX_PATTERN_UNITS)) {
      units += pending[end]!.units + 2;
      end++;
    }
    const members = pending.slice(start, end);
    const node: RegexNode = {
      type: "sequence",
      items: [
        { type: "assertion", kind: "line-start" },
        {
          type: "alternation",
          alternatives: members.map((member): RegexNode => ({ type: "capture", body: member.node })),
        },
        { type: "assertion", kind: "line-end" },
      ],
    };
    const compiled = compileTree(node, { flags: "", maxUnits: MAX_PATTERN_UNITS + 2 * members.length + 4 });
    if (compiled.ok) {
      target.groups.push({
        regex: compiled.regex,
        indices: members.map((member) => member.index),
        highest: members[0]!.index,
      });
    } else {
      dropped += members.length;
    }
    start = end;
  }
  return dropped;
}

// A directory is tested as "path/": a directory-only rule must end there, any other rule may.
function withDirectoryMarker(node: RegexNode, directoryOnly: boolean): RegexNode {
  const slash = literal("/");
  const marker: RegexNode = directoryOnly
    ? slash
    : { type: "repeat", body: slash, min: 0, max: 1, greedy: true };
  return { type: "sequence", items: [node, marker] };
}

type RuleKind =
  | { type: "exact"; text: string }
  | { type: "suffix"; text: string }
  | { type: "regex"; node: RegexNode };

interface ParsedRule {
  rule: Rule;
  /** Matched against the name (no "/" but a trailing one), rather than the path. */
  byName: boolean;
  kind: RuleKind;
}

/** Parses one line of an ignore file; null for blank lines, comments and rules that match nothing. */
export function parseRule(line: string): ParsedRule | null {
  let body = line;
  // Trailing spaces are dropped unless escaped.
  let end = body.length;
  while (end > 0 && body[end - 1] === " " && !isEscapedAt(body, end - 1)) end--;
  body = body.slice(0, end);
  if (body === "" || body.startsWith("#")) return null;
  const negated = body.startsWith("!");
  if (negated) body = body.slice(1);
  const directoryOnly = body.endsWith("/") && !isEscapedAt(body, body.length - 1);
  if (directoryOnly) body = body.slice(0, -1);
  if (body === "" || (body.endsWith("\\") && !isEscapedAt(body, body.length - 1))) return null;
  let byName = !body.includes("/");
  if (body.startsWith("**/") && !body.slice(3).includes("/")) {
    body = body.slice(3);
    byName = true;
  } else if (body.startsWith("/")) {
    body = body.slice(1);
  }
  const tokens = tokenize(body);
  const rule = { negated, directoryOnly };
  if (tokens.every((token) => typeof token === "string")) {
    return { rule, byName, kind: { type: "exact", text: tokens.join("") } };
  }
  const rest = tokens.slice(1);
  if (byName && tokens[0] === STAR && rest.every((token) => typeof token === "string")) {
    return { rule, byName, kind: { type: "suffix", text: rest.join("") } };
  }
  const items = tokens.map((token) => typeof token === "string" ? literal(token) : token);
  return { rule, byName, kind: { type: "regex", node: { type: "sequence", items } } };
}

/** A rule's pattern as literal characters and wildcard nodes. */
function tokenize(pattern: string): (string | RegexNode)[] {
  const tokens: (string | RegexNode)[] = [];
  let position = 0;
  while (position < pattern.length) {
    const char = pattern[position]!;
    if (char === "\\") {
      tokens.push(pattern[position + 1]!);
      position += 2;
      continue;
    }
    if (char === "?") {
      tokens.push({ type: "set", set: NOT_SLASH });
      position++;
      continue;
    }
    if (char === "[") {
      const bracket = parseBracket(pattern, position);
      if (bracket !== null) {
        tokens.push({ type: "set", set: bracket.set });
        position = bracket.end;
        continue;
      }
    }
    if (char !== "*") {
      tokens.push(char);
      position++;
      continue;
    }
    const start = position;
    while (pattern[position] === "*") position++;
    const atStart = start === 0 || pattern[start - 1] === "/";
    const atEnd = position === pattern.length || pattern[position] === "/";
    if (position - start !== 2 || !atStart || !atEnd) {
      tokens.push(STAR);
    } else if (position === pattern.length) {
      // "a/**": everything inside a, not a itself; "**" alone: everything.
      tokens.push(
        start === 0 ? ANYTHING : { type: "sequence", items: [{ type: "set", set: ANY_CHARACTER }, ANYTHING] },
      );
    } else {
      tokens.push(DIRECTORIES);
      position++; // the "/" after "**"
    }
  }
  return tokens;
}

function isEscapedAt(text: string, index: number): boolean {
  let backslashes = 0;
  for (let at = index - 1; at >= 0 && text[at] === "\\"; at--) backslashes++;
  return backslashes % 2 === 1;
}

/** The rules of one ignore file and how to express a walked path relative to the file's directory. */
export interface RuleSet {
  /** Relative path of the ignore file's directory from the start directory ("" for the start itself). */
  base: string;
  /** Prepended to paths relative to the start directory when `base` lies above the start directory. */
  prefix: string;
  rules: IgnoreRules;
}

/**
 * Whether a walked path is ignored by the rule sets that apply to its directory (shallowest first): the last
 * rule that matches decides, and a deeper ignore file overrides a shallower one, as in git. `relativePath` is
 * relative to the walk's start directory, without a trailing "/".
 */
export function isIgnored(
  ruleSets: readonly RuleSet[],
  relativePath: string,
  name: string,
  isDirectory: boolean,
): boolean {
  for (let index = ruleSets.length - 1; index >= 0; index--) {
    const set = ruleSets[index]!;
    const local = set.rules.needsPath
      ? set.prefix + (set.base === "" ? relativePath : relativePath.slice(set.base.length + 1))
      : "";
    const verdict = set.rules.test(name, local, isDirectory);
    if (verdict === "ignored") return true;
    if (verdict === "unignored") return false;
  }
  return false;
}
