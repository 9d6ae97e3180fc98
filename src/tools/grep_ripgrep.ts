/**
 * Grep with ripgrep searching the contents: the same results as Grep in its read-only worker (`grep.ts`), in
 * a fraction of the time, or no answer at all (the caller then runs Grep as usual).
 *
 * Why: in the worker, Deno checks every file open against the worker's permissions, which costs more than
 * the search itself; ripgrep runs in the read-only shell sandbox instead (bubblewrap: the workspace
 * read-only, no network, mewcode's state hidden), which is the boundary for it, as for a read-only shell.
 *
 * How one call runs, from the runtime (`run`):
 * 1. The worker runs Grep alone for a short time budget (`_grep_prepass.ts`): a small or dense search ends
 *    within it, and its result is the answer. Told how many files a recent walk of the path found, it gives
 *    up as soon as its pace shows it cannot end within the budget. Without a recent walk of the path, the
 *    same worker call walks on past the budget (without reading files), so the walk starts with the call.
 * 2. Otherwise ripgrep searches in the sandbox (`src/sandbox/ripgrep_command.ts`), started when the worker
 *    says its budget is spent (`CallProgress`; see `RIPGREP_LATE_START_BUDGETS` for a worker that does
 *    not), while it walks; a call costs the longer of the two, not their sum. The walk reports the files
 *    Grep would search, in path order, and what it skipped. The walk stays the authority; ripgrep's
 *    report is accepted only if it searched exactly those files: every file it reports is one of them, none
 *    of them is where ripgrep reads ignore rules differently (a `.rgignore`, rules Grep leaves out,
 *    `.git/info/exclude`), and `--stats` counts as many searched files as the walk has, less those both skip
 *    by extension. A symlink Grep follows, a nested repository whose parent's `.gitignore` rules ripgrep
 *    stops applying, a file larger than 256 MiB (skipped by both, but noted by Grep) all make the counts
 *    differ. ripgrep skips large files itself (`--max-filesize`, a stat of every file) only on a path whose
 *    searched files added up to 256 MiB once: below that, no file can reach the limit. A walk of the same
 *    path and glob from the last 30 s is used again (see `#recentWalk` for why that is safe) when the budgeted
 *    search found a match; without one, a result without matches is likely, which shows the walk's counts:
 *    the worker then checks the walk's stamps (an `lstat` of each directory it listed and each ignore file
 *    it read, `_walk.ts`), and walks again alongside ripgrep only when they no longer hold.
 * 3. ripgrep searches every file as text, once, with a second pattern `\x00`: the first line it prints with a
 *    NUL byte tells binary files apart as Grep does (a NUL byte in the first 8 KiB), so no second pass over
 *    the files is needed to count them (the second pattern makes ripgrep's literal search screen positions
 *    by each literal's first byte: a literal is searched from a rarer character, `searchedTail`; a second
 *    pass would cost as much as the search). The lines ripgrep reports are checked with Grep's own matcher
 *    unless the pattern's translation is exact (`_ripgrep_pattern.ts`) and the line has no NUL byte, and the
 *    result is built file by file in the walk's order by the collector Grep itself uses, with the same
 *    limits, context lines, line shortening, notices and metadata. ripgrep's arguments come from
 *    `_ripgrep_plan.ts`, the result from `_ripgrep_answer.ts`; its report reaches mewcode through a file in
 *    the sandbox (`src/sandbox/ripgrep_command.ts`).
 * Parallel calls (one turn's) share a running walk of the same path and glob, and those that join it skip
 * the budgeted search; the calls' worker parts (budgeted searches, walks, checks of stamps) run one at a time,
 * on one worker.
 * Anything else (ripgrep missing or failing, a symlink Grep follows, a first NUL byte too close to 8 KiB to
 * place, more output than expected) makes the call fall back to Grep as usual; a fallback caused by
 * the tree is remembered for a while, so the next calls do not pay for ripgrep again, as is a tree of fewer
 * than `SMALL_TREE_FILES` files, which the worker searches faster than the sandbox starts.
 *
 * @module
 */
