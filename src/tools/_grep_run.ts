/**
 * What a Grep call does in its read-only worker, without its input schema: the tool worker loads this (and
 * no zod), the definition in `grep.ts` offers it to the model.
 *
 * Each file is read whole into a reused buffer (opened without blocking and verified: see
 * `_verified_read.ts`), skipped when binary, decoded once, and searched with `indexOf` (literal patterns) or
 * a global regex in bounded chunks (see `_line_search.ts`); line numbers are computed only around matches.
 * Patterns are rewritten so that V8 can always finish them in linear time (`src/common/regex.ts`): Deno
 * cannot stop a worker inside a regex call. Files are read with synchronous calls, in path order as the walk
 * finds them (so a reached limit also ends the walk), yielding to the event loop now and then: measured on a
 * 20,000-file tree, async reads with any concurrency were 2× slower than this, since each async call costs
 * more than the read it wraps.
 *
 * @module
 */
import { compileGlob, type GlobMatcher } from "../common/glob.ts";
import { assertNever } from "../common/errors.ts";
import { posix } from "../common/path.ts";
import {
  GrepCollector,
  type GrepMode,
  MAX_GREP_FILE_BYTES,
  type SkippedFiles,
  stopResult,
} from "./_grep_collector.ts";
import { countMatchingLines, findMatchingLines } from "./_grep_lines.ts";
import { compileGrepMatcher } from "./_grep_matcher.ts";
import { prepassOf, WalkRecorder, walkResult } from "./_grep_prepass.ts";
import { finishWalkAhead, readyWalk, readyWalkFiles } from "./_prewalk.ts";
import { DeniedFiles } from "./_read_denials.ts";
import type { LineMatcher } from "./_line_search.ts";
import { resolveSearchPath, rootContaining } from "./_paths.ts";
import { DEFAULT_HEAD_LIMIT } from "./_shared.ts";
import { isBinaryPath, looksBinary, utf16Bom } from "./_text.ts";
import { TimeSlicer } from "./_time_slicer.ts";
import { confirmLocation, type FileIdentity, readVerifiedSync, type SkipReason } from "./_verified_read.ts";
import { Walker } from "./_walk.ts";
import { recentWalks } from "./_walk_memory.ts";
import type { GrepInput } from "./grep.ts";
import { errorResult, textResult } from "./results.ts";
import type { ToolContext, ToolResult, ToolRunner } from "./tool.ts";

