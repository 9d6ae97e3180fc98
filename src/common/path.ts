/**
 * POSIX path operations with the meaning `node:path`'s posix functions have, for the modules a one-shot
 * run loads before its first request: importing any `node:` module starts Deno's Node compatibility layer,
 * which costs more start-up time than everything else those modules do. On Windows the platform's own
 * rules are `node:path`'s (loaded only there); `posix` is POSIX everywhere.
 *
 * test/common/path_test.ts compares every function with `node:path` on a corpus of paths.
 *
 * @module
 */

/** The POSIX separator. */
const SEPARATOR = "/";

/** The segments of a path without empty and "." ones, ".." applied (kept at the start of a relative path). */
function normalizedSegments(path: string, absolute: boolean): string[] {
  const segments: string[] = [];
  for (const segment of path.split(SEPARATOR)) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length > 0 && segments[segments.length - 1] !== "..") segments.pop();
      else if (!absolute) segments.push("..");
      continue;
    }
    segments.push(segment);
  }
  return segments;
}

function posixNormalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith(SEPARATOR);
  const trailing = path.endsWith(SEPARATOR);
  const body = normalizedSegments(path, absolute).join(SEPARATOR);
  if (body === "") return absolute ? SEPARATOR : trailing ? "./" : ".";
  const withTrailing = trailing ? body + SEPARATOR : body;
  return absolute ? SEPARATOR + withTrailing : withTrailing;
}

function posixJoin(...paths: string[]): string {
  const joined = paths.filter((path) => path !== "").join(SEPARATOR);
  return joined === "" ? "." : posixNormalize(joined);
}

function posixIsAbsolute(path: string): boolean {
  return path.startsWith(SEPARATOR);
}

function posixResolve(...paths: string[]): string {
  let resolved = "";
  for (let index = paths.length - 1; index >= -1 && !resolved.startsWith(SEPARATOR); index--) {
    const path = index >= 0 ? paths[index]! : Deno.cwd();
    if (path === "") continue;
    resolved = resolved === "" ? path : `${path}${SEPARATOR}${resolved}`;
  }
  return SEPARATOR + normalizedSegments(resolved, true).join(SEPARATOR);
}

/** The path without its trailing separators ("/" stays "/"). */
function withoutTrailingSeparators(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === SEPARATOR) end--;
  return path.slice(0, end);
}

function posixDirname(path: string): string {
  if (path === "") return ".";
  const trimmed = withoutTrailingSeparators(path);
  const cut = trimmed.lastIndexOf(SEPARATOR);
  if (cut === -1) return ".";
  if (cut === 0) return SEPARATOR;
  // "//a" keeps its two leading separators, as node:path does.
  if (cut === 1 && trimmed.startsWith("//")) return "//";
  return trimmed.slice(0, cut);
}

/** The last segment (node:path's suffix argument is left out: nothing here strips extensions). */
function posixBasename(path: string): string {
  const trimmed = withoutTrailingSeparators(path);
  if (trimmed === SEPARATOR) return "";
  return trimmed.slice(trimmed.lastIndexOf(SEPARATOR) + 1);
}

/** The last segment's extension from its last dot (none for a leading dot alone, or for ".."). */
function posixExtname(path: string): string {
  const name = posixBasename(path);
  const dot = name.lastIndexOf(".");
  return dot <= 0 || name === ".." ? "" : name.slice(dot);
}

function posixRelative(from: string, to: string): string {
  const fromSegments = normalizedSegments(posixResolve(from), true);
  const toSegments = normalizedSegments(posixResolve(to), true);
  let common = 0;
  while (
    common < fromSegments.length && common < toSegments.length && fromSegments[common] === toSegments[common]
  ) common++;
  const up = fromSegments.slice(common).map(() => "..");
  return [...up, ...toSegments.slice(common)].join(SEPARATOR);
}

/** What both `posix` and `node:path` provide. */
interface PathFunctions {
  readonly sep: string;
  normalize(path: string): string;
  join(...paths: string[]): string;
  resolve(...paths: string[]): string;
  isAbsolute(path: string): boolean;
  dirname(path: string): string;
  basename(path: string): string;
  extname(path: string): string;
  relative(from: string, to: string): string;
}

/** The POSIX functions, like `node:path`'s `posix`. */
export const posix: PathFunctions = {
  sep: SEPARATOR,
  normalize: posixNormalize,
  join: posixJoin,
  resolve: posixResolve,
  isAbsolute: posixIsAbsolute,
  dirname: posixDirname,
  basename: posixBasename,
  extname: posixExtname,
  relative: posixRelative,
};

/** The platform's functions: POSIX, or `node:path`'s own on Windows. */
const platform: PathFunctions = Deno.build.os === "windows" ? await import("node:path") : posix;

export const sep: string = platform.sep;
export const normalize: (path: string) => string = platform.normalize;
export const join: (...paths: string[]) => string = platform.join;
export const resolve: (...paths: string[]) => string = platform.resolve;
export const isAbsolute: (path: string) => boolean = platform.isAbsolute;
export const dirname: (path: string) => string = platform.dirname;
export const basename: (path: string) => string = platform.basename;
export const relative: (from: string, to: string) => string = platform.relative;

/** `path` relative to `root` when it lies inside it (for a message), else as it is; "" is `root` itself. */
export function shownFrom(root: string, path: string): string {
  const inRoot = relative(root, path);
  return inRoot === "" || inRoot.startsWith("..") ? path : inRoot;
}
