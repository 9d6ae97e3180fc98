/**
 * Where to undo what a call made of a path that was to stay missing (a git file such as `.git/commondir`, a
 * credential file of a home, a script a hook runs): mewcode removes it from its own process on the host,
 * after the call, by the path planned before it. A command may have made a folder on that path a symlink
 * (`mv .m2 .m2.old && ln -s /etc .m2`): followed, the removal would delete a file of that name wherever the
 * link points, system files when mewcode runs as root. So the path is never followed through a symlink: the
 * symlink itself is what goes.
 *
 * @module
 */
import { dirname } from "../common/path.ts";
import { lstatSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";
import { isAtOrBelow } from "./bubblewrap.ts";

/** An entry to remove, and what it is. */
export interface MadeEntry {
  path: string;
  info: Deno.FileInfo;
  /** Whether it is a symlink on the way to the planned path, not the path itself. */
  onTheWay: boolean;
}

/**
 * What stands where `path` was planned: going down from the root of `roots` that holds it, the first symlink
 * on the way (planned paths have only real folders on their way when planned, so a symlink there is the
 * call's), else the path itself; null when nothing is there (or a file stands on the way, so nothing can).
 * A path in no root (which a sandboxed command cannot reach) is the path itself when its folder is where it
 * was, else null.
 */
export function madeEntry(path: string, roots: readonly string[]): MadeEntry | null {
  const root = roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
  if (root === undefined) {
    const info = lstatSyncOrNull(path);
    const folder = dirname(path);
    return info === null || realPathSyncOrNull(folder) !== folder ? null : { path, info, onTheWay: false };
  }
  const parts = path.slice(root.length + 1).split("/");
  let at = root;
  for (let index = 0; index < parts.length; index++) {
    at = `${at}/${parts[index]}`;
    const info = lstatSyncOrNull(at);
    if (info === null) return null;
    if (index === parts.length - 1) return { path: at, info, onTheWay: false };
    if (info.isSymlink) return { path: at, info, onTheWay: true };
    if (!info.isDirectory) return null;
  }
  return null;
}

/** What an entry is, for the model's note. */
export function entryType(info: Deno.FileInfo): "file" | "directory" | "symlink" | "other" {
  return info.isSymlink ? "symlink" : info.isDirectory ? "directory" : info.isFile ? "file" : "other";
}
