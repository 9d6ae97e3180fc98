/**
 * A repository's replace refs: `refs/replace/<name>` makes git use another object wherever object
 * `<name>` is named (`git replace`). A shell command in the sandbox may write refs (as `git commit` must),
 * so with `git replace <blob of Makefile> <other blob>` it can make the user's `git checkout -- Makefile`
 * write other content, while `git status` shows nothing (it compares the index's stat data, not content).
 * The metadata scan (git_scan.ts) reports replace refs the session added, loose (files under
 * `refs/replace/`) or packed (lines of `packed-refs`); a loose ref hides a packed one of the same name.
 *
 * Not read: the reftable format (`extensions.refStorage = reftable`), whose binary tables the scan does not
 * parse.
 *
 * @module
 */
import { readTextHead } from "../common/fs.ts";
import { join } from "../common/path.ts";

/** One replace ref. */
export interface ReplaceRef {
  /** `refs/replace/…`. */
  ref: string;
  /** Its target (an object name), or the first line of what the ref file holds, shortened. */
  target: string;
  /** Absolute path of the file that holds it: the loose ref, or `packed-refs`. */
  path: string;
}

/** Entries of `refs/replace/` read at most. */
const MAX_LOOSE_ENTRIES = 10_000;
/** Bytes of `packed-refs` read at most. */
const MAX_PACKED_BYTES = 64 * 1024 * 1024;
/** Bytes of a loose ref file read at most. */
const MAX_REF_BYTES = 4_096;
const PREFIX = "refs/replace/";

/** The replace refs of a git directory (its common directory, where refs live), sorted by name. */
export async function readReplaceRefs(gitDir: string): Promise<ReplaceRef[]> {
  const found = new Map<string, ReplaceRef>();
  for (const ref of await readPacked(join(gitDir, "packed-refs"))) found.set(ref.ref, ref);
  for (const ref of await readLoose(gitDir)) found.set(ref.ref, ref);
  return [...found.values()].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

/** The files below `refs/replace/`, breadth first, at most `MAX_LOOSE_ENTRIES` entries. */
async function readLoose(gitDir: string): Promise<ReplaceRef[]> {
  const refs: ReplaceRef[] = [];
  const queue = [PREFIX.slice(0, -1)];
  let entries = 0;
  for (let next = 0; next < queue.length; next++) {
    const folder = queue[next]!;
    let listing: Deno.DirEntry[];
    try {
      listing = [...Deno.readDirSync(join(gitDir, folder))];
    } catch {
      continue;
    }
    for (const entry of listing) {
      if (++entries > MAX_LOOSE_ENTRIES) return refs;
      const ref = `${folder}/${entry.name}`;
      const path = join(gitDir, ref);
      const info = await Deno.stat(path).catch(() => null);
      if (info?.isDirectory === true) queue.push(ref);
      if (info?.isFile !== true) continue;
      // Git ignores the files it writes while updating a ref.
      if (entry.name.endsWith(".lock")) continue;
      refs.push({ ref, target: await readFirstLine(path, MAX_REF_BYTES), path });
    }
  }
  return refs;
}

/** The `refs/replace/` lines of a `packed-refs` file: `<object name> <ref>`. */
async function readPacked(path: string): Promise<ReplaceRef[]> {
  const text = await readFirstLine(path, MAX_PACKED_BYTES, false);
  const refs: ReplaceRef[] = [];
  for (const line of text.split("\n")) {
    const match = /^([0-9a-fA-F]+) (refs\/replace\/.+?)\r?$/.exec(line);
    if (match !== null) refs.push({ ref: match[2]!, target: match[1]!, path });
  }
  return refs;
}

/** The first line (or all, with `firstLine` false) of the first `max` bytes of a file; "" when unreadable. */
async function readFirstLine(path: string, max: number, firstLine = true): Promise<string> {
  const text = await readTextHead(path, max);
  if (text === null) return "";
  return firstLine ? text.split("\n")[0]!.replace(/\r$/, "") : text;
}
