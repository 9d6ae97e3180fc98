/**
 * The worker's part of a Grep call that ripgrep may answer (`grep_ripgrep.ts`): the usual search, given a
 * short time budget; a small or dense search is done within it, and its result is final. Past the budget the
 * worker stops reading files and only finishes the walk, which it reports: the files in path order and what
 * was skipped. That walk is the authority on which files Grep searches; ripgrep's report is checked against
 * it and used only for the contents.
 *
 * The request travels in the input under `GREP_PREPASS`, which only the runtime sets: the model's input is
 * checked against Grep's strict schema before any call runs, and a field of that name is rejected there.
 *
 * @module
 */
import { IgnoreRules, MAX_IGNORE_FILE_BYTES } from "./_gitignore.ts";
import { skippedByBinaryType } from "./_ripgrep_glob.ts";
import { BUDGET_SPENT, EXTEND_FROM_FULLNESS, EXTENDED_BUDGET_FACTOR, GREP_PREPASS } from "./_shared.ts";
import { isBinaryPath } from "./_text.ts";
import { readVerifiedSync } from "./_verified_read.ts";
import type { WalkCounts, Walker } from "./_walk.ts";
import { STAMP_FIELDS, walkIsCurrent, type WalkStamps } from "./_walk_stamps.ts";
import { textResult } from "./results.ts";
import type { ToolResult } from "./tool.ts";

/** What the runtime asks of the worker. */
export interface GrepPrepass {
  /** Milliseconds of searching before the worker gives up and only walks. */
  budgetMs: number;
  /**
   * The type globs ripgrep selects files by name with for the glob (see `ripgrepGlob`), or null when it
   * selects none: each file the walk offers the glob is also tested with them, and a disagreement reported.
   */
  prefilter: string[] | null;
  /** Whether to finish and report the walk past the budget (false: the runtime still has a recent one). */
  walk: boolean;
  /**
   * The stamps of that recent walk: past the budget, the result says whether the tree is as it was then
   * (`current`), so that a result without matches can show that walk's counts.
   */
  check?: WalkStamps;
  /**
   * How many files that recent walk found (those passing the glob): a search that cannot end within its
   * budget at its pace so far gives up before the budget is spent (see `WalkRecorder.overBudget`).
   */
  expectedFiles?: number;
}

/**
 * A search that knows how many files to expect judges its pace once it has searched this long and at least
 * `PACE_AFTER_FILES` files (earlier, one large file or a cold start says little about the rest). Measured on
 * the benchmark tree (20,000 files, ~50 µs each in the worker): after 4 ms it has searched some 80 files,
 * and a search for no match that went on to 10 ms delayed ripgrep by 6 ms of a 300 ms call; a dense search
 * for the first 100 lines still ends within its budget (~20 ms).
 */
export const PACE_AFTER_MS = 4;
/** See `PACE_AFTER_MS`. */
export const PACE_AFTER_FILES = 32;
/**
 * How far off its budget a search's pace must be for it to give up early: finishing every file would take
 * this many budgets, and by the budget's end it would have found less than `EXTEND_FROM_FULLNESS` divided by
 * this of what it may show (the share that would earn it more time).
 */
export const PACE_MARGIN = 2;

/** The walk a prepass reports when its budget ran out. */
export interface GrepWalkReport {
  /** Real path of the searched directory. */
  start: string;
  /** The workspace root or added folder that holds it. */
  base: string;
  /** Paths relative to `start` of the files Grep searches (those passing the glob), in path order. */
  files: string[];
  /** After each file, the walk's ignored files and directories so far: two numbers per file. */
  progress: number[];
  counts: WalkCounts;
  /** Whether an ignore file above the start (`.git/info/exclude`, a parent's `.gitignore`) has rules. */
  ancestorRules: boolean;
  /** Whether one of those ignores the start itself, so that the walk leaves it out. */
  droppedRules: boolean;
  /** Whether `.git/info/exclude` of the root or added folder has rules. */
  excludeRules: boolean;
  /** Whether the glob and ripgrep's name filter disagreed on a file. */
  prefilterMismatch: boolean;
  /** Indexes in `files` of the files Grep skips by their extension (`isBinaryPath`). */
  binaryNames: number[];
  /** How many files ripgrep's binary type skips by name (`skippedByBinaryType`). */
  skippedByType: number;
  /** A file named `.rgignore` (ripgrep obeys it) or `.git` below the start (a nested repository), if any. */
  ripgrepTrap: string | null;
  /**
   * The files a deny or ask rule left out that ripgrep, which follows no symlink, finds (paths relative to
   * `start`, in walk order): it searches them, and its report of them is set aside unread.
   */
  denied: string[];
  /** What the walk saw, to tell later whether it still holds; null when stamps cannot tell. */
  stamps: WalkStamps | null;
}

