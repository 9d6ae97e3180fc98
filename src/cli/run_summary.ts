/**
 * The outcome of a run, folded from its events, and its verdict: the one place every output format's
 * `subtype` and the process's exit status come from, so they cannot disagree.
 *
 * @module
 */
import type { AgentEvent, Denial, ErrorCategory, TurnEndReason, UsageTotals } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";
import { EXIT, type ExitCode, type InterruptSignal, interruptStatus } from "./exit_codes.ts";

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
  /** What the run cost in US dollars, or null when unknown. */
  costUsd: number | null;
  denials: RunDenial[];
  /** Why the run ended, or null when it has not ended (no turn-end event). */
  stop: TurnEndReason | null;
  /** What ended the run, for people (the error, the limit reached); null for a normal end. */
  message: string | null;
  /** The error event's name, message and category, when an error ended the run. */
  error: { name: string; message: string; category: ErrorCategory } | null;
  warnings: string[];
  /** The accepted structured answer, when the run had to give one and did. */
  answer?: unknown;
  /** Milliseconds spent waiting for the model (request start to request end, summed). */
  apiMs: number;
  /** When the request in flight started (ms), or null. */
  requestStartedAt: number | null;
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
    costUsd: null,
    denials: [],
    stop: null,
    message: null,
    error: null,
    warnings: [],
    apiMs: 0,
    requestStartedAt: null,
  };
}

/** Folds one event, received at `now` (ms), into the summary (pure: returns a new summary). */
export function foldRun(summary: RunSummary, event: AgentEvent, now: number = Date.now()): RunSummary {
  switch (event.type) {
    case "request-start":
      return { ...summary, requestStartedAt: now };
    case "request-end":
      if (summary.requestStartedAt === null) return summary;
      return { ...summary, apiMs: summary.apiMs + (now - summary.requestStartedAt), requestStartedAt: null };
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
      return { ...summary, error: { name: event.name, message: event.message, category: event.category } };
    case "turn-end":
      return {
        ...summary,
        text: event.text,
        turns: event.turns,
        usage: event.totals,
        costUsd: event.costUsd,
        stop: event.reason,
        message: event.message,
        ...("answer" in event ? { answer: event.answer } : {}),
      };
    // A compaction's usage arrives as a usage event of its own (totals included).
    case "user-message":
    case "text-delta":
    case "thinking-delta":
    case "retry":
    case "tool-call-start":
    case "tool-results":
    case "compaction-start":
    case "compaction":
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

/** The `subtype` of a one-shot result. */
export type ResultSubtype =
  | "success"
  | "error_max_turns"
  | "error_max_budget"
  | "error_permission"
  | "error_api"
  | "error_auth"
  | "error_structured_output"
  | "error_during_execution"
  | "interrupted";

/** What a run's outcome means for a script: its subtype and exit status. */
export interface RunVerdict {
  subtype: ResultSubtype;
  isError: boolean;
  exitStatus: ExitCode;
}

/** What decides the verdict besides the events. */
export interface VerdictContext {
  /** The signal that interrupted the run, when one did. */
  signal?: InterruptSignal | null;
  /** The run was asked for structured output and did not produce a valid object. */
  structuredOutputFailed?: boolean;
}

/**
 * The verdict of a run. The reason the run ended comes first; a run that finished but left actions
 * needing an approval no one could give is `error_permission` (exit 55): the answer may be incomplete.
 */
export function verdictOf(summary: RunSummary, context: VerdictContext = {}): RunVerdict {
  const verdict = (subtype: ResultSubtype, exitStatus: ExitCode): RunVerdict => ({
    subtype,
    exitStatus,
    isError: subtype !== "success",
  });
  switch (summary.stop) {
    case null:
      return verdict("error_during_execution", EXIT.error);
    case "aborted":
      return verdict("interrupted", interruptStatus(context.signal ?? null));
    case "max_turns":
      return verdict("error_max_turns", EXIT.maxTurns);
    case "max_budget":
      return verdict("error_max_budget", EXIT.maxBudget);
    case "error":
      return errorVerdict(summary.error?.category ?? "internal", verdict);
    // A cut-off answer, or one that ended for a reason no one knows, may be incomplete: never a success.
    case "refusal":
    case "max_tokens":
    case "model_context_window_exceeded":
    case "unknown_stop_reason":
      return verdict("error_during_execution", EXIT.error);
    case "end_turn":
      if (context.structuredOutputFailed) return verdict("error_structured_output", EXIT.error);
      if (unansweredApprovals(summary) > 0) return verdict("error_permission", EXIT.needsApproval);
      return verdict("success", EXIT.ok);
    default:
      return assertNever(summary.stop);
  }
}

/** How many calls needed an approval that no one could give. */
export function unansweredApprovals(summary: RunSummary): number {
  return summary.denials.filter(({ denial }) => denial.unanswered === true).length;
}

/** How many of those the approval command gave no decision for (it failed, timed out, printed another thing). */
export function failedApprovals(summary: RunSummary): number {
  return summary.denials.filter(({ denial }) =>
    denial.unanswered === true && denial.decidedBy.kind === "approval-command"
  ).length;
}

/**
 * Where to look for why each unanswered approval was not given, after "…, so the task may be incomplete: ":
 * `ruleAdvice` (the flag or rule that would allow each) when no one was there to ask, else what the approval
 * command did instead of answering. `where` is where the run's output says it ("the warnings above").
 */
export function unansweredAdvice(summary: RunSummary, where: string, ruleAdvice: string): string {
  const unanswered = unansweredApprovals(summary);
  const failed = failedApprovals(summary);
  if (failed === 0) return ruleAdvice;
  if (failed === unanswered) {
    return `the approval command gave no decision (${where} say what it did instead)`;
  }
  return `the approval command gave no decision for ${failed} of them (${where} say what it did instead, ` +
    "and name the flag or rule that would allow the others)";
}

function errorVerdict(
  category: ErrorCategory,
  verdict: (subtype: ResultSubtype, exitStatus: ExitCode) => RunVerdict,
): RunVerdict {
  switch (category) {
    case "authentication":
      return verdict("error_auth", EXIT.auth);
    case "unavailable":
      return verdict("error_api", EXIT.unavailable);
    case "api":
      return verdict("error_api", EXIT.error);
    case "internal":
      return verdict("error_during_execution", EXIT.error);
    default:
      return assertNever(category);
  }
}
