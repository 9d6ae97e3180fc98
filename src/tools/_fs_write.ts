/**
 * Atomic writes for the file tools, on canonical paths from `safePath`: missing parents are created one
 * level at a time; the new content goes into a temp file that is created empty and exclusively, and is
 * written only once the temp file is verified to lie where it was meant to (another process may have
 * swapped a parent directory for a symlink); then fsync and rename over the target. A hard-linked target
 * is thus replaced, never modified in place. The new file gets the old one's mode and, where permitted
 * (as root), its owner and group: a user's file edited by root stays theirs.
 *
 * @module
 */
import { constants, lstatSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { posix } from "../common/path.ts";
import { realPathOrNull } from "../common/fs.ts";
import { changed, checkKind, describeFsError, type FileVersion, type FsFailure, isOpenedAt } from "./_fs.ts";
import { isExcludedPath, isWithinRoots } from "./_paths.ts";

/** What `writeAtomic` did. */
export interface WriteOutcome {
  ok: true;
  /** Whether the file did not exist before. */
  created: boolean;
  /** Hard links the old file had (0 for a new file); above 1, the other links keep the old content. */
  previousLinks: number;
  /** Permission bits of the written file. */
  mode: number;
  /** Whether the old file was set-user-ID or set-group-ID: the new file is not (`SET_ID_BITS`). */
  droppedSetId: boolean;
  /** Whether the old file had no write permission bit: it was replaced all the same, and keeps its mode. */
  wasReadOnly: boolean;
  /** Set when the new file could not be given the old file's owner and group (not root): both owners. */
  ownerChange: OwnerChange | null;
}

/** A file's owner and group. */
export interface Owner {
  uid: number;
  gid: number;
}

/** The old file's owner, which the new file could not be given, and the owner it has instead. */
export interface OwnerChange {
  previous: Owner;
  current: Owner;
  /** Why the old owner could not be set, e.g. "permission denied". */
  reason: string;
}

/** Options of `writeAtomic`. */
export interface WriteOptions {
  /** Real path of the workspace root: what a write creates must stay inside it or an added folder. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`), which count as inside like the root. */
  additionalRoots?: readonly string[] | undefined;
  /** Real paths of folders inside the root that count as outside (mewcode's state folder). */
  excluded?: readonly string[] | undefined;
  /** Permission bits for a new file. Default 0o644. */
  newFileMode?: number;
  /**
   * The file as the caller read it before deciding what to write (`readForWrite`): when the file at the path
   * is another by the rename (another program saved it meanwhile), nothing is written and the write fails as
   * `modified`, rather than replace what that program wrote.
   */
  expected?: FileVersion;
  /** Test seam: runs after the parent is checked, before the temp file is created. */
  beforeCreate?: () => Promise<void>;
  /** Test seam: runs after the empty temp file is created, before it is verified. */
  afterCreate?: () => Promise<void>;
  /** Test seam: runs after the temp file is written and synced, before it is verified again and renamed. */
  beforeRename?: () => Promise<void>;
  /** Test seam: runs after the rename, before the file is looked up at its path once more. */
  afterRename?: () => Promise<void>;
}

/** Permission bits of directories created for a write. */
export const NEW_DIRECTORY_MODE = 0o755;

/** Permission bits of a newly created file. */
export const NEW_FILE_MODE = 0o644;

/** The set-user-ID and set-group-ID bits, which a rewrite drops. */
const SET_ID_BITS = 0o6000;
/** The set-group-ID bit, which a folder made in a set-group-ID folder inherits, and keeps. */
const SET_GROUP_ID_BIT = 0o2000;

// A temp file created through a swapped directory can only be removed while the swap lasts: retry a while.
const CLEANUP_ATTEMPTS = 50;
const CLEANUP_PAUSE_MS = 2;

/**
 * Writes bytes to a canonical path atomically: creates missing parent directories (0755) one at a time,
 * re-checking that each stays inside the root; creates an empty temp file exclusively in the parent with
 * the old file's mode (0644 for a new file); verifies that the temp file is the one at the real path
 * under the parent, inside the root and not excluded; only then writes and fsyncs it, verifies again and
 * renames it over the target. The temp file is removed on every failure.
 */
export async function writeAtomic(
  path: string,
  bytes: Uint8Array,
  options: WriteOptions,
): Promise<WriteOutcome | FsFailure> {
  const parent = posix.dirname(path);
  const made = await makeParents(parent, options);
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
  // Set-user-ID and set-group-ID are dropped, as the kernel drops them when anyone without CAP_FSETID writes
  // a file: content the model wrote never runs with another user's rights.
  const previousMode = previous?.mode != null ? previous.mode & 0o7777 : null;
  const mode = previousMode !== null ? previousMode & ~SET_ID_BITS : options.newFileMode ?? NEW_FILE_MODE;
  const temp = posix.join(parent, `.${posix.basename(path)}.${crypto.randomUUID().slice(0, 8)}.mewcode-tmp`);
  await options.beforeCreate?.();
  let handle: FileHandle;
  try {
    handle = await open(temp, "wx", mode); // O_EXCL: never opens an existing file or follows a symlink
  } catch (error) {
    return describeFsError(error);
  }
  let renamed = false;
  let ownerChange: OwnerChange | null = null;
  try {
    await options.afterCreate?.();
    if (!await isInPlace(temp, handle, options)) return moved();
    // Before chmod: a chown clears the setuid and setgid bits.
    if (previous?.uid != null && previous.gid != null) {
      ownerChange = await giveOwner(handle, { uid: previous.uid, gid: previous.gid });
    }
    await handle.chmod(mode); // the umask may have narrowed the mode given to open
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
      written += bytesWritten;
    }
    await handle.sync();
    await options.beforeRename?.();
    if (!await isInPlace(temp, handle, options)) return moved();
    // Checked last, right before the rename: the write, the sync and the checks above take milliseconds, in
    // which an editor's save would otherwise be replaced without a trace.
    if (options.expected !== undefined && !isVersion(path, options.expected)) return modifiedMeanwhile();
    await Deno.rename(temp, path);
    renamed = true;
    await options.afterRename?.();
    // rename resolves both paths again, one after the other: a directory swapped between the two lookups
    // moves the file into another folder. Then what was written is taken back through the handle, so that
    // no content stays there (an empty file may: its name is out of reach).
    if (!await isInPlace(path, handle, options)) {
      await handle.truncate(0).catch(() => undefined);
      return moved();
    }
  } catch (error) {
    return describeFsError(error);
  } finally {
    if (!renamed) await removeTemp(temp, handle);
    await handle.close();
  }
  await syncDirectory(parent);
  return {
    ok: true,
    created: previous === null,
    previousLinks: previous?.nlink ?? 0,
    mode,
    wasReadOnly: previous !== null && (mode & 0o222) === 0,
    droppedSetId: previousMode !== null && (previousMode & SET_ID_BITS) !== 0,
    ownerChange,
  };
}

