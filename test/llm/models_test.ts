import { equal } from "node:assert/strict";
import { contextWindowOf } from "../../src/llm/models.ts";

Deno.test("contextWindowOf gives each known family its documented window", async (t) => {
  const cases: [string, number][] = [
    ["claude-sonnet-5-5", 1_000_000],
    ["claude-opus-5-5", 1_000_000],
    ["claude-haiku-5-5", 1_000_000],
    ["claude-opus-4-6", 1_000_000],
    ["claude-sonnet-4-6", 1_000_000],
    ["claude-opus-4-5", 200_000],
    ["claude-sonnet-4-5", 200_000],
    ["claude-haiku-4-5", 200_000],
  ];
  for (const [model, window] of cases) {
    await t.step(model, () => equal(contextWindowOf(model), window));
  }
});

Deno.test("contextWindowOf matches a dated id to its family, whatever its case and spaces", () => {
  equal(contextWindowOf("claude-sonnet-4-5-20250929"), 200_000);
  equal(contextWindowOf(" Claude-Haiku-4-5-20251001 "), 200_000);
  equal(contextWindowOf("claude-opus-4-6-20260205"), 1_000_000);
});

Deno.test("contextWindowOf returns null for a model it does not know rather than a guess", async (t) => {
  for (const model of ["gpt-5", "claude-test", "claude-sonnet-4-5-latest", "", "constructor", "toString"]) {
    await t.step(JSON.stringify(model), () => equal(contextWindowOf(model), null));
  }
});
