/**
 * The session transcript: one JSON line per thing that happened, appended and flushed to the OS as it
 * happens (one synchronous write per line), so a crash loses nothing already done. Lives at
 * `$MEWCODE_HOME/projects/<workspace slug>/<session id>.jsonl`; readers tolerate a torn last line, and a
 * session continued drops it before it appends (so it never ends up between two lines). One run at a time
 * has a transcript open: it holds an exclusive lock on the file until it closes it.
 *
 * It is written from the run's AgentEvents (`recordEvent`), never by the loop itself. Messages are stored
 * in mewcode's provider-neutral types (src/llm/provider.ts: camelCase fields, kebab-case block types), so
 * a session can be continued whatever provider wrote it. The records that rebuild the conversation:
 *   user-message        the user's text
 *   assistant-message   the assistant message as appended (`partial` when its stream broke)
 *   tool-results        the user message answering a turn's tool uses (results in order, then any note)
 *   compaction          the whole conversation after a compaction (the summary message, then the turns
 *                       kept verbatim); the records after it continue from there
 * Everything else (requests, tool calls with timings and outcomes, usage, warnings, errors, the end of
 * each run) is for people and tools reading the log.
 *
 * @module
 */
import { dirname, join } from "../common/path.ts";
import type {
  AgentEvent,
  CompactionTrigger,
  ErrorCategory,
  TurnEndReason,
  UsageTotals,
} from "../agent/events.ts";
import { currentUid } from "../common/current_uid.ts";
import { lstatSyncIfExists } from "../common/fs.ts";
import { sha256HexSync } from "../common/sha256.ts";
import { assertNever } from "../common/errors.ts";
import { projectDir } from "../config/home.ts";
import type { CallOutcome } from "../execution/call_outcome.ts";
import type { ContentBlock, Message, StopReason, Usage } from "../llm/provider.ts";

/** One line of the transcript, without its timestamp. */
export type TranscriptEntry =
  | {
    type: "session-start";
    sessionId: string;
    root: string;
    model: string;
    platform: string;
    provider: string;
    version: string;
  }
  | { type: "user-message"; content: string }
  /** A model request: what was sent (the system prompt only when it changed). */
  | {
    type: "request";
    turn: number;
    model: string;
    maxTokens: number;
    messageCount: number;
    tools: string[];
    system?: string;
  }
  | { type: "retry"; turn: number; attempt: number; delayMs: number; reason: string }
  | {
    type: "assistant-message";
    turn: number;
    content: ContentBlock[];
    stopReason: StopReason | null;
    partial: boolean;
  }
  | { type: "usage"; turn: number; usage: Usage; totals: UsageTotals }
  | { type: "tool-call-start"; turn: number; id: string; name: string; input: unknown; startedAt: number }
  /** A tool call ended: what the model received, the typed outcome, and when it ran. */
  | {
    type: "tool-call-end";
    turn: number;
    id: string;
    name: string;
    input: unknown;
    startedAt: number;
    endedAt: number;
    durationMs: number;
    isError: boolean;
    content: string;
    metadata: Record<string, unknown>;
    outcome: CallOutcome;
  }
  | { type: "tool-results"; turn: number; content: ContentBlock[] }
  /**
   * The conversation was compacted: `messages` is all of it from here on (the summary message, then the
   * `keptMessages` kept verbatim). The small fields come first, so a reader that only skims a long line
   * still finds them; the summary request's usage has its own usage record just before.
   */
  | {
    type: "compaction";
    turn: number;
    trigger: CompactionTrigger;
    removedMessages: number;
    keptMessages: number;
    usage: Usage;
    summary: string;
    messages: Message[];
  }
  | { type: "warning"; message: string }
  /** `category` as in the error event; absent in transcripts written before it was recorded. */
  | { type: "error"; turn: number; name: string; message: string; category?: ErrorCategory }
  /** `costUsd` is absent in transcripts written before it was recorded. */
  | {
    type: "turn-end";
    reason: TurnEndReason;
    turns: number;
    totals: UsageTotals;
    costUsd?: number | null;
    durationMs: number;
  };

