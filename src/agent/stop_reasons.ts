/**
 * What each stop reason means for the run, and what a tool call the model asked for but that never ran
 * is told. Pure: the loop applies the decisions.
 *
 *   end_turn, stop_sequence  the run ends
 *   tool_use                 the calls run, their results go back, the run continues
 *   max_tokens               text only: the run ends, cut off; with calls: complete calls run, cut-off
 *                            calls are answered "not run", the model is told and continues (once in a row)
 *   model_context_window_exceeded
 *                            the run ends, cut off: the conversation filled the context window, so another
 *                            request could not hold the answer either; no call of that turn runs
 *   pause_turn               the run continues (the model resumes its own message)
 *   refusal                  the run ends with a message; no call of that turn runs
 *   anything else, or none   the run ends with a warning: the answer may be incomplete
 *
 * @module
 */
import type { CallResult } from "../execution/call_outcome.ts";
import { ended } from "../execution/call_outcome.ts";
import { cancelledResult } from "../execution/scheduler.ts";
import type { StopReason } from "../llm/provider.ts";
import type { TurnEndReason } from "./events.ts";

const CONTEXT_WINDOW_FULL = "The response was cut off: the conversation filled the model's context window; " +
  "compact it (/compact), start a new session or send a shorter prompt";

/** Stop reasons after which the turn's tool calls run. */
export const CONTINUING_STOP_REASONS: readonly string[] = ["tool_use", "max_tokens", "pause_turn"];

/** What to do after a model response ended with a stop reason. */
export type StopDecision =
  /** Send the results (with `note` as text after them) and request again. */
  | { action: "continue"; note: string | null }
  /** End the run; `warning` is shown to the user when set. */
  | { action: "end"; reason: TurnEndReason; message: string | null; warning: string | null };

/** What the decision depends on besides the stop reason. */
export interface StopContext {
  /** The response holds tool_use blocks. */
  hasToolUses: boolean;
  /** The previous response was also cut off at max_tokens. */
  truncatedBefore: boolean;
  maxTokens: number;
}

/** Decides what the run does after a response with this stop reason. */
export function decideStop(stopReason: StopReason | null, context: StopContext): StopDecision {
  switch (stopReason) {
    case "tool_use":
      if (context.hasToolUses) return { action: "continue", note: null };
      return end("end_turn", null, "The model stopped to use a tool but asked for none: ending the turn");
    case "max_tokens": {
      const limit = `the max_tokens limit (${context.maxTokens} tokens)`;
      if (context.hasToolUses && !context.truncatedBefore) {
        return {
          action: "continue",
          note: `Your last response was cut off at ${limit}. Calls whose input was complete were run.`,
        };
      }
      const message = `The response was cut off at ${limit}: raise the limit or ask for a shorter answer`;
      return end("max_tokens", message, message);
    }
    case "pause_turn":
      return { action: "continue", note: null };
    case "end_turn":
    case "stop_sequence":
      return end("end_turn", null, null);
    case "refusal": {
      const message = 'The model declined to continue this request (stop reason "refusal")';
      return end("refusal", message, message);
    }
    case "model_context_window_exceeded":
      return end("model_context_window_exceeded", CONTEXT_WINDOW_FULL, CONTEXT_WINDOW_FULL);
    case null: {
      const message = "The response ended without a stop reason: the answer may be incomplete";
      return end("unknown_stop_reason", message, message);
    }
    default: {
      const message = `The model stopped for a reason this version does not know (${
        JSON.stringify(stopReason)
      }): the answer may be incomplete`;
      return end("unknown_stop_reason", message, message);
    }
  }
}

/** A tool_use the loop did not run: why, for the model. */
export interface UnrunCall {
  name: string;
  input: unknown;
  /** The JSON parse error when the input was malformed, else null. */
  invalidJson: string | null;
}

/** The result for a tool_use that did not run (its input was malformed or cut off, or the turn ended). */
export function unrunResult(
  call: UnrunCall,
  context: { stopReason: StopReason | null; maxTokens: number },
): CallResult {
  const incomplete = call.invalidJson !== null || !isPlainObject(call.input);
  if (context.stopReason === "max_tokens" && incomplete) {
    return ended(
      "cancelled",
      "json",
      `${call.name} was not run: your response hit the max_tokens limit (${context.maxTokens} tokens) while ` +
        "writing this call's input, so the input is incomplete. Send the call again with a smaller input, " +
        "for example split a large file into several edits",
    );
  }
  if (call.invalidJson !== null) {
    return ended(
      "invalid",
      "json",
      `${call.name} was not run: its input is not valid JSON (${call.invalidJson}). Send the call again ` +
        "with the complete input as one JSON object",
    );
  }
  return cancelledResult(call.name, notRunReason(context.stopReason));
}

function end(reason: TurnEndReason, message: string | null, warning: string | null): StopDecision {
  return { action: "end", reason, message, warning };
}

function notRunReason(stopReason: StopReason | null): string {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "the model ended its turn before the call could run";
    case "refusal":
      return "the model declined to continue";
    case "model_context_window_exceeded":
      return "the response was cut off because the conversation filled the model's context window";
    default:
      return `the model stopped with reason ${JSON.stringify(stopReason)}`;
  }
}

function isPlainObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
