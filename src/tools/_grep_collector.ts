/**
 * Grep's output, built file by file in path order: the lines shown, the limits, the counters of files not
 * searched, and the final result with its notices. Both ways Grep searches (reading files itself, or from
 * ripgrep's report, `grep_ripgrep.ts`) feed the same collector, so they cannot disagree on the format.
 *
 * @module
 */
import { displayPath } from "./_display_path.ts";
import { formatContent, type LineMatch } from "./_grep_lines.ts";
import type { WalkCounts } from "./_walk.ts";
import { deniedNotice, skippedNotice, unreadableNotice } from "./_walk_notice.ts";
import { stoppedResult, textResult } from "./results.ts";
import type { ToolContext, ToolResult } from "./tool.ts";

/** Files larger than this are skipped (and counted in a notice). */
export const MAX_GREP_FILE_BYTES = 256 * 1024 * 1024;

/** Grep's output modes. */
export type GrepMode = "content" | "files_with_matches" | "count";

/** Files not searched, by reason. */
export interface SkippedFiles {
  binary: number;
  large: number;
  unreadable: number;
  notRegular: number;
  changed: number;
  hardLinked: number;
}

/** The walk's counters as of the moment the results are cut, for the metadata (a prefix of the walk). */
export interface WalkProgress {
  ignoredFiles: number;
  ignoredDirectories: number;
}

/** What a collector needs to know about the call. */
export interface CollectorOptions {
  mode: GrepMode;
  context: number;
  limit: number;
}

/** The matches and counters of one Grep call, and its result. */
export class GrepCollector {
  /** Matching lines (content and count modes) and files with a match found so far. */
  matches = 0;
  files = 0;
  /** Whether the limit cut the results. */
  truncated = false;
  skipped: SkippedFiles = { binary: 0, large: 0, unreadable: 0, notRegular: 0, changed: 0, hardLinked: 0 };
  #options: CollectorOptions;
  #lines: string[] = [];

  constructor(options: CollectorOptions) {
    this.#options = options;
  }

  /** The call's mode, context and limit. */
  get options(): CollectorOptions {
    return this.#options;
  }

  /** Whether any line is shown. */
  get hasLines(): boolean {
    return this.#lines.length > 0;
  }

