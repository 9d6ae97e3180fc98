/**
 * The record of what a session's end is about to set aside (`ShellSandbox.endOfSession`): the protected
 * entries of any depth that commands made in subfolders (`api/.vscode`), which only that end finds. An end
 * that does not finish (a second Ctrl-C exits at once; a closed terminal; a kill) would leave them where they
 * are, and the next session would take them for the user's, bind them read-only and never mention them, while
 * the user's editor or agent runs what they hold. So the end first writes the entries it found, each with its
 * device and inode, into a file in the set-aside folder that its process keeps locked; the next session in the
 * workspace that finds such a file unlocked (its process is gone) sets aside each entry still there as the same
 * file, and says so.
 *
 * @module
 */
import { join } from "../common/path.ts";

const PREFIX = "unfinished-";
const SUFFIX = ".json";
/** A record larger than this is not one this module wrote (200,000 entries of long paths fit). */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** An entry to set aside, as it was found: what tells it from one made at its path since. */
export interface UnfinishedEntry {
  path: string;
  dev: number;
  ino: number;
}

/** A record written by `recordUnfinished`. */
export interface UnfinishedRecord {
  /** Removes the record and lets its lock go: every entry was handled. Never throws. */
  done(): Promise<void>;
}

/**
 * Writes the record of `entries` into `folder`, locked for as long as this process lives or until `done`;
 * null when it cannot be written (the end goes on without one). Never throws.
 */
export async function recordUnfinished(
  folder: string,
  entries: readonly UnfinishedEntry[],
): Promise<UnfinishedRecord | null> {
  const id = crypto.randomUUID();
  const partial = join(folder, `.${PREFIX}${id}.partial`);
  const path = join(folder, `${PREFIX}${id}${SUFFIX}`);
  let file: Deno.FsFile | null = null;
  try {
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    file = await Deno.open(partial, { write: true, createNew: true, mode: 0o600 });
    if (!await file.tryLock(true)) throw new Error("the new record is locked");
    const bytes = new TextEncoder().encode(JSON.stringify({ entries }));
    for (let written = 0; written < bytes.length;) written += await file.write(bytes.subarray(written));
    // Under its final name only once whole and locked: another session finds it complete, or not at all.
    await Deno.rename(partial, path);
  } catch {
    file?.close();
    await Deno.remove(partial).catch(() => undefined);
    return null;
  }
  const held = file;
  return {
    async done() {
      await Deno.remove(path).catch(() => undefined);
      try {
        held.close();
      } catch {
        // Closed already.
      }
    },
  };
}

/**
 * The entries of the records in `folder` whose processes are gone (their lock is free), each record removed
 * once read; a record another live session holds is left to it. Never throws.
 */
export async function takeUnfinished(folder: string): Promise<UnfinishedEntry[]> {
  let names: string[];
  try {
    names = (await Array.fromAsync(Deno.readDir(folder)))
      .filter((entry) => entry.isFile && entry.name.startsWith(PREFIX) && entry.name.endsWith(SUFFIX))
      .map((entry) => entry.name);
  } catch {
    return [];
  }
  const entries: UnfinishedEntry[] = [];
  for (const name of names) {
    const path = join(folder, name);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch {
      continue;
    }
    try {
      if (!await file.tryLock(true)) continue;
      const size = (await file.stat()).size;
      if (size <= MAX_RECORD_BYTES) entries.push(...parseRecord(await readWhole(file, size)));
      await Deno.remove(path);
    } catch {
      // Taken by another session meanwhile, or unreadable: nothing to do with it.
    } finally {
      file.close();
    }
  }
  return entries;
}

async function readWhole(file: Deno.FsFile, size: number): Promise<string> {
  const bytes = new Uint8Array(size);
  let read = 0;
  while (read < size) {
    const count = await file.read(bytes.subarray(read));
    if (count === null) break;
    read += count;
  }
  return new TextDecoder().decode(bytes.subarray(0, read));
}

/** The well-formed entries of a record's text; none when it is not a record. */
function parseRecord(text: string): UnfinishedEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== "object" || parsed === null || !("entries" in parsed)) return [];
  const { entries } = parsed;
  if (!Array.isArray(entries)) return [];
  return entries.filter((entry): entry is UnfinishedEntry =>
    typeof entry === "object" && entry !== null && typeof entry.path === "string" &&
    entry.path.startsWith("/") && Number.isSafeInteger(entry.dev) && Number.isSafeInteger(entry.ino)
  ).map((entry) => ({ path: entry.path, dev: entry.dev, ino: entry.ino }));
}