import { MAX_GREP_FILE_BYTES, stopResult } from "./_grep_collector.ts";
import type { GrepPrepass, GrepWalkReport } from "./_grep_prepass.ts";
import { BUDGET_SPENT, EXTENDED_BUDGET_FACTOR, GREP_PREPASS } from "./_shared.ts";
import {
  answerFromRipgrep,
  indexWalk,
  type ReadRipgrepRun,
  UNCERTAIN_BINARY_OFFSET,
} from "./_ripgrep_answer.ts";
import { RipgrepOutputReader } from "./_ripgrep_output.ts";
import { Slots } from "../common/slots.ts";
import { planRipgrep, type RipgrepPlan } from "./_ripgrep_plan.ts";
import { stampsUsable, type WalkStamps } from "./_walk_stamps.ts";
import type { GrepInput } from "./grep.ts";
import type { ToolCallContext, ToolResult } from "./tool.ts";
import type { CallProgress } from "./worker_protocol.ts";

/** Milliseconds the worker searches before it leaves the contents to ripgrep. */
export const PREPASS_BUDGET_MS = 40;
/** Walks kept for later calls (each up to a few MB for a tree of 100,000 files). */
export const MAX_RECENT_WALKS = 8;
/**
 * How many budgets after its budgeted search was sent to the worker ripgrep starts, though the worker has
 * neither answered nor said that its budget is spent. The worker says so the moment it gives up searching; a
 * dense search goes on past its budget, up to `EXTENDED_BUDGET_FACTOR` budgets not counting the checks of
 * files with matches, and ripgrep started meanwhile would only slow it on two cores (measured: a first call's
 * default-limit Grep took 92-104 ms with ripgrep started at the budget, 61-77 ms without). So this is for a
 * worker stuck in one long step (a huge file, a long line).
 */
export const RIPGREP_LATE_START_BUDGETS = EXTENDED_BUDGET_FACTOR + 1;
/** Calls with a larger `head_limit` give the worker no search budget: ripgrep starts at once, the worker walks. */
export const MAX_BUDGETED_LIMIT = 1_000;
/**
 * How long before a walk began the times of what it stamped must lie for the stamps to show later changes
 * (see `stampsUsable`): more than the coarsest file system clock tick (2 s) and Deno's whole seconds.
 */
export const STAMP_MARGIN_MS = 3_000;
/** Characters of ripgrep's output (each stream) read at most; more makes the call fall back. */
export const MAX_RIPGREP_OUTPUT_CHARS = 64 * 1024 * 1024;
/**
 * How many ripgrep searches of a session run at once; more calls wait for one to end. Each search already
 * spreads over every core (ripgrep's default), so more at once add no speed, only memory: each holds its
 * output until its answer is built. Measured with a turn of four parallel Greps over 236 MB on 2 cores (5
 * fresh processes each): all four at once peaked at 126.8 MB (median) in 1468 ms, two at a time at 119.3 MB
 * in 1570 ms, one at a time at 118.7 MB in 1710 ms (the sandbox's start and the output's reading overlap
 * the other search).
 */
export const RIPGREP_SEARCHES_AT_ONCE = 2;
/** How long a fallback caused by the tree keeps later calls on the same path from trying ripgrep. */
export const FALLBACK_MEMORY_MS = 30_000;
/**
 * Below this many files the worker searches faster than the sandbox starts (measured: ~50 µs per file in
 * the worker, tens of milliseconds to start bubblewrap, a shell and ripgrep): later calls on a path whose
 * walk was this small skip ripgrep for `FALLBACK_MEMORY_MS`.
 */
export const SMALL_TREE_FILES = 2_000;

/** The pattern `RipgrepGrep.warmUp` plans a call of. */
const WARM_UP_PATTERN = String.raw`(?:function|class)\s+[A-Z]\w*`;

/** How a call ended: the executor's `Execution`. */
export interface GrepOutcome {
  result: ToolResult;
  status: "completed" | "failed" | "timed-out" | "aborted";
}

/** What the sandbox runs: a directory and ripgrep's arguments (see `src/sandbox/ripgrep_command.ts`). */
export interface RipgrepSearch {
  /** The directory as the model named it (absolute). */
  path: string;
  /** Real paths of the workspace root, then of the added folders. */
  roots: string[];
  /** Real paths the tools treat as outside the workspace. */
  excluded: string[];
  search: string[];
}

/** How a ripgrep script ended. */
export type RipgrepRun =
  | { status: "exited"; code: number; stdout: string; stderr: string }
  | { status: "timed-out" }
  | { status: "failed"; message: string };

