/**
 * A walk of the workspace ahead of its first Glob or Grep call, in the read-only tool worker, while the model
 * thinks: it fills the worker's memory of walks (`_walk_memory.ts`), so the first search of the session lists
 * nothing that has not changed since and costs what a repeated one does.
 *
 * Why: a session's first search walks the tree from scratch, and on a 20,000-file tree the listings and their
 * checks cost ~150 ms, more than ripgrep's whole search. A session's first request takes the model a second
 * or more to answer, time in which the worker has nothing else to do.
 *
 * How: the session's runtime sends the worker its workspace once the first request is on its way
 * (`ToolRuntime.prewarm`). The walk lists the workspace root as Glob and Grep would (the same ignore files,
 * exclusions and symlink rules, no deny rules: those apply to each call's files), stamping each directory as it
 * lists it, and runs a few milliseconds at a time between messages. A call that comes meanwhile stops it at
 * once (`pause`): what it listed so far is kept, usable at once, and the call lists the rest itself. Once the
 * worker is idle again the walk goes on (`resume`) from what is kept. It lists at most `PREWALK_MAX_FILES`
 * files: a larger tree keeps a partial walk, which later walks of the root still use directory by directory.
 *
 * A walk that went through the whole tree in one go is also kept as the report a Grep call of the whole
 * workspace asks its worker for (the files in path order and what was skipped, `GrepWalkReport`): such a call
 * without a glob or deny rules takes it (`takeReadyWalk`) instead of walking on past its search budget, once
 * its stamps show the tree unchanged, so ripgrep searches alone.
 *
 * @module
 */
import { type GrepWalkReport, WalkRecorder } from "./_grep_prepass.ts";
import { Walker } from "./_walk.ts";
import { MEMORY_STAMP_MARGIN_MS, recentWalks, type WalkMemory } from "./_walk_memory.ts";
import { stampsUsable, walkIsCurrent } from "./_walk_stamps.ts";

/** What the runtime sends a worker to walk: the workspace as each call's context names it. */
export interface PrewalkRequest {
  /** Real path of the workspace root: the walk starts there. */
  root: string;
  /** Real paths of the folders added to the workspace. */
  additionalRoots: readonly string[];
  /** Real paths the tools treat as outside the workspace. */
  excludedPaths: readonly string[];
}

/** Files a walk ahead lists at most (about a second of walking); a larger tree is walked in part. */
export const PREWALK_MAX_FILES = 100_000;
/** How long the walk runs before it lets a message in. */
const SLICE_MS = 6;

/** The report of the last walk ahead that went through its whole tree, under its walk's memory key. */
let readyWalk: { key: string; report: GrepWalkReport } | null = null;

/**
 * The report of a walk ahead of `key` (`Walker.memoryKey`) when its stamps show the tree as it was then; it
 * is given once (the runtime keeps it from then on).
 */
export function takeReadyWalk(key: string): GrepWalkReport | null {
  const ready = readyWalk;
  if (ready === null || ready.key !== key) return null;
  readyWalk = null;
  const stamps = ready.report.stamps;
  // Stamps whose times lie close to the walk's start cannot show a change made since (`stampsUsable`).
  return stamps !== null && stampsUsable(stamps, MEMORY_STAMP_MARGIN_MS) && walkIsCurrent(stamps)
    ? ready.report
    : null;
}

/** How many files the report of a walk ahead of `key` lists, or null when there is none. */
export function readyWalkFiles(key: string): number | null {
  return readyWalk?.key === key ? readyWalk.report.files.length : null;
}

/** The walk ahead of one worker's calls (at most one at a time). */
export class Prewalk {
  readonly #memory: WalkMemory;
  readonly #maxFiles: number;
  #request: PrewalkRequest | null = null;
  /** The walk under way; null when none runs (not begun, paused, finished). */
  #files: Generator<unknown, void, undefined> | null = null;
  #listed = 0;
  #finished = false;
  #running: Promise<void> | null = null;

  constructor(options: { memory?: WalkMemory; maxFiles?: number } = {}) {
    this.#memory = options.memory ?? recentWalks;
    this.#maxFiles = options.maxFiles ?? PREWALK_MAX_FILES;
  }

  /** Begins walking `request.root` (once per worker: a second request is ignored) unless `busy`. */
  start(request: PrewalkRequest, busy: () => boolean): void {
    if (this.#request !== null) return;
    this.#request = request;
    this.resume(busy);
  }

  /** Goes on with a walk that a call paused, unless it ended or a call runs. */
  resume(busy: () => boolean): void {
    if (this.#request === null || this.#finished || this.#files !== null || busy()) return;
    const request = this.#request;
    const walker = new Walker(request.root, {
      root: request.root,
      additionalRoots: request.additionalRoots,
      excludedPaths: request.excludedPaths,
      memory: this.#memory,
      ahead: true,
      stamp: true,
    });
    const files = this.#reporting(walker, request);
    this.#files = files;
    const running = this.#run(files, busy).finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
  }

  /**
   * Stops the walk at once, keeping what it listed (a call is about to run: its walk takes those listings,
   * and the two never list at the same time).
   */
  pause(): void {
    const files = this.#files;
    this.#files = null;
    try {
      // Closing the walk offers its listings to the memory (`Walker.files` ends its recording then).
      files?.return();
    } catch {
      // What it listed is lost; the call lists it itself.
    }
  }

  /** Resolves when no part of the walk runs (finished, paused or failed). */
  async settled(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /** Whether the walk went through the whole tree, or as far as it may. */
  get finished(): boolean {
    return this.#finished;
  }

  // The walk's files, recorded as a Grep call's walk is; once it ends, its report is kept for such a call.
  *#reporting(walker: Walker, request: PrewalkRequest): Generator<unknown, void, undefined> {
    const recorder = new WalkRecorder({ budgetMs: 0, prefilter: null, walk: true }, performance.now());
    for (const file of walker.files()) {
      if (file === null) continue;
      recorder.record(file.relativePath, walker);
      yield file;
    }
    const roots = [request.root, ...request.additionalRoots];
    const places = { start: request.root, base: request.root, roots, excluded: request.excludedPaths };
    const report = recorder.walkReport(walker, places);
    readyWalk = report.stamps === null ? null : { key: walker.memoryKey, report };
  }

  // Lets the messages that came in run (a call's request first of all). A timer would do, but each costs a
  // millisecond of idling (timers wait at least that long): a fifth of a walk's time in slices of 6 ms.
  #yield(): Promise<void> {
    const { port1, port2 } = new MessageChannel();
    const { promise, resolve } = Promise.withResolvers<void>();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
    port2.close();
    return promise;
  }

  async #run(files: Generator<unknown, void, undefined>, busy: () => boolean): Promise<void> {
    try {
      while (this.#files === files) {
        const until = performance.now() + SLICE_MS;
        for (let step = 1; this.#files === files; step++) {
          if (files.next().done === true) {
            this.#files = null;
            this.#finished = true;
            return;
          }
          if (++this.#listed >= this.#maxFiles) {
            this.#finished = true;
            this.pause();
            return;
          }
          if (step % 64 === 0 && performance.now() >= until) break;
        }
        await this.#yield();
        if (busy() && this.#files === files) this.pause();
      }
    } catch {
      // A walk ahead is only a head start: whatever stopped it, each call walks as it always does.
      this.#finished = true;
      if (this.#files === files) this.pause();
    }
  }
}
