/**
 * One model request and the tool calls it asks for, as they happen: the provider's stream and the
 * scheduler's calls are merged into one ordered sequence, and each kind of item has its own small
 * handler. Private to src/agent/: the loop (loop.ts) owns the conversation; a turn only reports.
 *
 * @module
 */
import { assertNever, describeError } from "../common/errors.ts";
import { type CallOutcome, type CallResult, cancelReason, ended } from "../execution/call_outcome.ts";
import type { ToolCall, ToolPipeline } from "../execution/pipeline.ts";
import type { ToolSource } from "../execution/tool_source.ts";
import { type ExecutionMode, type ScheduledOutcome, ToolScheduler } from "../execution/scheduler.ts";
import type {
  ContentBlock,
  ModelRequest,
  Provider,
  ProviderEvent,
  StopReason,
  Usage,
} from "../llm/provider.ts";
import { StreamProtocolError } from "../llm/errors.ts";
import type { ToolResult } from "../tools/tool.ts";
import { AsyncQueue } from "./_queue.ts";
import type { AgentEvent, UsageTotals } from "./events.ts";
import { limitResultSize, type RepeatGuard } from "./guards.ts";
import { CONTINUING_STOP_REASONS } from "./stop_reasons.ts";

/** What a turn needs besides its request. */
export interface TurnOptions {
  turn: number;
  provider: Provider;
  /** The tools: a pipeline, or what loads one with the first call. */
  pipeline: ToolSource;
  signal: AbortSignal;
  repeat: RepeatGuard;
  execution: ExecutionMode;
  concurrency: number | undefined;
  /** How large results are cut (see guards.ts). */
  resultLimit: { maxChars: number; exempt: readonly string[]; dir: string | null };
  /** Adds a response's usage (what a broken one reported at its start) to the run's totals; returns them. */
  addUsage(usage: Usage): UsageTotals;
  /** The tool the model gives its final answer through: its calls are answered here, never run. */
  answer?: { name: string; accept(call: ToolCall): CallResult };
}

/** How a turn ended. */
export type TurnResult =
  /** The response arrived whole; `calls` holds the result of every call that ran or was answered. */
  | {
    kind: "complete";
    stopReason: StopReason | null;
    content: ContentBlock[];
    usage: Usage;
    calls: Map<string, CallResult>;
    /** The JSON parse error of each tool use whose input could not be read, by id. */
    invalid: Map<string, string>;
  }
  /**
   * The response broke off (or was aborted); `content` is the text that had arrived. `sideEffects`: the
   * response delivered a call to a tool that is not read-only, so it must not be sent again (see
   * `#onToolCall`).
   */
  | { kind: "broken"; content: ContentBlock[]; error: unknown; sideEffects: boolean };

type Item =
  | { kind: "event"; event: ProviderEvent }
  | { kind: "stream-end" }
  | { kind: "stream-error"; error: unknown }
  | { kind: "tool-start"; call: ToolCall; startedAt: number }
  | { kind: "tool-end"; ended: ScheduledOutcome }
  | { kind: "fault"; error: unknown };

/** Runs one model request and its tool calls; yields events and returns how the turn ended. */
export async function* runTurn(
  request: ModelRequest,
  options: TurnOptions,
): AsyncGenerator<AgentEvent, TurnResult> {
  const turn = new Turn(request, options);
  return yield* turn.run();
}

class Turn {
  #request: ModelRequest;
  #options: TurnOptions;
  #queue = new AsyncQueue<Item>();
  #streamController = new AbortController();
  #scheduler: ToolScheduler;
  #texts = new Map<number, string>();
  #invalid = new Map<string, string>();
  #calls = new Map<string, CallResult>();
  #end: Extract<ProviderEvent, { type: "message-end" }> | null = null;
  #broken: { error: unknown } | null = null;
  #streamDone = false;
  /** The usage the response reported at its start: all a broken response reports. */
  #startUsage: Usage | null = null;
  #sideEffects = false;
  /** The pipeline, once the first call needed it (see `#handle`). */
  #pipeline: ToolPipeline | null = null;
  /** Why the pipeline could not be built: every call of the turn ends with it, none runs. */
  #toolsFailed: string | null = null;

