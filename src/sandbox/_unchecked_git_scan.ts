/**
 * What a session's end compares the git metadata with, kept where the end can be found even when it never
 * comes. The end checks (`ShellSandbox.endOfSession`, git_watch.ts) report what the mounts cannot stop: an
 * index entry marked skip-worktree, a rebase todo's `exec` line, a replace ref, a loose object swapped for
 * other content. A session killed mid-way (SIGKILL, the OOM killer, a closed container) never runs them, and
 * the next session's first scan would take the changed state for the user's own: never reported.
 *
 * The same holds for the end's other comparisons: the task runners' files the git hooks run (`package.json`
 * for husky's `npm test`) and the files the workspace's `.envrc`s have direnv load (`.env` for `dotenv`).
 *
 * So a session, once it has taken its first scan, writes what the comparisons need (each root's findings'
 * `id` and `key`, whether the scan was complete, when it started; those files' digests) into a file of its project folder in
 * mewcode's state folder (which commands cannot see), that its process keeps locked; its end removes the
 * file once checked. A later session in the workspace that finds such a file unlocked (its process is gone)
 * keeps it locked in turn, scans now, reports what changed since that session started, and removes the file
 * at its own end: killed before then, it leaves the file for the next session, which reports it again rather
 * than never. A file it cannot read as a record is reported as such: what it kept cannot be checked.
 *
 * @module
 */
import { type HeldRecord, takeUnlockedRecords, writeLockedRecord } from "./_locked_records.ts";
import { diffGitFindings, type GitBaseline } from "./git_scan_diff.ts";
import { scanGitMetadata } from "./git_scan.ts";
import { objectFilesWrittenSince, type WrittenObjectFile } from "./git_packs.ts";
import type { UserGitConfig } from "./_user_git_config.ts";
import { changedHookTasks, type HookTaskRecord } from "./git_hook_tasks.ts";
import { changedDirenvFiles, type DirenvLoad, type DirenvRecord } from "./direnv_files.ts";

const PREFIX = "unchecked-git-";
/** 2 adds the task runners' files the hooks run and the files `.envrc`s load; 1 is still read. */
const VERSION = 2;
const DIRENV_LOADS: ReadonlySet<string> = new Set<DirenvLoad>(["variables", "script", "nix", "path-folder"]);
/** A record larger than this is not one this module wrote (findings of many kinds are summed up in one). */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** The first scan of one root, as far as the end's comparison needs it. */
export interface RootBaseline extends GitBaseline {
  /** The root as the session scanned it. */
  root: string;
  /** When its scan started, in epoch milliseconds: loose objects written since are checked. */
  startedAt: number;
}

/** What else a session's end compares, besides the git metadata (`ShellSandbox.endOfSession`). */
export interface EndBaseline {
  /** The task runners' files the git hooks run (`package.json` for `npm test`), as the session began. */
  hookTasks: HookTaskRecord[];
  /** The files and folders the workspace's `.envrc`s have direnv load, as the session began. */
  direnv: DirenvRecord[];
}

/** A record of a session that ended before its checks, locked by this process until `done`. */
export interface UncheckedRecord extends HeldRecord {
  /** The first scans of the session's roots, and the rest; null when the file cannot be read as a record. */
  baseline: ({ roots: RootBaseline[] } & EndBaseline) | null;
}

/**
 * Writes the record of `roots` into `folder`, locked for as long as this process lives or until `done`;
 * null when it cannot be written (the session goes on without one). Never throws.
 */
export async function recordGitBaseline(
  folder: string,
  roots: readonly RootBaseline[],
  rest: EndBaseline = { hookTasks: [], direnv: [] },
): Promise<HeldRecord | null> {
  const bytes = new TextEncoder().encode(JSON.stringify({
    version: VERSION,
    roots: roots.map((root) => ({
      root: root.root,
      startedAt: root.startedAt,
      complete: root.complete,
      findings: root.findings.map((finding) => [finding.id, finding.key]),
    })),
    hookTasks: rest.hookTasks,
    // A folder's entries (a Map) as pairs.
    direnv: rest.direnv.map((record) =>
      record.kind !== "not-followed" && record.state instanceof Map
        ? { ...record, state: [...record.state] }
        : record
    ),
  }));
  if (bytes.length > MAX_RECORD_BYTES) return null;
  return await writeLockedRecord(folder, PREFIX, bytes);
}

