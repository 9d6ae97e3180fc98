/**
 * The outcome of a run, folded from its events: the one place every output format and the exit status
 * come from.
 *
 * @module
 */
import type { AgentEvent, Denial, TurnEndReason, UsageTotals } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";

import { EXIT, type ExitCode } from "./exit_codes.ts";

/** A call the permission gate (or a hook) refused. */
export interface RunDenial {
  tool: string;
  input: unknown;
  denial: Denial;
}

/** What a run came to. */
export interface RunSummary {
  /** The text of the last assistant message (the answer). */
  text: string;
  /** Model requests made. */
  turns: number;
  usage: UsageTotals;
  denials: RunDenial[];
  /** Why the run ended, or null when it has not ended (no turn-end event). */
  stop: TurnEndReason | null;
  /** What ended the run, for people (the error, the limit reached); null for a normal end. */
  message: string | null;
  /** The error event's name and message, when an error ended the run. */
  error: { name: string; message: string } | null;
  warnings: string[];
  /** The process's exit status for this outcome. */
  exitStatus: ExitCode;
}

/** The summary before any event. */
export function emptyRunSummary(): RunSummary {
  return {
    text: "",
    turns: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
      requests: 0,
    },
    denials: [],
    stop: null,
    message: null,
    error: null,
    warnings: [],
    exitStatus: EXIT.error,
  };
}

/** Folds one event into the summary (pure: returns a new summary). */
export function foldRun(summary: RunSummary, event: AgentEvent): RunSummary {
  switch (event.type) {
    case "usage":
      return { ...summary, usage: event.totals };
    case "tool-call-end": {
      const { denial } = event.outcome;
      if (event.outcome.status !== "denied" || denial === undefined) return summary;
      return { ...summary, denials: [...summary.denials, { tool: event.name, input: event.input, denial }] };
    }
    case "warning":
      return { ...summary, warnings: [...summary.warnings, event.message] };
    case "error":
      return { ...summary, error: { name: event.name, message: event.message } };
    case "turn-end":
      return {
        ...summary,
        text: event.text,
        turns: event.turns,
        usage: event.totals,
        stop: event.reason,
        message: event.message,
        exitStatus: exitStatusFor(event.reason),
      };
    case "user-message":
    case "request-start":
    case "text-delta":
    case "thinking-delta":
    case "retry":
    case "request-end":
    case "tool-call-start":
    case "tool-results":
      return summary;
    default:
      return assertNever(event);
  }
}

/** The summary of a whole run's events. */
export function summarizeRun(events: Iterable<AgentEvent>): RunSummary {
  let summary = emptyRunSummary();
  for (const event of events) summary = foldRun(summary, event);
  return summary;
}

/** The exit status of a run that ended for `reason`. */
function exitStatusFor(reason: TurnEndReason): ExitCode {
  switch (reason) {
    case "end_turn":
    case "unknown_stop_reason":
      return EXIT.ok;
    case "max_turns":
      return EXIT.maxTurns;
    case "aborted":
      return EXIT.interrupted;
    case "error":
    case "refusal":
    case "max_tokens":
      return EXIT.error;
    default:
      return assertNever(reason);
  }
}
