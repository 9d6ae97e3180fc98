/**
 * `safePath`: the one check every file tool runs before touching a path the model gave.
 *
 * A path is inside the workspace only if its real path is: `..` is resolved, then symlinks are resolved
 * (for a path that does not exist yet, the real path of its deepest existing ancestor). Deno's permission
 * checks look at the path as named and then follow links, so this check is needed even inside a worker
 * that may only read the root. Tools must operate on the canonical path returned here, never on the input.
 * A path under another name of the root (an alias, such as the symlink the user named the workspace by) is
 * first mapped to the same path under the root; excluded folders (mewcode's own state) count as outside.
 * Folders added to the workspace (`--add-dir`) count as inside, exactly like the root: a path is accepted
 * when its real path lies in the root or in one of them.
 *
 * @module
 */
import { isCredentialPath } from "../common/home_credentials.ts";
import { lstatOrNull } from "../common/fs.ts";
import { posix } from "../common/path.ts";

/** Why a path was rejected, for callers that branch (tests, Glob/Grep) rather than show the message. */
export type PathErrorReason =
  | "not-absolute"
  | "nul-byte"
  | "outside-workspace"
  | "dangling-symlink"
  | "symlink-loop"
  | "not-a-directory"
  | "not-found"
  | "permission-denied"
  | "io-error";

/** The outcome of `safePath`: the canonical path, or why the path cannot be used. */
export type SafePathResult =
  | {
    ok: true;
    /** Real path of the target (or, for a missing path, real path of its deepest existing ancestor + the rest). */
    path: string;
    /** Whether the canonical path exists. */
    exists: boolean;
    /** `Deno.lstat` of the canonical path when it exists (never a symlink), else null. */
    info: Deno.FileInfo | null;
    /**
     * The canonical path relative to the folder it lies in, the root or an added folder ("." for the folder
     * itself); the root wins when both contain it.
     */
    relative: string;
    /** The path as named, `..` resolved and an alias mapped, symlinks not followed: absolute. */
    named: string;
    /** The path as named, relative to the folder it lies in, as `relative`. */
    namedRelative: string;
    /** The folders the path was checked against, as real paths: the workspace root, then the added ones. */
    roots: readonly string[];
  }
  | {
    ok: false;
    reason: PathErrorReason;
    /** The state part of a message, to follow `Cannot <action> "<path>": `. */
    message: string;
  };

/** Options of `safePath`. */
export interface SafePathOptions {
  /** Reject a path that does not exist yet with reason "not-found". */
  mustExist?: boolean;
  /** Other absolute names of the root (not real paths): a path under one means the same path under the root. */
  aliases?: readonly string[] | undefined;
  /** Real paths of folders inside the root that count as outside the workspace (mewcode's state folder). */
  excluded?: readonly string[] | undefined;
  /** Real paths of more folders that count as inside, like the root (`--add-dir`). */
  additionalRoots?: readonly string[] | undefined;
}

/** The outcome of `validatePathInput`: null when the string is acceptable, else a message for the model. */
export type PathInputProblem = { reason: "not-absolute" | "nul-byte"; message: string } | null;

/**
 * Checks only the shape of a path (absolute, no NUL byte), without I/O: for tools' `validateInput`.
 * The message is the state part, e.g. `path must be absolute: did you mean "/ws/src/a.ts"?`.
 */
export function validatePathInput(path: string, root: string): PathInputProblem {
  if (path.includes("\0")) {
    return { reason: "nul-byte", message: "path contains a NUL byte; paths cannot contain NUL bytes" };
  }
  if (path.trim() === "") {
    return {
      reason: "not-absolute",
      message: `path is empty: give an absolute path inside the workspace "${root}"`,
    };
  }
  if (!posix.isAbsolute(path)) {
    return {
      reason: "not-absolute",
      message: `path must be absolute: did you mean "${posix.join(root, path)}"?`,
    };
  }
  return null;
}

/** Whether `path` is `root` or below it, as strings of normalised absolute paths (`/ws-evil` is not in `/ws`). */
export function isWithinRoot(root: string, path: string): boolean {
  if (root === "/") return path.startsWith("/");
  return path === root || path.startsWith(root + "/");
}

/**
 * The folder of `roots` (normalised absolute paths, the workspace root first) that `path` is equal to or
 * below, or null: the first one that contains it, so the workspace root wins over a folder added inside it.
 */
export function rootContaining(roots: readonly string[], path: string): string | null {
  return roots.find((root) => isWithinRoot(root, path)) ?? null;
}

/** Whether `path` is equal to or below one of `roots` (normalised absolute paths). */
export function isWithinRoots(roots: readonly string[], path: string): boolean {
  return rootContaining(roots, path) !== null;
}

/**
 * Whether a real path lies in one of `excluded` (real paths the tools treat as outside the workspace, such as
 * mewcode's own state folder when the workspace contains it).
 */