/** Whether the file at `path` (not followed) is still the one read as `expected`. */
function isVersion(path: string, expected: FileVersion): boolean {
  let now: Stats;
  try {
    now = lstatSync(path);
  } catch {
    return false;
  }
  return now.isFile() && now.dev === expected.dev && now.ino === expected.ino && now.size === expected.size &&
    now.mtimeMs === expected.mtimeMs && now.ctimeMs === expected.ctimeMs;
}

function modifiedMeanwhile(): FsFailure {
  return {
    ok: false,
    reason: "modified",
    message: "the file was modified by another program while it was being written; nothing was written — " +
      "read it again with ReadFile, then write it",
  };
}

/**
 * The notes a writer adds when replacing the old file did something the model and the user should know:
 * other hard links keep the old content, the owner could not be kept, a read-only file was rewritten.
 */
export function replaceNotes(written: WriteOutcome): string[] {
  const notes: string[] = [];
  if (written.previousLinks > 1) {
    notes.push(
      `Note: the old file had ${written.previousLinks} hard links; this replaced the link at this path, ` +
        "and the other links keep the old content.",
    );
  }
  const change = written.ownerChange;
  if (change !== null) {
    notes.push(
      `Note: the old file belonged to ${ownerLabel(change.previous)}; the new file could not be given that ` +
        `owner (${change.reason}) and belongs to ${ownerLabel(change.current)}.`,
    );
  }
  if (written.droppedSetId) {
    notes.push(
      `Note: the old file was set-user-ID or set-group-ID; the new file is not (mode ` +
        `${written.mode.toString(8).padStart(4, "0")}), as when anyone else writes it.`,
    );
  }
  if (written.wasReadOnly) {
    notes.push(
      `Note: the file was read-only (mode ${written.mode.toString(8).padStart(4, "0")}); it was rewritten ` +
        "all the same and keeps that mode.",
    );
  }
  return notes;
}