/** One line of the transcript: an entry and when it was written (ms since the epoch). */
export type TranscriptRecord = TranscriptEntry & { ts: number };

/** The record types this version writes and reads. */
export const RECORD_TYPES: ReadonlySet<string> = new Set<TranscriptEntry["type"]>([
  "session-start",
  "user-message",
  "request",
  "retry",
  "assistant-message",
  "usage",
  "tool-call-start",
  "tool-call-end",
  "tool-results",
  "compaction",
  "warning",
  "error",
  "turn-end",
]);

/** Where a new transcript goes. */
export interface TranscriptOptions {
  /** `$MEWCODE_HOME`. */
  home: string;
  /** Real path of the workspace root. */
  root: string;
  /** Default: a random UUID. */
  sessionId?: string;
  /** Fail (SessionExistsError) when the session's file exists, instead of appending to it. */
  exclusive?: boolean;
  /**
   * What the session's file was when its conversation was read to continue it (`readTranscript`'s stamp):
   * another run that wrote to it since (while this one waited for its standard input, say) fails the open
   * with a SessionInUseError, since continuing would leave out what that run added.
   */
  expected?: TranscriptStamp;
  /** Default `Date.now`. */
  clock?: () => number;
}

/**
 * Another mewcode run has the session's transcript open (it holds the file's lock), so this one may not
 * write to it: their records would interleave into a conversation neither had. Nothing was written.
 */
export class SessionInUseError extends Error {
  override name = "SessionInUseError";

  /** The message alone: it says what happened and what to do, and the class name adds nothing for people. */
  describe(): string {
    return this.message;
  }
}

/**
 * A new session's id (`--session-id`) names a session this workspace already has: nothing was written. A
 * kind of AlreadyExists, which it is.
 */
export class SessionExistsError extends Deno.errors.AlreadyExists {
  override name = "SessionExistsError";

  /** The message alone, which names the session and how to continue it. */
  describe(): string {
    return this.message;
  }
}

/** An open session transcript, locked for this run. Close it when the session ends (that lets the lock go). */
export class Transcript implements Disposable {
  readonly sessionId: string;
  /** The JSONL file. */
  readonly path: string;
  /** The session's own folder (`<session id>/` next to the file), for large tool outputs. */
  readonly sessionDir: string;
  #file: Deno.FsFile | null;
  #clock: () => number;
  #encoder = new TextEncoder();
  #loggedSystem: string | null = null;

  private constructor(sessionId: string, path: string, file: Deno.FsFile, clock: () => number) {
    this.sessionId = sessionId;
    this.path = path;
    this.sessionDir = path.replace(/\.jsonl$/, "");
    this.#file = file;
    this.#clock = clock;
  }

  /**
   * Creates the project folder if needed and opens the session's file for appending. The transcript holds
   * the whole conversation, so nothing on its way is followed: the projects folder and the workspace's
   * folder must be real folders of the current user (loose modes are tightened to 0700), and the file a
   * regular file of that user with no other hard links (tightened to 0600). Anything else is refused with
   * an Error that names the path and what to do about it.
   *
   * The file is then locked (an exclusive `flock`, held until `close`, and let go by the kernel when the
   * process dies): a run that finds it locked (still after `LOCK_WAIT_MS`) gets a SessionInUseError. Only
   * under the lock is a torn last line (a run killed while writing it) dropped, so the next record starts on a
   * line of its own; a run still writing its last line holds the lock, so its line is never taken for torn.
   */
  static async create(options: TranscriptOptions): Promise<Transcript> {
    const sessionId = options.sessionId ?? crypto.randomUUID();
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new TypeError(`Invalid session id "${sessionId}"`);
    const dir = await projectDir(options.home, options.root);
    // The home itself may be a link the user made (a dotfiles checkout); from projects/ down, nothing is.
    // Every step is synchronous: the transcript is opened before the first request, where each
    // asynchronous file operation waited for a thread of Deno's pool and back (0.3 to 4 ms each).
    makeHome(options.home);
    const uid = currentUid();
    const folders = [ownFolder(dirname(dir), uid), ownFolder(dir, uid)];
    const path = join(dir, `${sessionId}.jsonl`);
    const file = openFile(path, { sessionId, exclusive: options.exclusive ?? false, uid });
    try {
      checkOpened(file, { path, folders, uid });
      await lockForSession(file, { path, sessionId });
      if (options.expected !== undefined) checkUnchanged(file, { path, sessionId }, options.expected);
      endWithLineFeed(file);
    } catch (error) {
      file.close();
      throw error;
    }
    return new Transcript(sessionId, path, file, options.clock ?? Date.now);
  }

