import { deepStrictEqual, equal } from "node:assert/strict";
import type { AgentEvent, TurnEndReason } from "../../src/agent/events.ts";
import { EXIT } from "../../src/cli/exit_codes.ts";
import { summarizeRun } from "../../src/cli/run_summary.ts";

const TOTALS = {
  inputTokens: 30,
  outputTokens: 12,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 4,
  requests: 2,
};

function turnEnd(reason: TurnEndReason, message: string | null = null): AgentEvent {
  return { type: "turn-end", reason, turns: 2, text: "the answer", message, totals: TOTALS, durationMs: 5 };
}

Deno.test("summarizeRun maps every stop cause to its exit status", async (t) => {
  const cases: [TurnEndReason, number][] = [
    ["end_turn", EXIT.ok],
    ["unknown_stop_reason", EXIT.ok],
    ["max_turns", EXIT.maxTurns],
    ["aborted", EXIT.interrupted],
    ["error", EXIT.error],
    ["refusal", EXIT.error],
    ["max_tokens", EXIT.error],
  ];
  for (const [reason, status] of cases) {
    await t.step(reason, () => {
      const summary = summarizeRun([turnEnd(reason)]);
      equal(summary.stop, reason);
      equal(summary.exitStatus, status);
    });
  }
});

Deno.test("summarizeRun without a turn-end is an error with no stop cause", () => {
  const summary = summarizeRun([{ type: "user-message", text: "hi" }]);
  equal(summary.stop, null);
  equal(summary.exitStatus, EXIT.error);
});

Deno.test("summarizeRun keeps the final text, turns, usage, denials, warnings and the error", () => {
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
    { type: "error", turn: 2, name: "OverloadedError", message: "Overloaded", error: null },
    turnEnd("error", "Overloaded"),
  ];
  const summary = summarizeRun(events);
  equal(summary.text, "the answer");
  equal(summary.turns, 2);
  deepStrictEqual(summary.usage, TOTALS);
  deepStrictEqual(summary.denials, [{ tool: "WriteFile", input: { path: "/w/a" }, denial }]);
  deepStrictEqual(summary.warnings, ["careful"]);
  deepStrictEqual(summary.error, { name: "OverloadedError", message: "Overloaded" });
  equal(summary.message, "Overloaded");
  equal(summary.exitStatus, EXIT.error);
});
