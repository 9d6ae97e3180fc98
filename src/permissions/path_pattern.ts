/**
 * The specifier of a file rule (`ReadFile(./.env)`, `EditFile(src/**)`, `Grep(docs)`): a gitignore-style
 * glob compiled by our linear-time glob matcher (src/common/glob.ts).
 *
 *   src/**, ./src, /src   relative to the workspace root (a "/" at the start or inside anchors it there)
 *   .env, *.pem           no "/" inside: a file or folder of that name at any depth, anywhere
 *   //etc/hosts           an absolute path
 *   ~/.ssh/**             relative to the user's home folder
 *
 * A pattern that matches a folder matches everything below it, as in .gitignore. Patterns are matched
 * against real paths (see real_paths.ts), and never resolved themselves: a symlink the agent planted cannot
 * move what a rule covers.
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { assertNever } from "../common/errors.ts";
import { compileGlob, type GlobMatcher } from "../common/glob.ts";
import type { Result } from "./rules.ts";

/** Where a file pattern starts. */
export type PathAnchor = "workspace" | "home" | "absolute" | "anywhere";

/** A compiled file rule specifier. */
export interface PathPattern {
  anchor: PathAnchor;
  /** The glob relative to the anchor, normalised ("src/**"; for "anywhere", one name such as ".env"). */
  glob: string;
  matches: GlobMatcher;
  /** The glob's segments, null for each one with a wildcard: what the pattern names literally. */
  literals: readonly (string | null)[];
}

/** The folders relative patterns start from: both real paths. */
export interface PatternBases {
  workspace: string;
  home: string;
}

/** Compiles a file rule specifier; the error completes `Cannot use rule "EditFile(…)": `. */
export function compilePathPattern(specifier: string): Result<PathPattern> {
  const text = specifier.trim();
  if (text.startsWith("!")) {
    return { ok: false, error: "negated patterns are not supported: write a deny rule for what to exclude" };
  }
  let anchor: PathAnchor;
  let body: string;
  if (text.startsWith("//")) [anchor, body] = ["absolute", text.slice(2)];
  else if (text === "~" || text.startsWith("~/")) [anchor, body] = ["home", text.slice(2)];
  else if (text.startsWith("~")) {
    return { ok: false, error: 'only "~/" is supported: write another user\'s folder as //home/NAME/…' };
  } else if (text.startsWith("/")) [anchor, body] = ["workspace", text.slice(1)];
  else if (text.startsWith("./")) [anchor, body] = ["workspace", text];
  else {
    const inner = text.replace(/\/+$/, "");
    [anchor, body] = [inner.includes("/") ? "workspace" : "anywhere", text];
  }
  const segments = body.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) {
    return { ok: false, error: 'patterns cannot contain "..": write the absolute path as //…' };
  }
  if (segments.length === 0) {
    if (anchor === "anywhere") return { ok: false, error: "it names no path" };
    segments.push("**");
  }
  const glob = segments.join("/");
  const compiled = compileGlob(glob, { basename: anchor === "anywhere" });
  if (!compiled.ok) return { ok: false, error: `invalid pattern "${glob}": ${compiled.message}` };
  const literals = segments.map((segment) => isLiteral(segment) ? segment : null);
  return { ok: true, value: { anchor, glob, matches: compiled.matches, literals } };
}

/** Whether the pattern matches an absolute real path, or a folder that contains it. */
export function matchesPath(pattern: PathPattern, path: string, bases: PatternBases): boolean {
  const relative = relativeToAnchor(pattern.anchor, path, bases);
  if (relative === null) return false;
  if (pattern.matches(relative)) return true;
  for (let slash = relative.lastIndexOf("/"); slash > 0; slash = relative.lastIndexOf("/", slash - 1)) {
    if (pattern.matches(relative.slice(0, slash))) return true;
  }
  return false;
}

/**
 * The pattern's literal segments as an absolute path prefix, for deciding whether a rule names a path
 * explicitly; for "anywhere" patterns, the literal name alone (null when it has a wildcard).
 */
export function literalPrefix(pattern: PathPattern, bases: PatternBases): string[] {
  const base = pattern.anchor === "workspace"
    ? bases.workspace
    : pattern.anchor === "home"
    ? bases.home
    : "/";
  const prefix = pattern.anchor === "anywhere" ? [] : base.split("/").filter((segment) => segment !== "");
  for (const literal of pattern.literals) {
    if (literal === null) break;
    prefix.push(literal);
  }
  return prefix;
}

function relativeToAnchor(anchor: PathAnchor, path: string, bases: PatternBases): string | null {
  switch (anchor) {
    case "workspace":
      return below(bases.workspace, path);
    case "home":
      return below(bases.home, path);
    case "absolute":
    case "anywhere":
      return path.slice(1);
    default:
      return assertNever(anchor);
  }
}

function below(base: string, path: string): string | null {
  if (path === base) return "";
  const relative = posix.relative(base, path);
  return relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative) ? null : relative;
}

function isLiteral(segment: string): boolean {
  for (const char of segment) if ("*?[]{}\\".includes(char)) return false;
  return true;
}
