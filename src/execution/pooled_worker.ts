/**
 * One pooled tool worker: a Deno worker with a profile's permissions, its start-up handshake, and one call at
 * a time with a time limit, an abort signal and a cancel-then-terminate drain. The pool decides when to
 * start, reuse, drain or replace it.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import type { GrepWalkReport } from "../tools/_grep_prepass.ts";
import type { PrewalkRequest } from "../tools/_prewalk.ts";
import type { ToolCallContext, ToolResult } from "../tools/tool.ts";
import { broaderPermissions, type PermissionProfile } from "./profiles.ts";
import { type CallProgress, type FromWorker, isFromWorker, type ToWorker } from "../tools/worker_protocol.ts";

/** One call for a worker. */
export interface WorkerCall {
  callId: string;
  toolName: string;
  input: unknown;
  context: ToolCallContext;
}

/** How a call through the pool ended. Only `result` carries what the tool returned. */
export type RunOutcome =
  | { type: "result"; result: ToolResult; workerId: number }
  /** The worker could not run the call (no such tool in it). */
  | { type: "run-error"; message: string }
  /** The worker died or misbehaved during the call; it was replaced. */
  | { type: "crash"; message: string }
  /** The call passed its time limit; its worker was stopped and replaced. */
  | { type: "timeout" }
  /** The caller's signal aborted the call; its worker was stopped and replaced. */
  | { type: "aborted" }
  /** No worker could be started for the profile. */
  | { type: "start-failed"; message: string }
  /** The pool was closed before the call finished. */
  | { type: "closed" };

/** How a call runs: its signal and time limit, and who hears its news. */
export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  progress?: ((progress: CallProgress) => void) | undefined;
}

/** Whether a worker started: ready, or why not. */
export type StartOutcome = { ok: true } | { ok: false; message: string };

/** Where a pooled worker is in its life. */
export type WorkerState = "starting" | "idle" | "busy" | "closed";

/** One Deno worker with its permissions, at most one call at a time. */
export class PooledWorker {
  readonly id: number;
  readonly profile: PermissionProfile;
  state: WorkerState = "starting";
  /** Set while an acquirer waits for this starting worker. */
  claimed = false;
  /** Resolves once: ready, or why it could not start. */
  readonly ready: Promise<StartOutcome>;

