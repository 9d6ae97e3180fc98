/**
 * What one transcript's lines add up to (`tallyLines`), for the session index (session_index.ts): read line
 * by line through a bounded buffer, never whole; a line longer than its limit is judged by its start (its
 * type, a request's model, a prompt's first characters).
 *
 * @module
 */
import { blankHidden } from "../common/hidden_chars.ts";
import { joinBytes } from "../common/bytes.ts";
import { emptyUsage, type Usage } from "../llm/provider.ts";
import { pipedInstruction } from "./piped_prompt.ts";
import { RECORD_TYPES } from "./transcript.ts";
import type { CostFunction } from "./session_index.ts";

/** Lines longer than this are judged by their start. */
const MAX_LINE_BYTES = 1024 * 1024;
const HEAD_LINE_BYTES = 64 * 1024;
/** How much of a line's start is read when the line is not parsed. */
const PREFIX_BYTES = 4096;
const CHUNK_BYTES = 64 * 1024;
const MAX_PROMPT_LENGTH = 160;

/** What the lines of a transcript add up to. */
export interface Tally {
  root: string | null;
  startTs: number | null;
  model: string | null;
  firstPrompt: string | null;
  turns: number;
  usage: Usage;
  costUsd: number | null;
  problem: string | null;
}

/** Folds the lines of a transcript into a Tally, or says why the file is not a transcript. */
export async function tallyLines(
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
      if (typeof content === "string") tally.firstPrompt = oneLine(promptLabel(content));
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
/** What a list shows for a first prompt: for one with piped input, its instruction, not the input. */
function promptLabel(prompt: string): string {
  const instruction = pipedInstruction(prompt);
  if (instruction === null) return prompt;
  return instruction.trim() === "" ? "(stdin)" : `${instruction} (+ stdin)`;
}

function oneLine(text: string): string {
  const flat = printable(text).replace(/\s+/g, " ").trim();
  const characters = Array.from(flat);
  if (characters.length <= MAX_PROMPT_LENGTH) return flat;
  return `${characters.slice(0, MAX_PROMPT_LENGTH - 1).join("").trimEnd()}…`;
}

/**
 * Text safe to print to a terminal on one line: every character a terminal acts on or hides (controls, line
 * breaks, bidirectional and invisible ones) becomes a space.
 */
export function printable(text: string): string {
  return blankHidden(text);
}

/** A value for a message: quoted, escaped (a NUL shows as \u0000), and shortened. */

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
    const line = { bytes: joinBytes(parts), number: ++number, overlong, terminated };
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
