/**
 * The session index: a workspace's transcripts summarised for `mewcode sessions`, `-c/--continue` and
 * `-r/--resume ID`. Transcripts are read line by line through a bounded buffer, never whole
 * (`_transcript_tally.ts`). Files that are not transcripts are reported beside the list, never thrown;
 * symbolic links and other non-regular files in the projects folder are never followed.
 *
 * @module
 */
import { join } from "node:path";
import { describeError } from "../common/errors.ts";
import { HISTORY_FILE, projectDir } from "../config/home.ts";
import { costOf as listPriceOf } from "../llm/prices.ts";
import type { Usage } from "../llm/provider.ts";
import { printable, type Tally, tallyLines } from "./_transcript_tally.ts";
import { shellQuote as quoteForShell } from "../common/shell_quote.ts";

export type { Usage };

/** The shortest id prefix `findSession` accepts in place of a whole id. */
export const MIN_PREFIX_LENGTH = 8;
/** The longest session id accepted. */
export const MAX_SESSION_ID_LENGTH = 128;

const SESSION_ID = /^[A-Za-z0-9_-]+$/;
const CONCURRENCY = 8;
const MAX_CANDIDATES_SHOWN = 10;

/** The cost in USD of one request's usage, or null for a model without a known price (src/llm/prices.ts). */
export type CostFunction = (usage: Usage, model: string) => number | null;

/** One session of a workspace, as its transcript tells it. */
export interface SessionInfo {
  /** The session id (the transcript's file name without `.jsonl`). */
  id: string;
  /** The transcript file. */
  path: string;
  /** When the session started (its first session-start record), else the file's modification time. */
  startedAt: Date;
  /** The file's modification time. */
  updatedAt: Date;
  /** The first prompt, on one line, without control characters, shortened; null before any prompt. */
  firstPrompt: string | null;
  /** Model requests answered (assistant-message records). */
  turns: number;
  /** The model of the last request, else the one the session started with. */
  model: string | null;
  /** Token usage summed over every request of every run. */
  usage: Usage;
  /** What the requests cost, each priced on its own; null when a model's price is unknown. */
  costUsd: number | null;
  /**
   * Why the transcript cannot be resumed as is (a broken line before the last, a record type this version
   * does not know); null when it can. A torn last line is no problem: resuming drops it, and goes on.
   */
  problem: string | null;
}

/** A file in the workspace's sessions folder that is not listed, and why. */
export interface SkippedFile {
  path: string;
  reason: string;
}

/** The sessions of a workspace, newest first, and the files that were skipped. */
export interface SessionListing {
  sessions: SessionInfo[];
  skipped: SkippedFile[];
}

/** How sessions are summarised. */
export interface SessionIndexOptions {
  /** Prices each request; default `costOf` of src/llm/prices.ts (list prices). */
  costOf?: CostFunction;
}

/**
 * Why a session named by the user cannot be used: an invalid id, no such session, an ambiguous prefix, or a
 * sessions folder that cannot be listed.
 */
export class SessionLookupError extends Error {
  override name = "SessionLookupError";
}

/** A session id that is not an id (it could name a file outside the sessions folder). */
export class InvalidSessionIdError extends SessionLookupError {
  override name = "InvalidSessionIdError";
}

/** No session of this workspace has the id; `otherRoots` are workspaces that have one. */
export class SessionNotFoundError extends SessionLookupError {
  override name = "SessionNotFoundError";
  readonly otherRoots: string[];
  constructor(message: string, otherRoots: string[]) {
    super(message);
    this.otherRoots = otherRoots;
  }
}

/** An id prefix that several sessions share. */
export class AmbiguousSessionError extends SessionLookupError {
  override name = "AmbiguousSessionError";
  readonly candidates: SessionInfo[];
  constructor(message: string, candidates: SessionInfo[]) {
    super(message);
    this.candidates = candidates;
  }
}

/** Returns the id when it is a possible session id (letters, digits, "-", "_"); throws InvalidSessionIdError. */
export function validateSessionId(id: string): string {
  const hint = 'use an id that "mewcode sessions" lists';
  if (id === "") throw new InvalidSessionIdError(`Invalid session id "": ${hint}`);
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(
      `Invalid session id ${quote(id)}: it is longer than ${MAX_SESSION_ID_LENGTH} characters; ${hint}`,
    );
  }
  if (!SESSION_ID.test(id)) {
    throw new InvalidSessionIdError(
      `Invalid session id ${quote(id)}: an id has only letters, digits, "-" and "_"; ${hint}`,
    );
  }
  return id;
}

/** The sessions of the workspace `root`, newest first. */
export async function listSessions(
  home: string,
  root: string,
  options: SessionIndexOptions = {},
): Promise<SessionInfo[]> {
  return (await scanSessions(home, root, options)).sessions;
}

