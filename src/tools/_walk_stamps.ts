/**
 * Walk stamps: what a walk saw of the tree (an `lstat` of each directory it listed and each ignore file it
 * read or looked for), to tell later, in a few milliseconds, whether a walk now would see the same.
 *
 * @module
 */

/**
 * What a walk saw of the tree, to tell later whether a walk would see the same (`walkIsCurrent`): for each
 * directory it listed and each ignore file it read or looked for, an `lstat` taken before the read or right
 * after the listing (the one that checks the directory is still the one found). Stamps are used only when
 * their times lie well before the walk began (`stampsUsable`), so a change made after the walk began, even
 * between a listing and its stamp, always shows. A change to a directory's entries changes its modification time; a change to an ignore file
 * changes its own; a change of permissions or owner changes the mode, owner or status-change time (which
 * forging a modification time changes too).
 */
export interface WalkStamps {
  /** `Date.now()` when the walk began. */
  takenAt: number;
  /** The paths stamped, as walked. */
  paths: string[];
  /** `STAMP_FIELDS` numbers per path (see `stampOf`); all NaN for a path that did not exist. */
  values: Float64Array;
}

/** Numbers per stamped path: device, inode, modification time, status-change time, mode, uid, gid, size. */
export const STAMP_FIELDS = 8;

/**
 * Whether a stamp can show a later change: its times lie `marginMs` before the walk began. A change within
 * the same tick of the file system's clock (up to 2 s on some file systems; Deno gives the status-change
 * time in whole seconds) as the stamped one leaves the times as they were.
 */
export function stampsUsable(
  stamps: { takenAt: number; values: ArrayLike<number> },
  marginMs: number,
): boolean {
  const limit = stamps.takenAt - marginMs;
  for (let at = 0; at < stamps.values.length; at += STAMP_FIELDS) {
    if (Number.isNaN(stamps.values[at]!)) continue;
    if (!(stamps.values[at + 2]! < limit) || !(stamps.values[at + 3]! < limit)) return false;
  }
  return true;
}

/** Whether every stamped path is as it was when stamped: then a walk now would see what that walk saw. */
export function walkIsCurrent(stamps: { paths: readonly string[]; values: ArrayLike<number> }): boolean {
  for (let index = 0; index < stamps.paths.length; index++) {
    const now = stampOf(stamps.paths[index]!);
    if (now === null) return false;
    for (let field = 0; field < STAMP_FIELDS; field++) {
      if (!Object.is(now[field], stamps.values[index * STAMP_FIELDS + field])) return false;
    }
  }
  return true;
}

const MISSING: readonly number[] = new Array(STAMP_FIELDS).fill(NaN);

/** A path's stamp; `MISSING` when it does not exist; null when it cannot be told (then nothing is current). */
export function stampOf(path: string): readonly number[] | null {
  try {
    return stampOfInfo(Deno.lstatSync(path));
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
    return missing ? MISSING : null;
  }
}

/** The stamp of what an `lstat` returned; null when the system gives no inode or times (then nothing is current). */
export function stampOfInfo(info: Deno.FileInfo): readonly number[] | null {
  const { ino, mtime, ctime, mode, uid, gid } = info;
  if (ino === null || mtime === null || ctime === null || mode === null || uid === null || gid === null) {
    return null;
  }
  return [info.dev, ino, mtime.getTime(), ctime.getTime(), mode, uid, gid, info.size];
}
