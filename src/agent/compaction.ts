/**
 * Conversation compaction: the earlier part of a long conversation is replaced by a summary the model
 * writes, so a session can go on past its context window. One model request, without tools, summarises
 * the older messages (see _summary_prompt.ts); the new conversation is one user message holding that
 * summary, followed by the most recent turns exactly as they were.
 *
 * Where the cut goes: the kept part starts at an assistant message, the `keepRecentTurns`-th from the end
 * (one assistant message per model request). The message before it is a user message (the roles
 * alternate), so every tool_use and the tool_results answering it stay on the same side of the cut, and
 * the summary (a user message) followed by that assistant message keeps the roles alternating. A cut
 * before a user message would need the summary merged into it, and in a long tool loop every user message
 * after the first is a tool_result answering the message before it, so there would be nowhere to cut.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import type { Message, Provider, Usage } from "../llm/provider.ts";
import { summaryRequestText } from "./_summary_prompt.ts";
import { validateConversation } from "./conversation.ts";
import type { AgentEvent, CompactionTrigger, UsageTotals } from "./events.ts";

/** What one compaction needs. */
export interface CompactOptions {
  provider: Provider;
  model: string;
  /** The response token limit of the summary request. */
  maxTokens: number;
  /** The session's system prompt: the summary request keeps the context it gives (workspace, platform). */
  system: string;
  messages: readonly Message[];
  /** How many of the most recent model turns (assistant messages and what answers them) stay verbatim; ≥ 1. */
  keepRecentTurns: number;
  signal: AbortSignal;
}

/** How a compaction ended; `usage` is the summary request's (null when no response started). */
export type CompactionResult =
  /** `messages` is the new conversation: the summary message, then `kept` messages as they were. */
  | {
    status: "compacted";
    summary: string;
    messages: Message[];
    /** How many messages the summary replaced. */
    removed: number;
    /** How many messages were kept verbatim after it. */
    kept: number;
    usage: Usage;
  }
  /** Too little to summarise; no request was sent. */
  | { status: "nothing-to-compact"; reason: string }
  /** The request failed (`error`: what it threw, or null when its answer was unusable). */
  | { status: "failed"; reason: string; error: unknown; usage: Usage | null }
  /** The signal aborted the request. */
  | { status: "aborted"; usage: Usage | null };

/** What opens the summary message; also how a summary message is recognised. */
export const SUMMARY_HEADING = "[Summary of the earlier conversation]";

/**
 * Where the kept part starts: the index of the `keepRecentTurns`-th assistant message from the end, or
 * null when that leaves fewer than two messages (a user message and an answer) to summarise.
 */
export function compactionCut(messages: readonly Message[], keepRecentTurns: number): number | null {
  if (!Number.isInteger(keepRecentTurns) || keepRecentTurns < 1) {
    throw new RangeError(
      `Cannot compact: keepRecentTurns must be a whole number of 1 or more, got ${keepRecentTurns}`,
    );
  }
  const assistants = messages.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  const cut = assistants[assistants.length - keepRecentTurns];
  if (cut === undefined || cut < 2) return null;
  return cut;
}

/** The user message that holds a summary, clearly marked as one. */
export function summaryMessage(summary: string): Message {
  const text =
    `${SUMMARY_HEADING}\nThis session continues an earlier conversation that grew too long for the ` +
    `context window. Its earlier part was replaced by this summary; the messages after it are the most ` +
    `recent ones, as they were.\n\n<summary>\n${summary}\n</summary>`;
  return { role: "user", content: [{ type: "text", text }] };
}

/**
 * Summarises the messages before the cut (see the module doc) with one model request and returns the new
 * conversation. Never throws for the request's failures: they are a `failed` or `aborted` result.
 */