/** The sessions of the workspace `root`, newest first, and the files skipped (foreign, unreadable, links). */
export async function scanSessions(
  home: string,
  root: string,
  options: SessionIndexOptions = {},
): Promise<SessionListing> {
  const { files, skipped } = await listCandidates(await projectDir(home, root));
  const reads = await mapLimit(files, (file) => readSessionFile(file, { headOnly: false, ...options }));
  const sessions: SessionInfo[] = [];
  for (const read of reads) {
    if (read.status === "session") {
      if (isOwn(read, root)) sessions.push(read.info);
    } else if (!read.quiet) skipped.push({ path: read.path, reason: read.reason });
  }
  return { sessions: sessions.sort(newestFirst), skipped };
}

/** The newest session of the workspace `root`, or null when it has none (`-c`). */
export async function latestSession(
  home: string,
  root: string,
  options: SessionIndexOptions = {},
): Promise<SessionInfo | null> {
  // The file's time and first line decide the order, so only the newest transcript is read to the end.
  const { files } = await listCandidates(await projectDir(home, root));
  const heads = await mapLimit(files, (file) => readSessionFile(file, { headOnly: true }));
  const ordered = heads.flatMap((read) => read.status === "session" && isOwn(read, root) ? [read.info] : [])
    .sort(newestFirst);
  for (const head of ordered) {
    const read = await readSessionFile(head, { headOnly: false, ...options });
    if (read.status === "session" && isOwn(read, root)) return read.info;
  }
  return null;
}

/**
 * The session of the workspace `root` with this id, or the one whose id starts with it (at least
 * MIN_PREFIX_LENGTH characters). Throws InvalidSessionIdError, AmbiguousSessionError, or
 * SessionNotFoundError (naming the other workspaces that have such a session); all are SessionLookupErrors.
 */
export async function findSession(
  home: string,
  root: string,
  id: string,
  options: SessionIndexOptions = {},
): Promise<SessionInfo> {
  validateSessionId(id);
  const dir = await projectDir(home, root);
  const { files } = await listCandidates(dir);
  const exact = files.find((file) => file.id === id);
  if (exact !== undefined) {
    const read = await readSessionFile(exact, { headOnly: false, ...options });
    if (read.status === "session" && isOwn(read, root)) return read.info;
    const reason = read.status === "skipped"
      ? read.reason
      : `it belongs to the workspace "${printable(read.root ?? "")}"`;
    throw new SessionLookupError(`Cannot use session ${quote(id)} ("${exact.path}"): ${reason}`);
  }
  if (id.length >= MIN_PREFIX_LENGTH) {
    const matching = files.filter((file) => file.id.startsWith(id));
    const reads = await mapLimit(matching, (file) => readSessionFile(file, { headOnly: false, ...options }));
    const found = reads.flatMap((read) => read.status === "session" && isOwn(read, root) ? [read.info] : [])
      .sort(newestFirst);
    if (found.length === 1) return found[0]!;
    if (found.length > 1) {
      const shown = found.slice(0, MAX_CANDIDATES_SHOWN).map((info) =>
        `  ${info.id}  ${info.startedAt.toISOString()}  ${info.firstPrompt ?? "-"}`
      );
      const more = found.length > shown.length ? [`  … and ${found.length - shown.length} more`] : [];
      throw new AmbiguousSessionError(
        `Cannot resume session ${quote(id)}: ${found.length} sessions start with it; give more of the id:\n` +
          [...shown, ...more].join("\n"),
        found,
      );
    }
  }
  const otherRoots = await rootsWithSession(home, dir, id);
  const short = id.length < MIN_PREFIX_LENGTH
    ? ` (a prefix of an id needs at least ${MIN_PREFIX_LENGTH} characters)`
    : "";
  const where = `Cannot find session ${quote(id)}${short} for the workspace "${printable(root)}"`;
  if (otherRoots.length === 0) {
    throw new SessionNotFoundError(
      `${where}: run "mewcode sessions" to list this workspace's sessions`,
      otherRoots,
    );
  }
  const named = otherRoots.map((other) => `"${printable(other)}"`).join(", ");
  throw new SessionNotFoundError(
    `${where}: it belongs to the workspace ${named}; run mewcode with -C ${
      shellQuote(otherRoots[0]!)
    } to resume it`,
    otherRoots,
  );
}

/** A `.jsonl` file of the sessions folder, by name. */
interface Candidate {
  id: string;
  path: string;
}

/**
 * The regular `.jsonl` files named like session ids; links and other files are skipped (not followed), and
 * the prompt history (`HISTORY_FILE`) is passed over without a word.
 */
