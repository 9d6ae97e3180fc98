/**
 * What each model can take in: its context window (input tokens), per model family, matched like prices.ts
 * (a dated id such as `claude-sonnet-4-5-20250929` is its family). A model that is not in the table has no
 * known window: {@link contextWindowOf} returns null rather than a guess, and the caller decides what that
 * means. Automatic compaction (src/agent/compaction.ts) does not run for such a model unless a window or a
 * threshold is configured: a guess would either compact a conversation that still fits (a paid, lossy
 * request) or wait past the real limit (then compaction is of no use), and the models of an
 * OpenAI-compatible endpoint range from a few thousand tokens to millions.
 *
 * Sources, read in the docs corpus: each model's overview page on platform.claude.com
 * (`/docs/<lang>/models/<model>/overview`, "Context window"), and the comparison table those pages share
 * ("How it compares to the current lineup"). A window reached only with a beta header (Sonnet 4.5's 1M) is
 * not used: mewcode does not send it.
 *
 * @module
 */

const ONE_MILLION = 1_000_000;
const TWO_HUNDRED_K = 200_000;

/** Model family id → context window in tokens. Dated ids map to their family by contextWindowOf. */
const CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  // Comparison table of the overview pages (Haiku 5.5 page, released 2026-10-07, and the others): Fable
  // 5.1 and 5.2, Opus 5.5, Sonnet 5.5 and Haiku 5.5 at 1M, each with 128K output.
  "claude-fable-5-2": ONE_MILLION,
  "claude-fable-5-1": ONE_MILLION,
  "claude-opus-5-5": ONE_MILLION,
  "claude-sonnet-5-5": ONE_MILLION,
  "claude-haiku-5-5": ONE_MILLION,
  // Opus 5 overview page (legacy since Opus 5.5): "Context window: 1M tokens".
  "claude-opus-5": ONE_MILLION,
  // Sonnet 5 overview page (legacy since Sonnet 5.5): 1M.
  "claude-sonnet-5": ONE_MILLION,
  // Opus 4.8 overview page (released 2026-05-28): 1M.
  "claude-opus-4-8": ONE_MILLION,
  // Opus 4.7: no stored platform.claude.com page; the AWS Bedrock model card ("Context window: 1M tokens")
  // and Google Cloud's model page ("Maximum input tokens: 1,000,000") agree.
  "claude-opus-4-7": ONE_MILLION,
  // Opus 4.6 and Sonnet 4.6 overview pages: 1M.
  "claude-opus-4-6": ONE_MILLION,
  "claude-sonnet-4-6": ONE_MILLION,
  // Opus 4.5, Sonnet 4.5 and Haiku 4.5 overview pages: 200K.
  "claude-opus-4-5": TWO_HUNDRED_K,
  "claude-sonnet-4-5": TWO_HUNDRED_K,
  "claude-haiku-4-5": TWO_HUNDRED_K,
};

/** A date suffix of a pinned model id, as in `claude-sonnet-4-5-20250929`. */
const DATE_SUFFIX = /-\d{8}$/;

/**
 * The context window in tokens of a model id, matching a dated id to its family; null for a model whose
 * window is not known here.
 */
export function contextWindowOf(model: string): number | null {
  const family = model.trim().toLowerCase().replace(DATE_SUFFIX, "");
  return Object.hasOwn(CONTEXT_WINDOWS, family) ? CONTEXT_WINDOWS[family] ?? null : null;
}
