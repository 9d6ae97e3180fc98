/**
 * Hardened file I/O for the file tools, on canonical paths from `safePath`: verified reads (the opened file
 * is the one that was checked), atomic writes (temp file + fsync + rename, never writing a shared inode in
 * place), content hashes, error messages, and a per-path lock that serialises writes.
 *
 * @module
 */
import { open } from "node:fs/promises";
import { posix } from "node:path";
import { isWithinRoot } from "./_paths.ts";

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
  /** `fstat` of the opened file. */
  info: Deno.FileInfo;
  /** Number of hard links of the file (1 for an ordinary file). */
  links: number;
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

/** What `writeAtomic` did. */
export interface WriteOutcome {
  ok: true;
  /** Whether the file did not exist before. */
  created: boolean;
  /** Hard links the old file had (0 for a new file); above 1, the other links keep the old content. */
  previousLinks: number;
  /** Permission bits of the written file. */
  mode: number;
}

/** Options of `writeAtomic`. */
export interface WriteOptions {
  /** Real path of the workspace root: created directories and the parent must stay inside it. */
  root: string;
  /** Permission bits for a new file. Default 0o644. */
  newFileMode?: number;
  /** Test seam: runs after the temp file is written and synced, before the parent re-check and the rename. */
  beforeRename?: () => Promise<void>;
}

/** The largest file the tools read into memory. */
export const MAX_READ_BYTES = 256 * 1024 * 1024;

/** Permission bits of directories created for a write. */
export const NEW_DIRECTORY_MODE = 0o755;

/** Permission bits of a newly created file. */
export const NEW_FILE_MODE = 0o644;

/** SHA-256 of bytes, lowercase hex. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Reads a file at a canonical path, verifying before reading that the opened file is the one checked:
 * `fstat` identity (dev + inode) equals `lstat` of the path and the real path is unchanged.
 */
export async function readVerified(
  path: string,
  options: ReadOptions = {},
): Promise<ReadOutcome | FsFailure> {
  let before: Deno.FileInfo;
  try {
    before = await Deno.lstat(path);
  } catch (error) {
    return describeFsError(error);
  }
  const kind = checkKind(before);
  if (kind !== null) return kind;
  await options.beforeOpen?.();
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    return describeFsError(error);
  }
  try {
    const info = await file.stat();
    if (!sameFile(before, info) || await realPathOrNull(path) !== path) {
      return changed("the file was replaced while it was being opened; try again");
    }
    if (!info.isFile) return checkKind(info) ?? changed("the file is not a regular file");
    const links = info.nlink ?? 1;
    if (links > 1 && options.strictLinks) {
      return {
        ok: false,
        reason: "hard-linked",
        message: `the file has ${links} hard links and strict link checking is on; ` +
          "its other names may lie outside the workspace",
      };
    }
    const maxBytes = options.maxBytes ?? MAX_READ_BYTES;
    if (info.size > maxBytes) {
      return {
        ok: false,
        reason: "too-large",
        message: `the file is too large (${info.size} bytes, limit ${maxBytes})`,
      };
    }
    const bytes = await readAll(file, info.size, maxBytes);
    if (bytes === null) {
      return {
        ok: false,
        reason: "too-large",
        message: `the file grew past ${maxBytes} bytes while being read`,
      };
    }
    return { ok: true, bytes, info, links };
  } catch (error) {
    return describeFsError(error);
  } finally {
    file.close();
  }
}

async function readAll(file: Deno.FsFile, sizeHint: number, maxBytes: number): Promise<Uint8Array | null> {
  let buffer = new Uint8Array(Math.max(sizeHint, 0) + 1);
  let length = 0;
  while (true) {
    if (length === buffer.length) {
      if (buffer.length > maxBytes) return null;
      const grown = new Uint8Array(Math.min(buffer.length * 2, maxBytes + 1));
      grown.set(buffer);
      buffer = grown;
    }
    const read = await file.read(buffer.subarray(length));
    if (read === null) break;
    length += read;
  }
  return buffer.subarray(0, length);
}

/**
 * Writes bytes to a canonical path atomically: creates missing parent directories (0755) one at a time,
 * re-checking that each stays inside the root; writes a temp file created exclusively in the parent with the
 * old file's mode (0644 for a new file); fsyncs; renames it over the target. A hard-linked target is thus
 * replaced, never modified in place. The temp file is removed on every failure.
 */