async function listCandidates(dir: string): Promise<{ files: Candidate[]; skipped: SkippedFile[] }> {
  const files: Candidate[] = [];
  const skipped: SkippedFile[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.endsWith(".jsonl") || entry.name === HISTORY_FILE) continue;
      const path = join(dir, entry.name);
      const id = entry.name.slice(0, -".jsonl".length);
      if (entry.isSymlink) skipped.push({ path, reason: "it is a symbolic link, which is not followed" });
      else if (!entry.isFile) skipped.push({ path, reason: "it is not a regular file" });
      else if (!SESSION_ID.test(id) || id.length > MAX_SESSION_ID_LENGTH) {
        skipped.push({ path, reason: "its name is not a session id" });
      } else files.push({ id, path });
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { files, skipped };
    throw new SessionLookupError(
      `Cannot list the sessions in "${dir}": ${
        describeError(error)
      }: MEWCODE_HOME (default ~/.mewcode) must ` +
        "be a folder you can read",
      { cause: error },
    );
  }
  files.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return { files, skipped };
}

/** The recorded roots of other workspaces that have a session with this id (or id prefix). */
async function rootsWithSession(home: string, ownDir: string, id: string): Promise<string[]> {
  const projects = join(home, "projects");
  const roots = new Set<string>();
  try {
    for await (const entry of Deno.readDir(projects)) {
      // Only real folders: a link in the projects folder is never followed.
      if (!entry.isDirectory || entry.isSymlink) continue;
      const dir = join(projects, entry.name);
      if (dir === ownDir) continue;
      const { files } = await listCandidates(dir).catch(() => ({ files: [] as Candidate[] }));
      const matching = files.filter((file) =>
        file.id === id || (id.length >= MIN_PREFIX_LENGTH && file.id.startsWith(id))
      );
      for (const file of matching) {
        const read = await readSessionFile(file, { headOnly: true });
        if (read.status === "session" && read.root !== null) roots.add(read.root);
      }
      if (roots.size >= 3) break;
    }
  } catch {
    // No projects folder, or an unreadable one: nothing more to say than "not found".
  }
  return [...roots].sort();
}

/**
 * Whether a transcript read is a session of the workspace `root`: its session-start record names that root
 * (or none, as transcripts written before the record had one). Two workspaces can share a project folder
 * (`/a-b` and `/a/b` give the same name), and `-c` in one must not continue the other's conversation, whose
 * text the model would take as this workspace's.
 */
function isOwn(read: FileRead & { status: "session" }, root: string): boolean {
  return read.root === null || read.root === root;
}

type FileRead =
  | { status: "session"; info: SessionInfo; root: string | null }
  /** `quiet`: not worth reporting (an empty file: a session that never ran; a file removed meanwhile). */
  | { status: "skipped"; path: string; reason: string; quiet: boolean };

/**
 * Reads one transcript: its first line must be a session-start record. `headOnly` reads only that line
 * (for ordering); otherwise every line is read, one bounded line at a time.
 */
async function readSessionFile(
  file: Candidate,
  options: SessionIndexOptions & { headOnly: boolean },
): Promise<FileRead> {
  const { path } = file;
  const skip = (reason: string, quiet = false): FileRead => ({ status: "skipped", path, reason, quiet });
  let tally: Tally;
  let updatedAt: Date | null;
  try {
    const before = await Deno.lstat(path);
    if (!before.isFile) return skip("it is not a regular file");
    using handle = await Deno.open(path, { read: true });
    // The file must still be the one checked: a link swapped in meanwhile is not followed.
    const opened = await handle.stat();
    if (!opened.isFile || opened.ino !== before.ino || opened.dev !== before.dev) {
      return skip("it changed while being read");
    }
    if (opened.size === 0) return skip("it is empty (the session never ran a prompt)", true);
    updatedAt = opened.mtime;
    const result = await tallyLines(handle, options.headOnly, options.costOf ?? listPriceOf);
    if (typeof result === "string") return skip(result);
    tally = result;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return skip("it was removed", true);
    return skip(`it cannot be read: ${describeError(error)}`);
  }
  const updated = updatedAt ?? new Date(tally.startTs ?? 0);
  return {
    status: "session",
    root: tally.root,
    info: {
      id: file.id,
      path,
      startedAt: tally.startTs === null ? updated : new Date(tally.startTs),
      updatedAt: updated,
      firstPrompt: tally.firstPrompt,
      turns: tally.turns,
      model: tally.model,
      usage: tally.usage,
      costUsd: tally.costUsd,
      problem: tally.problem,
    },
  };
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** A path as a shell word. */
function shellQuote(path: string): string {
  const shown = printable(path);
  return /^[A-Za-z0-9_\/.,:@%+=-]+$/.test(shown) ? shown : quoteForShell(shown);
}

/** Most recently used first (a continued session counts as new again), then most recently started. */
function newestFirst(a: SessionInfo, b: SessionInfo): number {
  return b.updatedAt.getTime() - a.updatedAt.getTime() ||
    b.startedAt.getTime() - a.startedAt.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Maps with at most CONCURRENCY calls in flight (so a large folder does not open every file at once). */
async function mapLimit<T, R>(items: readonly T[], map: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
