import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { costOf, formatUsd, priceOf, priceOn } from "../../src/llm/prices.ts";
import type { Usage } from "../../src/llm/provider.ts";

const MILLION = 1_000_000;

/** Tokens of one kind per case: below Haiku 5.5's long-prompt threshold, so its base rates apply. */
const TOKENS = 50_000;

/** Usage of `count` tokens of one kind. */
function only(kind: keyof Usage, count = TOKENS): Usage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    [kind]: count,
  };
}

function near(actual: number | null, expected: number, message = ""): void {
  ok(
    actual !== null && Math.abs(actual - expected) < 1e-9,
    `${message}: expected ${expected}, got ${actual}`,
  );
}

Deno.test("costOf charges each kind of token at the model's published rate per million tokens", async (t) => {
  // [model, input, output, 5-minute cache write, cache read] in USD per million tokens.
  const cases: [string, number, number, number, number][] = [
    ["claude-sonnet-5-5", 2, 10, 2.5, 0.1],
    ["claude-sonnet-5", 2, 10, 2.5, 0.2],
    ["claude-sonnet-4-6", 3, 15, 3.75, 0.3],
    ["claude-sonnet-4-5", 3, 15, 3.75, 0.3],
    ["claude-opus-5-5", 4, 20, 5, 0.2],
    ["claude-opus-5", 5, 25, 6.25, 0.5],
    ["claude-opus-4-8", 5, 25, 6.25, 0.5],
    ["claude-opus-4-5", 5, 25, 6.25, 0.5],
    ["claude-haiku-5-5", 0.1, 0.5, 0.125, 0.01],
    ["claude-haiku-4-5", 1, 5, 1.25, 0.1],
  ];
  for (const [model, input, output, cacheWrite, cacheRead] of cases) {
    await t.step(model, () => {
      near(costOf(only("inputTokens"), model), input * TOKENS / MILLION, "input");
      near(costOf(only("outputTokens"), model), output * TOKENS / MILLION, "output");
      near(costOf(only("cacheCreationInputTokens"), model), cacheWrite * TOKENS / MILLION, "cache write");
      near(costOf(only("cacheReadInputTokens"), model), cacheRead * TOKENS / MILLION, "cache read");
    });
  }
});

Deno.test("costOf adds the four kinds of a mixed usage", () => {
  const usage: Usage = {
    inputTokens: 1_200,
    outputTokens: 850,
    cacheCreationInputTokens: 3_000,
    cacheReadInputTokens: 40_000,
  };
  // Sonnet 5.5: 1,200 × $2 + 850 × $10 + 3,000 × $2.50 + 40,000 × $0.10, per million.
  near(costOf(usage, "claude-sonnet-5-5"), (2_400 + 8_500 + 7_500 + 4_000) / MILLION);
  equal(
    costOf(
      { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      "claude-opus-5",
    ),
    0,
  );
});

Deno.test("costOf bills every token of a Haiku 5.5 request at the long-prompt rates above 100,000 prompt tokens", async (t) => {
  await t.step("a prompt of exactly 100,000 tokens (cache reads included) stays at the base rates", () => {
    const usage: Usage = {
      inputTokens: 10_000,
      outputTokens: 1_000,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 90_000,
    };
    near(costOf(usage, "claude-haiku-5-5"), (10_000 * 0.1 + 1_000 * 0.5 + 90_000 * 0.01) / MILLION);
  });
  await t.step("one token more moves input, output and cache reads to the long-prompt rates", () => {
    const usage: Usage = {
      inputTokens: 10_000,
      outputTokens: 1_000,
      cacheCreationInputTokens: 1,
      cacheReadInputTokens: 90_000,
    };
    near(
      costOf(usage, "claude-haiku-5-5"),
      (10_000 * 0.5 + 1_000 * 2.5 + 1 * 0.625 + 90_000 * 0.05) / MILLION,
    );
  });
});

Deno.test("priceOf matches dated model ids to their family and nothing else", async (t) => {
  const cases: [string, string | null][] = [
    ["claude-sonnet-5-5", "claude-sonnet-5-5"],
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["claude-opus-4-5-20251101", "claude-opus-4-5"],
    ["claude-haiku-4-5-20251001", "claude-haiku-4-5"],
    [" Claude-Sonnet-5-5 ", "claude-sonnet-5-5"],
    // A prefix is not a family: Sonnet 5 is not Sonnet 5.5, and an unknown suffix has no price.
    ["claude-sonnet-5-5-preview", null],
    ["claude-sonnet-5-20260630", "claude-sonnet-5"],
    ["claude-opus-4-1-20250805", null],
    ["claude-3-5-sonnet-20241022", null],
    ["anthropic.claude-sonnet-4-5-20250929-v1:0", null],
    ["claude-test-1", null],
    ["constructor", null],
    ["", null],
  ];
  for (const [model, family] of cases) {
    await t.step(JSON.stringify(model), () => {
      deepStrictEqual(priceOf(model), family === null ? null : priceOf(family));
      if (family !== null) ok(priceOf(family) !== null);
    });
  }
});

Deno.test("costOf returns null for a model without a published price, whatever the usage", () => {
  equal(costOf(only("inputTokens", MILLION), "claude-test-1"), null);
  equal(costOf(only("outputTokens"), "gpt-5"), null);
});

Deno.test("priceOn knows no price on an OpenAI-compatible provider, whatever the model is called", () => {
  equal(priceOn("openai", "claude-sonnet-5-5"), null);
  equal(priceOn("ollama", "claude-sonnet-5-5"), null);
  equal(priceOn("openai", "gpt-5"), null);
  deepStrictEqual(priceOn("anthropic", "claude-sonnet-5-5"), priceOf("claude-sonnet-5-5"));
  ok(priceOn("anthropic", "claude-sonnet-5-5") !== null);
});

Deno.test("formatUsd shows four decimals, and two significant digits for less than a hundredth of a cent", async (t) => {
  const cases: [number, string][] = [
    [0, "$0.0000"],
    [0.0123, "$0.0123"],
    [1.5, "$1.5000"],
    [0.0001, "$0.0001"],
    [0.00007, "$0.000070"],
    [0.0000123, "$0.000012"],
  ];
  for (const [amount, shown] of cases) {
    await t.step(String(amount), () => equal(formatUsd(amount), shown));
  }
});