  /** How much of what the limit lets it show is found: 0 to 1 (lines in content mode, files otherwise). */
  get fullness(): number {
    const found = this.#options.mode === "content" ? this.matches : this.files;
    return Math.min(1, found / Math.max(1, this.#options.limit));
  }

  /** Matching lines to look for in the next file (content mode): one more than still shown. */
  get wantedLines(): number {
    return this.#options.limit - this.matches + 1;
  }

  /** Adds a file's matching lines (content mode); false when the limit cut them. */
  addLines(text: string, shownPath: string, found: LineMatch[]): boolean {
    if (found.length === 0) return true;
    const kept = found.slice(0, this.#options.limit - this.matches);
    if (kept.length > 0) {
      this.files++;
      this.matches += kept.length;
      formatContent(this.#lines, text, displayPath(shownPath), kept, this.#options.context);
    }
    return kept.length === found.length ? true : this.#cut();
  }

  /** Adds a file with a match (files_with_matches mode); false when the limit is reached. */
  addFile(shownPath: string): boolean {
    if (this.files === this.#options.limit) return this.#cut();
    this.files++;
    this.#lines.push(displayPath(shownPath));
    return true;
  }

  /** Adds a file's count of matching lines (count mode); false when the limit is reached. */
  addCount(shownPath: string, count: number): boolean {
    if (count === 0) return true;
    if (this.files === this.#options.limit) return this.#cut();
    this.files++;
    this.matches += count;
    this.#lines.push(`${displayPath(shownPath)}:${count}`);
    return true;
  }

  #cut(): false {
    this.truncated = true;
    return false;
  }

  /** Counts for the result's metadata. */
  metadata(): Record<string, unknown> {
    return {
      matches: this.matches,
      files: this.files,
      truncated: this.truncated,
      skippedBinary: this.skipped.binary,
      skippedLarge: this.skipped.large,
      unreadable: this.skipped.unreadable,
      skippedNotRegular: this.skipped.notRegular,
      skippedChanged: this.skipped.changed,
      skippedHardLinked: this.skipped.hardLinked,
    };
  }

  /**
   * The tool result once the search is over. `walk` is the whole walk (its skipped entries are reported when
   * nothing matched), `progress` the walk's counters when the results were cut (default: the whole walk).
   */
  result(
    pattern: string,
    shownPath: string,
    walk: WalkCounts | null,
    options: { started: number; progress?: WalkProgress; metadata?: Record<string, unknown> },
  ): ToolResult {
    const progress = options.progress ?? walk;
    const metadata = {
      ...this.metadata(),
      ignoredFiles: progress?.ignoredFiles ?? 0,
      ignoredDirectories: progress?.ignoredDirectories ?? 0,
      durationMs: Math.round(performance.now() - options.started),
      ...options.metadata,
    };
    const notes = this.#notSearched();
    if (this.#lines.length === 0) {
      const skipped = walk === null ? null : skippedNotice(walk);
      if (skipped !== null) notes.push(skipped);
      return textResult(
        [`No matches found for pattern "${pattern}" in "${shownPath}"`, ...notes].join("\n"),
        metadata,
      );
    }
    const { mode, limit } = this.#options;
    const unreadable = walk === null ? null : unreadableNotice(walk);
    if (unreadable !== null) notes.push(unreadable);
    const denied = walk === null ? null : deniedNotice(walk);
    if (denied !== null) notes.push(denied);
    if (this.truncated) {
      const what = mode === "content" ? `${limit} matching lines` : `${limit} files`;
      notes.push(
        `(Showing the first ${what} in path order; more matches exist. ` +
          "Narrow the pattern, path or glob, or raise head_limit.)",
      );
    } else if (mode === "count") {
      const lines = `${this.matches} matching line${this.matches === 1 ? "" : "s"}`;
      notes.push(`(${lines} in ${this.files} file${this.files === 1 ? "" : "s"}.)`);
    }
    const output = notes.length > 0 ? [...this.#lines, "", ...notes] : this.#lines;
    return textResult(output.join("\n"), metadata);
  }

  // "(Files not searched: …)" when some were skipped for a reason the model should know.
  #notSearched(): string[] {
    const skipped = this.skipped;
    const parts: string[] = [];
    if (skipped.large > 0) parts.push(`${skipped.large} larger than ${MAX_GREP_FILE_BYTES >> 20} MiB`);
    if (skipped.unreadable > 0) parts.push(`${skipped.unreadable} unreadable`);
    if (skipped.hardLinked > 0) {
      parts.push(`${skipped.hardLinked} with several hard links (strict link checking is on)`);
    }
    if (skipped.notRegular > 0) parts.push(`${skipped.notRegular} not regular files (named pipes, devices)`);
    if (skipped.changed > 0) parts.push(`${skipped.changed} replaced while being searched`);
    if (this.#lines.length === 0 && skipped.binary > 0) parts.push(`${skipped.binary} binary`);
    return parts.length > 0 ? [`(Files not searched: ${parts.join(", ")}.)`] : [];
  }
}

/** The result of a search that stopped early: cancelled, or past the call's time limit. */
export function stopResult(
  slicer: { stopReason(): "aborted" | "timeout" | null },
  context: ToolContext,
): ToolResult {
  if (slicer.stopReason() === "aborted") return stoppedResult("Grep was cancelled", "cancelled");
  return stoppedResult(
    `Grep stopped at its time limit of ${Math.round(context.timeoutMs / 1000)} s before searching every ` +
      "file: narrow the path, the glob or the pattern",
    "timed-out",
  );
}