/** What `RipgrepGrep` runs on. */
export interface RipgrepGrepOptions {
  /**
   * Runs Grep (with a prepass request in the input, or as usual) in its read-only worker; `progress` hears
   * the worker say that its budget is spent.
   */
  runWorker(
    input: Record<string, unknown>,
    context: ToolCallContext,
    signal: AbortSignal,
    progress?: (progress: CallProgress) => void,
  ): Promise<GrepOutcome>;
  /**
   * Runs the ripgrep script in the read-only sandbox. Standard output goes to `onStdout` as it arrives (the
   * run's `stdout` is then empty), or comes whole in the run: the report is read from both, in that order.
   */
  runRipgrep(
    search: RipgrepSearch,
    options: {
      timeoutMs: number;
      signal: AbortSignal;
      onStdout: (bytes: Uint8Array) => void;
      /** Characters of output (each stream) read at most: `maxOutputChars`. */
      maxOutputChars: number;
    },
  ): Promise<RipgrepRun>;
  /** The clock of the fallback memory; default `performance.now`. */
  now?: () => number;
  /** The worker's search budget; default `PREPASS_BUDGET_MS` (tests pass 0 to always ask ripgrep). */
  prepassBudgetMs?: number;
  /**
   * How long after the budgeted search was sent ripgrep starts if the worker has not said its budget is
   * spent; default `RIPGREP_LATE_START_BUDGETS` budgets.
   */
  lateStartMs?: number;
  /** Bytes searched from which ripgrep runs again with `--max-filesize`; default (and at most) the limit. */
  largeTreeBytes?: number;
  /** Trees with fewer files are left to the worker after one walk; default `SMALL_TREE_FILES`. */
  smallTreeFiles?: number;
  /** See `STAMP_MARGIN_MS` (the default); tests lower it rather than wait. */
  stampMarginMs?: number;
  /** Keeps walks across processes (`src/execution/walk_store.ts`); default none. */
  keeper?: WalkKeeper;
  /** See `RIPGREP_SEARCHES_AT_ONCE` (the default). */
  searchesAtOnce?: number;
  /** See `MAX_RIPGREP_OUTPUT_CHARS` (the default); tests lower it. */
  maxOutputChars?: number;
}

/** What a walk depends on besides the tree. */
export interface WalkKey {
  path: string;
  glob: string | null;
  roots: readonly string[];
  excluded: readonly string[];
  /** The call's deny and ask rules (`ToolCallContext.deniedReads`) as JSON; "" for none. */
  denied: string;
}

/** Where walks outlive a process: they are used only once the worker found their stamps current. */
export interface WalkKeeper {
  load(key: WalkKey): Promise<GrepWalkReport | null>;
  save(key: WalkKey, walk: GrepWalkReport): Promise<void>;
}

/** Grep calls with ripgrep's help, for one session. */
export class RipgrepGrep {
  #options: RipgrepGrepOptions;
  #now: () => number;
  /** Paths whose last try fell back because of the tree, or whose tree is small: until when, and why. */
  #skipped = new Map<string, { until: number; reason: string }>();
  /** Recent walks by path and glob (see `#recentWalk`), oldest first. */
  #walks = new Map<string, { until: number; walk: GrepWalkReport }>();
  /** Walks running now, by path and glob (see `#sharedWalk`). */
  #walking = new Map<string, Promise<GrepOutcome>>();
  /** The end of the last worker call queued (see `#oneAtATime`). */
  #budgeted: Promise<unknown> = Promise.resolve();
  /** Paths whose searched files add up to `MAX_GREP_FILE_BYTES`: ripgrep skips large files itself there. */
  #largeTrees = new Set<string>();
  /** Kept walks being read, by path and glob: parallel calls (one turn's) share one read. */
  #loadingKept = new Map<string, Promise<GrepWalkReport | null>>();
  /** The searches that may run at once (`RIPGREP_SEARCHES_AT_ONCE`). */
  #searches: Slots;
  /**
   * Walks ahead of the calls (`walkedAhead`) whose stamps no call has checked yet: the first check keeps them
   * for later processes too.
   */
  #aheadUnchecked = new WeakSet<GrepWalkReport>();
  /** Walks being written for later processes (see `idle`). */
  #saving = new Set<Promise<void>>();
  /** Set when the sandbox cannot run ripgrep at all. */
  #unavailable: string | null = null;
  /** Why the last call fell back, for tests and diagnostics. */
  lastFallback: string | null = null;
  /** Whether the last call used a walk from an earlier call, for tests and diagnostics. */
  lastUsedRecentWalk = false;