export function isExcludedPath(path: string, excluded: readonly string[] | undefined): boolean {
  return excludedFolder(path, excluded) !== null;
}

/** A path relative to the root, for messages and listings ("." for the root itself). */
export function relativeToRoot(root: string, path: string): string {
  const relative = posix.relative(root, path);
  return relative === "" ? "." : relative;
}

/**
 * Resolves the directory or file a search (Glob, Grep) names: it must exist, lie inside the workspace, and
 * not lie in a folder the tools treat as outside it.
 */
export async function resolveSearchPath(
  context: { root: string; additionalRoots?: readonly string[]; excludedPaths?: readonly string[] },
  path: string,
): Promise<SafePathResult> {
  const resolved = await safePath(context.root, path, {
    mustExist: true,
    additionalRoots: context.additionalRoots,
  });
  if (resolved.ok && isExcludedPath(resolved.path, context.excludedPaths)) {
    return {
      ok: false,
      reason: "outside-workspace",
      message: "it lies in a folder the tools treat as outside the workspace",
    };
  }
  return resolved;
}

/**
 * Resolves a path the model gave to its canonical real path inside `root` or an added folder
 * (`options.additionalRoots`), or explains why it cannot be used. `root` must be the real path of the
 * workspace. Messages name the path as given. Never throws for bad input. The look-ups on the way are
 * synchronous, in the tool's worker, for the reason given at `readVerified`.
 */
export async function safePath(
  root: string,
  path: string,
  options: SafePathOptions = {},
): Promise<SafePathResult> {
  const problem = validatePathInput(path, root);
  if (problem !== null) return { ok: false, reason: problem.reason, message: problem.message };
  const canonicalRoot = realRoot(root);
  const roots = [canonicalRoot, ...(options.additionalRoots ?? []).map((folder) => posix.resolve(folder))];
  const given = posix.resolve(path);
  const alias = isWithinRoots(roots, given) ? null : aliasOf(given, options.aliases ?? []);
  const normalized = alias === null ? given : posix.join(canonicalRoot, given.slice(alias.length));
  // Inside messages, a path under the root is shown under the alias the model used.
  const shown = (inside: string): string =>
    alias === null || !isWithinRoot(canonicalRoot, inside)
      ? inside
      : alias + inside.slice(canonicalRoot.length);
  const namedBase = rootContaining(roots, normalized);
  if (namedBase === null) return outside(roots, normalized, null);

  // Walk up from the full path to its deepest existing ancestor (lstat does not follow the last component).
  const missing: string[] = [];
  let existing = normalized;
  let existingInfo: Deno.FileInfo | null = null;
  while (true) {
    try {
      existingInfo = Deno.lstatSync(existing);
      break;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        if (existing === canonicalRoot || existing === "/") {
          return failure("io-error", `the workspace root is missing`);
        }
        if (roots.includes(existing)) return failure("io-error", `the added folder "${existing}" is missing`);
        missing.unshift(posix.basename(existing));
        existing = posix.dirname(existing);
        continue;
      }
      return fromError(error, roots, shown(existing));
    }
  }

  let real: string;
  try {
    real = Deno.realPathSync(existing);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && existingInfo.isSymlink) {
      return failure(
        "dangling-symlink",
        `${describeLink(shown(existing), await readLinkTarget(existing))} whose target does not exist`,
      );
    }
    if (error instanceof Deno.errors.NotADirectory) {
      return failure("not-a-directory", `a parent of "${shown(existing)}" is not a directory`);
    }
    return fromError(error, roots, shown(existing));
  }
  const base = rootContaining(roots, real);
  if (base === null) return outside(roots, normalized, real);
  const canonical = posix.join(real, ...missing);
  const excluded = excludedFolder(canonical, options.excluded);
  if (excluded !== null) return inStateFolder(excluded);
  const namedRelative = relativeToRoot(namedBase, normalized);

  if (missing.length > 0) {
    const info = real === existing ? existingInfo : await lstatOrNull(real);
    if (info !== null && !info.isDirectory) {
      return failure("not-a-directory", `"${shown(existing)}" is not a directory`);
    }
    if (options.mustExist) return failure("not-found", "no such file or directory");
    return {
      ok: true,
      path: canonical,
      exists: false,
      info: null,
      relative: relativeToRoot(base, canonical),
      named: normalized,
      namedRelative,
      roots,
    };
  }
  const info = real === existing && !existingInfo.isSymlink ? existingInfo : await lstatOrNull(real);
  return {
    ok: true,
    path: real,
    exists: info !== null,
    info,
    relative: relativeToRoot(base, real),
    named: normalized,
    namedRelative,
    roots,
  };
}

// The longest alias that `path` is equal to or below, normalised, or null.
function aliasOf(path: string, aliases: readonly string[]): string | null {
  let found: string | null = null;
  for (const alias of aliases) {
    if (!posix.isAbsolute(alias)) continue;
    const normalized = posix.resolve(alias);
    if (normalized === "/" || !isWithinRoot(normalized, path)) continue;
    if (found === null || normalized.length > found.length) found = normalized;
  }
  return found;
}

