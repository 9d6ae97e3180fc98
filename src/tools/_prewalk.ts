/**
 * A walk of the workspace ahead of its first Glob or Grep call, in the read-only tool worker, while the model
 * writes: the session's first search of the whole workspace then walks nothing.
 *
 * Why: a session's first search walks the tree from scratch, and on a 20,000-file tree the listings and their
 * checks cost ~200 ms, more than ripgrep's whole search. While the model answers the session's request, the
 * worker has nothing else to do.
 *
 * How: the session's runtime asks the worker once it starts it for the session (`ToolRuntime.walkAhead`). The
 * worker walks the workspace root as Glob and Grep walk it (the same ignore files, exclusions and symlink
 * rules; no deny rules, which each call applies to its own files), a few milliseconds at a time between
 * messages. It keeps what a Grep call of the whole workspace asks its worker for (`GrepWalkReport`: the files
 * in path order, what was skipped, the stamps of every directory listed and ignore file read), and the paths of
 * the files ignore files left out. A call that comes meanwhile suspends it (`pause`) and it goes on once the
 * worker is idle (`resume`), unless the call would walk the same tree from its start: that call walks it on
 * to its end and takes it (`finishWalkAhead`). A walk past `PREWALK_MAX_FILES` files or `PREWALK_MAX_MS` of
 * walking gives up, and none starts in a workspace with another file system mounted inside it
 * (`ToolRuntime.walkAhead`: a network share's listing can stall, and would hold the worker the first call
 * needs).
 *
 * Such a walk is used while its stamps show the tree as it was (`readyWalk`: an lstat of each stamped path, a
 * few milliseconds), and only when their times lie well before the walk began (`stampsUsable`), so that any
 * change during or after it shows, even one made while it was suspended:
 * - Grep of the whole workspace without a glob or deny rules, helped by ripgrep, takes the report past its
 *   search budget instead of walking on (`_grep_run.ts`), so ripgrep searches alone;
 * - Glob of a pattern from the workspace root without deny rules takes the files matching it (`_glob_run.ts`):
 *   a walk with a filter finds exactly the files the walk without it finds that pass the filter, and counts
 *   as ignored the ignored ones that pass it.
 * A tree with a symlink gives no report: stamps cannot show where a link leads later.
 *
 * @module
 */
import { type GrepWalkReport, WalkRecorder } from "./_grep_prepass.ts";
import type { TimeSlicer } from "./_time_slicer.ts";
import { type WalkedFile, Walker, walkMemoryKey } from "./_walk.ts";
import { MEMORY_STAMP_MARGIN_MS } from "./_walk_memory.ts";
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

/** A finished walk ahead of the calls. */
export interface ReadyWalk {
  /** What Grep's worker reports of a walk of the whole workspace. */
  report: GrepWalkReport;
  /** The paths (relative to the root) of the files that ignore files left out, in walk order. */
  ignored: readonly string[];
}

/** Files a walk ahead lists at most (about a second of walking): a larger tree is left to the calls. */
export const PREWALK_MAX_FILES = 100_000;
/**
 * Milliseconds a walk ahead spends walking at most: a slow file system (a network share, a FUSE mount) is
 * left to the calls, whose walks have their own time limits.
 */
export const PREWALK_MAX_MS = 3_000;
/**
 * Characters of paths (files and ignored files) a walk ahead keeps at most, some 32 MB: 100,000 files of 160
 * characters. The report is kept for the whole session, and a hostile repository's paths can be 4,000
 * characters long: 100,000 such files would hold 400 MB of the worker, unasked.
 */
export const PREWALK_MAX_PATH_CHARS = 16_000_000;
/** How long the walk runs before it lets a message in. */
const SLICE_MS = 6;

/** The last walk ahead that finished, under its walk's memory key (`Walker.memoryKey`). */
let finished: { key: string; walk: ReadyWalk } | null = null;
/** The walk ahead under way in this worker (begun, not ended), under its walk's memory key. */
let underway: { key: string; walk: Prewalk } | null = null;

/**
 * Finishes the walk ahead of `key` (`Walker.memoryKey`) that is under way in this worker, suspended by the
 * call that asks: a call that would walk the same tree from its start (Grep's walk for ripgrep, Glob from the
 * workspace root) walks only the rest of it, then takes its report (`readyWalk`). Measured on a 20,000-file
 * tree, a turn's Greps that came while the walk ahead had listed 17,000 files walked all 20,000 again, ~300 ms,
 * and the walk ahead went on after them for nothing. Resolves to false when the call must stop (`slicer`:
 * cancelled or past its deadline), true otherwise, whether or not such a walk was under way.
 */
