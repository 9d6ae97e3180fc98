/**
 * The session transcript: one JSON line per thing that happened, appended and flushed to the OS as it
 * happens (one synchronous write per line), so a crash loses nothing already done. Lives at
 * `$MEWCODE_HOME/projects/<workspace slug>/<session id>.jsonl`; readers tolerate a torn last line.
 *
 * @module
 */
import { join } from "node:path";
import { projectDir } from "../config/home.ts";
import type { ContentBlock, StopReason } from "../llm/provider.ts";
import type { AgentEvent, TurnEndReason, UsageTotals } from "./events.ts";

/** The AgentEvent of this type, recorded unchanged. */
type RecordedEvent<T extends AgentEvent["type"]> = Extract<AgentEvent, { type: T }>;

/** One line of the transcript, without its timestamp. */
export type TranscriptEntry =
  | { type: "session-start"; sessionId: string; root: string; model: string; platform: string }
  | { type: "user-message"; content: string }
  /**
   * A model request: what was sent. The messages themselves are the lines before it; the system prompt
   * is written with the first request of a run (and whenever it changes).
   */
  | {
    type: "request";
    turn: number;
    model: string;
    maxTokens: number;
    messageCount: number;
    tools: string[];
    system?: string;
  }
  | RecordedEvent<"retry">
  /** `partial` when the stream broke: the text that had arrived, no tool calls. */
  | {
    type: "assistant-message";
    turn: number;
    content: ContentBlock[];
    stopReason: StopReason | null;
    partial: boolean;
  }
  | RecordedEvent<"tool-call-start">
  /** The tool-call-end event with its result's fields inline. */
  | Omit<RecordedEvent<"tool-call-end">, "result"> & {
    isError: boolean;
    /** What the model received. */
    content: string;
    metadata: Record<string, unknown>;
  }
  /** The user message of tool_results sent back to the model. */
  | { type: "tool-results"; turn: number; content: ContentBlock[] }
  | RecordedEvent<"usage">
  | RecordedEvent<"warning">
  | { type: "error"; turn: number; name: string; message: string }
  | { type: "turn-end"; reason: TurnEndReason; turns: number; totals: UsageTotals; durationMs: number };

/** One line of the transcript: an entry and when it was written (ms since the epoch). */
export type TranscriptRecord = TranscriptEntry & { ts: number };

/** Where a new transcript goes. */
export interface TranscriptOptions {
  /** `$MEWCODE_HOME`. */
  home: string;
  /** Real path of the workspace root. */
  root: string;
  /** Default: a random UUID. */
  sessionId?: string;
  /** Default `Date.now`. */
  clock?: () => number;
}

/** An open session transcript. Close it when the session ends. */
export class Transcript implements Disposable {
  readonly sessionId: string;
  /** The JSONL file. */
  readonly path: string;
  /** The session's own folder (`<session id>/` next to the file), for large tool outputs. */
  readonly sessionDir: string;
  #file: Deno.FsFile | null;
  #clock: () => number;
  #encoder = new TextEncoder();

  private constructor(sessionId: string, path: string, file: Deno.FsFile, clock: () => number) {
    this.sessionId = sessionId;
    this.path = path;
    this.sessionDir = path.replace(/\.jsonl$/, "");
    this.#file = file;
    this.#clock = clock;
  }

  /** Creates the project folder if needed and opens a new session file for appending. */
  static async create(options: TranscriptOptions): Promise<Transcript> {
    const sessionId = options.sessionId ?? crypto.randomUUID();
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new TypeError(`Invalid session id "${sessionId}"`);
    const dir = await projectDir(options.home, options.root);
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${sessionId}.jsonl`);
    const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
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

  /** Closes the file; later appends throw. */
  close(): void {
    this.#file?.close();
    this.#file = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The records of a transcript file, skipping a torn (unparsable) last line; `torn` says whether it had one. */
export async function readTranscript(path: string): Promise<{ records: TranscriptRecord[]; torn: boolean }> {
  return parseTranscript(await Deno.readTextFile(path));
}

/** Parses transcript text; a torn last line is skipped, a bad line elsewhere is a SyntaxError. */
export function parseTranscript(text: string): { records: TranscriptRecord[]; torn: boolean } {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const records: TranscriptRecord[] = [];
  let torn = false;
  lines.forEach((line, index) => {
    try {
      const value: unknown = JSON.parse(line);
      if (
        typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string"
      ) {
        throw new SyntaxError("not a transcript record");
      }
      records.push(value as TranscriptRecord);
    } catch (error) {
      if (index === lines.length - 1) {
        torn = true;
        return;
      }
      throw new SyntaxError(`Cannot read transcript line ${index + 1}: ${(error as Error).message}`);
    }
  });
  return { records, torn };
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return value;
}