export async function writeAtomic(
  path: string,
  bytes: Uint8Array,
  options: WriteOptions,
): Promise<WriteOutcome | FsFailure> {
  const parent = posix.dirname(path);
  const made = await makeParents(parent, options.root);
  if (!made.ok) return made;

  let previous: Deno.FileInfo | null = null;
  try {
    previous = await Deno.lstat(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return describeFsError(error);
  }
  if (previous !== null) {
    const kind = checkKind(previous); // a symlink here means the path changed after safePath checked it
    if (kind !== null) return kind;
  }
  const mode = previous?.mode != null ? previous.mode & 0o7777 : options.newFileMode ?? NEW_FILE_MODE;
  const temp = posix.join(parent, `.${posix.basename(path)}.${crypto.randomUUID().slice(0, 8)}.mewcode-tmp`);
  let tempCreated = false;
  try {
    const handle = await open(temp, "wx", mode);
    tempCreated = true;
    try {
      await handle.chmod(mode); // the umask may have narrowed the mode given to open
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
        written += bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await options.beforeRename?.();
    if (await realPathOrNull(parent) !== parent) {
      await removeQuietly(temp);
      return changed("the parent directory was replaced during the write; try again");
    }
    await Deno.rename(temp, path);
    tempCreated = false;
  } catch (error) {
    if (tempCreated) await removeQuietly(temp);
    return describeFsError(error);
  }
  await syncDirectory(parent);
  return { ok: true, created: previous === null, previousLinks: previous?.nlink ?? 0, mode };
}

// mkdir -p, one level at a time, so a directory swapped for a symlink mid-way is noticed before writing.
async function makeParents(directory: string, root: string): Promise<{ ok: true } | FsFailure> {
  const missing: string[] = [];
  let existing = directory;
  while (true) {
    try {
      const info = await Deno.lstat(existing);
      if (info.isSymlink) {
        return changed("a parent directory became a symlink after it was checked; try again");
      }
      if (!info.isDirectory) return describeFsError(new Deno.errors.NotADirectory());
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) return describeFsError(error);
      if (!isWithinRoot(root, existing) || existing === root) return describeFsError(error);
      missing.unshift(posix.basename(existing));
      existing = posix.dirname(existing);
    }
  }
  let current = existing;
  for (const name of missing) {
    current = posix.join(current, name);
    let created = false;
    try {
      await Deno.mkdir(current, { mode: NEW_DIRECTORY_MODE });
      created = true;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) return describeFsError(error);
    }
    const real = await realPathOrNull(current);
    if (real !== current || !isWithinRoot(root, real)) {
      return changed("a parent directory was replaced while it was being created; try again");
    }
    if (created) {
      try {
        await Deno.chmod(current, NEW_DIRECTORY_MODE); // exact 0755, whatever the umask
      } catch (error) {
        return describeFsError(error);
      }
    }
  }
  if (await realPathOrNull(directory) !== directory) {
    return changed("the parent directory no longer resolves to the checked path; try again");
  }
  return { ok: true };
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

function checkKind(info: Deno.FileInfo): FsFailure | null {
  if (info.isDirectory) return { ok: false, reason: "is-directory", message: "it is a directory" };
  if (info.isSymlink) return changed("the path became a symlink after it was checked; try again");
  if (!info.isFile) {
    return {
      ok: false,
      reason: "not-regular-file",
      message: "it is not a regular file (a device, socket or named pipe)",
    };
  }
  return null;
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  if (a.ino === null || b.ino === null) return a.dev === b.dev && a.size === b.size;
  return a.dev === b.dev && a.ino === b.ino;
}

function changed(message: string): FsFailure {
  return { ok: false, reason: "changed", message };
}

async function realPathOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.realPath(path);
  } catch {
    return null;
  }
}

async function removeQuietly(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch {
    // Already gone, or not removable: nothing more to do.
  }
}

async function syncDirectory(path: string): Promise<void> {
  try {
    using directory = await Deno.open(path, { read: true });
    await directory.sync();
  } catch {
    // Some file systems cannot fsync a directory; the rename is done either way.
  }
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
  if (recorded === undefined && !requireRead) return { ok: true, bytes: read.bytes, hash, links: read.links };
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
  return { ok: true, bytes: read.bytes, hash, links: read.links };
}

/** The note a writer adds when the file it replaced had other hard links. */
export function linkNote(written: WriteOutcome): string[] {
  if (written.previousLinks <= 1) return [];
  return [
    `Note: the old file had ${written.previousLinks} hard links; this replaced the link at this path, ` +
    "and the other links keep the old content.",
  ];
}
