/**
 * What `runAgent` yields: the single stream every consumer reads — the one-shot output formats, the
 * terminal session, and the session's transcript writer. The events that change the conversation
 * (`user-message`, `request-end`, `tool-results`, `compaction`) carry enough to rebuild it.
 *
 * @module
 */
import type { CallOutcome } from "../execution/call_outcome.ts";
import type { ErrorCategory } from "../llm/errors.ts";
import type { ContentBlock, Message, StopReason, Usage } from "../llm/provider.ts";
import type { ToolResult } from "../tools/tool.ts";

export type { CallOutcome, CallStatus, Denial, PipelineGate } from "../execution/call_outcome.ts";
export type { ErrorCategory } from "../llm/errors.ts";

/** Why a run ended. */
export type TurnEndReason =
  /** The model finished its answer (`end_turn` or `stop_sequence`). */
  | "end_turn"
  /** `maxTurns` model requests were made and the model still wanted to continue. */
  | "max_turns"
  /** The run's cost reached `maxBudgetUsd` and the model still wanted to continue. */
  | "max_budget"
  /** The model declined to continue (`refusal`). */
  | "refusal"
  /** The response was cut off at the token limit and could not continue. */
  | "max_tokens"
  /** The response was cut off because the conversation filled the model's context window. */
  | "model_context_window_exceeded"
  /** The caller's signal was aborted. */
  | "aborted"
  /** An API, protocol or runtime error ended the run (an `error` event precedes it). */
  | "error"
  /** The model stopped for a reason this version does not know, or none (a `warning` event precedes it). */
  | "unknown_stop_reason";

/** What started a compaction: the conversation passed its threshold, or someone asked (`/compact`). */
export type CompactionTrigger = "auto" | "manual";

/** Token usage summed over every request of the run. */
export interface UsageTotals extends Usage {
  requests: number;
}

/** One event of an agent run. */
export type AgentEvent =
  /** The user's message for this run was added to the conversation. */
  | { type: "user-message"; text: string }
  /** A model request is about to be sent; `turn` counts requests from 1 (a retry keeps its number). */
  | {
    type: "request-start";
    turn: number;
    model: string;
    maxTokens: number;
    system: string;
    /** How many messages the request carries. */
    messageCount: number;
    tools: string[];
  }
  | { type: "text-delta"; turn: number; text: string }
  | { type: "thinking-delta"; turn: number; thinking: string }
  /**
   * The turn's request is sent again after `delayMs`. Everything the turn streamed since its
   * `request-start` or the previous `retry` (text, thinking, tool calls and their results) is discarded:
   * it never becomes part of the conversation, and no `request-end` is emitted for it. The provider's own
   * retries come before any content arrived; a retry after content means the response broke off mid-way
   * with nothing of side effects started, and `reason` says so and names the error (`attempt` then counts
   * such retries of this turn).
   */
  | { type: "retry"; turn: number; attempt: number; delayMs: number; reason: string }
  /**
   * A model request ended; `content` is the assistant message as appended to the conversation (only the
   * text that had arrived, and `partial`, when the stream broke and the run ends). A response that broke
   * off and was discarded for a retry has no request-end.
   */
  | {
    type: "request-end";
    turn: number;
    stopReason: StopReason | null;
    content: ContentBlock[];
    partial: boolean;
  }
  /**
   * A response's usage and the run's totals since. A response that broke off reports what it reported at
   * its start (the input side), whether it is kept or discarded.
   */
  | { type: "usage"; turn: number; usage: Usage; totals: UsageTotals }
  /** A tool call starts running (calls that end at a gate before running start and end at once). */
  | { type: "tool-call-start"; turn: number; id: string; name: string; input: unknown; startedAt: number }
  /** A tool call ended; `result.content` is exactly what the model receives. Times are ms since the epoch. */
  | {
    type: "tool-call-end";
    turn: number;
    id: string;
    name: string;
    input: unknown;
    result: ToolResult;
    outcome: CallOutcome;
    startedAt: number;
    endedAt: number;
    durationMs: number;
  }
  /** The user message answering a turn's tool uses was added: every result, in order, and any note. */
  | { type: "tool-results"; turn: number; content: ContentBlock[] }
  /**
   * The conversation is about to be compacted: a summary request (one model request without tools) starts.
   * `turn` is the number of the request it comes before (0 for a manual compaction between runs).
   */
  | { type: "compaction-start"; turn: number; trigger: CompactionTrigger; messageCount: number }
  /**
   * The conversation was compacted: its first `removedMessages` messages were replaced by one user message
   * holding `summary`, and `messages` is the whole new conversation (that message, then `keptMessages`
   * messages as they were). `usage` is the summary request's; a `usage` event with the same turn, just
   * before, adds it to the run's totals. A compaction that fails or is interrupted has no such event.
   */
  | {
    type: "compaction";
    turn: number;
    trigger: CompactionTrigger;
    removedMessages: number;
    keptMessages: number;
    summary: string;
    messages: Message[];
    usage: Usage;
  }
  /** Something the user should know that does not end the run by itself. */
  | { type: "warning"; message: string }
  /** What ended the run with reason "error"; `category` (see `errorCategory`) decides the exit status. */
  | { type: "error"; turn: number; name: string; message: string; category: ErrorCategory; error: unknown }
  /** The run is over; `text` is the text of the last assistant message. */
  | {
    type: "turn-end";
    reason: TurnEndReason;
    turns: number;
    text: string;
    message: string | null;
    totals: UsageTotals;
    /** What the run cost in US dollars, or null when the session has no price for its model. */
    costUsd: number | null;
    durationMs: number;
    /** The accepted answer, when the run had an answer contract (structured output) and it was given. */
    answer?: unknown;
  };