/** Grep's call: searches file contents with a regex, with context lines, counts or file lists. */
export const grepRunner: ToolRunner<GrepInput> = {
  name: "Grep",
  async execute(context: ToolContext, input: GrepInput): Promise<ToolResult> {
    const started = performance.now();
    const prepass = prepassOf(input);
    const compiled = compileGrepMatcher(input.pattern, input.case_insensitive ?? false);
    if (!compiled.ok) return errorResult(compiled.message, { reason: "invalid-pattern" });
    let filter: GlobMatcher | undefined;
    if (input.glob !== undefined) {
      const glob = compileGlob(input.glob, { basename: true });
      if (!glob.ok) {
        return errorResult(`Invalid glob "${input.glob}": ${glob.message}`, { reason: "invalid-glob" });
      }
      filter = glob.matches;
    }
    const shownPath = input.path ?? context.root;
    const resolved = await resolveSearchPath(context, shownPath);
    if (!resolved.ok) {
      return errorResult(`Cannot search "${shownPath}": ${resolved.message}`, { reason: resolved.reason });
    }
    const slicer = new TimeSlicer(context.signal, { deadline: started + context.timeoutMs });
    const search = new Search(compiled.build(slicer), {
      collector: new GrepCollector({
        mode: input.output_mode ?? "content",
        context: input.context ?? 0,
        limit: input.head_limit ?? DEFAULT_HEAD_LIMIT,
      }),
      slicer,
      call: context,
    });
    if (resolved.info?.isDirectory) {
      const matches = filter;
      const denied = DeniedFiles.from(context.deniedReads, context.root);
      let recorder: WalkRecorder | null = null;
      const walker = new Walker(resolved.path, {
        root: context.root,
        additionalRoots: context.additionalRoots,
        excludedPaths: context.excludedPaths,
        denied,
        slicer,
        stamp: prepass?.walk ?? false,
        memory: recentWalks,
        ...(matches === undefined ? {} : {
          filter: prepass === null ? matches : (relativePath: string) => {
            const passes = matches(relativePath);
            recorder?.checkName(relativePath, passes);
            return passes;
          },
        }),
      });
      // A walk ahead of the calls (`_prewalk.ts`) may have walked this tree: a prepass that is to report the
      // walk of the whole tree (no glob, no deny rules) takes its report past the budget instead of walking on.
      // Its file count is given to the pace check (`GrepPrepass.expectedFiles`), so that a search that cannot
      // end within the budget leaves the contents to ripgrep at once, only once this worker has searched
      // before (`warmUpSearch`, or a call): in a worker that has run no search yet the first files go slowly,
      // and a search for the first 100 lines that gives up on that pace leaves ripgrep a search of the whole
      // tree (780-1100 ms instead of ~60 when it happened).
      const mayTakeAhead = prepass?.walk === true && matches === undefined && denied === null;
      if (prepass !== null) {
        const ahead = mayTakeAhead && filesSearched >= PACED_AFTER_FILES
          ? readyWalkFiles(walker.memoryKey)
          : null;
        const paced = prepass.expectedFiles === undefined && ahead !== null
          ? { ...prepass, expectedFiles: ahead }
          : prepass;
        recorder = new WalkRecorder(paced, started);
      }
      // Files are searched as the walk finds them, in path order, so a reached limit ends the walk too. A
      // prepass past its budget only walks on.
      let searching = true;
      let sinceCheck = 0;
      for (const file of walker.files()) {
        if (file === null || ++sinceCheck === 16) {
          sinceCheck = 0;
          if (slicer.due() && await slicer.pause()) return stopResult(slicer, context);
          if (file === null) continue;
        }
        recorder?.record(file.relativePath, walker);
        if (!searching) continue;
        if (recorder?.overBudget(search.confirmMs, search.collector.fullness)) {
          // The runtime starts ripgrep now, while this call checks the stamps of a recent walk or walks on.
          context.progress?.("budget-spent");
          if (!recorder.walks) return recorder.budgetSpent(search.collector.files > 0);
          // A walk ahead this call suspended walks on to its end instead (the rest of the tree, not all of it).
          if (mayTakeAhead && !await finishWalkAhead(walker.memoryKey, slicer)) {
            return stopResult(slicer, context);
          }
          const ready = mayTakeAhead ? readyWalk(walker.memoryKey) : null;
          if (ready !== null) return walkResult(ready.report);
          searching = false;
          continue;
        }
        if (!await search.searchFile(file.path, file.relativePath)) break;
      }
      if (search.stopped) return stopResult(slicer, context);
      if (!searching && recorder !== null) {
        const roots = [context.root, ...context.additionalRoots ?? []];
        return recorder.report(walker, {
          start: resolved.path,
          base: rootContaining(roots, resolved.path) ?? context.root,
          roots,
          excluded: context.excludedPaths,
        });
      }
      return search.collector.result(input.pattern, shownPath, walker, { started, metadata: ENGINE });
    }
    if (resolved.info?.isFile) {
      await search.searchFile(resolved.path, posix.basename(resolved.path));
      if (search.stopped) return stopResult(slicer, context);
      if (search.collector.skipped.binary > 0) {
        return textResult(
          `No matches found: "${shownPath}" is a binary file; use Bash to inspect it (for example \`strings\` or \`xxd\`)`,
          { ...search.collector.metadata(), durationMs: Math.round(performance.now() - started), ...ENGINE },
        );
      }
      return search.collector.result(input.pattern, shownPath, null, { started, metadata: ENGINE });
    }
    return errorResult(`Cannot search "${shownPath}": it is neither a regular file nor a directory`, {
      reason: "not-a-file",
    });
  },
};

