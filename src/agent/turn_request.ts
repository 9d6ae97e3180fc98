/**
 * The request of a run's model turn, built in one place: by the loop for every turn (loop.ts), and by a
 * session that sends its run's first request before the loop has loaded (src/llm/started_request.ts), which
 * the loop takes only when it asks for exactly that request. This module loads without the loop.
 *
 * @module
 */
import type { Message, ModelRequest } from "../llm/provider.ts";
import { Conversation } from "./conversation.ts";
import type { RunAgentOptions } from "./loop_options.ts";

/** What a turn's request is made of besides the conversation. */
export type TurnRequestOptions = Pick<
  RunAgentOptions,
  "model" | "maxTokens" | "system" | "pipeline" | "answer"
>;

/** The request of a turn: the tools offered now, and the answer's tool last when the run has one. */
export function turnRequest(options: TurnRequestOptions, messages: Message[]): ModelRequest {
  const tools = options.pipeline.registry.toolSpecs();
  return {
    model: options.model,
    maxTokens: options.maxTokens,
    system: options.system,
    messages,
    tools: options.answer === undefined ? tools : [...tools, options.answer.tool],
  };
}

/**
 * The first request a run of `options` will send, when it is sure to begin with it; null when the run may
 * end or compact the conversation first (see the loop's `#limitReached` and `#needsCompaction`): then no
 * request is sent before the loop decides.
 */
export function firstTurnRequest(options: RunAgentOptions): ModelRequest | null {
  const { signal, maxTurns = null, maxBudgetUsd = null, compaction } = options;
  if (signal.aborted || (maxTurns !== null && maxTurns < 1)) return null;
  if (maxBudgetUsd !== null && (options.costOf === undefined || !(maxBudgetUsd > 0))) return null;
  if (compaction !== undefined && compaction.contextTokens != null) {
    if (compaction.contextTokens > compaction.thresholdTokens) return null;
  }
  const conversation = new Conversation(options.conversation?.messages ?? []);
  conversation.addUserText(options.prompt);
  return turnRequest(options, conversation.messages);
}
