/**
 * The agent loop: stream a model turn, run the tool calls it asks for (safe ones already while it
 * streams), feed the results back paired by id, repeat until the model ends its turn or a guard stops it.
 *
 * @module
 */
import { assertNever } from "../tools/errors.ts";
import type { ToolCall, ToolPipeline } from "../execution/pipeline.ts";
import { type ExecutionMode, type ScheduledOutcome, ToolScheduler } from "../execution/scheduler.ts";
import { ApiError } from "../llm/errors.ts";
import type {
  ContentBlock,
  Provider,
  ProviderEvent,
  ProviderRequest,
  StopReason,
  Usage,
} from "../llm/provider.ts";
import type { ToolResult } from "../tools/tool.ts";
import { AsyncQueue } from "./_queue.ts";
import { Conversation, type ToolUseBlock } from "./conversation.ts";
import type { AgentEvent, ToolCallStatus, TurnEndReason, UsageTotals } from "./events.ts";
import {
  DEFAULT_MAX_RESULT_CHARS,
  DEFAULT_REPEAT_LIMIT,
  DEFAULT_RESULT_LIMIT_EXEMPT,
  limitResultSize,
  RepeatGuard,
} from "./guards.ts";
import { CONTINUING_STOP_REASONS, decideStop, unrunResult } from "./stop_reasons.ts";
import type { Transcript, TranscriptEntry } from "./transcript.ts";

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
  /** Where every request, message, tool call and usage record is appended. */
  transcript?: Transcript | null;
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
  /** The folder for full outputs of cut results; default the transcript's session folder. */
  resultDir?: string | null;
}