/**
 * The records in `folder` whose processes are gone (their lock is free), each now locked by this process
 * until its `done`; a record another live session holds is left to it. Never throws.
 */
export async function takeUncheckedRecords(folder: string): Promise<UncheckedRecord[]> {
  const taken = await takeUnlockedRecords(folder, PREFIX, MAX_RECORD_BYTES);
  return taken.map(({ text, done }) => ({ baseline: text === null ? null : parseRecord(text), done }));
}

/** Options of `checkEarlierSessions`. */
export interface EarlierChecksOptions {
  /** This session's roots: only those are scanned. */
  roots: readonly string[];
  /** The config the user's git reads besides each repository's (as the session's own scans read it). */
  user: UserGitConfig;
}

/** What `checkEarlierSessions` found, and how to let the records go once it was reported. */
export interface EarlierChecks {
  /** Lines for the user. */
  lines: string[];
  /**
   * The packs, multi-pack indexes and commit graphs written since each session started, which only git can
   * check (`checkObjectFiles`), with the words that say which session they are about.
   */
  objectFiles: { prefix: string; files: WrittenObjectFile[] }[];
  /** Removes the records checked. Never throws. */
  done(): Promise<void>;
}

/**
 * Runs the end comparison of each session that ended before its checks (its record in `folder` unlocked)
 * against the git metadata as it is now. Never throws.
 */
export async function checkEarlierSessions(
  folder: string,
  options: EarlierChecksOptions,
): Promise<EarlierChecks> {
  const records = await takeUncheckedRecords(folder);
  const lines: string[] = [];
  const objectFiles: EarlierChecks["objectFiles"] = [];
  for (const record of records) {
    try {
      lines.push(...await compareRecord(record, options, objectFiles));
    } catch (error) {
      lines.push(
        `${EARLIER} ended before its end checks of the git metadata, and they could not be run now ` +
          `(${error instanceof Error ? error.message : String(error)}): ${BY_HAND}`,
      );
    }
  }
  return {
    lines,
    objectFiles,
    async done() {
      for (const record of records) await record.done();
    },
  };
}

const EARLIER = "An earlier session in this workspace";
const BY_HAND = "check the repository by hand (git config -l --show-origin, git ls-files -v, " +
  "git replace -l, git fsck)";

async function compareRecord(
  record: UncheckedRecord,
  options: EarlierChecksOptions,
  objectFiles: EarlierChecks["objectFiles"],
): Promise<string[]> {
  if (record.baseline === null) {
    return [
      `${EARLIER} ended before its end checks of the git metadata, and what it kept for them cannot be read: ` +
      `what its commands changed that can only be reported was not checked; ${BY_HAND}`,
    ];
  }
  const lines: string[] = [];
  const { roots, hookTasks, direnv } = record.baseline;
  for (const baseline of roots) {
    const prefix = endedBefore(baseline.startedAt);
    const added = baseline.root === options.roots[0] ? "" : ` in the added folder "${baseline.root}"`;
    if (!options.roots.includes(baseline.root)) {
      lines.push(
        `${prefix}; its added folder "${baseline.root}" is not one of this session's, so what ` +
          `changed there was not checked: ${BY_HAND}`,
      );
      continue;
    }
    const after = await scanGitMetadata(baseline.root, {
      user: options.user,
      looseObjects: { since: baseline.startedAt },
    });
    const diff = diffGitFindings(baseline, after);
    for (const change of diff.changes) lines.push(`${prefix}; since then${added}: ${change.message}`);
    if (diff.notice !== null) lines.push(`${prefix}; checking now${added}: ${diff.notice}`);
    const files = objectFilesWrittenSince(after.objectFolders, baseline.startedAt);
    if (files.length > 0) objectFiles.push({ prefix: `${prefix}${added}`, files });
  }
  // What the hooks run and what direnv loads, compared with what they were when that session began.
  const root = options.roots[0] ?? "/";
  const changed = [...await changedHookTasks(hookTasks, root), ...await changedDirenvFiles(direnv, root)];
  const startedAt = roots.length === 0 ? null : Math.min(...roots.map((baseline) => baseline.startedAt));
  for (const line of changed) lines.push(`${endedBefore(startedAt)}; since then: ${line}`);
  return lines;
}

