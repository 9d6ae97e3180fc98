/**
 * Grep's result from ripgrep's report and the worker's walk (`answerFromRipgrep`), or why the report cannot
 * be trusted: the walk stays the authority on which files Grep searches, the report must have searched
 * exactly those, and the result is built file by file in the walk's order by Grep's own collector.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { GrepCollector, stopResult } from "./_grep_collector.ts";
import { findMatchingLines, type LineMatch, MAX_GREP_LINE_CHARACTERS } from "./_grep_lines.ts";
import type { GrepWalkReport } from "./_grep_prepass.ts";
import type { LineMatcher } from "./_line_search.ts";
import type { RipgrepFile, RipgrepReport } from "./_ripgrep_output.ts";
import { skippedByBinaryType } from "./_ripgrep_glob.ts";
import type { RipgrepPlan } from "./_ripgrep_plan.ts";
import { BINARY_SNIFF_BYTES, isBinaryPath } from "./_text.ts";
import { TimeSlicer } from "./_time_slicer.ts";
import type { GrepInput } from "./grep.ts";
import type { ToolCallContext, ToolResult } from "./tool.ts";

/**
 * A UTF-8 byte order mark is not in ripgrep's offsets, while Grep counts the first 8 KiB from the file's
 * start: a first NUL byte this close to the limit could be on either side of it.
 */
export const UNCERTAIN_BINARY_OFFSET = BINARY_SNIFF_BYTES - 3;

/** How a ripgrep script ended, with its output read as it arrived. */
export type ReadRipgrepRun =
  | { status: "exited"; code: number; report: RipgrepReport; overflowed: boolean }
  | { status: "timed-out" }
  | { status: "failed"; message: string }
  /** The call ended while its search waited for its turn (`RIPGREP_SEARCHES_AT_ONCE`): it never ran. */
  | { status: "cancelled" };

/** Why ripgrep's answer was not used, and whether the cause lies in the tree (then it is remembered). */
interface Fallback {
  ok: false;
  reason: string;
  tree: boolean;
  /** Set when ripgrep may have searched a file larger than `MAX_GREP_FILE_BYTES` (run it again with the limit). */
  large?: boolean;
}

function isFallback(value: unknown): value is Fallback {
  return typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === false;
}

function fallback(reason: string, tree = false): Fallback {
  return { ok: false, reason, tree };
}

/** The call's result from ripgrep's report and the worker's walk, or why it cannot be trusted. */
export async function answerFromRipgrep(
  plan: RipgrepPlan,
  walk: GrepWalkReport,
  run: ReadRipgrepRun,
  call: { input: GrepInput; context: ToolCallContext; signal: AbortSignal; started: number },
): Promise<{ ok: true; result: ToolResult; noMatch: boolean } | Fallback> {
  const { context, signal, started } = call;
  if (run.status === "timed-out") {
    return {
      ok: true,
      result: stopResult({ stopReason: () => "timeout" }, { ...context, signal }),
      noMatch: false,
    };
  }
  if (run.status === "failed") return fallback(`ripgrep did not run: ${run.message}`);
  if (run.status === "cancelled") return fallback("the call ended before ripgrep could start");
  // Before the exit status: a report past its file's cap ends ripgrep (SIGXFSZ, `ripgrepScript`).
  if (run.overflowed) return fallback("ripgrep printed more than can be read");
  if (run.code !== 0 && run.code !== 1) {
    return fallback(`the ripgrep script exited with ${run.code}`, run.code !== 2);
  }
  const report = run.report;
  const problem = treeProblem(walk, report) ?? outputProblem(walk, report);
  if (problem !== null) return problem;
  // Without `--max-filesize` (a stat of every file), searched files that add up to less than the limit
  // prove that none of them alone reaches it.
  if (!plan.limitFileSize && (report.bytesSearched ?? Infinity) >= plan.largeTreeBytes) {
    return { ...fallback("ripgrep may have searched a file larger than the limit"), large: true };
  }
  const slicer = new TimeSlicer(signal, { deadline: started + context.timeoutMs });
  const collector = new GrepCollector({ mode: plan.mode, context: plan.context, limit: plan.limit });
  const checker = new LineChecker(plan, slicer);
  let cutAt = -1;
  for (const index of interestingFiles(walk, report)) {
    const path = walk.files[index]!;
    if (isBinaryPath(path)) {
      collector.skipped.binary++;
      continue;
    }
    const file = report.files.get(path);
    if (file === undefined) continue;
    if (file.nul !== null && file.nul < UNCERTAIN_BINARY_OFFSET) {
      collector.skipped.binary++;
      continue;
    }
    if (file.nul !== null && file.nul < BINARY_SNIFF_BYTES) {
      return fallback(`"${path}" has its first NUL byte too close to 8 KiB to tell`);
    }
    const added = await addFile(collector, checker, file, path);
    if (added === "stopped") {
      return { ok: true, result: stopResult(slicer, { ...context, signal }), noMatch: false };
    }
    if (isFallback(added)) return added;
    if (!added) {
      cutAt = index;
      break;
    }
  }
  return {
    ok: true,
    noMatch: !collector.hasLines,
    result: collector.result(call.input.pattern, call.input.path ?? context.root, walk.counts, {
      started,
      ...(cutAt === -1 ? {} : {
        progress: {
          ignoredFiles: walk.progress[2 * cutAt]!,
          ignoredDirectories: walk.progress[2 * cutAt + 1]!,
        },
      }),
      metadata: { engine: "ripgrep" },
    }),
  };
}

