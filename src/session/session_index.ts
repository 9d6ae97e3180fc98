/**
 * The session index: a workspace's transcripts summarised for `mewcode sessions`, `-c/--continue` and
 * `-r/--resume ID`. Transcripts are read line by line through a bounded buffer, never whole: a line longer
 * than MAX_LINE_BYTES is judged by its start (its type, a request's model, a prompt's first characters).
 * Files that are not transcripts are reported beside the list, never thrown; symbolic links and other
 * non-regular files in the projects folder are never followed.
 *
 * @module
 */
import { join } from "node:path";
import { concatBytes } from "../common/bytes.ts";
import { describeError } from "../common/errors.ts";
import { projectDir } from "../config/home.ts";
import { costOf as listPriceOf } from "../llm/prices.ts";
import { emptyUsage, type Usage } from "../llm/provider.ts";
import { RECORD_TYPES } from "./transcript.ts";
import { shellQuote as quoteForShell } from "../common/shell_quote.ts";

export type { Usage };

/** The shortest id prefix `findSession` accepts in place of a whole id. */
export const MIN_PREFIX_LENGTH = 8;
/** The longest session id accepted. */
export const MAX_SESSION_ID_LENGTH = 128;
/** Lines longer than this are judged by their start. */
const MAX_LINE_BYTES = 1024 * 1024;

const SESSION_ID = /^[A-Za-z0-9_-]+$/;
const HEAD_LINE_BYTES = 64 * 1024;
/** How much of a line's start is read when the line is not parsed. */
const PREFIX_BYTES = 4096;
const CHUNK_BYTES = 64 * 1024;
const MAX_PROMPT_LENGTH = 160;
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
   * does not know); null when it can. A torn last line is no problem: it is skipped on resume.
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

