/**
 * The scheduler: runs a model turn's tool calls in batches while keeping the model's order.
 *
 * - Consecutive calls whose `isConcurrencySafe(input)` is true form one batch and run in parallel
 *   (at most `concurrency` at once); any other call runs alone; batches run in order.
 * - Streaming execution: calls are added as the model's stream delivers them. A safe call starts at
 *   once when every call before it is safe too; an unsafe call (and anything after it) waits until the
 *   stream has ended (`close()`) and everything before it has finished.
 * - Calls that fail `prepare()` (unknown tool, schema, validation) get their error result without running.
 *
 * @module
 */
import type { ToolResult } from "../tools/tool.ts";
import type { CallOutcome, CallResult } from "./call_outcome.ts";
import { ended } from "./call_outcome.ts";
import type { PreparedCall, ToolCall, ToolPipeline } from "./pipeline.ts";

/** What the scheduler uses of a pipeline. */
export type CallRunner = Pick<ToolPipeline, "prepare" | "runPrepared">;

/**
 * How calls are started: `streaming` starts safe calls while the model still streams; `batched` waits
 * for the end of the stream, then runs the batches; `sequential` runs one call at a time after the stream.
 */
export type ExecutionMode = "streaming" | "batched" | "sequential";

/** When a call ran, in ms since the epoch. */
export interface CallTiming {
  startedAt: number;
  endedAt: number;
  durationMs: number;
}

/** A finished call: what the model receives, how it ended, and when it ran. */
export interface ScheduledOutcome {
  call: ToolCall;
  result: ToolResult;
  outcome: CallOutcome;
  timing: CallTiming;
}

/** Options of a scheduler (one per model turn). */
export interface SchedulerOptions {
  signal: AbortSignal;
  /** Default "streaming". */
  mode?: ExecutionMode;
  /** The most calls running at once within a batch; default 8. */
  concurrency?: number;
  /** Milliseconds since the epoch; default `performance.timeOrigin + performance.now()`. */
  clock?: () => number;
  onStart?: (call: ToolCall, startedAt: number) => void;
  onEnd?: (outcome: ScheduledOutcome) => void;
  /** A system fault (the pipeline threw); the call has no result. */
  onFault?: (call: ToolCall, error: unknown) => void;
}

/** The default bound on parallel calls within a batch. */
export const DEFAULT_CONCURRENCY = 8;

type Entry = {
  call: ToolCall;
  safe: boolean;
  prepared: PreparedCall;
  state: "pending" | "running" | "done";
};

/** Schedules one turn's calls: `add` them in the model's order, `close` when the stream ends, await `settled`. */
export class ToolScheduler {
  #pipeline: CallRunner;
  #mode: ExecutionMode;
  #concurrency: number;
  #clock: () => number;
  #options: SchedulerOptions;
  #controller = new AbortController();
  #entries: Entry[] = [];
  #outcomes = new Map<string, ScheduledOutcome>();
  #closed = false;
  #cancelled: string | null = null;
  #faults: unknown[] = [];
  #waiters: (() => void)[] = [];
  #onOuterAbort = () => this.#controller.abort(this.#options.signal.reason);

