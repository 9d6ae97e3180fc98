/**
 * Hardened file I/O for the file tools, on canonical paths from `safePath`: verified reads (the opened file
 * is the one that was checked, and opening never blocks on a named pipe), content hashes, error messages,
 * the checks shared with atomic writes (`_fs_write.ts`), and a per-path lock that serialises writes.
 *
 * @module
 */
import { lstatSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { quietSince, readToEnd, spinAWhile } from "./_verified_read.ts";
import { sha256HexSync } from "../common/sha256.ts";
import { dirname, posix } from "../common/path.ts";

/** Why a file operation failed, for callers that branch on it. */
export type FsErrorReason =
  | "not-found"
  | "is-directory"
  | "not-a-directory"
  | "not-regular-file"
  | "permission-denied"
  | "outside-workspace"
  | "no-space"
  | "read-only-file-system"
  | "symlink-loop"
  | "changed"
  | "hard-linked"
  | "too-large"
  | "not-read"
  | "modified"
  | "io-error";

/** A failed file operation; `message` is the state part, to follow `Cannot <action> "<path>": `. */
export interface FsFailure {
  ok: false;
  reason: FsErrorReason;
  message: string;
}

/** The bytes of a file read by `readVerified`. */
export interface ReadOutcome {
  ok: true;
  bytes: Uint8Array;
  /** Number of hard links of the file (1 for an ordinary file). */
  links: number;
  /** The file as it was read, for a writer to see whether it changed since (`WriteOptions.expected`). */
  version: FileVersion;
}

/**
 * A file's identity and times as a read saw them: another program's save replaces the file (another inode)
 * or rewrites it (another size, modification or change time).
 */
export interface FileVersion {
  dev: number;
  ino: number | null;
  size: number;
  mtimeMs: number | null;
  ctimeMs: number | null;
}

/** Options of `readVerified`. */
export interface ReadOptions {
  /** Refuse a file with more than one hard link. */
  strictLinks?: boolean;
  /** Refuse a file larger than this many bytes. Default `MAX_READ_BYTES`. */
  maxBytes?: number;
  /** Test seam: runs after the path is checked and before it is opened (where a swap would race). */
  beforeOpen?: () => Promise<void>;
}

/** What identifies a file (device and inode), as both `Deno.lstat` and an open handle's `stat` give it. */
export interface FileIdentity {
  dev: number;
  /** Null where the platform has no inode numbers (Windows); the size stands in, weakly. */
  ino: number | null;
  size: number;
}

/** The largest file the tools read into memory. */
export const MAX_READ_BYTES = 256 * 1024 * 1024;

// Another process may swap the path for a named pipe before the open: without O_NONBLOCK, `open` would wait
// for a writer forever. Deno 2.9's `Deno.open` ignores `customFlags` (checked with strace), so files are
// opened with node:fs, whose constants carry the platform's value (0x800 on Linux, 0x4 on macOS).
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

// How many times `isOpenedAt` looks the path up again. Each look-up is two path resolutions that another
// process could answer differently by swapping a directory for a symlink between them. Repeating makes a
// lucky interleaving much rarer; it is no proof: without openat2 or a mount namespace, no path-based check is.
// With 4, an adversary swapping a directory thousands of times a millisecond (test/tools/_fs_test.ts) got an
// outside file through once in roughly 20 suite runs; readVerified also checks again after reading, so a
// swap must win both rounds, far apart in time. The look-ups are synchronous: each async one waited for a
// thread of the pool, which made a ReadFile cost 1.65 ms instead of 0.58 ms, and the checks now follow the
// open more closely, so a swap undone right after it has less time to hide (25 s of swapping, 109,000 reads:
// none outside, as with the async checks).
const LOCATION_CHECKS = 8;

/** Up to this size a hash is computed in JavaScript; beyond it, natively (faster per byte, but asynchronous). */
const SYNC_HASH_MAX_BYTES = 16 * 1024;

/** SHA-256 of bytes, lowercase hex. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // Measured in a worker: 1 KiB takes 0.04 ms in JavaScript against 0.1 to 1 ms through crypto.subtle, whose
  // answer comes from another thread; at 64 KiB the two are even, and a megabyte is twice as fast natively.
  if (bytes.length <= SYNC_HASH_MAX_BYTES) return sha256HexSync(bytes);
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Reads a file at a canonical path, verifying before reading that the opened file is the one checked:
 * it is opened without blocking, and it must be a regular file whose identity (dev + inode) equals `lstat`
 * of the path before the open and whose path still resolves to itself (`isOpenedAt`).
 *
 * Every file operation is synchronous, in the tool's worker: an asynchronous one waits for a thread of
 * Deno's pool and back, which made the five of a small read cost more than the read itself (a ReadFile
 * turn's agent time went from 7.8 to 6.5 ms at the median). The open does not block, and a regular file's
 * read ends; a file on a stalled network mount holds up its worker until the call's time limit replaces it.
 */
export async function readVerified(
  path: string,
  options: ReadOptions = {},
): Promise<ReadOutcome | FsFailure> {
  const since = Date.now();
  let before: Deno.FileInfo;
  try {
    before = Deno.lstatSync(path);
  } catch (error) {
    return describeFsError(error);
  }
  const kind = checkKind(before);
  if (kind !== null) return kind;
  await options.beforeOpen?.();
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (error) {
    return describeFsError(error);
  }
  try {
    const opened = fstatSync(fd);
    if (!sameFile(before, opened)) {
      return changed("the file was replaced while it was being opened; try again");
    }
    if (!opened.isFile()) return notRegular();
    if (!isOpenedAt(path, opened, since)) {
      return changed("the file or a parent directory was replaced while it was being opened; try again");
    }
    const links = opened.nlink;
    if (links > 1 && options.strictLinks) {
      return {
        ok: false,
        reason: "hard-linked",
        message: `the file has ${links} hard links and strict link checking is on; ` +
          "its other names may lie outside the workspace",
      };
    }
    const maxBytes = options.maxBytes ?? MAX_READ_BYTES;
    if (opened.size > maxBytes) {
      return {
        ok: false,
        reason: "too-large",
        message: `the file is too large (${opened.size} bytes, limit ${maxBytes})`,
      };
    }
    const { buffer, length } = readToEnd(fd, opened.size, maxBytes);
    if (length > maxBytes) {
      return {
        ok: false,
        reason: "too-large",
        message: `the file grew past ${maxBytes} bytes while being read`,
      };
    }
    const bytes = buffer.subarray(0, length);
    // A second round, after the read: a swap that fooled the first must also fool this one.
    if (!isOpenedAt(path, opened, since)) {
      return changed("the file or a parent directory was replaced while it was being read; try again");
    }
    const version = {
      dev: opened.dev,
      ino: opened.ino,
      size: opened.size,
      mtimeMs: opened.mtimeMs,
      ctimeMs: opened.ctimeMs,
    };
    return { ok: true, bytes, links, version };
  } catch (error) {
    return describeFsError(error);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the file open as `opened` is the regular file at the canonical `path`, with the real path of
 * `path` equal to itself: after a path resolved through a directory swapped for a symlink, the opened file
 * lies elsewhere and the two disagree. Checked `LOCATION_CHECKS` times, at random intervals (see there).
 *
 * Each check also sees every folder of the path with `lstat` (a canonical path has no symlink in it): the
 * real path alone, then `lstat` of the path, let a swap that fell between the two through (the `lstat`
 * follows the swapped folder to the outside file, which is the one opened); a CI run of the race test got
 * an outside file past eight such checks made back to back.
 *
 * With `since` (the time, from `Date.now()`, before the path was resolved for the open): when the first check
 * finds every folder unchanged since well before then (`quietSince`), it is the only one. A read in a tree
 * nobody is renaming in (nearly every read) then costs one check instead of eight (ReadFile's 0.43 ms went to
 * ~0.1 ms); a folder changed in the last seconds (by the agent's own writes, or by a swapper) gets all eight.
 */
export function isOpenedAt(path: string, opened: FileIdentity, since?: number): boolean {
  const folders = visibleFolders(path);
  if (folders === null) return false;
  for (let check = 0; check < LOCATION_CHECKS; check++) {
    if (realPathSyncOrNull(path) !== path) return false;
    const named = lstatSyncOrNull(path);
    if (named === null || !named.isFile || !sameFile(named, opened)) return false;
    let quiet = since !== undefined;
    for (const folder of folders) {
      const info = lstatSyncOrNull(folder);
      if (info === null || info.isSymlink || !info.isDirectory) return false;
      if (quiet && !quietSince(info, since!)) quiet = false;
    }
    // No folder of the path changed since before the open: nothing was swapped in between (see QUIET_FOLDER_MS).
    if (quiet) return realPathSyncOrNull(path) === path;
    // A few microseconds at most: a swapper's rename takes less than one, so the phase is lost all the same,
    // and every read pays these waits (20 µs at most cost ReadFile 0.18 ms a call).
    spinAWhile(0.005);
  }
  return realPathSyncOrNull(path) === path;
}

/**
 * The folders of the canonical `path` the worker may see, from its parent up to the first one above its
 * grant (the workspace's parent) or the file system's root, each a folder and not a symlink (a canonical
 * path has none); null when one is not. Found once, so that each check costs an `lstat` per folder and no
 * refused look-up.
 */
function visibleFolders(path: string): string[] | null {
  const folders: string[] = [];
  for (let folder = dirname(path); folder !== dirname(folder); folder = dirname(folder)) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(folder);
    } catch (error) {
      // Above the worker's grant: folders it cannot see, which no tool call can swap either.
      if (error instanceof Deno.errors.NotCapable) return folders;
      return null;
    }
    if (info.isSymlink || !info.isDirectory) return null;
    folders.push(folder);
  }
  return folders;
}

/** Maps an error from Deno or node:fs to a reason and a message for the model. */
export function describeFsError(error: unknown): FsFailure {
  const code = errorCode(error);
  const fail = (reason: FsErrorReason, message: string): FsFailure => ({ ok: false, reason, message });
  if (error instanceof Deno.errors.NotCapable) {
    return fail("outside-workspace", "the path is outside the workspace (the sandbox refused access)");
  }
  if (error instanceof Deno.errors.NotFound || code === "ENOENT") {
    return fail("not-found", "no such file or directory");
  }
  if (error instanceof Deno.errors.PermissionDenied || code === "EACCES" || code === "EPERM") {
    return fail("permission-denied", "permission denied");
  }
  if (error instanceof Deno.errors.IsADirectory || code === "EISDIR") {
    return fail("is-directory", "it is a directory");
  }
  if (error instanceof Deno.errors.NotADirectory || code === "ENOTDIR") {
    return fail("not-a-directory", "a parent of the path is not a directory");
  }
  if (error instanceof Deno.errors.FilesystemLoop || code === "ELOOP") {
    return fail("symlink-loop", "the path is part of a symlink loop");
  }
  if (code === "ENOSPC") return fail("no-space", "no space left on the device");
  if (code === "EDQUOT") return fail("no-space", "the disk quota is exceeded");
  if (code === "EROFS") return fail("read-only-file-system", "the file system is read-only");
  if (code === "ENAMETOOLONG") return fail("io-error", "the file name is too long");
  if (code === "EFBIG") return fail("too-large", "the file is too large for the file system");
  const message = error instanceof Error ? error.message : String(error);
  return fail("io-error", `I/O error: ${message}`);
}

function errorCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null || !("code" in error)) return null;
  return typeof error.code === "string" ? error.code : null;
}

