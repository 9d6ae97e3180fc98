import { deepStrictEqual, equal } from "node:assert/strict";
import type { AgentEvent, Denial, ErrorCategory, TurnEndReason } from "../../src/agent/events.ts";
import { EXIT, type InterruptSignal } from "../../src/cli/exit_codes.ts";
import { foldRun, summarizeRun, verdictOf } from "../../src/cli/run_summary.ts";

const TOTALS = {
  inputTokens: 30,
  outputTokens: 12,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 4,
  requests: 2,
};

function turnEnd(reason: TurnEndReason, message: string | null = null): AgentEvent {
  return {
    type: "turn-end",
    reason,
    turns: 2,
    text: "the answer",
    message,
    totals: TOTALS,
    costUsd: 0.0125,
    durationMs: 5,
  };
}

function errorEvent(category: ErrorCategory): AgentEvent {
  return { type: "error", turn: 1, name: "ApiError", message: "failed", category, error: null };
}

const UNANSWERED: Denial = {
  reason: "WriteFile changes files, which needs approval",
  decidedBy: { kind: "mode", mode: "default" },
  hint: "run with --permission-mode acceptEdits",
  unanswered: true,
};

function denied(denial: Denial): AgentEvent {
  return {
    type: "tool-call-end",
    turn: 1,
    id: "t1",
    name: "WriteFile",
    input: { path: "/w/a" },
    result: { content: "denied", isError: true, metadata: {} },
    outcome: { status: "denied", gate: "permission", denial },
    startedAt: 1,
    endedAt: 1,
    durationMs: 0,
  };
}

Deno.test("verdictOf maps every way a run ends to its subtype and exit status", async (t) => {
  const cases: [string, AgentEvent[], { signal?: InterruptSignal }, string, number][] = [
    ["end_turn", [turnEnd("end_turn")], {}, "success", EXIT.ok],
    ["max_turns", [turnEnd("max_turns")], {}, "error_max_turns", EXIT.maxTurns],
    ["max_budget", [turnEnd("max_budget")], {}, "error_max_budget", EXIT.maxBudget],
    ["SIGINT", [turnEnd("aborted")], { signal: "SIGINT" }, "interrupted", EXIT.interrupted],
    ["SIGTERM", [turnEnd("aborted")], { signal: "SIGTERM" }, "interrupted", EXIT.terminated],
    ["SIGHUP", [turnEnd("aborted")], { signal: "SIGHUP" }, "interrupted", EXIT.hangup],
    ["auth", [errorEvent("authentication"), turnEnd("error")], {}, "error_auth", EXIT.auth],
    ["unavailable", [errorEvent("unavailable"), turnEnd("error")], {}, "error_api", EXIT.unavailable],
    ["api", [errorEvent("api"), turnEnd("error")], {}, "error_api", EXIT.error],
    ["internal", [errorEvent("internal"), turnEnd("error")], {}, "error_during_execution", EXIT.error],
    ["refusal", [turnEnd("refusal")], {}, "error_during_execution", EXIT.error],
    ["max_tokens", [turnEnd("max_tokens")], {}, "error_during_execution", EXIT.error],
    [
      "model_context_window_exceeded",
      [turnEnd("model_context_window_exceeded")],
      {},
      "error_during_execution",
      EXIT.error,
    ],
    // A reason this version does not know may mean the answer is incomplete: never a success.
    ["unknown stop reason", [turnEnd("unknown_stop_reason")], {}, "error_during_execution", EXIT.error],
    ["no turn-end", [{ type: "user-message", text: "hi" }], {}, "error_during_execution", EXIT.error],
    [
      "unanswered approval",
      [denied(UNANSWERED), turnEnd("end_turn")],
      {},
      "error_permission",
      EXIT.needsApproval,
    ],
    // A rule's denial is an answer: the run did what it was allowed to.
    [
      "rule denial",
      [denied({ ...UNANSWERED, unanswered: false }), turnEnd("end_turn")],
      {},
      "success",
      EXIT.ok,
    ],
    // The reason the run ended comes before approvals left unanswered.
    [
      "approval and max_turns",
      [denied(UNANSWERED), turnEnd("max_turns")],
      {},
      "error_max_turns",
      EXIT.maxTurns,
    ],
  ];
  for (const [name, events, context, subtype, exitStatus] of cases) {
    await t.step(name, () => {
      const verdict = verdictOf(summarizeRun(events), context);
      deepStrictEqual(verdict, { subtype, exitStatus, isError: subtype !== "success" });
    });
  }
  deepStrictEqual(verdictOf(summarizeRun([turnEnd("end_turn")]), { structuredOutputFailed: true }), {
    subtype: "error_structured_output",
    exitStatus: EXIT.error,
    isError: true,
  });
});

Deno.test("foldRun measures the time spent waiting for the model, request by request", () => {
  let summary = summarizeRun([]);
  const start = {
    type: "request-start",
    turn: 1,
    model: "m",
    maxTokens: 1,
    system: "",
    messageCount: 1,
    tools: [],
  } satisfies AgentEvent;
  const end = {
    type: "request-end",
    turn: 1,
    stopReason: "end_turn",
    content: [],
    partial: false,
  } satisfies AgentEvent;
  summary = foldRun(summary, start, 1_000);
  summary = foldRun(summary, end, 1_250);
  summary = foldRun(summary, { ...start, turn: 2 }, 2_000);
  summary = foldRun(summary, { ...end, turn: 2 }, 2_100);
  equal(summary.apiMs, 350);
});

Deno.test("summarizeRun keeps the final text, turns, usage, cost, denials, warnings and the error", () => {
  const denial = {
    reason: "plan mode allows only read-only tools",
    decidedBy: { kind: "mode", mode: "plan" },
    hint: null,
  } as const;
  const events: AgentEvent[] = [
    { type: "user-message", text: "do it" },
    {
      type: "usage",
      turn: 1,
      usage: { inputTokens: 15, outputTokens: 6, cacheCreationInputTokens: 0, cacheReadInputTokens: 2 },
      totals: { ...TOTALS, requests: 1 },
    },
    {
      type: "tool-call-end",
      turn: 1,
      id: "t1",
      name: "WriteFile",
      input: { path: "/w/a" },
      result: { content: "denied", isError: true, metadata: {} },
      outcome: { status: "denied", gate: "permission", denial },
      startedAt: 1,
      endedAt: 1,
      durationMs: 0,
    },
    {
      type: "tool-call-end",
      turn: 1,
      id: "t2",
      name: "ReadFile",
      input: { path: "/w/b" },
      result: { content: "text", isError: false, metadata: {} },
      outcome: { status: "completed", gate: "execute" },
      startedAt: 1,
      endedAt: 2,
      durationMs: 1,
    },
    { type: "warning", message: "careful" },
    {
      type: "error",
      turn: 2,
      name: "OverloadedError",
      message: "Overloaded",
      category: "unavailable",
      error: null,
    },
    turnEnd("error", "Overloaded"),
  ];
  const summary = summarizeRun(events);
  equal(summary.text, "the answer");
  equal(summary.turns, 2);
  deepStrictEqual(summary.usage, TOTALS);
  deepStrictEqual(summary.denials, [{ tool: "WriteFile", input: { path: "/w/a" }, denial }]);
  deepStrictEqual(summary.warnings, ["careful"]);
  deepStrictEqual(summary.error, { name: "OverloadedError", message: "Overloaded", category: "unavailable" });
  equal(summary.message, "Overloaded");
  equal(summary.costUsd, 0.0125);
});
