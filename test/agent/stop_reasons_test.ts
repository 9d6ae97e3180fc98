import { deepStrictEqual, equal, match } from "node:assert/strict";
import { decideStop, type StopDecision, unrunResult } from "../../src/agent/stop_reasons.ts";

Deno.test("decideStop maps every stop reason to continue or end", async (t) => {
  const base = { hasToolUses: true, truncatedBefore: false, maxTokens: 100 };
  const cases: [string | null, Partial<typeof base>, StopDecision["action"], string | null][] = [
    ["tool_use", {}, "continue", null],
    ["tool_use", { hasToolUses: false }, "end", "end_turn"],
    ["end_turn", {}, "end", "end_turn"],
    ["stop_sequence", {}, "end", "end_turn"],
    ["pause_turn", { hasToolUses: false }, "continue", null],
    ["max_tokens", {}, "continue", null],
    ["max_tokens", { truncatedBefore: true }, "end", "max_tokens"],
    ["max_tokens", { hasToolUses: false }, "end", "max_tokens"],
    ["refusal", {}, "end", "refusal"],
    ["model_context_window_exceeded", {}, "end", "model_context_window_exceeded"],
    ["model_context_window_exceeded", { hasToolUses: false }, "end", "model_context_window_exceeded"],
    ["something_new", {}, "end", "unknown_stop_reason"],
    [null, {}, "end", "unknown_stop_reason"],
  ];
  for (const [stopReason, context, action, reason] of cases) {
    await t.step(`${stopReason} ${JSON.stringify(context)} → ${action} ${reason ?? ""}`, () => {
      const decision = decideStop(stopReason, { ...base, ...context });
      equal(decision.action, action);
      if (decision.action === "end") equal(decision.reason, reason);
    });
  }
});

Deno.test("decideStop tells the model about a cut-off response and warns on unknown reasons", () => {
  const cut = decideStop("max_tokens", { hasToolUses: true, truncatedBefore: false, maxTokens: 64 });
  deepStrictEqual(cut, {
    action: "continue",
    note:
      "Your last response was cut off at the max_tokens limit (64 tokens). Calls whose input was complete were run.",
  });
  const unknown = decideStop("weird", { hasToolUses: false, truncatedBefore: false, maxTokens: 64 });
  equal(
    unknown.action === "end" && unknown.warning,
    'The model stopped for a reason this version does not know ("weird"): the answer may be incomplete',
  );
  const none = decideStop(null, { hasToolUses: false, truncatedBefore: false, maxTokens: 64 });
  equal(
    none.action === "end" && none.message,
    "The response ended without a stop reason: the answer may be incomplete",
  );
});

Deno.test("decideStop ends a response cut off by a full context window and says what to do", () => {
  const full = decideStop("model_context_window_exceeded", {
    hasToolUses: true,
    truncatedBefore: false,
    maxTokens: 64,
  });
  deepStrictEqual(full, {
    action: "end",
    reason: "model_context_window_exceeded",
    message: "The response was cut off: the conversation filled the model's context window; compact it " +
      "(/compact), start a new session or send a shorter prompt",
    warning: "The response was cut off: the conversation filled the model's context window; compact it " +
      "(/compact), start a new session or send a shorter prompt",
  });
});

Deno.test("unrunResult explains why a call did not run", () => {
  const cut = unrunResult({ name: "WriteFile", input: {}, invalidJson: "Unexpected end" }, {
    stopReason: "max_tokens",
    maxTokens: 64,
  });
  match(cut.result.content, /WriteFile was not run: your response hit the max_tokens limit \(64 tokens\)/);
  equal(cut.outcome.status, "cancelled");
  const bad = unrunResult({ name: "Grep", input: {}, invalidJson: "Unexpected token" }, {
    stopReason: "tool_use",
    maxTokens: 64,
  });
  match(bad.result.content, /Grep was not run: its input is not valid JSON \(Unexpected token\)/);
  deepStrictEqual(bad.outcome, { status: "invalid", gate: "json" });
  const ended = unrunResult({ name: "Grep", input: { pattern: "x" }, invalidJson: null }, {
    stopReason: "end_turn",
    maxTokens: 64,
  });
  equal(ended.result.content, "Grep was not run: the model ended its turn before the call could run");
  equal(ended.result.isError, true);
  equal(ended.outcome.status, "cancelled");
});
