/**
 * What `runAgent` yields: the single stream every consumer reads — the one-shot output formats, the
 * terminal session, and the session's transcript writer. The events that change the conversation
 * (`user-message`, `request-end`, `tool-results`) carry enough to rebuild it.
 *
 * @module
 */
import type { CallOutcome } from "../execution/call_outcome.ts";

export type { CallOutcome, CallStatus, Denial, PipelineGate } from "../execution/call_outcome.ts";
import type { ContentBlock, StopReason, Usage } from "../llm/provider.ts";
import type { ToolResult } from "../tools/tool.ts";

/** Why a run ended. */
export type TurnEndReason =
  /** The model finished its answer (`end_turn` or `stop_sequence`). */
  | "end_turn"
  /** `maxTurns` model requests were made and the model still wanted to continue. */
  | "max_turns"
  /** The model declined to continue (`refusal`). */
  | "refusal"
  /** The response was cut off at the token limit and could not continue. */
  | "max_tokens"
  /** The caller's signal was aborted. */
  | "aborted"
  /** An API, protocol or runtime error ended the run (an `error` event precedes it). */
  | "error"
  /** The model stopped for a reason this version does not know (a `warning` event precedes it). */
  | "unknown_stop_reason";

/** Token usage summed over every request of the run. */
export interface UsageTotals extends Usage {
  requests: number;
}

/** One event of an agent run. */
export type AgentEvent =
  /** The user's message for this run was added to the conversation. */
  | { type: "user-message"; text: string }
  /** A model request is about to be sent; `turn` counts requests from 1. */
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
  /** The provider is retrying a failed request after `delayMs`. */
  | { type: "retry"; turn: number; attempt: number; delayMs: number; reason: string }
  /**
   * A model request ended; `content` is the assistant message as appended to the conversation (only the
   * text that had arrived, and `partial`, when the stream broke).
   */
  | {
    type: "request-end";
    turn: number;
    stopReason: StopReason | null;
    content: ContentBlock[];
    partial: boolean;
  }
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
  /** Something the user should know that does not end the run by itself. */
  | { type: "warning"; message: string }
  /** What ended the run with reason "error". */
  | { type: "error"; turn: number; name: string; message: string; error: unknown }
  /** The run is over; `text` is the text of the last assistant message. */
  | {
    type: "turn-end";
    reason: TurnEndReason;
    turns: number;
    text: string;
    message: string | null;
    totals: UsageTotals;
    durationMs: number;
  };