const locks = new Map<string, Promise<void>>();

/** Runs `task` after every earlier task for the same path has settled: writes to one file never interleave. */
export async function withPathLock<T>(path: string, task: () => Promise<T>): Promise<T> {
  const previous = locks.get(path) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(() => undefined, () => undefined);
  locks.set(path, tail);
  try {
    return await run;
  } finally {
    if (locks.get(path) === tail) locks.delete(path);
  }
}

/** The failure for a path that is not a regular file (directory, symlink, pipe, device), or null. */
export function checkKind(info: Deno.FileInfo): FsFailure | null {
  if (info.isDirectory) return { ok: false, reason: "is-directory", message: "it is a directory" };
  if (info.isSymlink) return changed("the path became a symlink after it was checked; try again");
  if (!info.isFile) return notRegular();
  return null;
}

function notRegular(): FsFailure {
  return {
    ok: false,
    reason: "not-regular-file",
    message: "it is not a regular file (a device, socket or named pipe)",
  };
}

/** Whether two identities name the same file (same device and inode). */
export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  if (a.ino === null || b.ino === null) return a.dev === b.dev && a.size === b.size;
  return a.dev === b.dev && a.ino === b.ino;
}

/** The failure for a path that changed between a check and its use: the caller may simply try again. */
export function changed(message: string): FsFailure {
  return { ok: false, reason: "changed", message };
}