/** Why a session named by the user cannot be used: an invalid id, no such session, or an ambiguous prefix. */
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
    if (read.status === "session") sessions.push(read.info);
    else if (!read.quiet) skipped.push({ path: read.path, reason: read.reason });
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
  const ordered = heads.flatMap((read) => read.status === "session" ? [read.info] : []).sort(newestFirst);
  for (const head of ordered) {
    const read = await readSessionFile(head, { headOnly: false, ...options });
    if (read.status === "session") return read.info;
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
    if (read.status === "session") return read.info;
    throw new SessionLookupError(`Cannot use session ${quote(id)} ("${exact.path}"): ${read.reason}`);
  }
  if (id.length >= MIN_PREFIX_LENGTH) {
    const matching = files.filter((file) => file.id.startsWith(id));
    const reads = await mapLimit(matching, (file) => readSessionFile(file, { headOnly: false, ...options }));
    const found = reads.flatMap((read) => read.status === "session" ? [read.info] : []).sort(newestFirst);
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

/** The regular `.jsonl` files named like session ids; links and other files are skipped (not followed). */
async function listCandidates(dir: string): Promise<{ files: Candidate[]; skipped: SkippedFile[] }> {
  const files: Candidate[] = [];
  const skipped: SkippedFile[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.endsWith(".jsonl")) continue;
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
    throw new Error(`Cannot list the sessions in "${dir}": ${describeError(error)}`, { cause: error });
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

type FileRead =
  | { status: "session"; info: SessionInfo; root: string | null }
  /** `quiet`: not worth reporting (an empty file: a session that never ran; a file removed meanwhile). */
  | { status: "skipped"; path: string; reason: string; quiet: boolean };

/** What the lines of a transcript add up to. */
interface Tally {
  root: string | null;
  startTs: number | null;
  model: string | null;
  firstPrompt: string | null;
  turns: number;
  usage: Usage;
  costUsd: number | null;
  problem: string | null;
}

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

/** Folds the lines of a transcript into a Tally, or says why the file is not a transcript. */
async function tallyLines(
  handle: Deno.FsFile,
  headOnly: boolean,
  costOf: CostFunction,
): Promise<Tally | string> {
  const tally: Tally = {
    root: null,
    startTs: null,
    model: null,
    firstPrompt: null,
    turns: 0,
    usage: emptyUsage(),
    costUsd: 0,
    problem: null,
  };
  // A bad line is a problem only when another line follows it; the last one is torn and skipped.
  let badLine: string | null = null;
  for await (const line of readLines(handle, headOnly ? HEAD_LINE_BYTES : MAX_LINE_BYTES)) {
    if (badLine !== null) tally.problem ??= badLine;
    badLine = null;
    const record = decodeLine(line, (type) => skims(tally, type));
    if (line.number === 1) {
      const start = typeof record === "string" || record.value === null ? null : record.value;
      if (start === null || start.type !== "session-start" || typeof start.sessionId !== "string") {
        return line.terminated
          ? "it is not a mewcode transcript: its first line is not a session-start record"
          : "its only line is not a complete session-start record (not a mewcode transcript, or cut off)";
      }
      tally.root = typeof start.root === "string" ? start.root : null;
      tally.model = typeof start.model === "string" ? start.model : null;
      tally.startTs = typeof start.ts === "number" && Number.isFinite(start.ts) ? start.ts : null;
      if (headOnly) return tally;
      continue;
    }
    if (typeof record === "string") {
      badLine = `line ${line.number} ${record}`;
      continue;
    }
    if (!RECORD_TYPES.has(record.type)) {
      tally.problem ??= `line ${line.number} has the unknown record type "${
        printable(record.type)
      }" (written by a newer mewcode?)`;
      continue;
    }
    addRecord(tally, record, costOf);
  }
  return tally;
}

/** A line's record: parsed, or only its type and start when it was too long or is only counted. */
interface DecodedLine {
  type: string;
  /** The parsed record; null when only the line's start was read. */
  value: Record<string, unknown> | null;
  /** The start of the line (PREFIX_BYTES) when `value` is null. */
  prefix: string;
}

/** Records that are counted or passed over: a complete line of one of these types is judged by its start. */
const SKIMMED_TYPES: ReadonlySet<string> = new Set([
  "assistant-message",
  // Holds the whole compacted conversation; its summary request's usage has a usage record of its own.
  "compaction",
  "retry",
  "tool-call-start",
  "tool-call-end",
  "tool-results",
  "warning",
  "error",
  "turn-end",
]);

/** Whether a record of this type adds nothing its start does not say. */
function skims(tally: Tally, type: string): boolean {
  return SKIMMED_TYPES.has(type) || (type === "user-message" && tally.firstPrompt !== null);
}

const decoder = new TextDecoder();

/**
 * Decodes a line, or says what is wrong with it ("is not JSON"). A line too long to keep whole, or a
 * complete one of a type `skim` accepts, is read only as far as its start, and not parsed.
 */
function decodeLine(line: Line, skim: (type: string) => boolean): DecodedLine | string {
  const prefix = decoder.decode(line.bytes.subarray(0, PREFIX_BYTES));
  const type = /^\{"type":"([A-Za-z0-9-]+)"/.exec(prefix)?.[1];
  if (line.overlong && !line.terminated) return "is cut off";
  const complete = line.terminated && line.bytes.at(-1) === 0x7d; // "}"
  if (type !== undefined && (line.overlong || (complete && skim(type)))) return { type, value: null, prefix };
  if (line.overlong) return "is not a transcript record";
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(line.bytes));
  } catch {
    return "is not JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "is not a transcript record";
  }
  const record = value as Record<string, unknown>;
  if (typeof record.type !== "string") return "is not a transcript record";
  return { type: record.type, value: record, prefix: "" };
}

/** Adds what a record says about the session to the tally (records are untrusted: every field is checked). */
function addRecord(tally: Tally, record: DecodedLine, costOf: CostFunction): void {
  const { value } = record;
  switch (record.type) {
    case "session-start":
      // A resumed session starts again in the same file; the model may have changed.
      if (typeof value?.model === "string") tally.model = value.model;
      return;
    case "user-message": {
      if (tally.firstPrompt !== null) return;
      const content = value === null ? contentPrefix(record.prefix) : value.content;
      if (typeof content === "string") tally.firstPrompt = oneLine(content);
      return;
    }
    case "request": {
      const model = value === null ? modelPrefix(record.prefix) : value.model;
      if (typeof model === "string") tally.model = model;
      return;
    }
    case "assistant-message":
      tally.turns += 1;
      return;
    case "usage": {
      const usage = value === null ? null : usageOf(value.usage);
      if (usage === null) return;
      tally.usage = sumUsage(tally.usage, usage);
      // Each request on its own: a long-prompt rate depends on one request's prompt, not on a sum.
      const cost = tally.model === null ? null : costOf(usage, tally.model);
      tally.costUsd = tally.costUsd === null || cost === null ? null : tally.costUsd + cost;
      return;
    }
    default:
      return;
  }
}

/** Usage from an untrusted value: every count must be a finite number, else null. */
function usageOf(value: unknown): Usage | null {
  if (typeof value !== "object" || value === null) return null;
  const fields = value as Record<string, unknown>;
  const count = (name: keyof Usage): number | null => {
    const field = fields[name];
    return typeof field === "number" && Number.isFinite(field) && field >= 0 ? field : null;
  };
  const inputTokens = count("inputTokens");
  const outputTokens = count("outputTokens");
  const cacheCreationInputTokens = count("cacheCreationInputTokens");
  const cacheReadInputTokens = count("cacheReadInputTokens");
  if (
    inputTokens === null || outputTokens === null || cacheCreationInputTokens === null ||
    cacheReadInputTokens === null
  ) return null;
  return { inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens };
}

function sumUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  };
}

