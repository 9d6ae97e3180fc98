/**
 * How a tool call ended, as a typed value the pipeline returns beside the ToolResult: the loop, the
 * transcript and every front end read this, never strings inside `metadata`.
 *
 * @module
 */
import type { DecidedBy } from "../permissions/decision.ts";
import { errorResult } from "../tools/results.ts";
import type { ToolResult } from "../tools/tool.ts";

/** The gate of the pipeline that ended a call (`json`: its input could not be read at all). */
export type PipelineGate =
  | "json"
  | "lookup"
  | "schema"
  | "validate"
  | "guard"
  | "hook"
  | "permission"
  | "execute";

/**
 * How a call ended:
 *   completed   the tool ran and succeeded
 *   failed      the tool ran and reported an error (or threw, or its worker crashed)
 *   denied      a hook, a rule, the mode or the user refused it
 *   invalid     its input could not be used (unknown tool, schema, semantics, malformed JSON)
 *   cancelled   it never ran, or was stopped, because the turn ended (stop reason, guard, broken stream)
 *   aborted     the run was stopped: the user interrupted it (a signal, Esc) or standard output closed
 *   timed-out   it ran past its time limit and was stopped
 */
export type CallStatus =
  | "completed"
  | "failed"
  | "denied"
  | "invalid"
  | "cancelled"
  | "aborted"
  | "timed-out";

/** Why a call was denied, and what would allow it. */
export interface Denial {
  reason: string;
  decidedBy: DecidedBy;
  /** The flag or rule that would allow such a call, for people (never for the model); null when none. */
  hint: string | null;
  /** The call needed approval and no one was present to give it (as in -p). */
  unanswered?: boolean;
}

/** How a call ended and where. */
export interface CallOutcome {
  status: CallStatus;
  gate: PipelineGate;
  /** Set when `status` is "denied". */
  denial?: Denial;
}

/** A call's result for the model, and its outcome for everything else. */
export interface CallResult {
  result: ToolResult;
  outcome: CallOutcome;
}

/** A call that a gate ended, with its message for the model. */
export function ended(status: CallStatus, gate: PipelineGate, message: string): CallResult {
  return { result: errorResult(message), outcome: { status, gate } };
}

/**
 * Why a call was stopped, from its signal's reason: the message of the AbortError the CLI, the loop or the
 * scheduler aborted with ("interrupted by SIGINT", "standard output was closed", "the model's response broke
 * off before it was complete"); null for an abort that gave none (`controller.abort()`).
 */
export function cancelReason(reason: unknown): string | null {
  if (!(reason instanceof DOMException) || reason.name !== "AbortError") return null;
  const message = reason.message.trim();
  // The runtime's default message for an abort without a reason.
  if (message === "" || /^(the|this) (signal|operation) (has been|was) aborted\.?$/i.test(message)) {
    return null;
  }
  return message;
}