/** The message for a missing file: "file not found", with up to 3 similar names from the same directory. */
export async function describeMissing(path: string): Promise<string> {
  const directory = posix.dirname(path);
  const wanted = posix.basename(path);
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(directory)) names.push(entry.name);
  } catch (error) {
    const failure = describeFsError(error);
    if (failure.reason === "not-found" || failure.reason === "not-a-directory") {
      return `file not found (the directory "${directory}" does not exist either); use Glob to find the file`;
    }
    return "file not found; use Glob to find the file";
  }
  const similar = similarNames(wanted, names).map((name) => `"${posix.join(directory, name)}"`);
  if (similar.length === 0) return "file not found; use Glob to find the file";
  return `file not found. Did you mean ${similar.join(", ")}?`;
}

// Up to 3 names close to `wanted` (edit distance, same stem, or case), closest first.
function similarNames(wanted: string, names: readonly string[]): string[] {
  const target = wanted.toLowerCase();
  const stem = stemOf(target);
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const candidate = name.toLowerCase();
    const distance = editDistance(target, candidate, 6);
    const threshold = Math.max(2, Math.floor(Math.max(target.length, candidate.length) / 3));
    const sameStem = stem.length > 0 && stemOf(candidate) === stem;
    const contains = target.length >= 3 && (candidate.includes(target) || target.includes(candidate));
    if (distance <= threshold || sameStem || contains) {
      scored.push({ name, score: sameStem ? Math.min(distance, 1) : distance });
    }
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, 3).map((entry) => entry.name);
}

