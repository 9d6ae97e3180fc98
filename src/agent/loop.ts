/**
 * The agent loop: stream a model turn, run the tool calls it asks for (safe ones already while it
 * streams), feed the results back paired by id, repeat until the model ends its turn or a guard stops it.
 * It only yields events; whoever consumes them (the session's transcript, a front end) records or shows
 * them.
 *
 * A response that breaks off mid-way (the provider does not retry once content arrived) is discarded and
 * the same request sent again, with the provider's backoff policy, as long as it delivered no call with
 * side effects: its partial message never joins the conversation, its read-only calls are cancelled and
 * their results dropped, and a `retry` event tells consumers so. Otherwise the run ends with an `error`,
 * keeping the text that had arrived.
 *
 * With `compaction`, a conversation grown past its threshold is compacted (compaction.ts) before the next
 * request: the check uses the size of the conversation as of the last complete response, so it also runs
 * before a run's first request when the caller knows that size from an earlier run.
 *
 * What a run is given (`RunAgentOptions`) is declared in loop_options.ts.
 *
 * @module
 */
import { assertNever, describeError } from "../common/errors.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import { ended } from "../execution/call_outcome.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import { type ContentBlock, emptyUsage, type Usage } from "../llm/provider.ts";
import { errorCategory, StreamInterruptedError } from "../llm/errors.ts";
import { formatUsd } from "../llm/prices.ts";
import { abortableSleep, brokenStreamReason, decideStreamRetry } from "../llm/retry.ts";
import { runTurn, type TurnResult } from "./_turn.ts";
import { compactionCut, runCompaction } from "./compaction.ts";
import { Conversation, conversationTokens, type ToolUseBlock } from "./conversation.ts";
import type { AgentEvent, TurnEndReason, UsageTotals } from "./events.ts";
import {
  DEFAULT_MAX_RESULT_CHARS,
  DEFAULT_REPEAT_LIMIT,
  DEFAULT_RESULT_LIMIT_EXEMPT,
  RepeatGuard,
} from "./guards.ts";
import { decideStop, unrunResult } from "./stop_reasons.ts";
import type { AnswerContract, AutoCompaction, RunAgentOptions } from "./loop_options.ts";
import { turnRequest } from "./turn_request.ts";

export type { AnswerContract, AutoCompaction, RunAgentOptions };

/** How many times the model may fix a wrong or missing answer. */
const ANSWER_REPAIRS = 1;

/** How many times Stop hooks may send the model back to work in one run. */
export const MAX_STOP_CONTINUATIONS = 5;

