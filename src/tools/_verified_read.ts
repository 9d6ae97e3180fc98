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
 * another process swapping a directory thousands of times a millisecond (test/tools/_fs_test.ts) won that
 * race on most searches of a few files. So the check is made `LOCATION_CHECKS` times before the read and
 * as many after it, and a swap must win every one of them. It stays a path-based check, which without
 * openat2 cannot be a proof; it makes a lucky interleaving astronomically rare.
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
  }
  | { ok: false; reason: SkipReason };

// Opening a named pipe without O_NONBLOCK waits for a writer; regular files ignore the flag.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
/** How many times the path's location is checked before the read, and again after it. */
const LOCATION_CHECKS = 4;

/** Reads a file the walk found, after checking that it is the regular file its path names inside the root. */
export function readVerifiedSync(path: string, options: VerifiedReadOptions): VerifiedRead {
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
    if (!namesSameFile(path, info, options)) return { ok: false, reason: "changed" };
    const read = readAll(fd, info.size, options);
    if (read.ok && !namesSameFile(path, info, options)) return { ok: false, reason: "changed" };
    return read;
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    closeSync(fd);
  }
}

// The real path of `path` lies inside the root or an added folder (and not in an excluded folder) and names
// the opened file, `LOCATION_CHECKS` times in a row.
function namesSameFile(
  path: string,
  opened: { dev: number; ino: number },
  options: VerifiedReadOptions,
): boolean {
  const roots = [options.root, ...options.additionalRoots ?? []];
  for (let check = 0; check < LOCATION_CHECKS; check++) {
    try {
      const realPath = Deno.realPathSync(path);
      const root = rootContaining(roots, realPath);
      if (root === null || isExcludedPath(realPath, options.excludedPaths)) return false;
      if (!isPlainPath(root, realPath, opened)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Whether every directory of the real path below its root is a directory and not a symlink, and the path
 * itself names the opened file, each seen with `lstat` (the kernel's answer at that moment). `realPathSync`
 * alone is not enough: in a restricted worker, another process swapping a directory for a symlink got an
 * outside file past it about once in a hundred reads, while the same reads with every permission never were.
 */
function isPlainPath(root: string, realPath: string, opened: { dev: number; ino: number }): boolean {
  let prefix = root;
  const parts = realPath.slice(root.length).split("/").filter((part) => part !== "");
  for (const part of parts.slice(0, -1)) {
    prefix = `${prefix}/${part}`;
    const info = Deno.lstatSync(prefix);
    if (!info.isDirectory || info.isSymlink) return false;
  }
  const named = Deno.lstatSync(realPath);
  return named.isFile && named.dev === opened.dev && named.ino === opened.ino;
}

function readAll(fd: number, sizeHint: number, options: VerifiedReadOptions): VerifiedRead {
  const limit = options.maxBytes;
  let buffer = options.buffer ?? new Uint8Array(0);
  const wanted = Math.min(sizeHint, limit) + 1;
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
  if (length > limit) {
    if (options.truncate !== true) return { ok: false, reason: "too-large" };
    return { ok: true, bytes: buffer.subarray(0, limit), buffer, truncated: true };
  }
  return { ok: true, bytes: buffer.subarray(0, length), buffer, truncated: false };
}