/** The start of a user-message's content from the start of an over-long line. */
function contentPrefix(text: string): string | null {
  const start = '{"type":"user-message","content":"';
  if (!text.startsWith(start)) return null;
  // The line was cut inside the string: drop a cut character or escape until the rest parses.
  const body = text.slice(start.length, start.length + MAX_PROMPT_LENGTH * 8).replace(/\uFFFD+$/, "");
  for (let cut = 0; cut <= 6 && cut <= body.length; cut++) {
    try {
      const parsed: unknown = JSON.parse(`"${body.slice(0, body.length - cut)}"`);
      if (typeof parsed === "string") return `${parsed}…`;
    } catch {
      // Try one character shorter.
    }
  }
  return null;
}

/** A request's model from the start of an over-long line. */
function modelPrefix(text: string): string | null {
  const match = /^\{"type":"request","turn":\d+,"model":("(?:[^"\\]|\\.)*")/.exec(text);
  if (match === null) return null;
  const model: unknown = JSON.parse(match[1]!);
  return typeof model === "string" ? model : null;
}

/** One line, without control characters, shortened to MAX_PROMPT_LENGTH characters. */
function oneLine(text: string): string {
  const flat = printable(text).replace(/\s+/g, " ").trim();
  const characters = Array.from(flat);
  if (characters.length <= MAX_PROMPT_LENGTH) return flat;
  return `${characters.slice(0, MAX_PROMPT_LENGTH - 1).join("").trimEnd()}…`;
}

/** Text safe to print to a terminal: control and bidi-override characters become spaces. */
function printable(text: string): string {
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, " ");
}

/** A value for a message: quoted, escaped (a NUL shows as \u0000), and shortened. */
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

/** One line of a file (only its first `maxBytes` bytes when `overlong`), numbered from 1. */
interface Line {
  /** Valid only until the next line is read: it may be a view of the read buffer. */
  bytes: Uint8Array;
  number: number;
  overlong: boolean;
  /** Whether a newline ended it (the last line of a file cut while writing has none). */
  terminated: boolean;
}

/** The lines of a file, read in chunks; at most `maxBytes` of a line are kept in memory. */
async function* readLines(file: Deno.FsFile, maxBytes: number): AsyncGenerator<Line> {
  const chunk = new Uint8Array(CHUNK_BYTES);
  let parts: Uint8Array[] = [];
  let kept = 0;
  let overlong = false;
  let number = 0;
  const keep = (bytes: Uint8Array) => {
    const room = maxBytes - kept;
    if (bytes.length > room) overlong = true;
    if (room <= 0 || bytes.length === 0) return;
    const piece = bytes.slice(0, room);
    parts.push(piece);
    kept += piece.length;
  };
  const take = (terminated: boolean): Line => {
    const line = { bytes: concatBytes(...parts), number: ++number, overlong, terminated };
    parts = [];
    kept = 0;
    overlong = false;
    return line;
  };
  while (true) {
    const count = await file.read(chunk);
    if (count === null) break;
    const view = chunk.subarray(0, count);
    let start = 0;
    while (start < count) {
      const end = view.indexOf(0x0a, start);
      if (end === -1) {
        keep(view.subarray(start));
        break;
      }
      if (kept === 0 && !overlong && end - start <= maxBytes) {
        // The whole line is in this chunk: no copy.
        yield { bytes: view.subarray(start, end), number: ++number, overlong: false, terminated: true };
      } else {
        keep(view.subarray(start, end));
        yield take(true);
      }
      start = end + 1;
    }
  }
  if (kept > 0 || overlong) yield take(false);
}