/** Runs the agent until the model ends its turn, a guard stops it, an error occurs or the signal aborts. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const run = new AgentRun(options);
  yield* run.run();
}

type Continuation = { kind: "continue" } | { kind: "end"; reason: TurnEndReason; message: string | null };
type Ending = Extract<Continuation, { kind: "end" }>;

class AgentRun {
  #options: RunAgentOptions;
  #conversation: Conversation;
  #repeat: RepeatGuard;
  #totals: UsageTotals = { ...emptyUsage(), requests: 0 };
  #turns = 0;
  /** The accepted answer (AnswerContract), committed when its response is complete. */
  #answer: { value: unknown } | null = null;
  /** An answer accepted from the response being streamed (discarded with it when it breaks off). */
  #pendingAnswer: { value: unknown } | null = null;
  /** Wrong or missing answers so far. */
  #answerFailures = 0;
  /** Times a Stop hook sent the model back to work. */
  #stopContinuations = 0;
  /** What the run has cost so far, or null when a price is unknown. */
  #costUsd: number | null;
  #lastText = "";
  #truncatedBefore = false;
  #startedAt = Date.now();
  /** The conversation's size in tokens as of the last complete response; null when unknown or just compacted. */
  #contextTokens: number | null;
  /** An automatic compaction failed: the run does not try again. */
  #compactionFailed = false;

  constructor(options: RunAgentOptions) {
    this.#options = options;
    this.#conversation = options.conversation ?? new Conversation();
    this.#repeat = new RepeatGuard(options.repeatLimit ?? DEFAULT_REPEAT_LIMIT);
    this.#costUsd = options.costOf === undefined ? null : 0;
    this.#contextTokens = options.compaction?.contextTokens ?? null;
    if (options.compaction !== undefined) {
      const { thresholdTokens, keepRecentTurns } = options.compaction;
      if (!(thresholdTokens > 0)) {
        throw new RangeError(`runAgent: compaction.thresholdTokens must be positive, got ${thresholdTokens}`);
      }
      if (!Number.isInteger(keepRecentTurns) || keepRecentTurns < 1) {
        throw new RangeError(
          `runAgent: compaction.keepRecentTurns must be 1 or more, got ${keepRecentTurns}`,
        );
      }
    }
    if ((options.maxBudgetUsd ?? null) !== null && options.costOf === undefined) {
      throw new TypeError("runAgent: maxBudgetUsd needs costOf to know what the run costs");
    }
  }

  async *run(): AsyncGenerator<AgentEvent> {
    const { prompt } = this.#options;
    this.#conversation.addUserText(prompt);
    yield { type: "user-message", text: prompt };
    while (true) {
      const limit = this.#limitReached();
      if (limit !== null) return yield* this.#end(limit.reason, limit.message);
      if (this.#needsCompaction()) {
        const ended = yield* this.#compact(this.#turns + 1);
        if (ended !== null) return yield* this.#end(ended.reason, ended.message);
        // The limits again: the summary request was a request too (cost, an interruption).
        continue;
      }
      this.#turns += 1;
      const next = yield* this.#turn(this.#turns);
      if (next.kind === "end") return yield* this.#end(next.reason, next.message);
    }
  }

  /** Why no further request may start (interrupted, out of turns or budget), or null. */
  #limitReached(): Ending | null {
    const { signal, maxTurns = null, maxBudgetUsd = null } = this.#options;
    if (signal.aborted) return { kind: "end", reason: "aborted", message: "The run was interrupted" };
    if (maxTurns !== null && this.#turns >= maxTurns) {
      const requests = `${this.#turns} model request${this.#turns === 1 ? "" : "s"}`;
      return {
        kind: "end",
        reason: "max_turns",
        message:
          `Stopped after ${requests}: the limit of ${maxTurns} was reached while the model still wanted to continue`,
      };
    }
    if (maxBudgetUsd !== null && (this.#costUsd === null || this.#costUsd >= maxBudgetUsd)) {
      const spent = this.#costUsd === null ? "an unknown amount" : formatUsd(this.#costUsd);
      return {
        kind: "end",
        reason: "max_budget",
        message:
          `Stopped after ${this.#turns} model request${this.#turns === 1 ? "" : "s"}: the run has cost ` +
          `${spent}, reaching its budget of $${maxBudgetUsd} while the model still wanted to continue`,
      };
    }
    return null;
  }

  /** Whether the conversation passed the compaction threshold and may be compacted now. */
  #needsCompaction(): boolean {
    const settings = this.#options.compaction;
    if (settings === undefined || this.#compactionFailed || this.#contextTokens === null) return false;
    if (this.#contextTokens <= settings.thresholdTokens) return false;
    // Checked once per response: nothing to compact now may become something after more turns.
    this.#contextTokens = null;
    return compactionCut(this.#conversation.messages, settings.keepRecentTurns) !== null;
  }

  /**
   * Replaces the older turns by a summary before request `turn`. A failed compaction is a warning (the run
   * goes on as it would have without compaction, and does not try again); an interrupted one ends the run.
   */
  async *#compact(turn: number): AsyncGenerator<AgentEvent, Ending | null> {
    const { compaction, provider, model, maxTokens, system, signal } = this.#options;
    if (compaction === undefined) return null;
    const result = yield* runCompaction({
      provider,
      model,
      maxTokens,
      system,
      messages: this.#conversation.messages,
      keepRecentTurns: compaction.keepRecentTurns,
      signal,
      turn,
      trigger: "auto",
      addUsage: (usage) => this.#addUsage(usage),
      apply: (messages) => this.#conversation.replace(messages),
    });
    switch (result.status) {
      case "compacted":
      case "nothing-to-compact":
        return null;
      case "failed":
        this.#compactionFailed = true;
        yield {
          type: "warning",
          message: `Cannot compact the conversation: ${result.reason}; the run goes on without compaction`,
        };
        return null;
      case "aborted":
        return { kind: "end", reason: "aborted", message: "The run was interrupted" };
      default:
        return assertNever(result);
    }
  }

  /**
   * One model request and the tool calls it asked for, then what the response means for the run. A
   * response that broke off is discarded and the request sent again while `#retryAfterBreak` allows.
   */
  async *#turn(turn: number): AsyncGenerator<AgentEvent, Continuation> {
    const { pipeline } = this.#options;
    const request = turnRequest(this.#options, this.#conversation.messages);
    yield {
      type: "request-start",
      turn,
      model: request.model,
      maxTokens: request.maxTokens,
      system: request.system,
      messageCount: request.messages.length,
      tools: request.tools.map((tool) => tool.name),
    };
    const streak = this.#repeat.save();
    const failures = this.#answerFailures;
    for (let retries = 0;; retries++) {
      this.#pendingAnswer = null;
      this.#answerFailures = failures;
      const result: TurnResult = yield* runTurn(request, {
        turn,
        provider: this.#options.provider,
        pipeline,
        signal: this.#options.signal,
        repeat: this.#repeat,
        execution: this.#options.execution ?? "streaming",
        concurrency: this.#options.concurrency,
        resultLimit: {
          maxChars: this.#options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
          exempt: this.#options.resultLimitExempt ?? DEFAULT_RESULT_LIMIT_EXEMPT,
          dir: this.#options.resultDir ?? null,
        },
        addUsage: (usage) => this.#addUsage(usage),
        ...(this.#options.answer === undefined ? {} : {
          answer: { name: this.#options.answer.tool.name, accept: (call) => this.#acceptAnswer(call) },
        }),
      });
      if (result.kind === "complete") {
        this.#contextTokens = conversationTokens(result.usage);
        this.#answer ??= this.#pendingAnswer;
        this.#conversation.addAssistant(result.content);
        this.#lastText = textOf(result.content);
        return yield* this.#afterStop(turn, result);
      }
      const retry = this.#retryAfterBreak(result, retries + 1);
      if (retry === null) return yield* this.#afterBreak(turn, result);
      // Discarded: the partial message is not added, and the calls it delivered no longer count as repeats.
      this.#repeat.restore(streak);
      yield { type: "retry", turn, attempt: retries + 1, delayMs: retry.delayMs, reason: retry.reason };
      const { signal } = this.#options;
      try {
        await (this.#options.retry?.sleep ?? abortableSleep)(retry.delayMs, signal);
      } catch (error) {
        if (signal.aborted) return { kind: "end", reason: "aborted", message: "The run was interrupted" };
        throw error;
      }
    }
  }

  /**
   * Whether a response that broke off may be discarded and its request sent again as retry number
   * `attempt`: not when the run was interrupted, not when the response delivered a call with side
   * effects, and only for a StreamInterruptedError whose cause the retry policy would retry.
   */
  #retryAfterBreak(
    result: Extract<TurnResult, { kind: "broken" }>,
    attempt: number,
  ): { delayMs: number; reason: string } | null {
    const { error } = result;
    if (this.#options.signal.aborted || result.sideEffects) return null;
    if (!(error instanceof StreamInterruptedError)) return null;
    const { sleep: _sleep, random, ...policy } = this.#options.retry ?? {};
    const decision = decideStreamRetry(
      error,
      attempt,
      random === undefined ? { policy } : { policy, random },
    );
    return decision.retry ? { delayMs: decision.delayMs, reason: brokenStreamReason(error) } : null;
  }

  /** The stream broke (or was aborted): keep the text that arrived, and end the run. */
  async *#afterBreak(
    turn: number,
    result: Extract<TurnResult, { kind: "broken" }>,
  ): AsyncGenerator<AgentEvent, Continuation> {
    this.#conversation.addAssistant(result.content);
    this.#lastText = textOf(result.content);
    yield { type: "request-end", turn, stopReason: null, content: result.content, partial: true };
    if (this.#options.signal.aborted) {
      return { kind: "end", reason: "aborted", message: "The run was interrupted" };
    }
    const error = result.error;
    const message = describeError(error);
    yield {
      type: "error",
      turn,
      name: error instanceof Error ? error.name : "Error",
      message,
      category: errorCategory(error),
      error,
    };
    return { kind: "end", reason: "error", message };
  }

  /** Answers every tool use of the turn and decides whether the run continues. */
  async *#afterStop(
    turn: number,
    result: Extract<TurnResult, { kind: "complete" }>,
  ): AsyncGenerator<AgentEvent, Continuation> {
    const { stopReason } = result;
    const calls = result.calls;
    const pending = this.#conversation.pendingToolUses();
    for (const block of pending) {
      if (calls.has(block.id)) continue;
      const unrun = unrunResult(
        { name: block.name, input: block.input, invalidJson: result.invalid.get(block.id) ?? null },
        { stopReason, maxTokens: this.#options.maxTokens },
      );
      calls.set(block.id, unrun);
      yield* this.#answerWithoutRunning(turn, block, unrun);
    }
    const decision = decideStop(stopReason, {
      hasToolUses: pending.length > 0,
      truncatedBefore: this.#truncatedBefore,
      maxTokens: this.#options.maxTokens,
    });
    this.#truncatedBefore = stopReason === "max_tokens";
    const note = decision.action === "continue" ? decision.note : null;
    if (pending.length > 0 || note !== null) {
      const outcomes = new Map([...calls].map(([id, call]) => [id, call.result]));
      const blocks = this.#conversation.addToolResults(outcomes, {
        missing: (block: ToolUseBlock) => ({ content: `${block.name} was not run`, isError: true }),
        ...(note === null ? {} : { note }),
      });
      const content: ContentBlock[] = note === null ? blocks : [...blocks, { type: "text", text: note }];
      yield { type: "tool-results", turn, content };
    }
    if (this.#options.answer !== undefined) {
      const answered = yield* this.#afterAnswer(decision);
      if (answered !== null) return answered;
    }
    if (decision.action === "continue") return { kind: "continue" };
    if (decision.reason === "end_turn" && this.#options.beforeStop !== undefined) {
      const more = yield* this.#stopHooks(this.#options.beforeStop);
      if (more !== null) return more;
    }
    if (decision.warning !== null) yield { type: "warning", message: decision.warning };
    return { kind: "end", reason: decision.reason, message: decision.message };
  }

  /** Asks the Stop hooks whether the model may stop; when not, the run goes on with what they ask for. */
  async *#stopHooks(
    beforeStop: (active: boolean) => Promise<string | null>,
  ): AsyncGenerator<AgentEvent, Continuation | null> {
    if (this.#stopContinuations >= MAX_STOP_CONTINUATIONS || this.#options.signal.aborted) return null;
    const reason = await beforeStop(this.#stopContinuations > 0);
    if (reason === null) return null;
    this.#stopContinuations += 1;
    const text = `A Stop hook does not let you finish yet: ${reason}`;
    this.#conversation.addUserText(text);
    yield { type: "user-message", text };
    return { kind: "continue" };
  }

  /**
   * What the answer contract decides after a turn: an accepted answer ends the run; a wrong answer beyond
   * the repairs ends it without one; a turn that ends without an answer gets one repair message. Null when
   * the turn's own stop decision stands.
   */
  *#afterAnswer(decision: ReturnType<typeof decideStop>): Generator<AgentEvent, Continuation | null> {
    if (this.#answer !== null) return { kind: "end", reason: "end_turn", message: null };
    const name = this.#options.answer?.tool.name ?? "";
    if (this.#answerFailures > ANSWER_REPAIRS) {
      return {
        kind: "end",
        reason: "end_turn",
        message: `The answer given through ${name} still did not match the required schema after a repair`,
      };
    }
    if (decision.action !== "end" || decision.reason !== "end_turn") return null;
    this.#answerFailures += 1;
    if (this.#answerFailures > ANSWER_REPAIRS) {
      return {
        kind: "end",
        reason: "end_turn",
        message: `The model ended without giving its answer through ${name}, even after being asked to`,
      };
    }
    const text = `You ended your turn without calling ${name}. The task is finished only when you call ` +
      `${name}, once, with the complete answer as its input.`;
    this.#conversation.addUserText(text);
    yield { type: "user-message", text };
    return { kind: "continue" };
  }

  /** Answers a call of the answer tool: accepted once when its input passes the check, else what to fix. */
  #acceptAnswer(call: ToolCall): CallResult {
    const problem = this.#options.answer?.check(call.input) ?? null;
    if (problem === null && this.#pendingAnswer === null) {
      this.#pendingAnswer = { value: call.input };
      return {
        result: { content: "The answer was recorded.", isError: false, metadata: {} },
        outcome: { status: "completed", gate: "execute" },
      };
    }
    if (problem === null) return ended("invalid", "validate", "An answer was already given in this response");
    this.#answerFailures += 1;
    return ended("invalid", "validate", problem);
  }

  *#answerWithoutRunning(turn: number, block: ToolUseBlock, call: CallResult): Generator<AgentEvent> {
    const now = performance.timeOrigin + performance.now();
    const toolCall: ToolCall = { id: block.id, name: block.name, input: block.input };
    yield {
      type: "tool-call-start",
      turn,
      id: toolCall.id,
      name: toolCall.name,
      input: toolCall.input,
      startedAt: now,
    };
    yield {
      type: "tool-call-end",
      turn,
      id: toolCall.id,
      name: toolCall.name,
      input: toolCall.input,
      result: call.result,
      outcome: call.outcome,
      startedAt: now,
      endedAt: now,
      durationMs: 0,
    };
  }

  #addUsage(usage: Usage): UsageTotals {
    this.#totals = {
      inputTokens: this.#totals.inputTokens + usage.inputTokens,
      outputTokens: this.#totals.outputTokens + usage.outputTokens,
      cacheCreationInputTokens: this.#totals.cacheCreationInputTokens + usage.cacheCreationInputTokens,
      cacheReadInputTokens: this.#totals.cacheReadInputTokens + usage.cacheReadInputTokens,
      requests: this.#totals.requests + 1,
    };
    if (this.#costUsd !== null) {
      const cost = this.#options.costOf?.(usage) ?? null;
      this.#costUsd = cost === null ? null : this.#costUsd + cost;
    }
    return this.#totals;
  }

  *#end(reason: TurnEndReason, message: string | null): Generator<AgentEvent> {
    // Whatever happened, leave no tool use unanswered: the conversation must stay valid for the API.
    if (this.#conversation.pendingToolUses().length > 0) {
      const content = this.#conversation.addToolResults(new Map(), {
        missing: (block) => ({
          content: `${block.name} was not run: ${message ?? "the run ended"}`,
          isError: true,
        }),
      });
      yield { type: "tool-results", turn: this.#turns, content };
    }
    yield {
      type: "turn-end",
      reason,
      turns: this.#turns,
      text: this.#lastText,
      message,
      totals: this.#totals,
      costUsd: this.#costUsd,
      durationMs: Date.now() - this.#startedAt,
      ...(this.#answer === null ? {} : { answer: this.#answer.value }),
    };
  }
}

/** The text of an assistant message. */
function textOf(content: readonly ContentBlock[]): string {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}