// Whether the tree has something ripgrep reads differently from Grep's walk.
function treeProblem(walk: GrepWalkReport, report: RipgrepReport): Fallback | null {
  if (walk.counts.ignoreProblems.length > 0) {
    return fallback("an ignore file has rules Grep leaves out", true);
  }
  if (walk.counts.changedDirectories > 0) return fallback("a directory changed during the walk", true);
  // ripgrep reports them as errors, and its counts leave them out.
  if (walk.counts.unreadable.length > 0) return fallback("the walk could not read a directory", true);
  if (walk.excludeRules) return fallback(".git/info/exclude has rules", true);
  if (walk.droppedRules) return fallback("an ignore file above the start ignores the start", true);
  if (walk.prefilterMismatch) return fallback("ripgrep's name filter disagrees with the glob", true);
  if (walk.ancestorRules && report.parentFlag !== "") {
    return fallback("ripgrep did not read the ignore files above the start", true);
  }
  if (walk.ripgrepTrap !== null) return fallback(`ripgrep reads "${walk.ripgrepTrap}" differently`, true);
  if (report.errors.length > 0) return fallback(`ripgrep reported: ${report.errors[0]}`, true);
  return null;
}

// Whether ripgrep searched exactly the files of the walk, and said all it should have.
function outputProblem(walk: GrepWalkReport, report: RipgrepReport): Fallback | null {
  if (report.malformed) return fallback("ripgrep printed a line of an unknown shape");
  if (report.start !== walk.start) {
    return fallback("the worker and the sandbox resolved the path differently");
  }
  const walked = positions(walk);
  // ripgrep knows nothing of deny and ask rules: it also searched the files the walk left out for them.
  // What it reports of those is never read (`interestingFiles` takes the walk's files only).
  const denied = new Set(walk.denied);
  for (const path of report.files.keys()) {
    if (!walked.has(path) && !denied.has(path)) {
      return fallback(`ripgrep searched "${path}", which Grep does not`, true);
    }
  }
  // A file larger than 256 MiB (skipped by both, but noted by Grep), a symlink Grep follows or a nested
  // repository (where ripgrep stops applying the parent's .gitignore) all make the counts differ.
  const expected = walk.files.length - walk.skippedByType +
    walk.denied.filter((path) => !skippedByBinaryType(path)).length;
  if (report.searched !== expected) {
    return fallback(`ripgrep searched ${report.searched} files where Grep searches ${expected}`, true);
  }
  return null;
}

const walkPositions = new WeakMap<GrepWalkReport, Map<string, number>>();

/**
 * Indexes the walk's files by path, as checking ripgrep's report against the walk needs (kept with the walk):
 * for the time ripgrep searches, since a new walk of 20,000 files takes 10-30 ms to index, which the call would
 * otherwise pay once ripgrep is done.
 */
export function indexWalk(walk: GrepWalkReport): void {
  positions(walk);
}

/** Each walked file's index in the walk. */
function positions(walk: GrepWalkReport): Map<string, number> {
  let map = walkPositions.get(walk);
  if (map === undefined) {
    map = new Map();
    for (let index = 0; index < walk.files.length; index++) map.set(walk.files[index]!, index);
    walkPositions.set(walk, map);
  }
  return map;
}

/**
 * The walk's indexes, in order, of the files the result depends on: those ripgrep printed something for,
 * and those Grep skips as binary by name or NUL byte (counted). The others are text files without a match.
 */
