/**
 * The warm pool of tool workers, keyed by permission profile.
 *
 * A worker runs one call at a time. `prewarm` starts one worker per profile early (a cold start costs tens
 * of milliseconds, which then overlap the first API request); a parallel batch starts more on demand, up to
 * a bound per profile, and further calls wait for a free worker. A worker whose call timed out, was aborted
 * or crashed is never reused: it gets a cancel request and a short grace period (so a shell can kill its
 * process group), is terminated, and a fresh worker takes its place. `close` stops them all.
 *
 * Each worker is a V8 isolate costing several megabytes, so a burst that started extra workers does not
 * keep them: a worker that stays idle for `idleReleaseMs` while another worker of its profile remains is
 * terminated, down to one per profile.
 *
 * Deno 2.9 cannot stop a worker stuck in a synchronous loop (`terminate()` returns, the thread keeps
 * running: denoland/deno#35657). The call still ends at its time limit and the pool moves on; such a
 * thread is counted in `stats().abandoned` and ends with the process.
 *
 * @module
 */
import { type CallOptions, PooledWorker, type RunOutcome, type WorkerCall } from "./pooled_worker.ts";
import type { PermissionProfile, ProfileKind } from "./profiles.ts";
import type { GrepWalkReport } from "../tools/_grep_prepass.ts";
import type { PrewalkRequest } from "../tools/_prewalk.ts";

export type { RunOutcome, WorkerCall };

/**
 * The worker entry points of the built-in tools, one per permission profile: each loads only its own tools'
 * code (a read-only worker none of the shell's), so a parallel batch of searches holds less and a worker
 * starts sooner.
 */
export const TOOL_WORKER_URLS: Readonly<Record<ProfileKind, URL>> = {
  "read-only": new URL("../../workers/tool_worker.ts", import.meta.url),
  writer: new URL("../../workers/writer_worker.ts", import.meta.url),
  shell: new URL("../../workers/shell_worker.ts", import.meta.url),
};

/** Default bound on the workers of one profile. */
export const DEFAULT_MAX_WORKERS_PER_PROFILE = 8;
/** Default time a cancelled worker gets to finish its call before it is terminated. */
export const DEFAULT_CANCEL_GRACE_MS = 2_000;
/** Default time a new worker gets to load its tools and report ready. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
/** Default time an idle worker beyond the first of its profile is kept before it is terminated. */
export const DEFAULT_IDLE_RELEASE_MS = 30_000;

/** How the pool is set up. */
export interface WorkerPoolOptions {
  /** The worker entry point of every profile; default TOOL_WORKER_URLS. Tests pass one with test-only tools. */
  workerUrl?: URL;
  /** Most workers alive per profile (idle, starting or busy); default 8. */
  maxWorkersPerProfile?: number;
  /** Time a cancelled or timed-out call gets to finish before its worker is terminated; default 2000 ms. */
  cancelGraceMs?: number;
  /** Time a new worker gets to report ready; default 30000 ms. */
  startTimeoutMs?: number;
  /** Time an idle worker beyond one per profile is kept; default DEFAULT_IDLE_RELEASE_MS. */
  idleReleaseMs?: number;
}

/** Counts of one profile's workers, for tests and diagnostics. */
export interface ProfileStats {
  starting: number;
  idle: number;
  busy: number;
  waiting: number;
}

/** The state of the whole pool. */
export interface PoolStats {
  profiles: Record<string, ProfileStats>;
  /** Workers that were cancelled and are being given their grace period before termination. */
  draining: number;
  /**
   * Workers terminated because they did not answer a cancel request within the grace period. Deno 2.9
   * cannot stop a worker stuck in a synchronous loop (denoland/deno#35657): such a thread keeps a CPU core
   * busy until mewcode exits, although the call itself has ended.
   */
  abandoned: number;
  /** Workers started since the pool was created. */
  started: number;
  /** Idle workers terminated because their profile had another one (see `idleReleaseMs`). */
  released: number;
}

interface Waiter {
  resolve(worker: PooledWorker | RunOutcome): void;
}

interface Slot {
  profile: PermissionProfile;
  workers: Set<PooledWorker>;
  waiters: Waiter[];
}

/** Tool workers by permission profile. */
export class WorkerPool {
  #url: URL | null;
  #max: number;
  #graceMs: number;
  #startTimeoutMs: number;
  #idleReleaseMs: number;
  /** Release timers of idle workers, by worker. */
  #idleTimers = new Map<PooledWorker, ReturnType<typeof setTimeout>>();
  #released = 0;
  #slots = new Map<string, Slot>();
  #draining = new Set<Promise<boolean>>();
  #abandoned = 0;
  #nextId = 1;
  #closed = false;