function ownerLabel(owner: Owner): string {
  return `uid ${owner.uid}, gid ${owner.gid}`;
}

// Gives the temp file the old file's owner and group, through its handle: root may, and does. Anyone else
// may only keep a group they belong to, so that is tried next. Returns how the owners differ in the end.
async function giveOwner(handle: FileHandle, previous: Owner): Promise<OwnerChange | null> {
  const created = await handle.stat();
  if (created.uid === previous.uid && created.gid === previous.gid) return null;
  let reason: string;
  try {
    await handle.chown(previous.uid, previous.gid);
    return null;
  } catch (error) {
    reason = describeFsError(error).message;
  }
  if (created.gid !== previous.gid) await handle.chown(created.uid, previous.gid).catch(() => undefined);
  const current = await handle.stat();
  return { previous, current: { uid: current.uid, gid: current.gid }, reason };
}

// Whether the open temp file is the one at `temp`, whose real path is itself, inside the root and not excluded.
async function isInPlace(temp: string, handle: FileHandle, options: WriteOptions): Promise<boolean> {
  if (!isWithinRoots(rootsOf(options), temp) || isExcludedPath(temp, options.excluded)) return false;
  return isOpenedAt(temp, await handle.stat());
}

function moved(): FsFailure {
  return changed("a parent directory was replaced while the file was being written; try again");
}

// Empties the temp file through its handle, then unlinks it until the handle reports no name left, or gives
// up after a while: a temp file created through a directory swapped for a symlink lies elsewhere and is
// reachable by name only while the swap lasts. Emptied first, so that nothing written into it stays there.
async function removeTemp(temp: string, handle: FileHandle): Promise<void> {
  await handle.truncate(0).catch(() => undefined);
  for (let attempt = 0; attempt < CLEANUP_ATTEMPTS; attempt++) {
    const opened = await handle.stat().catch(() => null);
    if (opened === null || opened.nlink === 0) return;
    try {
      await Deno.remove(temp); // the name is random and the file was created exclusively: only ours has it
    } catch {
      await new Promise((resolve) => setTimeout(resolve, CLEANUP_PAUSE_MS));
    }
  }
}

// mkdir -p, one level at a time, so a directory swapped for a symlink mid-way is noticed before writing.
async function makeParents(directory: string, options: WriteOptions): Promise<{ ok: true } | FsFailure> {
  const { excluded } = options;
  const roots = rootsOf(options);
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
      if (!isWithinRoots(roots, existing) || roots.includes(existing)) return describeFsError(error);
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
    if (real !== current || !isWithinRoots(roots, real) || isExcludedPath(real, excluded)) {
      // Made through a swapped parent, the empty directory may lie elsewhere: remove it while the name leads there.
      if (created) await Deno.remove(current).catch(() => undefined);
      return changed("a parent directory was replaced while it was being created; try again");
    }
    if (created) {
      try {
        // Exact 0755, whatever the umask, but with the set-group-ID bit the kernel gave a folder made in a
        // set-group-ID folder (as `mkdir -p` keeps it): what is made below still gets the shared group.
        const inherited = ((await Deno.lstat(current)).mode ?? 0) & SET_GROUP_ID_BIT;
        await Deno.chmod(current, NEW_DIRECTORY_MODE | inherited);
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

// The folders a write may land in: the root and the added folders.
function rootsOf(options: WriteOptions): string[] {
  return [options.root, ...options.additionalRoots ?? []];
}

async function syncDirectory(path: string): Promise<void> {
  try {
    // Non-blocking and directory-only, in case the parent was just swapped for a named pipe.
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems cannot fsync a directory; the rename is done either way.
  }
}