// The excluded folder that `path` is equal to or below, or null.
function excludedFolder(path: string, excluded: readonly string[] | undefined): string | null {
  if (excluded === undefined || excluded.length === 0) return null;
  for (const { folder, prefix } of normalizedExcluded(excluded)) {
    if (path === folder || path.startsWith(prefix)) return folder;
  }
  return null;
}

/**
 * Excluded lists normalised once each (a walk checks every directory against the same list, and with the
 * home inside the workspace it holds ~50 credentials): each folder, and the prefix of what lies below it.
 */
const normalizedLists = new WeakMap<readonly string[], { folder: string; prefix: string }[]>();

/** The excluded list normalised (`posix.resolve` of each path), computed once per list. */
export function normalizedExcluded(excluded: readonly string[]): { folder: string; prefix: string }[] {
  let list = normalizedLists.get(excluded);
  if (list === undefined) {
    list = excluded.map((path) => {
      const folder = posix.resolve(path);
      return { folder, prefix: folder === "/" ? "/" : `${folder}/` };
    });
    normalizedLists.set(excluded, list);
  }
  return list;
}

function inStateFolder(folder: string): SafePathResult {
  if (isCredentialPath(folder)) {
    return failure(
      "outside-workspace",
      `path is inside "${folder}", which holds credentials or code the user's shell, git or editor runs: the ` +
        "workspace holds the home folder, and mewcode hides the home's credentials and start-up files (~/.ssh, " +
        "~/.aws, ~/.npmrc, shell histories, ~/.bashrc, ~/.gitconfig, …) from its tools as if they lay outside " +
        "the workspace; ask the user for what you need from them",
    );
  }
  return failure(
    "outside-workspace",
    `path is inside mewcode's state folder "${folder}", which file tools treat as outside the workspace; ` +
      "it holds mewcode's sessions and settings, not project files",
  );
}

function realRoot(root: string): string {
  try {
    return Deno.realPathSync(root);
  } catch {
    return posix.resolve(root);
  }
}

async function readLinkTarget(path: string): Promise<string | null> {
  try {
    return await Deno.readLink(path);
  } catch {
    return null;
  }
}

function describeLink(path: string, target: string | null): string {
  return target === null ? `"${path}" is a symlink` : `"${path}" is a symlink to "${target}"`;
}

function failure(reason: PathErrorReason, message: string): SafePathResult {
  return { ok: false, reason, message };
}

// `roots`: the workspace root first, then the added folders.
function outside(roots: readonly string[], normalized: string, real: string | null): SafePathResult {
  const via = real !== null && real !== normalized ? ` (it resolves to "${real}" through a symlink)` : "";
  return failure("outside-workspace", `path is ${describeOutside(roots)}${via}; ${describeScope(roots)}`);
}

// The clause `outside the workspace "/ws"` for messages, naming the added folders when there are any.
function describeOutside(roots: readonly string[]): string {
  const [root, ...added] = roots;
  if (added.length === 0) return `outside the workspace "${root}"`;
  const folders = added.map((folder) => `"${folder}"`).join(", ");
  return `outside the workspace "${root}" and the added folder${added.length === 1 ? "" : "s"} ${folders}`;
}

function describeScope(roots: readonly string[]): string {
  return roots.length === 1
    ? "file tools only work inside the workspace"
    : "file tools only work inside the workspace and the folders added with --add-dir";
}

function fromError(error: unknown, roots: readonly string[], path: string): SafePathResult {
  // A worker allowed only the roots cannot even lstat what lies outside them: Deno's refusal means "outside".
  if (error instanceof Deno.errors.NotCapable) return outside(roots, path, null);
  if (error instanceof Deno.errors.FilesystemLoop) {
    return failure("symlink-loop", `"${path}" is part of a symlink loop (too many levels of symbolic links)`);
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return failure("permission-denied", `permission denied while resolving "${path}"`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return failure("io-error", `cannot resolve "${path}": ${message}`);
}

/** Where a symlink the walk may follow leads. */
export interface LinkTarget {
  isDirectory: boolean;
  isFile: boolean;
  realPath: string;
}

/**
 * The target of a symlink a walk may follow: its real target exists and lies inside the workspace root or an
 * added folder (and not in an excluded folder); null otherwise.
 */
export function resolveLink(
  roots: readonly string[],
  path: string,
  excluded: readonly string[] | undefined,
): LinkTarget | null {
  try {
    const realPath = Deno.realPathSync(path);
    if (!isWithinRoots(roots, realPath) || isExcludedPath(realPath, excluded)) return null;
    const info = Deno.statSync(realPath);
    return { isDirectory: info.isDirectory, isFile: info.isFile, realPath };
  } catch {
    return null;
  }
}
