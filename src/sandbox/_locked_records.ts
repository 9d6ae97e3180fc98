/**
 * Records a session keeps locked while it lives, for the next session to find if it dies before it is done
 * with them: what a session's end is about to set aside (`_unfinished_set_aside.ts`), and the git metadata's
 * first scan its end compares with (`_unchecked_git_scan.ts`). A record is a file `<prefix><uuid>.json` in a
 * folder of mewcode's state, written whole under a hidden name and renamed only once locked, so another
 * session finds it complete or not at all. A later session takes the records whose lock is free: their
 * process is gone (a lock dies with its process, even a killed one).
 *
 * @module
 */
import { readInto } from "../common/fs.ts";
import { join } from "../common/path.ts";

const SUFFIX = ".json";

/** A record this process holds locked. */
export interface HeldRecord {
  /** Removes the record and lets its lock go. Never throws. */
  done(): Promise<void>;
}

/** A record taken from a process that is gone: its text (null when larger than the limit), locked now. */
export interface TakenRecord extends HeldRecord {
  text: string | null;
}

/**
 * Writes `bytes` as a new record of `prefix` in `folder` (created 0700 if missing; the record 0600), locked for
 * as long as this process lives or until `done`; null when it cannot be written. Never throws.
 */
export async function writeLockedRecord(
  folder: string,
  prefix: string,
  bytes: Uint8Array,
): Promise<HeldRecord | null> {
  const id = crypto.randomUUID();
  const partial = join(folder, `.${prefix}${id}.partial`);
  const path = join(folder, `${prefix}${id}${SUFFIX}`);
  let file: Deno.FsFile | null = null;
  try {
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    file = await Deno.open(partial, { write: true, createNew: true, mode: 0o600 });
    if (!await file.tryLock(true)) throw new Error("the new record is locked");
    for (let written = 0; written < bytes.length;) written += await file.write(bytes.subarray(written));
    // Under its final name only once whole and locked: another session finds it complete, or not at all.
    await Deno.rename(partial, path);
  } catch {
    file?.close();
    await Deno.remove(partial).catch(() => undefined);
    return null;
  }
  return heldRecord(file, path);
}

/**
 * The records of `prefix` in `folder` whose processes are gone (their lock is free), in name order, each now
 * locked by this process until its `done`; a record another live session holds is left to it, and so is one
 * removed or replaced between its listing and its lock. A record larger than `maxBytes` is not read (its
 * text is null). Never throws.
 */
export async function takeUnlockedRecords(
  folder: string,
  prefix: string,
  maxBytes: number,
): Promise<TakenRecord[]> {
  let names: string[];
  try {
    names = (await Array.fromAsync(Deno.readDir(folder)))
      .filter((entry) => entry.isFile && entry.name.startsWith(prefix) && entry.name.endsWith(SUFFIX))
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
  const records: TakenRecord[] = [];
  for (const name of names) {
    const path = join(folder, name);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch {
      continue;
    }
    try {
      if (!await file.tryLock(true)) {
        file.close();
        continue;
      }
      const info = await file.stat();
      // Still the file under that name: its session (or one that took it) may have removed it meanwhile.
      const named = await Deno.lstat(path).catch(() => null);
      if (!info.isFile || named === null || named.dev !== info.dev || named.ino !== info.ino) {
        file.close();
        continue;
      }
      const text = info.size <= maxBytes ? await readWhole(file, info.size) : null;
      records.push({ text, ...heldRecord(file, path) });
    } catch {
      file.close();
    }
  }
  return records;
}

function heldRecord(file: Deno.FsFile, path: string): HeldRecord {
  return {
    async done() {
      await Deno.remove(path).catch(() => undefined);
      try {
        file.close();
      } catch {
        // Closed already.
      }
    },
  };
}

async function readWhole(file: Deno.FsFile, size: number): Promise<string> {
  const bytes = new Uint8Array(size);
  return new TextDecoder().decode(bytes.subarray(0, await readInto(file, bytes)));
}
