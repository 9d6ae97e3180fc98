/**
 * `mewcode sessions [--json]`: the workspace's sessions as a table for people, or as versioned JSON.
 *
 * @module
 */
import type { SessionInfo, SkippedFile } from "../session/session_index.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import { formatUsd } from "../llm/prices.ts";
import { scanSessions, type SessionListing, SessionLookupError } from "../session/session_index.ts";
import type { Workspace } from "../session/workspace.ts";
import { cut, sanitizeLines, terminalSafeJson } from "./_terminal_text.ts";

/** The version of the JSON `renderSessions` prints; it changes only when a key changes meaning or goes. */
export const SESSIONS_SCHEMA_VERSION = 1;

/** The width the table fits in: the first prompt is shortened to keep every row within it. */
export const TABLE_WIDTH = 100;

const MIN_PROMPT_WIDTH = 12;

/** One session in the JSON output (snake_case, like the one-shot JSON formats). */
export interface SessionJson {
  session_id: string;
  path: string;
  started_at: string;
  updated_at: string;
  first_prompt: string | null;
  turns: number;
  model: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  };
  total_cost_usd: number | null;
}

/** What `mewcode sessions --json` prints. */
export interface SessionsJson {
  schema_version: typeof SESSIONS_SCHEMA_VERSION;
  sessions: SessionJson[];
}

/** What `mewcode sessions` needs; the environment and the writers are injectable for tests. */
export interface SessionsCommandInput {
  workspace: Workspace;
  json: boolean;
  env?: Record<string, string>;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

/**
 * Lists the workspace's sessions on stdout (files that are not sessions on stderr); returns 0, or 1 when
 * the sessions folder cannot be listed.
 */
export async function runSessionsCommand(input: SessionsCommandInput): Promise<number> {
  const env = input.env ?? Deno.env.toObject();
  const stdout = input.stdout ?? ((text: string) => console.log(text));
  const stderr = input.stderr ?? ((text: string) => console.error(text));
  let listing: SessionListing;
  try {
    listing = await scanSessions(resolveMewcodeHome(env), input.workspace.root);
  } catch (error) {
    if (!(error instanceof SessionLookupError)) throw error;
    stderr(sanitizeLines(`mewcode: ${error.message}`));
    return 1;
  }
  const { sessions, skipped } = listing;
  stdout(renderSessions(sessions, { json: input.json, root: input.workspace.root }));
  for (const line of describeSkipped(skipped)) stderr(sanitizeLines(`mewcode: warning: ${line}`));
  return 0;
}

/** How to render the list. */
export interface RenderSessionsOptions {
  json: boolean;
  /** The workspace, named when it has no sessions. */
  root: string;
}

/**
 * Renders sessions (newest first, as listed): `{ schema_version: 1, sessions: [...] }` as JSON, or a table
 * of id, local date, turns, cost and first prompt within TABLE_WIDTH columns, with a line for each session
 * that cannot be resumed as is.
 */
export function renderSessions(list: readonly SessionInfo[], options: RenderSessionsOptions): string {
  if (options.json) return terminalSafeJson(JSON.stringify(sessionsJson(list), null, 2));
  if (list.length === 0) {
    return `No sessions for "${options.root}" yet: run mewcode -p "<prompt>" (or mewcode) to start one`;
  }
  const header = ["ID", "DATE", "TURNS", "COST", "FIRST PROMPT"];
  const rows = list.map((info) => [
    info.id,
    localMinute(info.startedAt),
    String(info.turns),
    info.costUsd === null ? "-" : formatUsd(info.costUsd),
    info.firstPrompt ?? "-",
  ]);
  const widths = header.slice(0, -1).map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length))
  );
  const promptWidth = Math.max(
    MIN_PROMPT_WIDTH,
    TABLE_WIDTH - widths.reduce((sum, width) => sum + width + 2, 0),
  );
  const line = (cells: string[]) =>
    cells.map((cell, column) =>
      column === widths.length ? cut(cell, promptWidth, "start") : cell.padEnd(widths[column]!)
    ).join("  ").trimEnd();
  const notes = list.flatMap((info) =>
    info.problem === null ? [] : [`Session ${info.id} cannot be resumed as is: ${info.problem}`]
  );
  return [line(header), ...rows.map(line), ...notes].join("\n");
}

/** The JSON document of `mewcode sessions --json`. */
export function sessionsJson(list: readonly SessionInfo[]): SessionsJson {
  return {
    schema_version: SESSIONS_SCHEMA_VERSION,
    sessions: list.map((info) => ({
      session_id: info.id,
      path: info.path,
      started_at: info.startedAt.toISOString(),
      updated_at: info.updatedAt.toISOString(),
      first_prompt: info.firstPrompt,
      turns: info.turns,
      model: info.model,
      usage: {
        input_tokens: info.usage.inputTokens,
        output_tokens: info.usage.outputTokens,
        cache_read_input_tokens: info.usage.cacheReadInputTokens,
        cache_creation_input_tokens: info.usage.cacheCreationInputTokens,
      },
      total_cost_usd: info.costUsd,
    })),
  };
}

/** Lines for stderr about the files of the sessions folder that were not listed. */
export function describeSkipped(skipped: readonly SkippedFile[]): string[] {
  return skipped.map((file) => `Skipped "${file.path}": ${file.reason}`);
}

/** A local date and time to the minute: "2025-03-04T09:05". */
function localMinute(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${
    pad(date.getMinutes())
  }`;
}