function stemOf(name: string): string {
  const dot = name.indexOf(".", 1);
  return dot === -1 ? name : name.slice(0, dot);
}

// Edit distance with adjacent transpositions ("mian" → "main" is 1), giving up past `cap` (returns cap + 1).
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMinimum = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current.push(value);
      rowMinimum = Math.min(rowMinimum, value);
    }
    if (rowMinimum > cap) return cap + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** The state of an existing file a writer is about to replace, after the read-before-write check. */
export interface ExistingFile {
  ok: true;
  bytes: Uint8Array;
  hash: string;
  links: number;
  version: FileVersion;
}

/**
 * Reads an existing file a writer is about to replace and checks that this session read it and that it has
 * not changed since (by content hash, not mtime). `verb` words the messages ("write", "edit"). With
 * `requireRead` false, a file never read passes (a changed one still fails).
 */
export async function readForWrite(
  path: string,
  records: Readonly<Record<string, string>>,
  verb: "write" | "edit",
  requireRead = true,
): Promise<ExistingFile | FsFailure> {
  const read = await readVerified(path);
  if (!read.ok) return read;
  const hash = await sha256Hex(read.bytes);
  const recorded = records[path];
  if (recorded === undefined && !requireRead) return { ...read, hash };
  if (recorded === undefined) {
    return {
      ok: false,
      reason: "not-read",
      message:
        `the file exists but has not been read in this session; read it first with ReadFile, then ${verb} it`,
    };
  }
  if (recorded !== hash) {
    return {
      ok: false,
      reason: "modified",
      message: `the file was modified since you read it — read it again with ReadFile before you ${verb} it`,
    };
  }
  return { ...read, hash };
}