  constructor(request: ModelRequest, options: TurnOptions) {
    this.#request = request;
    this.#options = options;
    // Calls reach the scheduler only after `#handle` has loaded the pipeline.
    const loaded = () => {
      if (this.#pipeline === null) throw new TypeError("A call was scheduled before the tools were loaded");
      return this.#pipeline;
    };
    const runner = {
      prepare: (call: ToolCall) => loaded().prepare(call),
      runPrepared: (...args: Parameters<ToolPipeline["runPrepared"]>) => loaded().runPrepared(...args),
    };
    this.#scheduler = new ToolScheduler(runner, {
      signal: options.signal,
      mode: options.execution,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      onStart: (call, startedAt) => this.#queue.push({ kind: "tool-start", call, startedAt }),
      onEnd: (ended) => this.#queue.push({ kind: "tool-end", ended }),
      onFault: (_call, error) => this.#queue.push({ kind: "fault", error }),
    });
  }

  async *run(): AsyncGenerator<AgentEvent, TurnResult> {
    const { signal } = this.#options;
    const onAbort = () => this.#streamController.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const pump = this.#pumpStream();
    try {
      while (!(this.#streamDone && this.#scheduler.idle && this.#queue.size === 0)) {
        yield* this.#handle(await this.#queue.next());
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#streamController.abort();
      this.#scheduler.cancel("the turn ended");
      await pump;
      await this.#scheduler.settled().catch(() => undefined);
    }
    if (this.#broken !== null || this.#end === null) {
      const partial = [...this.#texts.entries()].sort(([a], [b]) => a - b).map(([, text]) => text).join("");
      return {
        kind: "broken",
        content: partial === "" ? [] : [{ type: "text", text: partial }],
        error: this.#broken?.error,
        sideEffects: this.#sideEffects,
      };
    }
    return {
      kind: "complete",
      stopReason: this.#end.stopReason,
      content: this.#end.content,
      usage: this.#end.usage,
      calls: this.#calls,
      invalid: this.#invalid,
    };
  }

  async #pumpStream(): Promise<void> {
    try {
      for await (
        const event of this.#options.provider.stream(this.#request, {
          signal: this.#streamController.signal,
          // The tools load while the model works on its first token, not once it has.
          onResponse: () => this.#options.pipeline.expect(),
        })
      ) {
        this.#queue.push({ kind: "event", event });
      }
      this.#queue.push({ kind: "stream-end" });
    } catch (error) {
      this.#queue.push({ kind: "stream-error", error });
    }
  }

  async *#handle(item: Item): AsyncGenerator<AgentEvent> {
    switch (item.kind) {
      case "event":
        if (
          item.event.type === "tool-call" && item.event.name !== this.#options.answer?.name &&
          this.#pipeline === null && this.#toolsFailed === null
        ) {
          try {
            this.#pipeline = await this.#options.pipeline.load();
          } catch (error) {
            this.#toolsFailed = describeError(error);
          }
        }
        yield* this.#onProviderEvent(item.event);
        return;
      case "stream-end":
        yield* this.#onStreamEnd();
        return;
      case "stream-error":
        yield* this.#onStreamError(item.error);
        return;
      case "tool-start":
        yield this.#toolStart(item.call, item.startedAt);
        return;
      case "tool-end":
        yield* this.#onToolEnd(item.ended);
        return;
      case "fault":
        throw item.error;
      default:
        assertNever(item);
    }
  }

  *#onProviderEvent(event: ProviderEvent): Generator<AgentEvent> {
    const { turn } = this.#options;
    switch (event.type) {
      case "message-start":
        this.#startUsage = event.usage;
        this.#options.pipeline.expect();
        return;
      case "text-delta":
        this.#texts.set(event.index, (this.#texts.get(event.index) ?? "") + event.text);
        yield { type: "text-delta", turn, text: event.text };
        return;
      case "thinking-delta":
        yield { type: "thinking-delta", turn, thinking: event.thinking };
        return;
      case "tool-call-begin":
        this.#options.pipeline.expect(event.name);
        return;
      case "tool-call":
        this.#onToolCall({ id: event.id, name: event.name, input: event.input });
        return;
      case "tool-call-invalid":
        this.#options.repeat.reset();
        this.#invalid.set(event.id, event.error);
        return;
      case "retry":
        yield { type: "retry", turn, attempt: event.attempt, delayMs: event.delayMs, reason: event.reason };
        return;
      case "warning":
        yield { type: "warning", message: event.message };
        return;
      case "message-end":
        this.#end = event;
        return;
      default:
        assertNever(event);
    }
  }

  /**
   * Hands a call to the scheduler. A call to a tool that is not read-only (a writer, Bash) means the
   * response must not be sent again if it breaks off: from here on the scheduler owns the call, and what
   * it does cannot be undone. (Today the scheduler holds such calls until the stream ends, but a
   * concurrency-safe writer would start at once; the retry rule does not depend on that detail.) A call to
   * an unknown tool never runs.
   */
  #onToolCall(call: ToolCall): void {
    const { answer } = this.#options;
    if (answer !== undefined && call.name === answer.name) {
      this.#scheduler.add(call, { ended: answer.accept(call) });
      return;
    }
    const tool = this.#options.pipeline.registry.get(call.name);
    if (tool !== undefined && !tool.isReadOnly()) this.#sideEffects = true;
    if (this.#toolsFailed !== null) {
      const message = `Cannot run ${call.name}: mewcode's tools could not start (${this.#toolsFailed}); ` +
        "no tool can run in this session: answer without tools, and say so";
      this.#scheduler.add(call, { ended: ended("failed", "execute", message) });
      return;
    }
    const refused = this.#options.repeat.check(call.name, call.input);
    this.#scheduler.add(call, refused === null ? {} : { ended: refused });
  }

  /** The response is complete: its usage and message are reported now, before any call that waited for it. */
  *#onStreamEnd(): Generator<AgentEvent> {
    this.#streamDone = true;
    const end = this.#end;
    if (end === null) {
      this.#broken = {
        error: new StreamProtocolError("The model's response ended before its end was received"),
      };
      this.#scheduler.cancel("the model's response broke off before it was complete");
      yield* this.#startUsageReport();
      return;
    }
    const { turn } = this.#options;
    yield { type: "usage", turn, usage: end.usage, totals: this.#options.addUsage(end.usage) };
    yield { type: "request-end", turn, stopReason: end.stopReason, content: end.content, partial: false };
    if (CONTINUING_STOP_REASONS.includes(end.stopReason ?? "")) this.#scheduler.close();
    else this.#scheduler.cancel(`the model ended its turn (stop reason "${end.stopReason}")`);
  }

  *#onStreamError(error: unknown): Generator<AgentEvent> {
    this.#streamDone = true;
    this.#broken = { error };
    this.#scheduler.cancel(
      this.#options.signal.aborted
        ? cancelReason(this.#options.signal.reason) ?? "the run was interrupted"
        : "the model's response broke off before it was complete",
    );
    yield* this.#startUsageReport();
  }

  /** A broken response's usage: what it reported at its start (the input side), when it got that far. */
  *#startUsageReport(): Generator<AgentEvent> {
    const usage = this.#startUsage;
    if (usage === null) return;
    yield { type: "usage", turn: this.#options.turn, usage, totals: this.#options.addUsage(usage) };
  }

  async *#onToolEnd(ended: ScheduledOutcome): AsyncGenerator<AgentEvent> {
    const { call, timing, outcome } = ended;
    const { resultLimit } = this.#options;
    const result = await limitResultSize(ended.result, {
      toolName: call.name,
      callId: call.id,
      maxChars: resultLimit.maxChars,
      exempt: resultLimit.exempt,
      dir: resultLimit.dir,
    });
    this.#calls.set(call.id, { result, outcome });
    yield this.#toolEnd(call, result, outcome, timing.startedAt, timing.endedAt);
    // What the sandbox undid after the call (a planted git file, a limit reached) is the user's news too.
    for (const note of sandboxNotesOf(result)) yield { type: "warning", message: `${call.name}: ${note}` };
  }

  #toolStart(call: ToolCall, startedAt: number): AgentEvent {
    const { id, name, input } = call;
    return { type: "tool-call-start", turn: this.#options.turn, id, name, input, startedAt };
  }

  #toolEnd(
    call: ToolCall,
    result: ToolResult,
    outcome: CallOutcome,
    startedAt: number,
    endedAt: number,
  ): AgentEvent {
    return {
      type: "tool-call-end",
      turn: this.#options.turn,
      id: call.id,
      name: call.name,
      input: call.input,
      result,
      outcome,
      startedAt,
      endedAt,
      durationMs: endedAt - startedAt,
    };
  }
}

function sandboxNotesOf(result: ToolResult): string[] {
  const notes = result.metadata.sandboxNotes;
  return Array.isArray(notes) ? notes.filter((note): note is string => typeof note === "string") : [];
}
