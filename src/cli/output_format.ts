/**
 * What one-shot mode writes on stdout, the contract scripts depend on:
 *
 *   text         the final answer (or the structured output as one line of JSON), nothing else
 *   json         one result object
 *   stream-json  one JSON object per line: `system/init` first, then the run's events, `result` last
 *
 * Every JSON object carries `schema_version` and `session_id`. Field names are snake_case, as in the
 * Anthropic API. The README documents each line type with an example; test/e2e/golden/ pins them.
 *
 * @module
 */
import { sanitizeLines, terminalSafeJson } from "./_terminal_text.ts";
import type { AgentEvent, Denial } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";
import type { ContentBlock, Usage } from "../llm/provider.ts";
import type { OutputFormat } from "./options.ts";
import { type RunSummary, type RunVerdict, unansweredAdvice, unansweredApprovals } from "./run_summary.ts";

/** The version of the output schema; raised only when a field changes meaning or disappears. */
export const SCHEMA_VERSION = 1;

/**
 * The `type` of every line stream-json writes between `system` (first) and `result` (last); the README's
 * table lists each (test/cli/readme_test.ts checks it).
 */
export const STREAM_EVENT_LINE_TYPES = [
  "request",
  "stream_event",
  "retry",
  "usage",
  "assistant",
  "tool_use",
  "tool_result",
  "compaction",
  "warning",
  "error",
] as const;

/** One line of stream-json for an event of the run. */
interface StreamEventLine {
  type: typeof STREAM_EVENT_LINE_TYPES[number];
  [field: string]: unknown;
}

/** The first line of stream-json: what the run is about to do. */
export interface InitInfo {
  sessionId: string;
  model: string;
  cwd: string;
  tools: string[];
  permissionMode: string;
  sandboxMode: string;
  version: string;
  /** Where the transcript is written, or null when the session is not persisted. */
  transcriptPath: string | null;
}

/** Everything the result object says. */
export interface ResultInfo {
  sessionId: string;
  summary: RunSummary;
  verdict: RunVerdict;
  durationMs: number;
  /** The run's cost in US dollars, or null when the model's price is unknown. */
  costUsd: number | null;
  /** The validated object, when the run was asked for structured output and produced one. */
  structuredOutput?: unknown;
}

/** Writes one format's output as a run goes. */
export class OutputWriter {
  #format: OutputFormat;
  #partial: boolean;
  #write: (text: string) => void;
  #terminal: boolean;
  #sessionId = "";

  /**
   * `terminal`: the output is a terminal, where the text answer's escape sequences and other controls are
   * shown, not obeyed (a model's answer could set the clipboard, rename the window or hide a line with a
   * carriage return); a pipe or a file gets the answer as the model wrote it, and JSON escapes them anyway.
   */
  constructor(
    format: OutputFormat,
    options: { includePartialMessages: boolean; write: (text: string) => void; terminal?: boolean },
  ) {
    this.#format = format;
    this.#partial = options.includePartialMessages;
    this.#write = options.write;
    this.#terminal = options.terminal ?? false;
  }

