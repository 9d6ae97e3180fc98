/**
 * Synchronous reads for the walk-based tools (Grep, and the ignore files of every walk) that neither hang nor
 * leave the workspace.
 *
 * A file is opened with O_NONBLOCK, so a named pipe swapped in for a file cannot block the worker's thread
 * (Deno.openSync has no such option, node:fs has). After the open, the file is checked the way ReadFile's
 * `readVerified` checks it: the opened file (fstat) must be a regular file, the real path of the walked path
 * must lie inside the root and outside the excluded folders, and that real path must name the same file
 * (device and inode). A directory of the path swapped for a symlink to the outside while the walk runs is thus
 * caught, unless it is swapped out, back and out again within the few microseconds between these calls:
 * another process swapping a directory thousands of times a millisecond (test/tools/_fs_test.ts) wins one
 * such check on about half of its reads in a restricted worker (in-process, never). So a caller about to
 * show a file's content (Grep, for a file with matches) confirms it with `confirmLocation`:
 * `LOCATION_CHECKS` stronger checks (`lstat` of every directory of the real path) at random intervals, which
 * a swap must all win. Content that is read but never shown (files without matches, ignore rules) costs
 * only the one check. It stays a path-based check, which without openat2 cannot be a proof; it makes a
 * lucky interleaving very rare.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { isExcludedPath, rootContaining } from "./_paths.ts";

/** Why a file was not read: counted by the callers, never shown one by one. */
export type SkipReason = "unreadable" | "not-regular" | "changed" | "hard-linked" | "too-large";