function interestingFiles(walk: GrepWalkReport, report: RipgrepReport): number[] {
  const walked = positions(walk);
  const indexes = new Set(walk.binaryNames);
  for (const path of report.files.keys()) {
    const index = walked.get(path);
    // A file a deny or ask rule covers (`outputProblem` let through no other) stays unread.
    if (index !== undefined) indexes.add(index);
  }
  return [...indexes].sort((a, b) => a - b);
}

/** Adds a file's checked lines to the collector: its verdict, "stopped", or a fallback. */
async function addFile(
  collector: GrepCollector,
  checker: LineChecker,
  file: RipgrepFile,
  path: string,
): Promise<boolean | "stopped" | Fallback> {
  const mode = collector.options.mode;
  const content = mode === "content";
  const text = content ? syntheticText(file) : null;
  const found: LineMatch[] = [];
  // Outside the content mode, lines that match for sure were only counted (see `RipgrepFile.sureMatches`).
  let count = file.sureMatches;
  if (count > 0 && mode === "files_with_matches") return collector.addFile(path);
  for (const index of file.matches) {
    if (content && found.length === collector.wantedLines) break;
    const line = file.texts[index]!;
    // A line with a NUL byte may have been printed for its NUL byte alone (in a text file, whose first NUL
    // byte lies past 8 KiB): check it. One without was printed for the pattern.
    const quick = file.nul === null || !line.includes("\0") ? checker.quick(line, content) : undefined;
    const column = quick ?? await checker.column(line, content);
    if (column === "stopped" || isFallback(column)) return column;
    if (column === null) continue;
    count++;
    if (mode === "files_with_matches") return collector.addFile(path);
    if (text !== null) {
      const start = text.starts[index]!;
      found.push({ line: file.numbers[index]!, start, end: start + line.length, column: start + column });
    }
  }
  switch (mode) {
    case "files_with_matches":
      return true;
    case "count":
      return collector.addCount(path, count);
    case "content":
      return collector.addLines(text!.text, path, found);
    default:
      return assertNever(mode);
  }
}

/**
 * The lines ripgrep printed for a file, joined: matches and their context, in order. Grep's formatter walks
 * from a match to its context lines only, and ripgrep printed every line within the context of each line it
 * reported (a superset of the matches), so it never reaches a line that is missing here.
 */
function syntheticText(file: RipgrepFile): { text: string; starts: number[] } {
  const starts: number[] = [];
  let at = 0;
  for (const line of file.texts) {
    starts.push(at);
    at += line.length + 1;
  }
  return { text: file.texts.join("\n") + "\n", starts };
}

/** Decides with Grep's matcher whether a line ripgrep reported matches, and where. */
class LineChecker {
  readonly exact: boolean;
  #plan: RipgrepPlan;
  #matcher: LineMatcher;
  #slicer: TimeSlicer;

  constructor(plan: RipgrepPlan, slicer: TimeSlicer) {
    this.#plan = plan;
    this.#slicer = slicer;
    this.#matcher = plan.matcher.build(slicer);
    this.exact = plan.pattern.exact;
  }

  /**
   * The column without running the matcher, or undefined: with an exact pattern a line short enough for the
   * matcher to search at once matches, and its column matters only to shorten a line too long to show.
   */
  quick(line: string, forDisplay: boolean): number | undefined {
    const fits = line.length <= this.#plan.matcher.chunk;
    return this.exact && fits && !(forDisplay && line.length > MAX_GREP_LINE_CHARACTERS) ? 0 : undefined;
  }

  /** The column of the line's first match, or null when Grep's matcher finds none. */
  async column(line: string, forDisplay: boolean): Promise<number | null | "stopped" | Fallback> {
    const { matcher } = this.#plan;
    if (!matcher.normalizeCrlf || !line.endsWith("\r")) return await this.#first(line);
    // Grep turns CRLF into LF first, but keeps a "\r" that ends a file's last line: both must agree.
    const withoutReturn = await this.#first(line.slice(0, -1));
    const withReturn = await this.#first(line);
    if (withoutReturn === "stopped" || withReturn === "stopped") return "stopped";
    const differ = (withoutReturn === null) !== (withReturn === null) ||
      (forDisplay && line.length > MAX_GREP_LINE_CHARACTERS && withoutReturn !== withReturn);
    return differ
      ? fallback("a line ending in \\r matches differently as a file's last line")
      : withoutReturn;
  }

  // The line alone as Grep searches it within its file: followed by a line break.
  async #first(line: string): Promise<number | null | "stopped"> {
    const found = await findMatchingLines(`${line}\n`, this.#matcher, { slicer: this.#slicer, max: 1 });
    if (found === null) return "stopped";
    return found[0]?.column ?? null;
  }
}