/** The prepass request in an input, or null for an ordinary call. */
export function prepassOf(input: object): GrepPrepass | null {
  const value = (input as Record<string, unknown>)[GREP_PREPASS];
  if (typeof value !== "object" || value === null) return null;
  const budget = (value as Record<string, unknown>).budgetMs;
  if (typeof budget !== "number") return null;
  const globs = (value as Record<string, unknown>).prefilter;
  const walk = (value as Record<string, unknown>).walk !== false;
  const check = stampsOf((value as Record<string, unknown>).check);
  const expected = (value as Record<string, unknown>).expectedFiles;
  return {
    budgetMs: budget,
    prefilter: Array.isArray(globs) ? globs.map(String) : null,
    walk,
    ...(check === null ? {} : { check }),
    ...(typeof expected === "number" && expected >= 0 ? { expectedFiles: expected } : {}),
  };
}

function stampsOf(value: unknown): WalkStamps | null {
  if (typeof value !== "object" || value === null) return null;
  const { takenAt, paths, values } = value as Record<string, unknown>;
  if (typeof takenAt !== "number" || !Array.isArray(paths) || !(values instanceof Float64Array)) return null;
  if (!paths.every((path) => typeof path === "string") || values.length !== paths.length * STAMP_FIELDS) {
    return null;
  }
  return { takenAt, paths, values };
}

/**
 * A name filter from ripgrep type globs made of literal text and `*` (see `ripgrepGlob`): whether a file
 * name matches one of them, as ripgrep's glob matching decides for such globs.
 */
export function nameFilter(globs: readonly string[]): (name: string) => boolean {
  const parts = globs.map((glob) => glob.split("*"));
  return (name) => parts.some((pieces) => matchesStars(name, pieces));
}

function matchesStars(name: string, pieces: readonly string[]): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return name === first;
  const last = pieces[pieces.length - 1]!;
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last)) {
    return false;
  }
  let at = first.length;
  const end = name.length - last.length;
  for (let index = 1; index < pieces.length - 1; index++) {
    const found = name.indexOf(pieces[index]!, at);
    if (found === -1 || found + pieces[index]!.length > end) return false;
    at = found + pieces[index]!.length;
  }
  return true;
}

/** Records the walk of a prepass and decides when its budget is spent. */
export class WalkRecorder {
  /** Whether the walk is to be finished and reported past the budget (and stamped). */
  readonly walks: boolean;
  #check: WalkStamps | null;
  #started: number;
  #deadline: number;
  #expectedFiles: number | null;
  #extendedDeadline: number;
  #filter: ((name: string) => boolean) | null;
  #files: string[] = [];
  #progress: number[] = [];
  #mismatch = false;
  #binaryNames: number[] = [];
  #skippedByType = 0;
  #trap: string | null = null;

  constructor(prepass: GrepPrepass, started: number) {
    this.#started = started;
    this.#deadline = started + prepass.budgetMs;
    this.#expectedFiles = prepass.expectedFiles ?? null;
    this.#extendedDeadline = started + prepass.budgetMs * EXTENDED_BUDGET_FACTOR;
    this.walks = prepass.walk;
    this.#check = prepass.check ?? null;
    this.#filter = prepass.prefilter === null ? null : nameFilter(prepass.prefilter);
  }

