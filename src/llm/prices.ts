/**
 * What Anthropic's Messages API charges per model, in USD per million tokens, and the cost of a request's
 * usage. Only published list prices of the Claude API (not Bedrock, Vertex or Foundry; no Batch, fast-mode
 * or regional surcharges). A model that is not in the table has no price: {@link costOf} returns null
 * rather than a guess.
 *
 * mewcode's cache breakpoints carry no `ttl`, so every cache write is a 5-minute one and only that rate
 * is kept.
 *
 * Sources, read in the docs corpus in this order of authority: the model overview pages on
 * platform.claude.com (`/docs/<lang>/models/<model>/overview`, "Pricing"), the pricing page
 * (`/docs/en/about-claude/pricing`, "Model pricing"), and its prompt-caching rule (a 5-minute write is
 * 1.25× the base input price, a read 0.1×, unless a model's own row says otherwise). Each entry names its
 * source and when it was published or checked.
 *
 * @module
 */
import type { Usage } from "./provider.ts";

/** USD per million tokens of each kind. */
export interface Rates {
  readonly input: number;
  readonly output: number;
  /** A 5-minute prompt-cache write. */
  readonly cacheWrite: number;
  /** A prompt-cache hit. */
  readonly cacheRead: number;
}

/** A model's prices; `longPrompt` applies to every token of a request whose prompt is above its threshold. */
export interface ModelPrice extends Rates {
  /** Higher rates for long prompts (input + cache writes + cache reads above `aboveTokens`). */
  readonly longPrompt?: Rates & { readonly aboveTokens: number };
}

const OPUS_4_5_TO_5: ModelPrice = { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 };
const SONNET_4_X: ModelPrice = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };

/** Model family id → prices. Dated ids (`claude-sonnet-4-5-20250929`) map to their family by priceOf. */
const PRICES: Readonly<Record<string, ModelPrice>> = {
  // Opus 5.5 overview page (Opus 5.5 came out in 2026-09; claudit v1.8.2 of 2026-09-24 has the same card):
  // $4 / $20, 5m write $5, cache read $0.20 (0.05× input, not the usual 0.1×).
  "claude-opus-5-5": { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  // Opus 5 overview page (legacy since Opus 5.5) and the pricing page: $5 / $25, $6.25, $0.50.
  "claude-opus-5": OPUS_4_5_TO_5,
  // Pricing page, "Model pricing" (the copy that lists Fable 5.1, so 2026-09 or later): Opus 4.8, 4.7,
  // 4.6 and 4.5 at $5 / $25, 5m write $6.25, cache hits $0.50. Opus 4.1 and 4 are retired on the Claude
  // API and left out.
  "claude-opus-4-8": OPUS_4_5_TO_5,
  "claude-opus-4-7": OPUS_4_5_TO_5,
  "claude-opus-4-6": OPUS_4_5_TO_5,
  "claude-opus-4-5": OPUS_4_5_TO_5,
  // Sonnet 5.5, mewcode's default. The overview page read before 2026-10-07 lists $2 / $10, 5m write $2.50,
  // cache read $0.20; Anthropic cut cache reads to $0.10 (0.05× input) on 2026-10-07, as trackers checked
  // against the live pricing page report (claudit v1.9.2, 2026-10-24; PromptFuel v1.0.23, 2026-10-16;
  // token-stats v0.3.2, 2026-10-09). The cut is used; no stored official page after it was found.
  "claude-sonnet-5-5": { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 },
  // Sonnet 5 overview page (legacy since Sonnet 5.5): $2 / $10, 5m write $2.50, cache read $0.20; its
  // increase to $3 / $15 planned for 2026-09-01 was cancelled.
  "claude-sonnet-5": { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2 },
  // Sonnet 4.6 and 4.5: $3 / $15, 5m write $3.75, cache read $0.30. The stored pricing page is cut off
  // before their rows; the figures are from summaries of it (dev.to "What does the Claude API actually
  // cost?", June 2026, for 4.6; deploybase.ai, March 2026, for 4.5) and match its 2025 copy on
  // docs.anthropic.com for Sonnet 4 and the 1.25× / 0.1× rule.
  "claude-sonnet-4-6": SONNET_4_X,
  "claude-sonnet-4-5": SONNET_4_X,
  // Haiku 5.5 overview page (released 2026-10-07), priced by prompt length: up to 100,000 tokens $0.10 /
  // $0.50 with a 5m write of $0.125; above, $0.50 / $2.50 with $0.625. The page's cache-read line was cut
  // off in the stored copy: $0.01 and $0.05 (0.1× input) come from Apidog's API guide of 2026-10-08 and
  // the trackers above, which agree.
  "claude-haiku-5-5": {
    input: 0.1,
    output: 0.5,
    cacheWrite: 0.125,
    cacheRead: 0.01,
    longPrompt: { aboveTokens: 100_000, input: 0.5, output: 2.5, cacheWrite: 0.625, cacheRead: 0.05 },
  },
  // Haiku 4.5: $1 / $5 in the overview pages' comparison tables (2026); cache rates by the rule: $1.25,
  // $0.10.
  "claude-haiku-4-5": { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 },
};

/** A date suffix of a pinned model id, as in `claude-sonnet-4-5-20250929`. */
const DATE_SUFFIX = /-\d{8}$/;

/**
 * The prices of a model id, matching a dated id to its family (`claude-opus-4-5-20251101` →
 * `claude-opus-4-5`); null for a model without a published price here.
 */
export function priceOf(model: string): ModelPrice | null {
  const family = model.trim().toLowerCase().replace(DATE_SUFFIX, "");
  return Object.hasOwn(PRICES, family) ? PRICES[family] ?? null : null;
}

/**
 * The cost in USD of one request's usage, or null when the model has no price here. Price each request
 * on its own and add the results: a long-prompt rate depends on one request's prompt, not on a sum.
 */
export function costOf(usage: Usage, model: string): number | null {
  const price = priceOf(model);
  if (price === null) return null;
  const prompt = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  const rates = price.longPrompt !== undefined && prompt > price.longPrompt.aboveTokens
    ? price.longPrompt
    : price;
  return (usage.inputTokens * rates.input + usage.outputTokens * rates.output +
    usage.cacheCreationInputTokens * rates.cacheWrite + usage.cacheReadInputTokens * rates.cacheRead) /
    1_000_000;
}

/**
 * An amount of US dollars for people: four decimals ("$0.0123"), or two significant digits below a
 * hundredth of a cent, which four decimals would show as "$0.0000" or round up ("$0.00007", not "$0.0001").
 */
export function formatUsd(amount: number): string {
  return amount === 0 || Math.abs(amount) >= 0.0001 ? `$${amount.toFixed(4)}` : `$${amount.toPrecision(2)}`;
}

/** Providers whose requests have no price here: an OpenAI-compatible server bills by its own rates, or not at all. */
const UNPRICED_PROVIDERS: readonly string[] = ["openai", "ollama"];

/**
 * The prices of a model as served by a provider: null on an OpenAI-compatible provider whatever the model
 * is called (OpenRouter's `anthropic/…` ids are not Anthropic's bill), else {@link priceOf}.
 */
export function priceOn(provider: string, model: string): ModelPrice | null {
  return UNPRICED_PROVIDERS.includes(provider) ? null : priceOf(model);
}