/** "An earlier session in this workspace (started 2026-12-03 19:10:00 UTC) ended before its end checks". */
function endedBefore(startedAt: number | null): string {
  const when = startedAt === null
    ? ""
    : ` (started ${new Date(startedAt).toISOString().slice(0, 19).replace("T", " ")} UTC)`;
  return `${EARLIER}${when} ended before its end checks`;
}

/** The baselines of a record's text; null when it is not a whole record of this version (or the last). */
function parseRecord(text: string): ({ roots: RootBaseline[] } & EndBaseline) | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const record = parsed as { version?: unknown; roots?: unknown; hookTasks?: unknown; direnv?: unknown };
  if ((record.version !== VERSION && record.version !== 1) || !Array.isArray(record.roots)) return null;
  const roots: RootBaseline[] = [];
  for (const entry of record.roots as unknown[]) {
    if (typeof entry !== "object" || entry === null) return null;
    const { root, startedAt, complete, findings } = entry as Record<string, unknown>;
    if (typeof root !== "string" || !root.startsWith("/") || !Number.isSafeInteger(startedAt)) return null;
    if (typeof complete !== "boolean" || !Array.isArray(findings)) return null;
    const pairs: { id: string; key: string }[] = [];
    for (const pair of findings as unknown[]) {
      if (!Array.isArray(pair) || pair.length !== 2) return null;
      const [id, key] = pair;
      if (typeof id !== "string" || typeof key !== "string") return null;
      pairs.push({ id, key });
    }
    roots.push({ root, startedAt: startedAt as number, complete, findings: pairs });
  }
  if (record.version === 1) return { roots, hookTasks: [], direnv: [] };
  const hookTasks = parseList(record.hookTasks, parseHookTask);
  const direnv = parseList(record.direnv, parseDirenv);
  return hookTasks === null || direnv === null ? null : { roots, hookTasks, direnv };
}

/** Each entry of `value` parsed; null when it is no list, or an entry is not what `parse` takes. */
function parseList<T>(value: unknown, parse: (entry: Record<string, unknown>) => T | null): T[] | null {
  if (!Array.isArray(value)) return null;
  const parsed: T[] = [];
  for (const entry of value as unknown[]) {
    const one = typeof entry === "object" && entry !== null ? parse(entry as Record<string, unknown>) : null;
    if (one === null) return null;
    parsed.push(one);
  }
  return parsed;
}

function parseHookTask(entry: Record<string, unknown>): HookTaskRecord | null {
  const { task, digest } = entry;
  if (typeof task !== "object" || task === null || (digest !== null && typeof digest !== "string")) {
    return null;
  }
  const { path, hook, command } = task as Record<string, unknown>;
  if (!isAbsolute(path) || !isAbsolute(hook) || typeof command !== "string") return null;
  return { task: { path, hook, command }, digest };
}

function parseDirenv(entry: Record<string, unknown>): DirenvRecord | null {
  const { kind, envrc, command, why, path, state } = entry;
  if (!isAbsolute(envrc) || typeof command !== "string") return null;
  if (kind === "not-followed") return typeof why === "string" ? { kind, envrc, command, why } : null;
  if (typeof kind !== "string" || !DIRENV_LOADS.has(kind) || !isAbsolute(path)) return null;
  const load = kind as DirenvLoad;
  if (state === null || typeof state === "string") return { kind: load, envrc, command, path, state };
  if (!Array.isArray(state)) return null;
  const entries = new Map<string, string>();
  for (const pair of state as unknown[]) {
    if (
      !Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string"
    ) {
      return null;
    }
    entries.set(pair[0], pair[1]);
  }
  return { kind: load, envrc, command, path, state: entries };
}

function isAbsolute(value: unknown): value is string {
  return typeof value === "string" && value.startsWith("/");
}