  /** The run starts (stream-json: the `system/init` line). */
  start(info: InitInfo): void {
    this.#sessionId = info.sessionId;
    if (this.#format !== "stream-json") return;
    this.#line({
      type: "system",
      subtype: "init",
      model: info.model,
      cwd: info.cwd,
      tools: info.tools,
      permission_mode: info.permissionMode,
      sandbox_mode: info.sandboxMode,
      mewcode_version: info.version,
      transcript_path: info.transcriptPath,
    });
  }

  /** One event of the run (stream-json only). */
  event(event: AgentEvent): void {
    if (this.#format !== "stream-json") return;
    const line = streamLine(event, this.#partial);
    if (line !== null) this.#line(line);
  }

  /** The run is over: the answer (text), the result object (json) or the `result` line (stream-json). */
  finish(info: ResultInfo): void {
    this.#sessionId = info.sessionId;
    switch (this.#format) {
      case "text": {
        const text = textAnswer(info);
        const answer = this.#terminal ? sanitizeLines(text) : text;
        if (answer !== "") this.#write(answer.endsWith("\n") ? answer : `${answer}\n`);
        return;
      }
      case "json":
      case "stream-json":
        this.#line(resultObject(info));
        return;
      default:
        return assertNever(this.#format);
    }
  }

  #line(fields: Record<string, unknown>): void {
    const { type, ...rest } = fields;
    const json = JSON.stringify({
      type,
      schema_version: SCHEMA_VERSION,
      session_id: this.#sessionId,
      ...rest,
    });
    this.#write(`${terminalSafeJson(json)}\n`);
  }
}

/**
 * The answer in text mode: the structured output as one line of JSON, or the final text — except when an
 * error ended the run (its message is on stderr; a script must not take half an answer for the answer).
 */
function textAnswer(info: ResultInfo): string {
  if (info.structuredOutput !== undefined) return terminalSafeJson(JSON.stringify(info.structuredOutput));
  if (info.summary.stop === "error" || info.verdict.subtype === "error_structured_output") return "";
  return info.summary.text;
}

/** The result object (json, and the last line of stream-json), without schema_version and session_id. */
export function resultObject(info: ResultInfo): Record<string, unknown> {
  const { summary, verdict } = info;
  const error = summary.error?.message ?? summary.message ??
    (verdict.subtype === "error_permission" ? unansweredMessage(summary) : null);
  return {
    type: "result",
    subtype: verdict.subtype,
    is_error: verdict.isError,
    result: summary.stop === "error" ? "" : summary.text,
    ...(error === null ? {} : { error }),
    num_turns: summary.turns,
    duration_ms: Math.round(info.durationMs),
    duration_api_ms: Math.round(summary.apiMs),
    usage: wireUsage(summary.usage),
    total_cost_usd: info.costUsd,
    permission_denials: summary.denials.map(({ tool, input, denial }) => ({
      tool,
      input,
      reason: denial.reason,
      hint: denial.hint,
      decided_by: denial.decidedBy,
    })),
    ...(info.structuredOutput === undefined ? {} : { structured_output: info.structuredOutput }),
  };
}

/**
 * Why a run that finished is still an error (exit 55): `error` is there whenever `is_error` is true, so a
 * script that reads it never gets null for a run that left work undone.
 */
function unansweredMessage(summary: RunSummary): string {
  const count = unansweredApprovals(summary);
  return `${count} action${count === 1 ? "" : "s"} needed an approval that no one could give, so the task ` +
    `may be incomplete: ${
      unansweredAdvice(
        summary,
        "permission_denials",
        "each of permission_denials names the flag or rule that would allow it",
      )
    }`;
}

/** The stream-json line for one event, or null for events that have none. */
function streamLine(event: AgentEvent, partial: boolean): StreamEventLine | null {
  switch (event.type) {
    case "request-start":
      return { type: "request", turn: event.turn, model: event.model, message_count: event.messageCount };
    case "text-delta":
      return partial
        ? { type: "stream_event", turn: event.turn, event: { type: "text_delta", text: event.text } }
        : null;
    case "thinking-delta":
      return partial
        ? {
          type: "stream_event",
          turn: event.turn,
          event: { type: "thinking_delta", thinking: event.thinking },
        }
        : null;
    case "retry":
      return {
        type: "retry",
        turn: event.turn,
        attempt: event.attempt,
        delay_ms: Math.round(event.delayMs),
        reason: event.reason,
      };
    case "request-end":
      return {
        type: "assistant",
        turn: event.turn,
        message: { role: "assistant", content: event.content.map(wireBlock) },
        stop_reason: event.stopReason,
        partial: event.partial,
      };
    case "usage":
      return {
        type: "usage",
        turn: event.turn,
        usage: wireUsage(event.usage),
        totals: wireUsage(event.totals),
      };
    case "tool-call-start":
      return { type: "tool_use", turn: event.turn, id: event.id, name: event.name, input: event.input };
    case "tool-call-end": {
      const exitCode = event.result.metadata.exitCode;
      return {
        type: "tool_result",
        turn: event.turn,
        tool_use_id: event.id,
        name: event.name,
        content: event.result.content,
        is_error: event.result.isError,
        status: event.outcome.status,
        gate: event.outcome.gate,
        ...(event.outcome.denial === undefined ? {} : { denial: wireDenial(event.outcome.denial) }),
        ...(typeof exitCode === "number" ? { exit_code: exitCode } : {}),
        duration_ms: Math.round(event.durationMs),
      };
    }
    case "compaction":
      return {
        type: "compaction",
        turn: event.turn,
        trigger: event.trigger,
        removed_messages: event.removedMessages,
        kept_messages: event.keptMessages,
        summary: event.summary,
        usage: wireUsage(event.usage),
      };
    case "warning":
      return { type: "warning", message: event.message };
    case "error":
      return {
        type: "error",
        turn: event.turn,
        category: event.category,
        name: event.name,
        message: event.message,
      };
    // The user's message is the input; tool results were each their own line; the result line follows; a
    // compaction shows once it is done.
    case "user-message":
    case "tool-results":
    case "turn-end":
    case "compaction-start":
      return null;
    default:
      return assertNever(event);
  }
}

function wireDenial(denial: Denial): Record<string, unknown> {
  return { reason: denial.reason, hint: denial.hint, decided_by: denial.decidedBy };
}

function wireBlock(block: ContentBlock): Record<string, unknown> {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "thinking":
      return { type: "thinking", thinking: block.thinking };
    case "redacted-thinking":
      return { type: "redacted_thinking" };
    case "tool-use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool-result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: block.content,
        is_error: block.isError,
      };
    default:
      return assertNever(block);
  }
}

function wireUsage(usage: Usage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
  };
}