  #worker: Worker | null = null;
  #ready = Promise.withResolvers<StartOutcome>();
  #startTimer: ReturnType<typeof setTimeout> | undefined;
  #call: {
    callId: string;
    resolve(outcome: RunOutcome): void;
    cleanup(): void;
    progress: ((progress: CallProgress) => void) | undefined;
  } | null = null;
  #drain: { callId: string; done(): void } | null = null;
  /** Hears the report of the walk ahead (see `prewalk`). */
  #onWalked: ((report: GrepWalkReport) => void) | null = null;

  #onIdleFailure: (worker: PooledWorker) => void;

  constructor(
    options: {
      id: number;
      profile: PermissionProfile;
      url: URL;
      startTimeoutMs: number;
      onIdleFailure: (worker: PooledWorker) => void;
    },
  ) {
    this.id = options.id;
    this.profile = options.profile;
    this.#onIdleFailure = options.onIdleFailure;
    this.ready = this.#ready.promise;
    try {
      this.#worker = new Worker(options.url, {
        type: "module",
        name: `mewcode-${options.profile.kind}-${options.id}`,
        deno: { permissions: options.profile.permissions },
      });
    } catch (error) {
      this.#failStart(`cannot create a ${options.profile.kind} worker: ${describeError(error)}`);
      return;
    }
    this.#worker.onmessage = (event: MessageEvent<unknown>) => this.#onMessage(event.data);
    this.#worker.onerror = (event: ErrorEvent) => {
      // Handled here: an unhandled worker error would otherwise be rethrown in the main process.
      event.preventDefault();
      this.#onFailure(event.message || "an uncaught error");
    };
    this.#worker.onmessageerror = () => this.#onFailure("it sent a message that cannot be read");
    this.#startTimer = setTimeout(
      () => this.#failStart(`it did not report ready within ${options.startTimeoutMs} ms`),
      options.startTimeoutMs,
    );
  }

  /** The call this worker is running, if any. */
  get callId(): string | null {
    return this.#call?.callId ?? null;
  }

  /**
   * Sends one call and resolves with its outcome: result, crash, timeout or abort. `progress` hears the
   * call's news (see `CallProgress`) until it ends.
   */
  call(call: WorkerCall, options: CallOptions): Promise<RunOutcome> {
    const { promise, resolve } = Promise.withResolvers<RunOutcome>();
    if (this.#worker === null || this.state !== "busy") {
      resolve({ type: "closed" });
      return promise;
    }
    const onAbort = () => this.settle({ type: "aborted" });
    const timer = setTimeout(() => this.settle({ type: "timeout" }), options.timeoutMs);
    options.signal.addEventListener("abort", onAbort, { once: true });
    this.#call = {
      callId: call.callId,
      resolve,
      progress: options.progress,
      cleanup: () => {
        clearTimeout(timer);
        options.signal.removeEventListener("abort", onAbort);
      },
    };
    this.#post({ type: "run-request", ...call });
    return promise;
  }

  /**
   * Asks the worker to walk the workspace between calls (`src/tools/_prewalk.ts`); once per worker. `onWalked`
   * hears the walk's report if the worker sends it (once the walk has ended, while no call runs).
   */
  prewalk(request: PrewalkRequest, onWalked?: (report: GrepWalkReport) => void): void {
    if (this.#worker === null || this.state === "closed") return;
    this.#onWalked = onWalked ?? null;
    this.#post({ type: "prewalk", request });
  }

  /** Ends the current call with this outcome (the first outcome wins). */
  settle(outcome: RunOutcome): void {
    const call = this.#call;
    if (call === null) return;
    this.#call = null;
    call.cleanup();
    call.resolve(outcome);
  }

  /**
   * Asks the worker to cancel a call, then terminates it when the call ends or the grace period passes.
   * Resolves with whether the worker answered (ended the call, or died) before the grace period passed.
   */
  drain(callId: string, graceMs: number): Promise<boolean> {
    this.settle({ type: "aborted" });
    if (this.#worker === null) return Promise.resolve(true);
    const { promise, resolve } = Promise.withResolvers<boolean>();
    let answered = true;
    const timer = setTimeout(() => {
      answered = false;
      this.terminate();
    }, graceMs);
    this.#drain = {
      callId,
      done: () => {
        clearTimeout(timer);
        resolve(answered);
      },
    };
    this.#post({ type: "cancel-request", callId });
    return promise;
  }

  /** Stops the worker now; a call still running ends as `closed`. */
  terminate(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.#startTimer);
    this.#worker?.terminate();
    this.#worker = null;
    this.#ready.resolve({ ok: false, message: "the worker was stopped before it was ready" });
    this.settle({ type: "closed" });
    const drain = this.#drain;
    this.#drain = null;
    drain?.done();
  }

  #post(message: ToWorker): void {
    try {
      this.#worker?.postMessage(message);
    } catch (error) {
      // Only a bug can make a validated input or a plain context uncloneable; report it on the call.
      this.settle({
        type: "crash",
        message: `the call could not be sent to its worker: ${describeError(error)}`,
      });
    }
  }

  #onMessage(data: unknown): void {
    if (!isFromWorker(data)) {
      this.#onFailure(`it sent an unexpected message: ${JSON.stringify(data)?.slice(0, 200)}`);
      return;
    }
    const message: FromWorker = data;
    switch (message.type) {
      case "ready": {
        const broader = broaderPermissions(message.permissions);
        if (broader.length > 0) {
          this.#failStart(
            `it reports permissions broader than its profile (${broader.join(", ")} fully granted): ` +
              "refusing to run tools in it",
          );
          return;
        }
        if (this.state !== "starting") return;
        clearTimeout(this.#startTimer);
        this.state = "idle";
        this.#ready.resolve({ ok: true });
        return;
      }
      case "run-progress": {
        const call = this.#call;
        if (call?.callId !== message.callId || call.progress === undefined) return;
        try {
          call.progress(message.progress);
        } catch {
          // A listener's bug must not stop the call: the news is only news.
        }
        return;
      }
      case "run-result":
      case "run-error": {
        if (this.#drain?.callId === message.callId) {
          this.terminate();
          return;
        }
        if (this.#call?.callId !== message.callId) return;
        this.settle(
          message.type === "run-result"
            ? { type: "result", result: message.result, workerId: this.id }
            : { type: "run-error", message: message.message },
        );
        return;
      }
      case "worker-error":
        this.#onFailure(message.message);
        return;
      case "prewalk-end": {
        const onWalked = this.#onWalked;
        this.#onWalked = null;
        try {
          onWalked?.(message.report);
        } catch {
          // Only a head start: the calls walk as they always do.
        }
        return;
      }
      default:
        assertNeverMessage(message);
    }
  }

  #onFailure(message: string): void {
    if (this.state === "starting") {
      this.#failStart(message);
      return;
    }
    const idle = this.state === "idle";
    this.settle({ type: "crash", message });
    this.terminate();
    if (idle) this.#onIdleFailure(this);
  }

  #failStart(message: string): void {
    this.#ready.resolve({ ok: false, message });
    this.terminate();
  }
}

function assertNeverMessage(value: never): never {
  throw new TypeError(`Unexpected worker message: ${JSON.stringify(value)}`);
}