export async function compactConversation(options: CompactOptions): Promise<CompactionResult> {
  const { messages } = options;
  const problems = validateConversation(messages);
  if (problems.length > 0) {
    throw new TypeError(`Cannot compact an invalid conversation: ${problems.join("; ")}`);
  }
  const cut = compactionCut(messages, options.keepRecentTurns);
  if (cut === null) {
    return {
      status: "nothing-to-compact",
      reason:
        `the conversation has too few turns to summarise while keeping the last ${options.keepRecentTurns}`,
    };
  }
  const older = messages.slice(0, cut);
  const kept = messages.slice(cut);
  const answer = await requestSummary(options, older);
  if (answer.status !== "answered") return answer;
  const compacted = [summaryMessage(answer.summary), ...kept.map(copyMessage)];
  return {
    status: "compacted",
    summary: answer.summary,
    messages: compacted,
    removed: older.length,
    kept: kept.length,
    usage: answer.usage,
  };
}

type SummaryAnswer =
  | { status: "answered"; summary: string; usage: Usage }
  | Extract<CompactionResult, { status: "failed" | "aborted" }>;

/** Sends the summary request and reads its answer. */
async function requestSummary(options: CompactOptions, older: readonly Message[]): Promise<SummaryAnswer> {
  const { provider, signal } = options;
  let usage: Usage | null = null;
  try {
    signal.throwIfAborted();
    const events = provider.stream({
      model: options.model,
      maxTokens: options.maxTokens,
      system: options.system,
      messages: [{ role: "user", content: [{ type: "text", text: summaryRequestText(older) }] }],
      tools: [],
      // One request that is never repeated: writing it to the prompt cache would only cost more.
      cache: false,
    }, { signal });
    for await (const event of events) {
      if (event.type === "message-start") usage = event.usage;
      if (event.type !== "message-end") continue;
      usage = event.usage;
      const summary = event.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")
        .trim();
      if (event.stopReason === "max_tokens") {
        return unusable(`the summary was cut off at the limit of ${options.maxTokens} tokens`, usage);
      }
      if (event.stopReason === "model_context_window_exceeded") {
        return unusable("the summary was cut off: the conversation filled the model's context window", usage);
      }
      if (event.stopReason === "refusal") return unusable("the model declined to write the summary", usage);
      if (summary === "") return unusable("the model answered without a summary", usage);
      return { status: "answered", summary, usage };
    }
    if (signal.aborted) return { status: "aborted", usage };
    return unusable("the response ended before its end was received", usage);
  } catch (error) {
    if (signal.aborted) return { status: "aborted", usage };
    return { status: "failed", reason: describeError(error), error, usage };
  }
}

/** A compaction as part of a run or a session: its events, and the new conversation put in place. */
export interface CompactionRunOptions extends CompactOptions {
  /** The events' turn: the number of the request the compaction comes before (0 between runs). */
  turn: number;
  trigger: CompactionTrigger;
  /** Adds the summary request's usage to the caller's totals and returns them (for the `usage` event). */
  addUsage(usage: Usage): UsageTotals;
  /** Puts the new conversation in place; called before the `compaction` event is yielded. */
  apply(messages: Message[]): void;
}

/**
 * Compacts as one step of a run: `compaction-start` (only when there is something to compact), a `usage`
 * event for the summary request when it reported one, then `compaction` once `apply` has put the new
 * conversation in place. Returns the result: what to say about a failure is the caller's choice.
 */
export async function* runCompaction(
  options: CompactionRunOptions,
): AsyncGenerator<AgentEvent, CompactionResult> {
  const { turn, trigger, messages } = options;
  if (compactionCut(messages, options.keepRecentTurns) === null) {
    return await compactConversation(options);
  }
  yield { type: "compaction-start", turn, trigger, messageCount: messages.length };
  const result = await compactConversation(options);
  if (result.status === "nothing-to-compact") return result;
  if (result.usage !== null) {
    yield { type: "usage", turn, usage: result.usage, totals: options.addUsage(result.usage) };
  }
  if (result.status !== "compacted") return result;
  options.apply(result.messages);
  yield {
    type: "compaction",
    turn,
    trigger,
    removedMessages: result.removed,
    keptMessages: result.kept,
    summary: result.summary,
    messages: result.messages,
    usage: result.usage,
  };
  return result;
}

function unusable(reason: string, usage: Usage | null): SummaryAnswer {
  return { status: "failed", reason, error: null, usage };
}

function copyMessage(message: Message): Message {
  return { role: message.role, content: message.content.map((block) => ({ ...block })) };
}
