/**
 * Protected paths as the policy sees them: which entry protects a path, and whether a rule names that path
 * explicitly (`EditFile(.git/info/exclude)`, `EditFile(.mewcode/**)`), which a catch-all (`EditFile(**)`,
 * `EditFile`) never does. Matching is the writers' own (src/tools/protected_paths.ts `protectionOf`):
 * names compare without regard to case; a test holds the two to the same answers.
 *
 * @module
 */
import { isAtOrBelowNames, isProtectedName } from "../tools/protected_paths.ts";
import type { ProtectedPath } from "../tools/tool.ts";
import { literalPrefix, type PathPattern, type PatternBases } from "./path_pattern.ts";

/** The entry that protects a path relative to a root ("a/b"), or null. */
export function protectionAt(relative: string, entries: readonly ProtectedPath[]): ProtectedPath | null {
  if (relative === "" || relative === ".") return null;
  const folded = relative.toLowerCase();
  const segments = folded.split("/");
  for (const entry of entries) {
    const path = entry.path.toLowerCase();
    const matches = entry.anyDepth ? isAtOrBelowNames(segments, path) : isAtOrBelow(folded, path);
    if (matches) return entry;
  }
  return null;
}

/**
 * Whether a path pattern names a protected entry literally, without wildcards: at its place below `root`
 * (the folder the entry is relative to), or, for an entry matched at any depth (".git"), anywhere in it.
 */
export function namesProtection(
  pattern: PathPattern,
  entry: ProtectedPath,
  options: { root: string; bases: PatternBases },
): boolean {
  const name = entry.path.replace(/^\.\/+/, "").replace(/\/+$/, "").toLowerCase();
  if (entry.anyDepth) {
    // Each of the entry's names (one, or names in a row: mise/config.toml) a literal name of the pattern.
    const names = name.split("/");
    return pattern.literals.some((_, start) =>
      start + names.length <= pattern.literals.length &&
      names.every((part, index) => {
        const literal = pattern.literals[start + index];
        return literal !== null && literal !== undefined && isProtectedName(literal, part);
      })
    );
  }
  if (pattern.anchor === "anywhere") return pattern.literals[0]?.toLowerCase() === name;
  const expected = [...options.root.split("/").filter((segment) => segment !== ""), ...name.split("/")];
  const prefix = literalPrefix(pattern, options.bases);
  if (prefix.length < expected.length) return false;
  return expected.every((segment, index) => prefix[index]!.toLowerCase() === segment.toLowerCase());
}

// `relative` must already be lower case.
function isAtOrBelow(relative: string, path: string): boolean {
  const base = path.replace(/^\.\/+/, "").replace(/\/+$/, "");
  return base !== "" && (relative === base || relative.startsWith(`${base}/`));
}
