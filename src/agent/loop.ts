/**
 * The agent loop: stream a model turn, run the tool calls it asks for (safe ones already while it
 * streams), feed the results back paired by id, repeat until the model ends its turn or a guard stops it.
 * It only yields events; whoever consumes them (the session's transcript, a front end) records or shows
 * them.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import type { ToolCall, ToolPipeline } from "../execution/pipeline.ts";
import type { ExecutionMode } from "../execution/scheduler.ts";
import {
  type ContentBlock,
  emptyUsage,
  type ModelRequest,
  type Provider,
  type Usage,
} from "../llm/provider.ts";
import { runTurn, type TurnResult } from "./_turn.ts";
import { Conversation, type ToolUseBlock } from "./conversation.ts";
import type { AgentEvent, TurnEndReason, UsageTotals } from "./events.ts";
import {
  DEFAULT_MAX_RESULT_CHARS,
  DEFAULT_REPEAT_LIMIT,
  DEFAULT_RESULT_LIMIT_EXEMPT,
  RepeatGuard,
} from "./guards.ts";
import { decideStop, unrunResult } from "./stop_reasons.ts";

/** Everything one run needs. */
export interface RunAgentOptions {
  provider: Provider;
  pipeline: ToolPipeline;
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
}

/** Runs the agent until the model ends its turn, a guard stops it, an error occurs or the signal aborts. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const run = new AgentRun(options);
  yield* run.run();
}

type Continuation = { kind: "continue" } | { kind: "end"; reason: TurnEndReason; message: string | null };

class AgentRun {
  #options: RunAgentOptions;
  #conversation: Conversation;
  #repeat: RepeatGuard;
  #totals: UsageTotals = { ...emptyUsage(), requests: 0 };
  #turns = 0;
  #lastText = "";
  #truncatedBefore = false;
  #startedAt = Date.now();

  constructor(options: RunAgentOptions) {
    this.#options = options;
    this.#conversation = options.conversation ?? new Conversation();
    this.#repeat = new RepeatGuard(options.repeatLimit ?? DEFAULT_REPEAT_LIMIT);
  }

  async *run(): AsyncGenerator<AgentEvent> {
    const { signal, maxTurns = null, prompt } = this.#options;
    this.#conversation.addUserText(prompt);
    yield { type: "user-message", text: prompt };
    while (true) {
      if (signal.aborted) return yield* this.#end("aborted", "The run was interrupted");
      if (maxTurns !== null && this.#turns >= maxTurns) {
        const requests = `${this.#turns} model request${this.#turns === 1 ? "" : "s"}`;
        return yield* this.#end(
          "max_turns",
          `Stopped after ${requests}: the limit of ${maxTurns} was reached while the model still wanted to continue`,
        );
      }
      this.#turns += 1;
      const next = yield* this.#turn(this.#turns);
      if (next.kind === "end") return yield* this.#end(next.reason, next.message);
    }
  }

  /** One model request and the tool calls it asked for, then what the response means for the run. */
  async *#turn(turn: number): AsyncGenerator<AgentEvent, Continuation> {
    const { pipeline } = this.#options;
    const request: ModelRequest = {
      model: this.#options.model,
      maxTokens: this.#options.maxTokens,
      system: this.#options.system,
      messages: this.#conversation.messages,
      tools: pipeline.registry.toolSpecs(),
    };
    yield {
      type: "request-start",
      turn,
      model: request.model,
      maxTokens: request.maxTokens,
      system: request.system,
      messageCount: request.messages.length,
      tools: request.tools.map((tool) => tool.name),
    };
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
    });
    if (result.kind === "broken") return yield* this.#afterBreak(turn, result);
    this.#conversation.addAssistant(result.content);
    this.#lastText = textOf(result.content);
    return yield* this.#afterStop(turn, result);
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
    yield { type: "error", turn, name: error instanceof Error ? error.name : "Error", message, error };
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
    if (decision.action === "continue") return { kind: "continue" };
    if (decision.warning !== null) yield { type: "warning", message: decision.warning };
    return { kind: "end", reason: decision.reason, message: decision.message };
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
      durationMs: Date.now() - this.#startedAt,
    };
  }
}

/** The text of an assistant message. */
function textOf(content: readonly ContentBlock[]): string {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}