export function finishWalkAhead(key: string, slicer: Pick<TimeSlicer, "pause">): Promise<boolean> {
  if (underway === null || underway.key !== key) return Promise.resolve(true);
  return underway.walk.finish(slicer);
}

/**
 * The walk ahead of `key` (`Walker.memoryKey`) when its stamps show the tree as it was then, or null. One that
 * no longer holds is dropped: a tree that changed never turns back into the one stamped.
 */
export function readyWalk(key: string): ReadyWalk | null {
  if (finished === null || finished.key !== key) return null;
  const stamps = finished.walk.report.stamps;
  // Stamps whose times lie close to the walk's start cannot show a change made since (`stampsUsable`).
  if (stamps !== null && stampsUsable(stamps, MEMORY_STAMP_MARGIN_MS) && walkIsCurrent(stamps)) {
    return finished.walk;
  }
  finished = null;
  return null;
}

/**
 * The files (relative to the workspace root, in path order) of the last walk ahead that finished, or null; its
 * stamps not checked: for work that only warms the worker up, never for a call's answer.
 */
export function walkedAheadFiles(): readonly string[] | null {
  return finished?.walk.report.files ?? null;
}

/**
 * The report of the last walk ahead that finished, or null; its stamps not checked: for the main process,
 * which uses it as a recent walk of a Grep call (see `RipgrepGrep.walkedAhead` for why that is safe).
 */
export function walkedAheadReport(): GrepWalkReport | null {
  return finished?.walk.report ?? null;
}

/** How many files the walk ahead of `key` found, if it finished (its stamps not checked). */
export function readyWalkFiles(key: string): number | null {
  return finished?.key === key ? finished.walk.report.files.length : null;
}

/** The walk ahead of one worker's calls (at most one per worker). */
export class Prewalk {
  readonly #maxFiles: number;
  readonly #maxMs: number;
  readonly #maxChars: number;
  /** Milliseconds spent walking so far. */
  #walkedMs = 0;
  #request: PrewalkRequest | null = null;
  /** The walk; null before it begins and once it ended. */
  #files: Generator<WalkedFile | null, void, undefined> | null = null;
  /** When the current slice of walking ends (a `performance.now()` time). */
  #sliceEnd = 0;
  #listed = 0;
  /** The run of slices under way; null while the walk is suspended by a call or has ended. */
  #running: Promise<void> | null = null;
  #suspended = false;
  #ended = Promise.withResolvers<void>();

  constructor(options: { maxFiles?: number; maxMs?: number; maxChars?: number } = {}) {
    this.#maxFiles = options.maxFiles ?? PREWALK_MAX_FILES;
    this.#maxMs = options.maxMs ?? PREWALK_MAX_MS;
    this.#maxChars = options.maxChars ?? PREWALK_MAX_PATH_CHARS;
  }