  /** Compares the glob's verdict on a file with ripgrep's name filter. */
  checkName(relativePath: string, passes: boolean): void {
    if (this.#filter === null) return;
    if (this.#filter(relativePath.slice(relativePath.lastIndexOf("/") + 1)) !== passes) this.#mismatch = true;
  }

  /** Records a file the walk found, with the walk's counters at that point. */
  record(relativePath: string, walker: Walker): void {
    if (isBinaryPath(relativePath)) this.#binaryNames.push(this.#files.length);
    if (skippedByBinaryType(relativePath)) this.#skippedByType++;
    if (relativePath.endsWith(".rgignore") || relativePath.endsWith("/.git")) {
      const name = relativePath.slice(relativePath.lastIndexOf("/") + 1);
      if (name === ".rgignore" || name === ".git") this.#trap ??= relativePath;
    }
    this.#files.push(relativePath);
    this.#progress.push(walker.ignoredFiles, walker.ignoredDirectories);
  }

  /**
   * Whether the search budget is spent, not counting `excludedMs` (the time spent confirming the location
   * of files with matches, which a search with few of them pays in any case: see `confirmLocation`). A
   * search `fullness` (0 to 1) of the way to its limit goes on past the budget: see `EXTEND_FROM_FULLNESS`.
   * One that expects a number of files gives up before the budget is spent when its pace shows that it
   * cannot end within it: every millisecond it searches on delays ripgrep, which will search anyway.
   */
  overBudget(excludedMs = 0, fullness = 0): boolean {
    const now = performance.now() - excludedMs;
    if (now <= this.#deadline) return this.#hopeless(now - this.#started, fullness);
    // Half of what it may show found: likely to end soon, where giving up costs ripgrep's whole search.
    return fullness < EXTEND_FROM_FULLNESS || now > this.#extendedDeadline;
  }

  // Whether, at its pace so far, the search would need `PACE_MARGIN` budgets to search every expected file
  // and find by the budget's end less than `EXTEND_FROM_FULLNESS / PACE_MARGIN` of what it may show.
  #hopeless(elapsedMs: number, fullness: number): boolean {
    const expected = this.#expectedFiles;
    // The file being recorded now is not searched yet.
    const searched = this.#files.length - 1;
    if (expected === null || elapsedMs < PACE_AFTER_MS || searched < PACE_AFTER_FILES) return false;
    const budgetMs = this.#deadline - this.#started;
    const allFilesMs = elapsedMs * expected / searched;
    const fullnessAtDeadline = fullness * budgetMs / elapsedMs;
    return allFilesMs > PACE_MARGIN * budgetMs && fullnessAtDeadline < EXTEND_FROM_FULLNESS / PACE_MARGIN;
  }

  /**
   * The result of a prepass past its budget that was not asked for the walk, saying whether the search
   * found a match in the files it reached (the runtime then expects a result with matches).
   */
  budgetSpent(matched: boolean): ToolResult {
    const current = this.#check === null ? {} : { current: walkIsCurrent(this.#check) };
    return textResult("", { engine: "typescript", prepass: BUDGET_SPENT, matched, ...current });
  }

  /** The result that carries the finished walk. */
  report(walker: Walker, places: WalkPlaces): ToolResult {
    return walkResult(this.walkReport(walker, places));
  }

  /** The finished walk. */
  walkReport(walker: Walker, places: WalkPlaces): GrepWalkReport {
    return {
      start: places.start,
      base: places.base,
      files: this.#files,
      progress: this.#progress,
      counts: {
        ignoredFiles: walker.ignoredFiles,
        ignoredDirectories: walker.ignoredDirectories,
        skippedSymlinks: walker.skippedSymlinks,
        changedDirectories: walker.changedDirectories,
        ignoreProblems: walker.ignoreProblems,
        unreadable: walker.unreadable,
        deniedFiles: walker.deniedFiles,
        denyingRules: walker.denyingRules,
        askingRules: walker.askingRules,
      },
      ...ancestorIgnoreFiles(places),
      prefilterMismatch: this.#mismatch,
      binaryNames: this.#binaryNames,
      skippedByType: this.#skippedByType,
      ripgrepTrap: this.#trap,
      denied: walker.deniedPaths,
      stamps: walker.stamps,
    };
  }
}

/** Where a walk started, and the folders that bound it (for the ignore files above its start). */
export interface WalkPlaces {
  start: string;
  base: string;
  roots: readonly string[];
  excluded: readonly string[] | undefined;
}

/** The result of a prepass that carries a finished walk. */
export function walkResult(report: GrepWalkReport): ToolResult {
  return textResult("", { engine: "typescript", walk: report });
}

/**
 * What the walk reads above the start: `.git/info/exclude` of the folder that holds the start and the
 * `.gitignore` of every directory from that folder down to the start's parent (as `Walker` does).
 */
function ancestorIgnoreFiles(
  places: WalkPlaces,
): Pick<GrepWalkReport, "ancestorRules" | "droppedRules" | "excludeRules"> {
  const { start, base, roots, excluded } = places;
  const read = (path: string): IgnoreRules | null => {
    const file = readVerifiedSync(path, {
      root: roots[0]!,
      additionalRoots: roots.slice(1),
      excludedPaths: excluded,
      maxBytes: MAX_IGNORE_FILE_BYTES,
      truncate: true,
    });
    if (!file.ok) return null;
    const rules = IgnoreRules.parse(new TextDecoder().decode(file.bytes));
    return rules.isEmpty ? null : rules;
  };
  const below = start === base ? "" : start.slice(base.length + 1);
  const segments = below === "" ? [] : below.split("/");
  let ancestorRules = false;
  let droppedRules = false;
  const exclude = read(`${base}/.git/info/exclude`);
  if (exclude !== null) {
    if (below !== "" && exclude.ignoresDirectory(below)) droppedRules = true;
    else ancestorRules = true;
  }
  for (let depth = 0; depth < segments.length; depth++) {
    const directory = segments.slice(0, depth).join("/");
    const rules = read(`${directory === "" ? base : `${base}/${directory}`}/.gitignore`);
    if (rules === null) continue;
    if (rules.ignoresDirectory(segments.slice(depth).join("/"))) droppedRules = true;
    else ancestorRules = true;
  }
  return { ancestorRules, droppedRules, excludeRules: exclude !== null };
}