  constructor(options: RipgrepGrepOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#searches = new Slots(options.searchesAtOnce ?? RIPGREP_SEARCHES_AT_ONCE);
  }

  /**
   * Plans a sample call and drops the plan: the first call then finds the planning code (the pattern's
   * rewriting and translation for ripgrep) compiled, which costs it ~1 ms otherwise. For the time a call's
   * input streams.
   */
  warmUp(): void {
    planRipgrep({ pattern: WARM_UP_PATTERN }, { strictLinks: false });
  }

  /**
   * Takes the report of the walk of the workspace `root` ahead of the calls (`_prewalk.ts`), which the worker
   * sends once the walk has ended, as a recent walk of a Grep call of the whole workspace without a glob or
   * deny rules (the walk ahead applies none), and indexes it now: the first such call then neither waits for
   * the report to cross from the worker nor indexes it while ripgrep searches. It is used as any recent walk
   * is (`#recentWalk`): a result without matches only once the worker found its stamps current. It is kept
   * for later processes once a call has found it current.
   */
  walkedAhead(walk: GrepWalkReport, root: string): void {
    const key = walkKeyOf(root, null, "");
    // A call of this path that walked, or walks now, has a walk at least as recent.
    if (this.#walks.has(key) || this.#walking.has(key)) return;
    indexWalk(walk);
    this.#keepWalk(key, walk, root);
    this.#aheadUnchecked.add(walk);
  }

  /** Runs a validated, permitted Grep call; null when ripgrep cannot help with it (run it as usual). */
  async run(input: GrepInput, context: ToolCallContext, signal: AbortSignal): Promise<GrepOutcome | null> {
    this.lastFallback = null;
    this.lastUsedRecentWalk = false;
    if (this.#unavailable !== null) return this.#skip(this.#unavailable);
    const path = input.path ?? context.root;
    const sizes = { largeTreeBytes: this.#options.largeTreeBytes ?? MAX_GREP_FILE_BYTES };
    let plan = planRipgrep(input, context, { ...sizes, limitFileSize: this.#largeTrees.has(path) });
    if (plan === null) return this.#skip("the call has options ripgrep cannot match");
    const skipped = this.#skipped.get(path);
    if (skipped !== undefined && skipped.until > this.#now()) return this.#skip(skipped.reason);
    // A walk leaves out what the call's deny rules cover: one made under other rules (rules changed during
    // the session) is never used, as it could list a file ripgrep must not report from.
    const denied = context.deniedReads === undefined || context.deniedReads.rules.length === 0
      ? ""
      : JSON.stringify(context.deniedReads);
    const walkKey = walkKeyOf(path, input.glob ?? null, denied);
    // A kept walk is one made under the same deny rules: it lists the files they leave out.
    const keptKey: WalkKey = {
      path,
      glob: input.glob ?? null,
      roots: [context.root, ...context.additionalRoots ?? []],
      excluded: [...context.excludedPaths ?? []],
      denied,
    };
    const started = performance.now();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const search = async (current: RipgrepPlan): Promise<ReadRipgrepRun> => {
      // Read as it arrives: a report of millions of characters is never held whole.
      const maxOutputChars = this.#options.maxOutputChars ?? MAX_RIPGREP_OUTPUT_CHARS;
      const reader = new RipgrepOutputReader({
        limit: maxOutputChars,
        binaryBelow: UNCERTAIN_BINARY_OFFSET,
        // Without lines to show, an exact pattern's line that fits the matcher's chunk matches (see
        // `LineChecker.quick`): its length is all that is needed.
        ...(current.mode !== "content" && current.pattern.exact ? { textsAbove: current.matcher.chunk } : {}),
      });
      let release: () => void;
      try {
        release = await this.#searches.acquire(stop.signal);
      } catch {
        return { status: "cancelled" };
      }
      let run: RipgrepRun;
      try {
        // The wait for a slot counts against the call's time limit.
        const timeoutMs = Math.max(1, context.timeoutMs - (performance.now() - started));
        run = await this.#options.runRipgrep(
          {
            path,
            roots: [context.root, ...context.additionalRoots ?? []],
            excluded: [...context.excludedPaths ?? []],
            search: current.search,
          },
          { timeoutMs, signal: stop.signal, onStdout: (bytes) => reader.push(bytes), maxOutputChars },
        );
      } finally {
        release();
      }
      if (run.status !== "exited") return run;
      const report = reader.finish(run.stdout, run.stderr);
      const overflowed = reader.overflowed || run.stderr.length >= maxOutputChars;
      return { status: "exited", code: run.code, report, overflowed };
    };
    let ripgrep: Promise<ReadRipgrepRun> | null = null;
    const startRipgrep = (): Promise<ReadRipgrepRun> => ripgrep ??= search(plan!);
    // A search for more lines than `MAX_BUDGETED_LIMIT` could not end within the budget on a tree worth
    // ripgrep's start.
    // A call that joins a running walk (one turn's parallel calls) does not search within a budget either:
    // the walk holds a worker, and a search would start another, whose memory outweighs its few milliseconds.
    const budgetMs = plan.limit > MAX_BUDGETED_LIMIT || this.#walking.has(walkKey)
      ? 0
      : this.#options.prepassBudgetMs ?? PREPASS_BUDGET_MS;
    // ripgrep starts once the worker's budget is spent: a search that ends sooner never starts the sandbox,
    // and the walk that follows the budget overlaps the sandbox's start and ripgrep's search.
    let lateStart: ReturnType<typeof setTimeout> | undefined;
    const onProgress = (progress: CallProgress): void => {
      if (progress === "budget-spent") startRipgrep();
    };
    if (budgetMs === 0) startRipgrep();
    try {
      // Every worker call of the session's calls waits for the one before it to end (`#oneAtATime`).
      const prepass = (
        budget: number,
        walk: boolean,
        check?: WalkStamps,
        expectedFiles?: number,
      ): Promise<GrepOutcome> =>
        this.#oneAtATime(() => {
          const request: GrepPrepass = {
            budgetMs: budget,
            prefilter: plan!.prefilter,
            walk,
            ...(check === undefined ? {} : { check }),
            ...(expectedFiles === undefined ? {} : { expectedFiles }),
          };
          if (budget > 0 && ripgrep === null) {
            clearTimeout(lateStart);
            lateStart = setTimeout(
              startRipgrep,
              this.#options.lateStartMs ?? budget * RIPGREP_LATE_START_BUDGETS,
            );
          }
          return this.#options.runWorker({ ...input, [GREP_PREPASS]: request }, context, signal, onProgress);
        });
      const margin = this.#stampMargin;
      let recent = this.#recentWalk(walkKey);
      // A walk kept by an earlier process, read while the worker searches within its budget; it is used only
      // once the worker has found its stamps current.
      const keeper = this.#options.keeper;
      const keptLoading = recent === null && !this.#walking.has(walkKey) && keeper !== undefined
        ? this.#loadKept(walkKey, keptKey, keeper)
        : null;
      // The recent walk's stamps, when they can show whether the tree changed since.
      const stamps = recent !== null && recent.stamps !== null && stampsUsable(recent.stamps, margin)
        ? recent.stamps
        : undefined;
      let walk: GrepWalkReport | null = recent;
      // Whether `walk` shows the tree as it is now (walked during this call, or its stamps checked).
      let fresh = false;
      if (budgetMs > 0) {
        // 1. The worker searches alone within its budget: a small or dense search ends there, and is the
        //    answer. Without a walk of the path to use, join or check, the same worker call walks on past the
        //    budget.
        //    The stamps of a walk ahead not checked yet go to the worker only once its search found no match
        //    (below): a search that ends within its budget, or finds a match, does not need them, and a copy
        //    of the stamps of 20,000 files' folders costs a search of the first 100 lines a few milliseconds.
        const checkLater = recent !== null && stamps !== undefined && this.#aheadUnchecked.has(recent);
        const first = recent === null && !this.#walking.has(walkKey) && keptLoading === null
          ? (await this.#sharedWalk(walkKey, () => prepass(budgetMs, true))).outcome
          : await prepass(budgetMs, false, checkLater ? undefined : stamps, recent?.files.length);
        const report = walkReportOf(first.result);
        if (report === null && first.result.metadata.prepass !== BUDGET_SPENT) return first;
        startRipgrep();
        if (report !== null) {
          this.#keepWalk(walkKey, report, path, keptKey);
          walk = report;
          fresh = true;
        } else if (first.result.metadata.current === true) {
          // The recent walk's stamps hold: its counts are the tree's counts now.
          this.#keepWalk(walkKey, walk!, path, this.#aheadUnchecked.delete(walk!) ? keptKey : undefined);
          fresh = true;
        } else if (first.result.metadata.matched !== true) {
          // No match in the files searched so far: a result without matches shows the walk's counts, so
          // check the walk ahead's stamps, or walk now, alongside ripgrep, rather than after it.
          walk = null;
          if (checkLater) {
            const checked = await prepass(0, false, stamps);
            if (checked.result.metadata.current === true) {
              this.#aheadUnchecked.delete(recent!);
              this.#keepWalk(walkKey, recent!, path, keptKey);
              walk = recent;
              fresh = true;
            }
          }
        }
      }
      if (walk === null && keptLoading !== null) {
        // ripgrep searches meanwhile.
        const kept = await keptLoading;
        if (kept !== null && kept.stamps !== null && stampsUsable(kept.stamps, margin)) {
          const checked = await prepass(0, false, kept.stamps!);
          if (checked.result.metadata.current === true) {
            this.#keepWalk(walkKey, kept, path);
            walk = recent = kept;
            fresh = true;
          }
        }
      }
      // 2. ripgrep searches the contents in the sandbox while the worker walks, unless a recent walk will do.
      if (walk === null) {
        let walked = await this.#sharedWalk(walkKey, () => prepass(0, true));
        // Another call's walk that did not end in a report (cancelled, or a file searched): walk ourselves.
        if (walked.joined && walkReportOf(walked.outcome.result) === null) {
          walked = { outcome: await prepass(0, true), joined: false };
        }
        walk = walkReportOf(walked.outcome.result);
        if (walk === null) return walked.outcome;
        this.#keepWalk(walkKey, walk, path, walked.joined ? undefined : keptKey);
        fresh = true;
      }
      // ripgrep searches now: what checking its report needs is prepared meanwhile.
      const running = startRipgrep();
      indexWalk(walk);
      let run = await running;
      if (signal.aborted) {
        return outcomeOf(stopResult({ stopReason: () => "aborted" }, { ...context, signal }));
      }
      const call = { input, context, signal, started };
      let answer = await answerFromRipgrep(plan, walk, run, call);
      if (!answer.ok && answer.large) {
        // Files of this path add up to the size limit: from now on ripgrep skips large files itself.
        this.#largeTrees.add(path);
        plan = planRipgrep(input, context, { ...sizes, limitFileSize: true })!;
        run = await (ripgrep = search(plan));
        answer = await answerFromRipgrep(plan, walk, run, call);
      }
      if (!fresh && answer.ok && answer.noMatch && stamps !== undefined) {
        // A result without matches shows the walk's counts: they hold if the tree has not changed since.
        const checked = await prepass(0, false, stamps);
        if (checked.result.metadata.current === true) {
          this.#keepWalk(walkKey, walk, path, this.#aheadUnchecked.delete(walk) ? keptKey : undefined);
          fresh = true;
        }
      }
      if (!fresh && (answer.ok ? answer.noMatch : answer.tree)) {
        // The tree may have changed since that walk, and a result without matches shows the walk's counts:
        // check against a walk of now.
        const now = walkReportOf((await prepass(0, true)).result);
        if (now === null) {
          this.lastFallback = "the worker did not walk the tree";
          return await this.#usual(input, context, signal);
        }
        this.#keepWalk(walkKey, now, path, keptKey);
        walk = now;
        answer = await answerFromRipgrep(plan, now, run, call);
      }
      this.lastUsedRecentWalk = walk === recent;
      if (answer.ok) return outcomeOf(answer.result);
      this.lastFallback = answer.reason;
      if (answer.tree) this.#remember(path, "a recent call fell back for this path");
      if (run.status === "failed") this.#unavailable = `the sandbox cannot run ripgrep: ${run.message}`;
    } finally {
      clearTimeout(lateStart);
      signal.removeEventListener("abort", onAbort);
      // A search no longer needed (the worker answered, or a walk failed) ends before the call does.
      if (ripgrep !== null) {
        stop.abort();
        await ripgrep;
      }
    }
    return await this.#usual(input, context, signal);
  }

  #loadKept(key: string, kept: WalkKey, keeper: WalkKeeper): Promise<GrepWalkReport | null> {
    let loading = this.#loadingKept.get(key);
    if (loading === undefined) {
      loading = keeper.load(kept).finally(() => this.#loadingKept.delete(key));
      this.#loadingKept.set(key, loading);
    }
    return loading;
  }

  /** Resolves once the walks being kept for later processes are written. */
  async idle(): Promise<void> {
    while (this.#saving.size > 0) await Promise.all(this.#saving);
  }

  /** Forgets the remembered fallbacks and walks: to call after anything may have changed files. */
  forget(): void {
    this.#skipped.clear();
    this.#walks.clear();
  }

  /**
   * Runs the session's worker calls for ripgrep (searches within their budget, walks, checks of stamps) one at
   * a time: at once, parallel Greps (one turn's) would each hold a worker, whose memory outweighs the few tens
   * of milliseconds of waiting; ripgrep searches meanwhile. Measured, a turn of four parallel Greps over 200 MB
   * peaked at ~145 MB when a walk started a second worker beside a budgeted search, at ~123 MB on one.
   */
  #oneAtATime(run: () => Promise<GrepOutcome>): Promise<GrepOutcome> {
    const result = this.#budgeted.then(run, run);
    this.#budgeted = result.catch(() => {});
    return result;
  }

  /** The walk of a path and glob, shared with the calls that ask for it while it runs. */
  async #sharedWalk(
    key: string,
    run: () => Promise<GrepOutcome>,
  ): Promise<{ outcome: GrepOutcome; joined: boolean }> {
    const running = this.#walking.get(key);
    if (running !== undefined) return { outcome: await running, joined: true };
    const walk = run().finally(() => this.#walking.delete(key));
    this.#walking.set(key, walk);
    return { outcome: await walk, joined: false };
  }

  #usual(input: GrepInput, context: ToolCallContext, signal: AbortSignal): Promise<GrepOutcome> {
    return this.#options.runWorker({ ...input }, context, signal);
  }

  /**
   * A walk of the same path and glob from an earlier call, still fresh. A walk that has aged (files created
   * or removed since, outside the session's own tools, which clear these) cannot make a result with
   * matches differ: ripgrep's report is checked against it, every file with a match must be in it, and the
   * numbers of files must agree; a result without matches, which shows the walk's counts, is built from a
   * new walk (`run`) unless the walk's stamps show that the tree has not changed since.
   */
  #recentWalk(key: string): GrepWalkReport | null {
    const entry = this.#walks.get(key);
    if (entry === undefined) return null;
    if (entry.until > this.#now()) return entry.walk;
    this.#walks.delete(key);
    return null;
  }

  /** Keeps a walk for later calls, and one just walked (`kept`) for later processes too. */
  #keepWalk(key: string, walk: GrepWalkReport, path: string, kept?: WalkKey): void {
    const small = walk.files.length < (this.#options.smallTreeFiles ?? SMALL_TREE_FILES);
    if (small) this.#remember(path, "the tree is small");
    else if (kept !== undefined && walk.stamps !== null && stampsUsable(walk.stamps, this.#stampMargin)) {
      // Stamps of a tree that had just changed cannot show a later change: such a walk is never used again.
      const saving = this.#options.keeper?.save(kept, walk);
      if (saving !== undefined) {
        this.#saving.add(saving);
        void saving.finally(() => this.#saving.delete(saving));
      }
    }
    this.#walks.delete(key);
    this.#walks.set(key, { until: this.#now() + FALLBACK_MEMORY_MS, walk });
    while (this.#walks.size > MAX_RECENT_WALKS) this.#walks.delete(this.#walks.keys().next().value!);
  }

  get #stampMargin(): number {
    return this.#options.stampMarginMs ?? STAMP_MARGIN_MS;
  }

  #remember(path: string, reason: string): void {
    this.#skipped.set(path, { until: this.#now() + FALLBACK_MEMORY_MS, reason });
  }

  #skip(reason: string): null {
    this.lastFallback = reason;
    return null;
  }
}

/** The key of `RipgrepGrep`'s walks: a walk depends on the path, the glob and the deny rules (JSON, "" for none). */
function walkKeyOf(path: string, glob: string | null, denied: string): string {
  return `${path}\0${glob ?? ""}\0${denied}`;
}

function walkReportOf(result: ToolResult): GrepWalkReport | null {
  const walk = result.metadata.walk;
  return typeof walk === "object" && walk !== null && !result.isError ? walk as GrepWalkReport : null;
}

function outcomeOf(result: ToolResult): GrepOutcome {
  if (result.stop === "timed-out") return { result, status: "timed-out" };
  if (result.stop === "cancelled") return { result, status: "aborted" };
  return { result, status: result.isError ? "failed" : "completed" };
}
