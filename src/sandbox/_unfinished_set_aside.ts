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
import { type HeldRecord, takeUnlockedRecords, writeLockedRecord } from "./_locked_records.ts";

const PREFIX = "unfinished-";
/** A record larger than this is not one this module wrote (200,000 entries of long paths fit). */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** An entry to set aside, as it was found: what tells it from one made at its path since. */
export interface UnfinishedEntry {
  path: string;
  dev: number;
  ino: number;
}

/** A record written by `recordUnfinished`: `done` removes it and lets its lock go once every entry was handled. */
export type UnfinishedRecord = HeldRecord;

/**
 * Writes the record of `entries` into `folder`, locked for as long as this process lives or until `done`;
 * null when it cannot be written (the end goes on without one). Never throws.
 */
export function recordUnfinished(
  folder: string,
  entries: readonly UnfinishedEntry[],
): Promise<UnfinishedRecord | null> {
  return writeLockedRecord(folder, PREFIX, new TextEncoder().encode(JSON.stringify({ entries })));
}

/**
 * The entries of the records in `folder` whose processes are gone (their lock is free), each record removed
 * once read; a record another live session holds is left to it. Never throws.
 */
export async function takeUnfinished(folder: string): Promise<UnfinishedEntry[]> {
  const entries: UnfinishedEntry[] = [];
  for (const record of await takeUnlockedRecords(folder, PREFIX, MAX_RECORD_BYTES)) {
    if (record.text !== null) entries.push(...parseRecord(record.text));
    await record.done();
  }
  return entries;
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