const ENGINE = { engine: "typescript" } as const;

/** Files this worker has searched (calls and `warmUpSearch`). */
let filesSearched = 0;
/**
 * Files a worker has searched from which a search's pace over its first files shows the pace of the rest
 * (`warmUpSearch` searches more).
 */
const PACED_AFTER_FILES = 64;

/** What `warmUpSearch` searches: files of the workspace as a call's context names it. */
export interface WarmUpTarget {
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the folders added to the workspace. */
  additionalRoots: readonly string[];
  /** Real paths the tools treat as outside the workspace. */
  excludedPaths: readonly string[];
  /** The files, relative to the root, in the order a walk found them. */
  files: readonly string[];
}

/** The searches `warmUpSearch` runs on each file: a regex with matches in many source files, and a literal. */
const WARM_UP_PATTERNS: readonly string[] = [String.raw`(?:function|class|def)\s+[A-Za-z_]\w*`, "return"];
/** Lines each of `warmUpSearch`'s searches may find: none stops at a limit before its last file. */
const WARM_UP_LIMIT = 100_000;
/** Files `warmUpSearch` searches at most: about as many as a search for the first 100 lines reads. */
export const WARM_UP_FILES = 64;

/**
 * Searches the first `WARM_UP_FILES` of `target.files` as a Grep call reads them (the same reads, location
 * checks, matchers and lines of a result) for a regex and a literal, and drops what it found; resolves to the
 * number of files searched. For a worker idle before its first call: V8 compiles the search path on its
 * first runs, which the call would otherwise pay (measured: a search for the first 100 lines of a 20,000-file
 * tree took ~20 ms more in a fresh worker than in one that had searched before). Stops at once when `busy()`;
 * `between` lets the messages that came in run, after each file.
 */
export async function warmUpSearch(
  target: WarmUpTarget,
  options: { busy: () => boolean; between: () => Promise<void> },
): Promise<number> {
  const call = { ...target, strictLinks: false };
  const slicer = new TimeSlicer(undefined);
  const searches: Search[] = [];
  const buffer = new Uint8Array(1 << 20);
  for (const pattern of WARM_UP_PATTERNS) {
    const compiled = compileGrepMatcher(pattern, false);
    if (!compiled.ok) continue;
    const collector = new GrepCollector({ mode: "content", context: 0, limit: WARM_UP_LIMIT });
    searches.push(new Search(compiled.build(slicer), { collector, slicer, call, buffer }));
  }
  let searched = 0;
  for (const relativePath of target.files.slice(0, WARM_UP_FILES)) {
    if (options.busy()) break;
    const path = posix.join(target.root, relativePath);
    // The literal's search (indexOf) is simpler than the regex's: a few files compile it.
    for (const search of searched % 4 === 0 ? searches : searches.slice(0, 1)) {
      await search.searchFile(path, relativePath);
    }
    searched++;
    await options.between();
  }
  // The result's text, as a call ends.
  for (const search of searches) search.collector.result("", target.root, null, { started: 0 });
  return searched;
}

interface SearchOptions {
  collector: GrepCollector;
  slicer: TimeSlicer;
  /** The call's context: root, excluded folders, strict links. */
  call: Pick<ToolContext, "root" | "additionalRoots" | "excludedPaths" | "strictLinks">;
  /** The buffer files are read into at first (searches one after the other may share one); default a new one. */
  buffer?: Uint8Array;
}

const SKIP_COUNTERS: Readonly<Record<Exclude<SkipReason, "too-large">, keyof SkippedFiles>> = {
  "unreadable": "unreadable",
  "not-regular": "notRegular",
  "changed": "changed",
  "hard-linked": "hardLinked",
};