  constructor(pipeline: CallRunner, options: SchedulerOptions) {
    this.#pipeline = pipeline;
    this.#options = options;
    this.#mode = options.mode ?? "streaming";
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(this.#concurrency) || this.#concurrency < 1) {
      throw new RangeError(`Invalid concurrency ${this.#concurrency}: expected a positive integer`);
    }
    this.#clock = options.clock ?? (() => performance.timeOrigin + performance.now());
    if (options.signal.aborted) this.#controller.abort(options.signal.reason);
    else options.signal.addEventListener("abort", this.#onOuterAbort, { once: true });
  }

  /**
   * Adds the next call in the model's order. With `ended`, the call is answered without running
   * (for example by a guard); otherwise it is prepared and scheduled.
   */
  add(call: ToolCall, options: { ended?: CallResult } = {}): void {
    if (this.#closed && this.#cancelled === null) {
      throw new TypeError(`Cannot add call ${call.id}: the scheduler is closed`);
    }
    if (this.#entries.some((entry) => entry.call.id === call.id)) {
      throw new TypeError(`Cannot add call ${call.id}: a call with that id was already added`);
    }
    const prepared: PreparedCall = options.ended
      ? { ok: false, ended: options.ended }
      : this.#cancelled !== null
      ? { ok: false, ended: cancelledResult(call.name, this.#cancelled) }
      : this.#pipeline.prepare(call);
    const safe = prepared.ok ? isSafe(prepared) : true;
    const entry: Entry = { call, safe, prepared, state: "pending" };
    this.#entries.push(entry);
    if (!prepared.ok) this.#finishWithoutRunning(entry, prepared.ended);
    this.#pump();
  }

  /** The stream has ended: no more calls; unsafe calls may start. */
  close(): void {
    this.#closed = true;
    this.#pump();
    this.#wake();
  }

  /**
   * Ends the turn early: running calls are aborted (they end with a cancelled result) and calls not
   * started yet get a result saying `reason`, without running, and so do calls added afterwards.
   */
  cancel(reason: string): void {
    this.#cancelled ??= reason;
    for (const entry of this.#entries) {
      if (entry.state === "pending") {
        this.#finishWithoutRunning(entry, cancelledResult(entry.call.name, reason));
      }
    }
    this.#controller.abort(new DOMException(reason, "AbortError"));
    this.close();
  }

  /** True once closed and every call has its result. */
  get idle(): boolean {
    return this.#closed && this.#entries.every((entry) => entry.state === "done");
  }

  /** The outcomes so far, by call id. */
  get outcomes(): ReadonlyMap<string, ScheduledOutcome> {
    return this.#outcomes;
  }

  /** Resolves when closed and every call has finished; rejects with the first system fault. */
  async settled(): Promise<ReadonlyMap<string, ScheduledOutcome>> {
    while (!this.idle) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    this.#options.signal.removeEventListener("abort", this.#onOuterAbort);
    if (this.#faults.length > 0) throw this.#faults[0];
    return this.#outcomes;
  }

  #pump(): void {
    if (this.#cancelled !== null) return;
    if (this.#mode !== "streaming" && !this.#closed) return;
    let running = this.#entries.filter((entry) => entry.state === "running").length;
    let everythingBeforeDone = true;
    for (const entry of this.#entries) {
      if (entry.state === "done") continue;
      if (entry.state === "running") {
        if (!entry.safe || this.#mode === "sequential") return;
        everythingBeforeDone = false;
        continue;
      }
      if (entry.safe && this.#mode !== "sequential") {
        if (running >= this.#concurrency) return;
        this.#start(entry);
        running += 1;
        everythingBeforeDone = false;
        continue;
      }
      if (this.#closed && everythingBeforeDone) this.#start(entry);
      return;
    }
  }

  #start(entry: Entry): void {
    if (!entry.prepared.ok) return;
    const prepared = entry.prepared;
    entry.state = "running";
    const startedAt = this.#clock();
    this.#options.onStart?.(entry.call, startedAt);
    void this.#pipeline.runPrepared(entry.call, prepared, { signal: this.#controller.signal }).then(
      (result) => this.#record(entry, this.#cancelledByTurn(result), startedAt),
      (error: unknown) => {
        entry.state = "done";
        this.#faults.push(error);
        this.#options.onFault?.(entry.call, error);
      },
    ).finally(() => {
      this.#pump();
      this.#wake();
    });
  }

  /** A call stopped because this scheduler cancelled the turn (not the user) was cancelled, not aborted. */
  #cancelledByTurn(result: CallResult): CallResult {
    if (result.outcome.status !== "aborted" || this.#options.signal.aborted || this.#cancelled === null) {
      return result;
    }
    return { ...result, outcome: { ...result.outcome, status: "cancelled" } };
  }

  #finishWithoutRunning(entry: Entry, result: CallResult): void {
    const now = this.#clock();
    this.#options.onStart?.(entry.call, now);
    this.#record(entry, result, now);
  }

  #record(entry: Entry, result: CallResult, startedAt: number): void {
    entry.state = "done";
    const endedAt = Math.max(this.#clock(), startedAt);
    const outcome: ScheduledOutcome = {
      call: entry.call,
      result: result.result,
      outcome: result.outcome,
      timing: { startedAt, endedAt, durationMs: endedAt - startedAt },
    };
    this.#outcomes.set(entry.call.id, outcome);
    this.#options.onEnd?.(outcome);
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

function isSafe(prepared: PreparedCall & { ok: true }): boolean {
  try {
    return prepared.tool.isConcurrencySafe(prepared.input) === true;
  } catch {
    return false;
  }
}

/** The result of a call that never ran because the turn ended first. */
export function cancelledResult(toolName: string, reason: string): CallResult {
  return ended("cancelled", "execute", `${toolName} was not run: ${reason}`);
}