  /** Appends one line with one synchronous write. Values JSON cannot hold are written as strings. */
  append(entry: TranscriptEntry): void {
    if (this.#file === null) throw new TypeError(`Cannot append to transcript "${this.path}": it is closed`);
    const line = `${JSON.stringify({ ...entry, ts: this.#clock() }, jsonSafe)}\n`;
    const bytes = this.#encoder.encode(line);
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
  }

  /** Records what an agent event says, if anything (text deltas are not recorded: the message is). */
  record(event: AgentEvent): void {
    const entry = entryOf(event, this.#loggedSystem);
    if (entry === null) return;
    if (entry.type === "request" && entry.system !== undefined) this.#loggedSystem = entry.system;
    this.append(entry);
  }

  /** Closes the file; later appends throw. */
  close(): void {
    this.#file?.close();
    this.#file = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The transcript entry of an agent event, or null for events that are not recorded. */
function entryOf(event: AgentEvent, loggedSystem: string | null = null): TranscriptEntry | null {
  switch (event.type) {
    case "user-message":
      return { type: "user-message", content: event.text };
    case "request-start": {
      const { turn, model, maxTokens, messageCount, tools, system } = event;
      return {
        type: "request",
        turn,
        model,
        maxTokens,
        messageCount,
        tools,
        ...(system === loggedSystem ? {} : { system }),
      };
    }
    case "retry": {
      const { turn, attempt, delayMs, reason } = event;
      return { type: "retry", turn, attempt, delayMs, reason };
    }
    case "request-end": {
      const { turn, content, stopReason, partial } = event;
      return { type: "assistant-message", turn, content, stopReason, partial };
    }
    case "usage":
      return { type: "usage", turn: event.turn, usage: event.usage, totals: event.totals };
    case "tool-call-start": {
      const { turn, id, name, input, startedAt } = event;
      return { type: "tool-call-start", turn, id, name, input, startedAt };
    }
    case "tool-call-end": {
      const { turn, id, name, input, startedAt, endedAt, durationMs, result, outcome } = event;
      return {
        type: "tool-call-end",
        turn,
        id,
        name,
        input,
        startedAt,
        endedAt,
        durationMs,
        isError: result.isError,
        content: result.content,
        metadata: result.metadata,
        outcome,
      };
    }
    case "tool-results":
      return { type: "tool-results", turn: event.turn, content: event.content };
    case "compaction": {
      const { turn, trigger, removedMessages, keptMessages, usage, summary, messages } = event;
      return { type: "compaction", turn, trigger, removedMessages, keptMessages, usage, summary, messages };
    }
    case "warning":
      return { type: "warning", message: event.message };
    case "error":
      return {
        type: "error",
        turn: event.turn,
        name: event.name,
        message: event.message,
        category: event.category,
      };
    case "turn-end": {
      const { reason, turns, totals, costUsd, durationMs } = event;
      return { type: "turn-end", reason, turns, totals, costUsd, durationMs };
    }
    case "text-delta":
    case "thinking-delta":
    case "compaction-start":
      return null;
    default:
      return assertNever(event);
  }
}

/**
 * What a transcript file was when it was read: its size, and the SHA-256 of its last bytes (up to
 * STAMP_TAIL_BYTES). Runs only append, or cut a torn last line and then append: either changes the size or
 * the last bytes (which then end with the other run's own records), so a file rewritten to the same size
 * is told apart too.
 */
export interface TranscriptStamp {
  bytes: number;
  tail: string;
}

/** How many of a transcript's last bytes its stamp digests. */
const STAMP_TAIL_BYTES = 64 * 1024;

/**
 * The records of a transcript file, skipping a torn (unparsable) last line; `torn` says whether it had one,
 * `bytes` how many bytes were read, `stamp` what the file was (see TranscriptStamp).
 */
export async function readTranscript(
  path: string,
): Promise<{ records: TranscriptRecord[]; torn: boolean; bytes: number; stamp: TranscriptStamp }> {
  const bytes = await Deno.readFile(path);
  const stamp = { bytes: bytes.length, tail: sha256HexSync(bytes.subarray(-STAMP_TAIL_BYTES)) };
  return { ...parseTranscript(new TextDecoder().decode(bytes)), bytes: bytes.length, stamp };
}

/**
 * Parses transcript text; a torn last line is skipped, a bad line elsewhere is a SyntaxError, and so is a
 * record of a type this version does not know.
 */
export function parseTranscript(text: string): { records: TranscriptRecord[]; torn: boolean } {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const records: TranscriptRecord[] = [];
  let torn = false;
  lines.forEach((line, index) => {
    let value: { type: string };
    try {
      value = recordOfLine(line);
    } catch (error) {
      if (index === lines.length - 1) {
        torn = true;
        return;
      }
      throw new SyntaxError(`Cannot read transcript line ${index + 1}: ${(error as Error).message}`);
    }
    const type = value.type;
    if (!RECORD_TYPES.has(type)) {
      throw new SyntaxError(
        `Cannot read transcript line ${
          index + 1
        }: unknown record type "${type}" (written by a newer mewcode?)`,
      );
    }
    records.push(value as TranscriptRecord);
  });
  return { records, torn };
}

/** The object a transcript line holds; a SyntaxError when it is not JSON, or not an object with a type. */
function recordOfLine(line: string): { type: string } {
  const value: unknown = JSON.parse(line);
  if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") {
    throw new SyntaxError("not a transcript record");
  }
  return value as { type: string };
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return value;
}

const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;
/** Permission bits for the group and others. */
const SHARED_BITS = 0o077;

/** A folder checked on the transcript's way, and which one it was. */
interface CheckedFolder {
  path: string;
  dev: number;
  ino: number | null;
}

/**
 * Makes sure `path` is a real folder of the current user, creating it (0700) when missing and tightening
 * a looser mode. Its parent (the home, or the projects folder checked and tightened just before) is the
 * user's, so only the user can swap it between this look and the open; `checkOpened` looks again after it.
 */
function ownFolder(path: string, uid: number | null): CheckedFolder {
  let info = lstatSyncIfExists(path);
  if (info === null) {
    try {
      Deno.mkdirSync(path, { mode: DIRECTORY_MODE });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    info = Deno.lstatSync(path);
  }
  if (info.isSymlink) {
    throw refusal(
      path,
      "it is a symbolic link, which could send the transcript elsewhere; remove the link (mewcode creates " +
        "the folder itself) and try again",
    );
  }
  if (!info.isDirectory) throw refusal(path, "it is not a folder; move it away and try again");
  refuseOtherOwner(path, info, uid);
  if (info.mode !== null && (info.mode & SHARED_BITS) !== 0) Deno.chmodSync(path, DIRECTORY_MODE);
  return { path, dev: info.dev, ino: info.ino };
}

/**
 * Opens the transcript for appending without following a link at its name: a new file with O_EXCL (which
 * fails on any existing name, a link included), an existing one only when it is a regular file.
 */
function openFile(
  path: string,
  { sessionId, exclusive, uid }: { sessionId: string; exclusive: boolean; uid: number | null },
): Deno.FsFile {
  let found = lstatSyncIfExists(path);
  if (found === null) {
    try {
      return Deno.openSync(path, { createNew: true, append: true, mode: FILE_MODE });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      // Made meanwhile (by another mewcode, or not): look at what it is.
      found = Deno.lstatSync(path);
    }
  }
  refuseOddFile(path, found, uid);
  if (exclusive) {
    throw new SessionExistsError(
      `A session with id ${sessionId} already exists for this workspace ("${path}"): continue it with ` +
        `--resume ${sessionId}, or choose another id`,
    );
  }
  // Readable too: a torn last line is found by reading the file's end (`endWithLineFeed`).
  return Deno.openSync(path, { append: true, read: true });
}

/**
 * How long a lock found held is tried again before the session counts as in use. A process being started
 * (a hook, git, the sandbox) holds a copy of every file open at that moment until it runs its program, which
 * closes them (close-on-exec): a transcript closed and opened again in the meantime finds its own lock still
 * held for those few milliseconds.
 */
const LOCK_WAIT_MS = 200;

/**
 * Takes the exclusive lock on the open transcript, or throws SessionInUseError when another run holds it
 * (`LOCK_WAIT_MS` on). The lock belongs to this open file (flock), so a second open in the same process is
 * refused as well.
 */
async function lockForSession(
  file: Deno.FsFile,
  { path, sessionId }: { path: string; sessionId: string },
): Promise<void> {
  const started = performance.now();
  while (!file.tryLockSync(true)) {
    if (performance.now() - started < LOCK_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      continue;
    }
    throw new SessionInUseError(
      `Session ${sessionId} is in use by another mewcode run (it holds the lock on "${path}"), and two runs ` +
        "writing one session would mix up its conversation: wait for that run to end and continue the " +
        "session then, or start a new session",
    );
  }
}

/**
 * Refuses a transcript that is no longer what its conversation was read from (its size, or the digest of
 * its last bytes, differs): another run wrote to it between that read and this run's lock, and this run's
 * conversation does not hold what it added.
 */
function checkUnchanged(
  file: Deno.FsFile,
  { path, sessionId }: { path: string; sessionId: string },
  expected: TranscriptStamp,
): void {
  const size = file.statSync().size;
  const was = `"${path}" was ${expected.bytes} bytes, now ${size}`;
  const tail = Math.min(size, STAMP_TAIL_BYTES);
  if (size === expected.bytes && sha256HexSync(readAt(file, size - tail, tail)) === expected.tail) return;
  throw new SessionInUseError(
    `Session ${sessionId} changed after this run read it (${
      size === expected.bytes ? `"${path}" was rewritten at the same size, ${size} bytes` : was
    }): another mewcode run continued it meanwhile, and going on would leave out what it added: continue ` +
      "the session again",
  );
}

/** How much of the file's end is read at a time, looking for the last line feed. */
const TAIL_CHUNK_BYTES = 64 * 1024;
const LINE_FEED = 0x0a;

/**
 * Makes a transcript that does not end with a line feed (a run was killed while writing its last line) end
 * with one, so the next record is a line of its own instead of being glued to the torn bytes (which would
 * turn them into a broken line in the middle, and the transcript into one that cannot be read). Torn bytes
 * that are not a record (what readers skip) are cut off; a last record complete but for its line feed
 * (what readers keep) gets its line feed. Call it holding the lock: no other run is writing then.
 */
function endWithLineFeed(file: Deno.FsFile): void {
  const tail = unterminatedTail(file);
  if (tail === null) return;
  if (isRecordLine(new TextDecoder().decode(tail.bytes))) {
    file.writeSync(new Uint8Array([LINE_FEED]));
    return;
  }
  file.truncateSync(tail.start);
}

/**
 * The bytes after the file's last line feed and where they start; null when the file is empty or ends with
 * a line feed. Reads backwards from the end a chunk at a time (a torn line may be long: a compaction record).
 */
function unterminatedTail(file: Deno.FsFile): { start: number; bytes: Uint8Array } | null {
  let end = file.statSync().size;
  const chunks: Uint8Array[] = [];
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK_BYTES);
    const chunk = readAt(file, start, end - start);
    const feed = chunk.lastIndexOf(LINE_FEED);
    if (feed === chunk.length - 1 && chunks.length === 0) return null;
    if (feed >= 0) {
      chunks.unshift(chunk.subarray(feed + 1));
      return { start: start + feed + 1, bytes: concat(chunks) };
    }
    chunks.unshift(chunk);
    end = start;
  }
  return chunks.length === 0 ? null : { start: 0, bytes: concat(chunks) };
}

/** `length` bytes of the file from `position` (the file's writes append, wherever reads left it). */
function readAt(file: Deno.FsFile, position: number, length: number): Uint8Array {
  file.seekSync(position, Deno.SeekMode.Start);
  const buffer = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const read = file.readSync(buffer.subarray(filled));
    if (read === null) throw new Error(`the transcript ended at byte ${position + filled} while it was read`);
    filled += read;
  }
  return buffer;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}

/** Whether a line is a record the readers keep (`parseTranscript`), rather than torn bytes they skip. */
function isRecordLine(line: string): boolean {
  try {
    recordOfLine(line);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks, once the file is open, that it is the regular file of the current user now at `path` (the name
 * was not swapped for a link between the look and the open), that the folders are still the ones checked,
 * and that no other name shares the file; then tightens its mode.
 */
function checkOpened(
  file: Deno.FsFile,
  { path, folders, uid }: { path: string; folders: CheckedFolder[]; uid: number | null },
): void {
  for (const folder of folders) {
    const now = Deno.lstatSync(folder.path);
    if (now.isSymlink || now.dev !== folder.dev || now.ino !== folder.ino) {
      throw refusal(folder.path, "it was replaced while the transcript was opened; try again");
    }
  }
  const [opened, atPath] = [file.statSync(), Deno.lstatSync(path)];
  if (atPath.isSymlink || opened.dev !== atPath.dev || opened.ino !== atPath.ino) {
    throw refusal(path, "it was replaced while it was opened; try again");
  }
  refuseOddFile(path, opened, uid);
  if (opened.mode !== null && (opened.mode & SHARED_BITS) !== 0) Deno.chmodSync(path, FILE_MODE);
}

function refuseOddFile(path: string, info: Deno.FileInfo, uid: number | null): void {
  if (info.isSymlink) {
    throw refusal(
      path,
      "it is a symbolic link, which could send the transcript elsewhere; remove the link and try again",
    );
  }
  if (!info.isFile) throw refusal(path, "it is not a regular file; move it away and try again");
  refuseOtherOwner(path, info, uid);
  if (info.nlink !== null && info.nlink > 1) {
    throw refusal(
      path,
      `it has ${info.nlink} hard links, so writing it would change another file too; move it away and try ` +
        "again",
    );
  }
}

function refuseOtherOwner(path: string, info: Deno.FileInfo, uid: number | null): void {
  if (uid === null || info.uid === null || info.uid === uid) return;
  throw refusal(
    path,
    `it belongs to another user (uid ${info.uid}); remove it, or set MEWCODE_HOME to a folder of your own`,
  );
}

/** Makes `$MEWCODE_HOME` when missing; an Error that says what to do when something else holds its name. */
function makeHome(home: string): void {
  try {
    Deno.mkdirSync(home, { recursive: true, mode: DIRECTORY_MODE });
  } catch (error) {
    // mkdir says "File exists" of a file at the name (or above it), which does not say which or why.
    if (!(error instanceof Deno.errors.AlreadyExists) && !(error instanceof Deno.errors.NotADirectory)) {
      throw error;
    }
    throw new Error(
      `Cannot keep sessions in the state folder "${home}" (MEWCODE_HOME, default ~/.mewcode): it, or a ` +
        "folder on its path, is not a folder (a file, or a link to nothing): point MEWCODE_HOME at a " +
        "folder, or move that entry away",
    );
  }
}

function refusal(path: string, state: string): Error {
  return new Error(`Cannot keep the session transcript at "${path}": ${state}`);
}
