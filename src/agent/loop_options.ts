/**
 * What one run of the agent loop (loop.ts) is given: the model, the tools, the prompt, and the limits,
 * guards and policies that shape the run.
 *
 * @module
 */
import type { ExecutionMode } from "../execution/scheduler.ts";
import type { ToolSource } from "../execution/tool_source.ts";
import type { Provider, ToolSpec, Usage } from "../llm/provider.ts";
import type { RetryOptions } from "../llm/retry.ts";
import type { Conversation } from "./conversation.ts";

/** Everything one run needs. */
export interface RunAgentOptions {
  provider: Provider;
  /** The tools: a pipeline, or what loads one when the model first calls a tool (tool_source.ts). */
  pipeline: ToolSource;
  /** The user's message for this run. */
  prompt: string;
  model: string;
  maxTokens: number;
  system: string;
  signal: AbortSignal;
  /** The session so far; a new one by default. The run appends to it. */
  conversation?: Conversation;
  /** The most model requests in this run; null or absent for no limit. */
  maxTurns?: number | null;
  /** The price in US dollars of one request's usage (null when unknown); the run's cost is their sum. */
  costOf?: (usage: Usage) => number | null;
  /**
   * No request starts once the run has cost this many US dollars (by `costOf`, which it requires); null or
   * absent for no limit.
   */
  maxBudgetUsd?: number | null;
  /** Default "streaming". */
  execution?: ExecutionMode;
  /** The most calls of one batch running at once; default 8. */
  concurrency?: number;
  /** Identical calls in a row before they are refused; default 3. */
  repeatLimit?: number;
  /** Results above this many characters are saved to a file and previewed; default 30,000. */
  maxResultChars?: number;
  /** Tools whose results are never cut; default ReadFile (it pages itself). */
  resultLimitExempt?: readonly string[];
  /** The folder for full outputs of cut results; null (the default) to only cut them. */
  resultDir?: string | null;
  /**
   * The run's answer must be given through this tool, and pass `check`: the model may repair a wrong or
   * missing answer once; the accepted input is the turn-end's `answer` (structured output).
   */
  answer?: AnswerContract;
  /**
   * Called when the model ends its turn (Stop hooks): a returned text is what the model must still do, and
   * the run goes on with it as a user message; null lets the run end. `active` says whether the run already
   * went on once for this reason. At most MAX_STOP_CONTINUATIONS times per run.
   */
  beforeStop?: (active: boolean) => Promise<string | null>;
  /**
   * How a response that broke off mid-way is sent again: DEFAULT_RETRY_POLICY (src/llm/retry.ts) by default,
   * with `sleep` and `random` injectable for tests. `maxRetries` bounds such retries per turn.
   */
  retry?: RetryOptions;
  /** Automatic compaction; absent for none. */
  compaction?: AutoCompaction;
}

/** When and how a run compacts its conversation by itself. */
export interface AutoCompaction {
  /**
   * Compact before a request when the conversation as of the last complete response (its prompt and its
   * answer, see `conversationTokens`) is above this many tokens.
   */
  thresholdTokens: number;
  /** The most recent model turns kept verbatim (≥ 1). */
  keepRecentTurns: number;
  /** The conversation's size in tokens as of the last response before this run; null or absent if unknown. */
  contextTokens?: number | null;
}

/** A final answer given as a tool call whose input must pass a check (see RunAgentOptions.answer). */
export interface AnswerContract {
  tool: ToolSpec;
  /** null when the input is a valid answer; otherwise what the model must fix. */
  check(input: unknown): string | null;
}