/** The state of one Grep call that reads files itself: reads them, finds matches, feeds the collector. */
class Search {
  readonly collector: GrepCollector;
  #matcher: LineMatcher;
  #options: SearchOptions;
  #buffer: Uint8Array;
  #decoder = new TextDecoder();
  /** Whether the slicer stopped the search (cancelled or past the deadline). */
  stopped = false;
  /** Milliseconds spent confirming the location of files with matches. */
  confirmMs = 0;

  constructor(matcher: LineMatcher, options: SearchOptions) {
    this.#matcher = matcher;
    this.#options = options;
    this.collector = options.collector;
    this.#buffer = options.buffer ?? new Uint8Array(1 << 20);
  }

  /** Searches one file; resolves to false when the search should stop (limit reached, or `stopped`). */
  async searchFile(path: string, shownPath: string): Promise<boolean> {
    filesSearched++;
    const collector = this.collector;
    if (isBinaryPath(shownPath)) {
      collector.skipped.binary++;
      return true;
    }
    const read = this.#readText(path);
    if (read === null) return true;
    const { text, identity } = read;
    const { slicer } = this.#options;
    const mode: GrepMode = collector.options.mode;
    switch (mode) {
      case "files_with_matches": {
        const count = await countMatchingLines(text, this.#matcher, { slicer, max: 1 });
        if (count === null) return this.#stop();
        if (count === 0 || !this.#confirm(path, identity)) return true;
        return collector.addFile(shownPath);
      }
      case "count": {
        const count = await countMatchingLines(text, this.#matcher, { slicer });
        if (count === null) return this.#stop();
        if (count > 0 && !this.#confirm(path, identity)) return true;
        return collector.addCount(shownPath, count);
      }
      case "content": {
        const found = await findMatchingLines(text, this.#matcher, { slicer, max: collector.wantedLines });
        if (found === null) return this.#stop();
        if (found.length > 0 && !this.#confirm(path, identity)) return true;
        return collector.addLines(text, shownPath, found);
      }
      default:
        return assertNever(mode);
    }
  }

  #stop(): false {
    this.stopped = true;
    return false;
  }

  // A file about to be shown is checked again, many times (see `confirmLocation`); counted when it fails.
  #confirm(path: string, identity: FileIdentity): boolean {
    const { call } = this.#options;
    const started = performance.now();
    const confirmed = confirmLocation(path, identity, {
      root: call.root,
      additionalRoots: call.additionalRoots,
      excludedPaths: call.excludedPaths,
    });
    this.confirmMs += performance.now() - started;
    if (!confirmed) this.collector.skipped.changed++;
    return confirmed;
  }

  // Reads a file into the reused buffer and decodes it; null (and counted) when skipped.
  #readText(path: string): { text: string; identity: FileIdentity } | null {
    const { call } = this.#options;
    const skipped = this.collector.skipped;
    const read = readVerifiedSync(path, {
      root: call.root,
      additionalRoots: call.additionalRoots,
      excludedPaths: call.excludedPaths,
      strictLinks: call.strictLinks,
      maxBytes: MAX_GREP_FILE_BYTES,
      buffer: this.#buffer,
    });
    if (!read.ok) {
      if (read.reason === "too-large") skipped.large++;
      else skipped[SKIP_COUNTERS[read.reason]]++;
      return null;
    }
    this.#buffer = read.buffer;
    const bytes = read.bytes;
    if (looksBinary(bytes)) {
      skipped.binary++;
      return null;
    }
    // A UTF-16 BOM makes looksBinary say text; the default decoder drops a UTF-8 BOM.
    const wide = utf16Bom(bytes);
    const text = wide === null ? this.#decoder.decode(bytes) : new TextDecoder(wide).decode(bytes);
    return {
      text: this.#matcher.normalizeCrlf && text.includes("\r\n") ? text.replaceAll("\r\n", "\n") : text,
      identity: read.identity,
    };
  }
}