  /** Begins walking `request.root` (once per worker: a second request is ignored). */
  start(request: PrewalkRequest, busy: () => boolean): void {
    if (this.#request !== null) return;
    this.#request = request;
    underway = {
      key: walkMemoryKey(request.root, [request.root, ...request.additionalRoots], request.excludedPaths),
      walk: this,
    };
    // The walk pauses between any two entries once its slice is used up, not only at a file: a tree of
    // empty or ignored folders, or of ignored files, yields no file for as long as it takes to list.
    this.#files = reporting(request, () => performance.now() >= this.#sliceEnd, {
      maxFiles: this.#maxFiles,
      maxChars: this.#maxChars,
    });
    this.resume(busy);
  }

  /** Goes on with a walk a call suspended, unless it ended or a call runs. */
  resume(busy: () => boolean): void {
    if (this.#files === null || busy()) return;
    this.#suspended = false;
    // A run that a call suspended may not have seen it yet: it goes on.
    if (this.#running !== null) return;
    const running = this.#run(this.#files, busy).finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
  }

  /** Suspends the walk at once (a call is about to run); `resume` goes on from there. */
  pause(): void {
    this.#suspended = true;
  }

  /**
   * Walks on to the end for the call that suspended the walk (`finishWalkAhead`), slice after slice, letting
   * the call's messages in (`slicer`); without the time limit, as the call would walk anyway. Resolves to
   * false when `slicer` says to stop.
   */
  async finish(slicer: Pick<TimeSlicer, "pause">): Promise<boolean> {
    // A run of slices under way stops at its next check (the call suspended the walk).
    await this.settled();
    while (this.#files !== null) {
      this.#slice(this.#files, true);
      if (this.#files !== null && await slicer.pause()) return false;
    }
    return true;
  }

  /** Resolves when no part of the walk runs (ended, or suspended). */
  async settled(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /** Resolves once the walk has ended: finished, or given up. */
  whenEnded(): Promise<void> {
    return this.#ended.promise;
  }

  /** Whether the walk has ended: finished, or given up. */
  get ended(): boolean {
    return this.#request !== null && this.#files === null;
  }

  async #run(files: Generator<WalkedFile | null, void, undefined>, busy: () => boolean): Promise<void> {
    while (!this.#suspended) {
      this.#slice(files, false);
      if (this.#files === null) return;
      await nextMessage();
      if (busy()) this.#suspended = true;
    }
  }

  /**
   * Walks for one slice of `SLICE_MS`, or to the walk's next pause point; ends the walk once it is done or past
   * its limits. It stops early when suspended, unless `driven` (by the call that suspended it, `finish`).
   */
  #slice(files: Generator<WalkedFile | null, void, undefined>, driven: boolean): void {
    try {
      const began = performance.now();
      this.#sliceEnd = began + SLICE_MS;
      for (let step = 1; driven || !this.#suspended; step++) {
        const next = files.next();
        if (next.done === true || (next.value !== null && ++this.#listed >= this.#maxFiles)) {
          this.#end();
          return;
        }
        // The walk's pause point (`Walker.files`): its slice is used up, however few files it found.
        if (next.value === null || (step % 64 === 0 && performance.now() >= this.#sliceEnd)) break;
      }
      this.#walkedMs += performance.now() - began;
      if (!driven && this.#walkedMs > this.#maxMs) this.#end();
    } catch {
      // A walk ahead is only a head start: whatever stopped it, each call walks as it always does.
      this.#end();
    }
  }

  #end(): void {
    const files = this.#files;
    this.#files = null;
    if (underway?.walk === this) underway = null;
    this.#suspended = true;
    try {
      files?.return();
    } catch {
      // Nothing is kept.
    }
    this.#ended.resolve();
  }
}

/**
 * The files of a walk of the workspace, recorded as Grep's walk is, and `null` where the walk pauses (`due`);
 * once it ends, it is kept for the calls. It ends early, keeping nothing, once it saw what its stamps cannot
 * vouch for (a symlink, an unreadable folder: no report would be kept), past `limits.maxFiles` files ignore
 * files left out, or past `limits.maxChars` characters of the paths it keeps.
 */
function* reporting(
  request: PrewalkRequest,
  due: () => boolean,
  limits: { maxFiles: number; maxChars: number },
): Generator<WalkedFile | null, void, undefined> {
  const ignored: string[] = [];
  const recorder = new WalkRecorder({ budgetMs: 0, prefilter: null, walk: true }, performance.now());
  const walker = new Walker(request.root, {
    root: request.root,
    additionalRoots: request.additionalRoots,
    excludedPaths: request.excludedPaths,
    stamp: true,
    ignoredPaths: ignored,
    slicer: { due },
  });
  let chars = 0;
  let ignoredCounted = 0;
  for (const file of walker.files()) {
    if (!walker.stamping || ignored.length > limits.maxFiles) return;
    while (ignoredCounted < ignored.length) chars += ignored[ignoredCounted++]!.length;
    if (file !== null) {
      chars += file.relativePath.length;
      recorder.record(file.relativePath, walker);
    }
    if (chars > limits.maxChars) return;
    yield file;
  }
  const roots = [request.root, ...request.additionalRoots];
  const places = { start: request.root, base: request.root, roots, excluded: request.excludedPaths };
  const report = recorder.walkReport(walker, places);
  finished = report.stamps === null ? null : { key: walker.memoryKey, walk: { report, ignored } };
}

/**
 * Resolves once the messages that came in have run (a call's request first of all). A timer would do, but
 * each costs a millisecond of idling (timers wait at least that long): a fifth of a walk in slices of 6 ms.
 */
export function nextMessage(): Promise<void> {
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