/** Options of `readVerifiedSync`. */
export interface VerifiedReadOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`), which count as inside like the root. */
  additionalRoots?: readonly string[] | undefined;
  /** Real paths inside the root that count as outside it. */
  excludedPaths?: readonly string[] | undefined;
  /** Refuse a file with more than one hard link (its other names may lie outside the workspace). */
  strictLinks?: boolean;
  /** Refuse a file larger than this, or with `truncate` read only this much. */
  maxBytes: number;
  /** Read the first `maxBytes` of a larger file instead of refusing it. Default false. */
  truncate?: boolean;
  /** A buffer to read into, reused between calls; a larger one is allocated when needed. */
  buffer?: Uint8Array;
}

/** A file's bytes, or why it was skipped. */
export type VerifiedRead =
  | {
    ok: true;
    /** The file's bytes: a view of `buffer`. */
    bytes: Uint8Array;
    /** The buffer read into (the given one, or a larger one to reuse next time). */
    buffer: Uint8Array;
    /** Whether the file was longer than `maxBytes` (only with `truncate`). */
    truncated: boolean;
    /** The opened file, for `confirmLocation`. */
    identity: FileIdentity;
  }
  | { ok: false; reason: SkipReason };

// Opening a named pipe without O_NONBLOCK waits for a writer; regular files ignore the flag.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
/** How many checks in a row `confirmLocation` makes. */
const LOCATION_CHECKS = 8;

/**
 * A folder whose inode last changed at least this long before a read began cannot have had an entry renamed,
 * added or removed while the read ran: such a change sets the folder's ctime to the moment it happened, and
 * ctime cannot be set otherwise (unlike mtime, which `touch -d` sets). Deno reports ctime in whole seconds
 * (rounded down), and the kernel stamps it from a clock that lags by a few milliseconds: two seconds covers
 * both. The swaps `LOCATION_CHECKS` guards against all rename in one of the path's folders, so when every
 * one of them is that quiet, one check shows what the many would (`isOpenedAt`).
 */
export const QUIET_FOLDER_MS = 2_000;

/**
 * Whether the folder seen as `info` has not changed since well before `since` (`QUIET_FOLDER_MS`). A file
 * system that reports no ctime (or none at all: 0) never counts as quiet.
 */
export function quietSince(info: Deno.FileInfo, since: number): boolean {
  const changed = info.ctime?.getTime() ?? 0;
  return changed > 0 && changed < since - QUIET_FOLDER_MS;
}

/** Reads a file the walk found, after checking that it is the regular file its path names inside the root. */
export function readVerifiedSync(path: string, options: VerifiedReadOptions): VerifiedRead {
  const since = Date.now();
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch {
    return { ok: false, reason: "unreadable" };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { ok: false, reason: "not-regular" };
    if (options.strictLinks === true && info.nlink > 1) return { ok: false, reason: "hard-linked" };
    if (info.size > options.maxBytes && options.truncate !== true) return { ok: false, reason: "too-large" };
    if (!locatedInside(path, info, options)) return { ok: false, reason: "changed" };
    return readAll(fd, info.size, options, { dev: info.dev, ino: info.ino, since });
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    closeSync(fd);
  }
}

/** What identifies an opened file. */
export interface FileIdentity {
  dev: number;
  ino: number;
  /** When the path was opened (`Date.now()` before the open), if known: see `confirmLocation`. */
  since?: number;
}

/**
 * Whether `path` still names the file read as `identity`, inside the workspace, `LOCATION_CHECKS` times in
 * a row: for a file whose content is about to be shown. Once, when every folder of its real path from the
 * root down has not changed since well before the file was opened (`identity.since`, `quietSince`): a
 * search that shows matches from a hundred files of a tree nobody is renaming in checks each once.
 */
export function confirmLocation(
  path: string,
  identity: FileIdentity,
  options: Pick<VerifiedReadOptions, "root" | "additionalRoots" | "excludedPaths">,
): boolean {
  const roots = [options.root, ...options.additionalRoots ?? []];
  for (let check = 0; check < LOCATION_CHECKS; check++) {
    try {
      const realPath = Deno.realPathSync(path);
      const root = rootContaining(roots, realPath);
      if (root === null || isExcludedPath(realPath, options.excludedPaths)) return false;
      const plain = isPlainPath(root, realPath, identity);
      if (plain === false) return false;
      // No folder of the path changed since before the open: nothing was swapped in between
      // (`QUIET_FOLDER_MS`), so the first check shows what all of them would.
      if (plain === "quiet") return Deno.realPathSync(path) === realPath;
    } catch {
      return false;
    }
    spinAWhile();
  }
  return true;
}

/**
 * Waits a random few microseconds. A swapper running in a tight loop falls into step with checks made at a
 * steady rhythm, and then wins them together; checks spaced at random intervals it wins one at a time.
 */
export function spinAWhile(maxMs = 0.02): void {
  const until = performance.now() + Math.random() * maxMs;
  while (performance.now() < until) {
    // Busy: the worker has nothing else to do meanwhile, and a timer cannot wait microseconds.
  }
}

// The one check of every read: the real path of `path` lies inside the root or an added folder (and not in
// an excluded folder) and names the opened file.
function locatedInside(path: string, opened: FileIdentity, options: VerifiedReadOptions): boolean {
  try {
    const realPath = Deno.realPathSync(path);
    const roots = [options.root, ...options.additionalRoots ?? []];
    if (rootContaining(roots, realPath) === null || isExcludedPath(realPath, options.excludedPaths)) {
      return false;
    }
    const info = Deno.statSync(realPath);
    return info.dev === opened.dev && info.ino === opened.ino;
  } catch {
    return false;
  }
}

/**
 * Whether every directory of the real path below its root is a directory and not a symlink, and the path
 * itself names the opened file, each seen with `lstat` (the kernel's answer at that moment); "quiet" when,
 * with the root, none of them changed since before the open (`quietSince`). `realPathSync`
 * alone is not enough: in a restricted worker, another process swapping a directory for a symlink got an
 * outside file past it on about half of the raced reads, while the same reads with every permission never.
 */
function isPlainPath(root: string, realPath: string, opened: FileIdentity): boolean | "quiet" {
  const since = opened.since;
  // A rename of the root's own entries changes the root, which the loop below does not look at.
  let quiet = since !== undefined && quietSince(Deno.lstatSync(root), since);
  let prefix = root;
  const parts = realPath.slice(root.length).split("/").filter((part) => part !== "");
  for (const part of parts.slice(0, -1)) {
    prefix = `${prefix}/${part}`;
    const info = Deno.lstatSync(prefix);
    if (!info.isDirectory || info.isSymlink) return false;
    if (quiet && !quietSince(info, since!)) quiet = false;
  }
  const named = Deno.lstatSync(realPath);
  if (!named.isFile || named.dev !== opened.dev || named.ino !== opened.ino) return false;
  return quiet ? "quiet" : true;
}

function readAll(
  fd: number,
  sizeHint: number,
  options: VerifiedReadOptions,
  identity: FileIdentity,
): VerifiedRead {
  const limit = options.maxBytes;
  const { buffer, length } = readToEnd(fd, sizeHint, limit, options.buffer);
  if (length > limit) {
    if (options.truncate !== true) return { ok: false, reason: "too-large" };
    return { ok: true, bytes: buffer.subarray(0, limit), buffer, truncated: true, identity };
  }
  return { ok: true, bytes: buffer.subarray(0, length), buffer, truncated: false, identity };
}

/**
 * Reads the open regular file `fd` from where it stands to its end, or until it has read more than `limit`
 * bytes (`length` > `limit` then says it is longer), into `buffer` or a larger one. `sizeHint` (the size
 * fstat gave) sizes the buffer so that a file that did not change is read in one call.
 */
export function readToEnd(
  fd: number,
  sizeHint: number,
  limit: number,
  buffer: Uint8Array = new Uint8Array(0),
): { buffer: Uint8Array; length: number } {
  const wanted = Math.min(Math.max(sizeHint, 0), limit) + 1;
  if (buffer.length < wanted) buffer = new Uint8Array(Math.max(wanted, buffer.length * 2, 4096));
  let length = 0;
  while (true) {
    if (length === buffer.length) {
      if (length > limit) break;
      const grown = new Uint8Array(Math.min(buffer.length * 2, limit + 1));
      grown.set(buffer);
      buffer = grown;
    }
    const wantedNow = buffer.length - length;
    const read = readSync(fd, buffer, length, wantedNow, null);
    if (read === 0) break;
    length += read;
    // A regular file returns fewer bytes than asked only at its end: skip the read that would say so.
    if (read < wantedNow) break;
  }
  return { buffer, length };
}