  constructor(options: WorkerPoolOptions = {}) {
    this.#url = options.workerUrl ?? null;
    this.#max = options.maxWorkersPerProfile ?? DEFAULT_MAX_WORKERS_PER_PROFILE;
    if (!Number.isInteger(this.#max) || this.#max < 1) {
      throw new RangeError(
        `Cannot create a worker pool: maxWorkersPerProfile must be at least 1, got ${this.#max}`,
      );
    }
    this.#graceMs = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    this.#startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    this.#idleReleaseMs = options.idleReleaseMs ?? DEFAULT_IDLE_RELEASE_MS;
    if (!(this.#idleReleaseMs >= 0)) {
      throw new RangeError(
        `Cannot create a worker pool: idleReleaseMs must be 0 or more, got ${this.#idleReleaseMs}`,
      );
    }
  }

  /**
   * Starts one worker for each profile that has none, one after the other (the first profile first: on a
   * small machine, parallel starts only slow each other down). Returns at once; the promise resolves when
   * those workers are ready or failed (it never rejects), for callers that want to wait.
   */
  async prewarm(profiles: readonly PermissionProfile[]): Promise<void> {
    for (const profile of profiles) {
      if (this.#closed) return;
      const slot = this.#slot(profile);
      if (slot.workers.size > 0) continue;
      await this.#spawn(slot).ready;
    }
  }

  /**
   * Asks the profile's first worker that runs no call to walk the workspace between calls
   * (`src/tools/_prewalk.ts`): the worker the next call of the profile gets. Nothing when there is none.
   * `onWalked` hears the walk's report if the worker sends it.
   */
  prewalk(
    profile: PermissionProfile,
    request: PrewalkRequest,
    onWalked?: (report: GrepWalkReport) => void,
  ): void {
    for (const worker of this.#slots.get(profile.key)?.workers ?? []) {
      if (worker.state === "idle" || worker.state === "starting") {
        worker.prewalk(request, onWalked);
        return;
      }
    }
  }

  /** Runs one call on a worker of the profile and reports how it ended. Never throws for the call's failures. */
  async run(
    profile: PermissionProfile,
    call: WorkerCall,
    options: CallOptions,
  ): Promise<RunOutcome> {
    if (options.signal.aborted) return { type: "aborted" };
    const acquired = await this.#acquire(this.#slot(profile), options.signal);
    if (!(acquired instanceof PooledWorker)) return acquired;
    const worker = acquired;
    const outcome = await worker.call(call, options);
    switch (outcome.type) {
      case "result":
      case "run-error":
        this.#release(worker);
        break;
      case "timeout":
      case "aborted":
        this.#retire(worker, call.callId);
        break;
      case "crash":
        this.#remove(worker);
        break;
      case "start-failed":
      case "closed":
        break;
      default:
        assertNeverOutcome(outcome);
    }
    return outcome;
  }

  /** The current counts, by profile key. */
  stats(): PoolStats {
    const profiles: Record<string, ProfileStats> = {};
    for (const [key, slot] of this.#slots) {
      const counts = { starting: 0, idle: 0, busy: 0, waiting: slot.waiters.length };
      for (const worker of slot.workers) {
        if (worker.state === "starting") counts.starting += 1;
        else if (worker.state === "idle") counts.idle += 1;
        else if (worker.state === "busy") counts.busy += 1;
      }
      profiles[key] = counts;
    }
    return {
      profiles,
      draining: this.#draining.size,
      abandoned: this.#abandoned,
      started: this.#nextId - 1,
      released: this.#released,
    };
  }

  /**
   * Stops every worker: idle and starting ones at once, busy ones after a cancel request and their grace
   * period. Calls still running end with a `closed` outcome. The pool is unusable afterwards.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const slot of this.#slots.values()) {
      for (const waiter of slot.waiters.splice(0)) waiter.resolve({ type: "closed" });
      for (const worker of [...slot.workers]) {
        if (worker.state === "busy" && worker.callId !== null) {
          const callId = worker.callId;
          worker.settle({ type: "closed" });
          this.#retire(worker, callId);
        } else {
          this.#remove(worker);
        }
      }
    }
    while (this.#draining.size > 0) await Promise.all([...this.#draining]);
    // Let the terminated workers' message ops settle, so nothing is pending when close() returns.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  #slot(profile: PermissionProfile): Slot {
    let slot = this.#slots.get(profile.key);
    if (slot === undefined) {
      slot = { profile, workers: new Set(), waiters: [] };
      this.#slots.set(profile.key, slot);
    }
    return slot;
  }

  async #acquire(slot: Slot, signal: AbortSignal): Promise<PooledWorker | RunOutcome> {
    if (this.#closed) return { type: "closed" };
    for (const worker of slot.workers) {
      if (worker.state === "idle") {
        this.#cancelRelease(worker);
        worker.state = "busy";
        return worker;
      }
    }
    let candidate: PooledWorker | undefined;
    for (const worker of slot.workers) {
      if (worker.state === "starting" && !worker.claimed) candidate = worker;
    }
    if (candidate === undefined && slot.workers.size < this.#max) candidate = this.#spawn(slot);
    if (candidate !== undefined) return await this.#claim(candidate, signal);
    return await this.#wait(slot, signal);
  }

  async #claim(worker: PooledWorker, signal: AbortSignal): Promise<PooledWorker | RunOutcome> {
    worker.claimed = true;
    const aborted = abortPromise(signal);
    const started = await Promise.race([worker.ready, aborted.promise]);
    aborted.dispose();
    worker.claimed = false;
    if (started === "aborted") {
      // The worker keeps starting and joins the pool as a warm one.
      return { type: "aborted" };
    }
    if (this.#closed) return { type: "closed" };
    if (!started.ok) return { type: "start-failed", message: started.message };
    if (worker.state !== "idle") return { type: "closed" };
    worker.state = "busy";
    return worker;
  }

  #wait(slot: Slot, signal: AbortSignal): Promise<PooledWorker | RunOutcome> {
    const { promise, resolve } = Promise.withResolvers<PooledWorker | RunOutcome>();
    const onAbort = () => {
      const index = slot.waiters.indexOf(waiter);
      if (index >= 0) slot.waiters.splice(index, 1);
      resolve({ type: "aborted" });
    };
    const waiter: Waiter = {
      resolve: (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
    };
    signal.addEventListener("abort", onAbort, { once: true });
    slot.waiters.push(waiter);
    return promise;
  }

  #spawn(slot: Slot): PooledWorker {
    const worker = new PooledWorker({
      id: this.#nextId++,
      profile: slot.profile,
      url: this.#url ?? TOOL_WORKER_URLS[slot.profile.kind],
      startTimeoutMs: this.#startTimeoutMs,
      // An idle worker that fails (a timer or promise left behind by an earlier call) is replaced.
      onIdleFailure: (failed) => this.#remove(failed),
    });
    slot.workers.add(worker);
    void worker.ready.then((started) => {
      if (started.ok) {
        if (!worker.claimed) this.#release(worker);
        return;
      }
      this.#remove(worker, { replace: false });
      // Nobody can serve the waiters if no worker of this profile is left.
      if (slot.workers.size === 0) {
        for (const waiter of slot.waiters.splice(0)) {
          waiter.resolve({ type: "start-failed", message: started.message });
        }
      }
    });
    return worker;
  }

  /** Makes a ready worker available: to the first waiter, else idle. */
  #release(worker: PooledWorker): void {
    if (this.#closed) {
      this.#remove(worker);
      return;
    }
    const slot = this.#slots.get(worker.profile.key);
    if (slot === undefined || !slot.workers.has(worker) || worker.state === "closed") return;
    const waiter = slot.waiters.shift();
    worker.state = waiter === undefined ? "idle" : "busy";
    if (waiter === undefined) this.#scheduleRelease(worker, slot);
    waiter?.resolve(worker);
  }

  /** Terminates an idle worker after `idleReleaseMs` if its profile still has another worker then. */
  #scheduleRelease(worker: PooledWorker, slot: Slot): void {
    this.#cancelRelease(worker);
    const timer = setTimeout(() => {
      this.#idleTimers.delete(worker);
      if (worker.state !== "idle" || !slot.workers.has(worker) || slot.workers.size <= 1) return;
      this.#released += 1;
      this.#remove(worker, { replace: false });
    }, this.#idleReleaseMs);
    // An idle worker's timer must not keep the process alive.
    Deno.unrefTimer(timer);
    this.#idleTimers.set(worker, timer);
  }

  #cancelRelease(worker: PooledWorker): void {
    const timer = this.#idleTimers.get(worker);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#idleTimers.delete(worker);
  }

  /** Takes a worker out of service: cancel its call, terminate it after the grace period, start a replacement. */
  #retire(worker: PooledWorker, callId: string): void {
    this.#detach(worker);
    const draining = worker.drain(callId, this.#graceMs);
    this.#draining.add(draining);
    void draining.then((answered) => {
      this.#draining.delete(draining);
      if (!answered) this.#abandoned += 1;
    });
    this.#replenish(worker.profile);
  }

  #remove(worker: PooledWorker, options: { replace: boolean } = { replace: true }): void {
    this.#detach(worker);
    worker.terminate();
    if (options.replace) this.#replenish(worker.profile);
  }

  #detach(worker: PooledWorker): void {
    this.#cancelRelease(worker);
    this.#slots.get(worker.profile.key)?.workers.delete(worker);
  }

  /** Keeps a profile warm after losing a worker, and serves the calls waiting for one. */
  #replenish(profile: PermissionProfile): void {
    if (this.#closed) return;
    const slot = this.#slot(profile);
    const wanted = Math.min(this.#max, Math.max(1, slot.waiters.length));
    const starting = [...slot.workers].filter((worker) => worker.state !== "busy").length;
    for (let count = starting; count < wanted && slot.workers.size < this.#max; count += 1) this.#spawn(slot);
  }
}

function abortPromise(signal: AbortSignal): { promise: Promise<"aborted">; dispose(): void } {
  const { promise, resolve } = Promise.withResolvers<"aborted">();
  const onAbort = () => resolve("aborted");
  if (signal.aborted) resolve("aborted");
  else signal.addEventListener("abort", onAbort, { once: true });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

function assertNeverOutcome(value: never): never {
  throw new TypeError(`Unexpected run outcome: ${JSON.stringify(value)}`);
}