/** Runs the agent until the model ends its turn, a guard stops it, an error occurs or the signal aborts. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const run = new AgentRun(options);
  yield* run.run();
}

type Item =
  | { kind: "event"; event: ProviderEvent }
  | { kind: "stream-end" }
  | { kind: "stream-error"; error: unknown }
  | { kind: "tool-start"; call: ToolCall; startedAt: number }
  | { kind: "tool-end"; outcome: ScheduledOutcome }
  | { kind: "fault"; error: unknown };

type TurnOutcome = { kind: "continue" } | { kind: "end"; reason: TurnEndReason; message: string | null };

class AgentRun {
  #options: RunAgentOptions;
  #conversation: Conversation;
  #transcript: Transcript | null;
  #repeat: RepeatGuard;
  #totals: UsageTotals = {
    inputTokens: 0,
    outputTokens: 0,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    requests: 0,
  };
  #turns = 0;
  #lastText = "";
  #truncatedBefore = false;
  #startedAt = Date.now();
  #loggedSystem: string | null = null;

  constructor(options: RunAgentOptions) {
    this.#options = options;
    this.#conversation = options.conversation ?? new Conversation();
    this.#transcript = options.transcript ?? null;
    this.#repeat = new RepeatGuard(options.repeatLimit ?? DEFAULT_REPEAT_LIMIT);
  }

  async *run(): AsyncGenerator<AgentEvent> {
    const { signal, maxTurns = null } = this.#options;
    this.#conversation.addUserText(this.#options.prompt);
    this.#transcript?.append({ type: "user-message", content: this.#options.prompt });
    while (true) {
      if (signal.aborted) return yield this.#end("aborted", "The run was interrupted");
      if (maxTurns !== null && this.#turns >= maxTurns) {
        return yield this.#end(
          "max_turns",
          `Stopped after ${this.#turns} model request${
            this.#turns === 1 ? "" : "s"
          }: the limit of ${maxTurns} ` +
            "was reached while the model still wanted to continue",
        );
      }
      this.#turns += 1;
      const outcome = yield* this.#turn(this.#turns);
      if (outcome.kind === "end") return yield this.#end(outcome.reason, outcome.message);
    }
  }

  /** One model request and the tool calls it asked for. */
  async *#turn(turn: number): AsyncGenerator<AgentEvent, TurnOutcome> {
    const { provider, pipeline, signal } = this.#options;
    const request: ProviderRequest = {
      model: this.#options.model,
      maxTokens: this.#options.maxTokens,
      system: this.#options.system,
      messages: this.#conversation.messages,
      tools: pipeline.registry.toAPIFormat(),
    };
    this.#transcript?.append({
      type: "request",
      turn,
      model: request.model,
      maxTokens: request.maxTokens,
      messageCount: request.messages.length,
      tools: request.tools.map((tool) => tool.name),
      ...(request.system === this.#loggedSystem ? {} : { system: request.system }),
    });
    this.#loggedSystem = request.system;
    yield { type: "request-start", turn };

    const queue = new AsyncQueue<Item>();
    const streamController = new AbortController();
    const onAbort = () => streamController.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const scheduler = new ToolScheduler(pipeline, {
      signal,
      mode: this.#options.execution ?? "streaming",
      ...(this.#options.concurrency === undefined ? {} : { concurrency: this.#options.concurrency }),
      onStart: (call, startedAt) => queue.push({ kind: "tool-start", call, startedAt }),
      onEnd: (outcome) => queue.push({ kind: "tool-end", outcome }),
      onFault: (_call, error) => queue.push({ kind: "fault", error }),
    });
    const pump = (async () => {
      try {
        for await (const event of provider.stream(request, { signal: streamController.signal })) {
          queue.push({ kind: "event", event });
        }
        queue.push({ kind: "stream-end" });
      } catch (error) {
        queue.push({ kind: "stream-error", error });
      }
    })();

    const texts = new Map<number, string>();
    /** The JSON parse error of each tool_use whose input could not be read, by id. */
    const invalid = new Map<string, string>();
    const results = new Map<string, ToolResult>();
    let end: Extract<ProviderEvent, { type: "message-end" }> | null = null;
    let streamError: { error: unknown } | null = null;
    let streamDone = false;
    try {
      while (!(streamDone && scheduler.idle && queue.size === 0)) {
        const item = await queue.next();
        switch (item.kind) {
          case "event": {
            const event = item.event;
            switch (event.type) {
              case "message-start":
                break;
              case "text-delta":
                texts.set(event.index, (texts.get(event.index) ?? "") + event.text);
                yield { type: "text-delta", turn, text: event.text };
                break;
              case "thinking-delta":
                yield { type: "thinking-delta", turn, thinking: event.thinking };
                break;
              case "tool-call": {
                const call: ToolCall = { id: event.id, name: event.name, input: event.input };
                const refused = this.#repeat.check(call.name, call.input);
                scheduler.add(call, refused ? { result: refused } : {});
                break;
              }
              case "tool-call-invalid":
                this.#repeat.reset();
                invalid.set(event.id, event.error);
                break;
              case "retry":
                yield this.#record({
                  type: "retry",
                  turn,
                  attempt: event.attempt,
                  delayMs: event.delayMs,
                  reason: event.reason,
                });
                break;
              case "message-end":
                end = event;
                break;
              default:
                assertNever(event);
            }
            break;
          }
          case "stream-end":
            streamDone = true;
            if (end === null) {
              streamError = { error: new Error("The model's response ended before its end was received") };
              scheduler.cancel("the model's response broke off before it was complete");
              break;
            }
            yield this.#usage(turn, end.usage);
            this.#conversation.addAssistant(end.content);
            this.#transcript?.append({
              type: "assistant-message",
              turn,
              content: end.content,
              stopReason: end.stopReason,
              partial: false,
            });
            this.#lastText = textOf(end.content);
            yield { type: "request-end", turn, stopReason: end.stopReason, content: end.content };
            if (CONTINUING_STOP_REASONS.includes(end.stopReason ?? "")) scheduler.close();
            else scheduler.cancel(`the model ended its turn (stop reason "${end.stopReason}")`);
            break;
          case "stream-error":
            streamDone = true;
            streamError = { error: item.error };
            scheduler.cancel(
              signal.aborted
                ? "the user interrupted the turn"
                : "the model's response broke off before it was complete",
            );
            break;
          case "tool-start":
            yield this.#toolStart(turn, item.call, item.startedAt);
            break;
          case "tool-end": {
            const { call, timing } = item.outcome;
            const result = await limitResultSize(item.outcome.result, {
              toolName: call.name,
              callId: call.id,
              maxChars: this.#options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
              exempt: this.#options.resultLimitExempt ?? DEFAULT_RESULT_LIMIT_EXEMPT,
              dir: this.#options.resultDir === undefined
                ? (this.#transcript?.sessionDir ?? null)
                : this.#options.resultDir,
            });
            results.set(call.id, result);
            yield this.#toolEnd(turn, call, result, timing.startedAt, timing.endedAt);
            // What the sandbox undid after the call (a planted git file, a limit reached) is the user's news too.
            for (const note of sandboxNotesOf(result)) yield this.#warn(`${call.name}: ${note}`);
            break;
          }
          case "fault":
            throw item.error;
          default:
            assertNever(item);
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      streamController.abort();
      scheduler.cancel("the turn ended");
      await pump;
      await scheduler.settled().catch(() => undefined);
    }

    if (streamError !== null || end === null) {
      const partial = [...texts.entries()].sort(([a], [b]) => a - b).map(([, text]) => text).join("");
      const content: ContentBlock[] = partial === "" ? [] : [{ type: "text", text: partial }];
      this.#transcript?.append({ type: "assistant-message", turn, content, stopReason: null, partial: true });
      this.#conversation.addAssistant(content);
      this.#lastText = partial;
      if (signal.aborted) return { kind: "end", reason: "aborted", message: "The run was interrupted" };
      const error = streamError?.error;
      const message = describeError(error);
      this.#transcript?.append({
        type: "error",
        turn,
        name: error instanceof Error ? error.name : "Error",
        message,
      });
      yield { type: "error", message, error };
      return { kind: "end", reason: "error", message };
    }

    return yield* this.#afterStop(turn, end.stopReason, invalid, results);
  }

  /** Answers every tool_use of the turn and decides whether the run continues. */
  async *#afterStop(
    turn: number,
    stopReason: StopReason | null,
    invalid: ReadonlyMap<string, string>,
    results: Map<string, ToolResult>,
  ): AsyncGenerator<AgentEvent, TurnOutcome> {
    const pending = this.#conversation.pendingToolUses();
    for (const block of pending) {
      if (results.has(block.id)) continue;
      const result = unrunResult(
        { name: block.name, input: block.input, invalidJson: invalid.get(block.id) ?? null },
        { stopReason, maxTokens: this.#options.maxTokens },
      );
      const now = performance.timeOrigin + performance.now();
      const call: ToolCall = { id: block.id, name: block.name, input: block.input };
      yield this.#toolStart(turn, call, now);
      results.set(block.id, result);
      yield this.#toolEnd(turn, call, result, now, now);
    }
    const decision = decideStop(stopReason, {
      hasToolUses: pending.length > 0,
      truncatedBefore: this.#truncatedBefore,
      maxTokens: this.#options.maxTokens,
    });
    this.#truncatedBefore = stopReason === "max_tokens";
    const note = decision.action === "continue" ? decision.note : null;
    if (pending.length > 0 || note !== null) {
      // A ToolResult is a CallOutcome (content, isError); metadata stays out of the conversation.
      const blocks = this.#conversation.addToolResults(results, {
        missing: (block: ToolUseBlock) => ({ content: `${block.name} was not run`, isError: true }),
        ...(note === null ? {} : { note }),
      });
      this.#transcript?.append({
        type: "tool-results",
        turn,
        content: note === null ? blocks : [...blocks, { type: "text", text: note }],
      });
    }
    if (decision.action === "continue") return { kind: "continue" };
    if (decision.warning !== null) yield this.#warn(decision.warning);
    return { kind: "end", reason: decision.reason, message: decision.message };
  }

  #usage(turn: number, usage: Usage): AgentEvent {
    this.#totals = {
      inputTokens: this.#totals.inputTokens + usage.input_tokens,
      outputTokens: this.#totals.outputTokens + usage.output_tokens,
      cacheCreationInputTokens: this.#totals.cacheCreationInputTokens +
        (usage.cache_creation_input_tokens ?? 0),
      cacheReadInputTokens: this.#totals.cacheReadInputTokens + (usage.cache_read_input_tokens ?? 0),
      requests: this.#totals.requests + 1,
    };
    return this.#record({ type: "usage", turn, usage, totals: this.#totals });
  }

  /** Appends an event that the transcript records as is, and returns it. */
  #record<E extends AgentEvent & TranscriptEntry>(event: E): E {
    this.#transcript?.append(event);
    return event;
  }

  #toolStart(turn: number, call: ToolCall, startedAt: number): AgentEvent {
    const { id, name, input } = call;
    return this.#record({ type: "tool-call-start", turn, id, name, input, startedAt });
  }

  #toolEnd(turn: number, call: ToolCall, result: ToolResult, startedAt: number, endedAt: number): AgentEvent {
    const status = statusOf(result);
    const durationMs = endedAt - startedAt;
    this.#transcript?.append({
      type: "tool-call-end",
      turn,
      id: call.id,
      name: call.name,
      input: call.input,
      startedAt,
      endedAt,
      durationMs,
      isError: result.isError,
      status,
      content: result.content,
      metadata: result.metadata,
    });
    return {
      type: "tool-call-end",
      turn,
      id: call.id,
      name: call.name,
      input: call.input,
      result,
      status,
      startedAt,
      endedAt,
      durationMs,
    };
  }

  #warn(message: string): AgentEvent {
    return this.#record({ type: "warning", message });
  }

  #end(reason: TurnEndReason, message: string | null): AgentEvent {
    // Whatever happened, leave no tool_use unanswered: the conversation must stay valid for the API.
    if (this.#conversation.pendingToolUses().length > 0) {
      this.#conversation.addToolResults(new Map(), {
        missing: (block) => ({
          content: `${block.name} was not run: ${message ?? "the run ended"}`,
          isError: true,
        }),
      });
    }
    this.#transcript?.append({
      type: "turn-end",
      reason,
      turns: this.#turns,
      totals: this.#totals,
      durationMs: Date.now() - this.#startedAt,
    });
    return {
      type: "turn-end",
      reason,
      turns: this.#turns,
      text: this.#lastText,
      message,
      totals: this.#totals,
    };
  }
}

function statusOf(result: ToolResult): ToolCallStatus {
  const status = result.metadata.status;
  if (status === "denied" || status === "cancelled") return status;
  return result.isError ? "failed" : "completed";
}

function sandboxNotesOf(result: ToolResult): string[] {
  const notes = result.metadata.sandboxNotes;
  return Array.isArray(notes) ? notes.filter((note): note is string => typeof note === "string") : [];
}

function textOf(content: readonly ContentBlock[]): string {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

/** A one-line description of what ended a run: the API's message as it gave it, with the status beside it. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError && error.status !== null) {
    const kind = error.errorType === null ? "" : ` ${error.errorType}`;
    return `${error.message} (API status ${error.status}${kind})`;
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
