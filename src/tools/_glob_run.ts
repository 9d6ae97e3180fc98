/**
 * What a Glob call does, without its input schema: the tool worker loads this (and no zod), the definition
 * in `glob.ts` offers it to the model.
 *
 * @module
 */
import { compileGlob, globBase } from "../common/glob.ts";
import { displayPath } from "./_display_path.ts";
import { posix } from "../common/path.ts";
import { isExcludedPath, resolveSearchPath, safePath } from "./_paths.ts";
import { MAX_GLOB_RESULTS } from "./_shared.ts";
import { DeniedFiles } from "./_read_denials.ts";
import { TimeSlicer } from "./_time_slicer.ts";
import { compareStrings, type WalkedFile, walkFiles, walkMemoryKey, type WalkResult } from "./_walk.ts";
import { finishWalkAhead, type ReadyWalk, readyWalk } from "./_prewalk.ts";
import { skippedNotice } from "./_walk_notice.ts";
import { recentWalks } from "./_walk_memory.ts";
import type { GlobInput } from "./glob.ts";
import { errorResult, stoppedResult, textResult } from "./results.ts";
import type { ToolContext, ToolResult, ToolRunner } from "./tool.ts";

/** Glob's call: lists the files under a directory whose relative path matches a pattern, newest first. */
export const globRunner: ToolRunner<GlobInput> = {
  name: "Glob",
  async execute(context: ToolContext, input: GlobInput): Promise<ToolResult> {
    const started = performance.now();
    const shownPath = input.path ?? context.root;
    const resolved = await resolveSearchPath(context, shownPath);
    if (!resolved.ok) {
      return errorResult(`Cannot search "${shownPath}": ${resolved.message}`, { reason: resolved.reason });
    }
    if (resolved.info === null || !resolved.info.isDirectory) {
      return errorResult(
        `Cannot search "${shownPath}": it is a file, not a directory; pass its directory as path, ` +
          "or read the file with ReadFile",
        { reason: "not-a-directory" },
      );
    }
    const searchRoot = resolved.path;
    const pattern = normalizePattern(input.pattern, [shownPath, searchRoot]);
    if (pattern === null) {
      return errorResult(
        `Invalid pattern "${input.pattern}": an absolute pattern must lie inside the search directory ` +
          `"${shownPath}"; give a pattern relative to it (for example "**/*.ts") and the directory as path`,
        { reason: "invalid-pattern" },
      );
    }

    const compiled = compileGlob(pattern);
    if (!compiled.ok) {
      return errorResult(`Invalid pattern "${input.pattern}": ${compiled.message}`, {
        reason: "invalid-pattern",
      });
    }
    const matches = compiled.matches;

    // Walk only the pattern's literal leading directories ("src/tools" of "src/tools/**/*.ts").
    const base = globBase(pattern);
    let start = searchRoot;
    if (base !== "") {
      const baseResolved = await safePath(context.root, posix.join(searchRoot, base), {
        mustExist: true,
        additionalRoots: context.additionalRoots,
      });
      if (!baseResolved.ok && baseResolved.reason === "outside-workspace") {
        return errorResult(`Invalid pattern "${input.pattern}": ${baseResolved.message}`, {
          reason: "outside-workspace",
        });
      }
      if (
        !baseResolved.ok || baseResolved.info === null || !baseResolved.info.isDirectory ||
        isExcludedPath(baseResolved.path, context.excludedPaths)
      ) {
        return noMatch(input.pattern, shownPath, pattern, emptyWalk(), started);
      }
      start = baseResolved.path;
    }
    const prefix = base === "" ? "" : `${base}/`;
    const deadline = started + context.timeoutMs;
    const denied = DeniedFiles.from(context.deniedReads, context.root);
    // The workspace walked ahead of the calls (`_prewalk.ts`): a pattern from its root without deny rules
    // takes the files of that walk that match.
    const roots = [context.root, ...context.additionalRoots ?? []];
    const aheadKey = base === "" && denied === null
      ? walkMemoryKey(start, roots, context.excludedPaths ?? [])
      : null;
    // A walk ahead this call suspended walks on to its end instead (the rest of the tree, not all of it).
    if (aheadKey !== null && !await finishWalkAhead(aheadKey, new TimeSlicer(context.signal, { deadline }))) {
      return stopResult(context.signal, context.timeoutMs);
    }
    const ahead = aheadKey === null ? null : readyWalk(aheadKey);
    const walk = ahead !== null ? matchingAhead(ahead, start, matches) : await walkFiles(start, {
      root: context.root,
      additionalRoots: context.additionalRoots,
      excludedPaths: context.excludedPaths,
      denied,
      signal: context.signal,
      deadline,
      filter: (relativePath) => matches(prefix + relativePath),
      memory: recentWalks,
    });
    if (walk.aborted) return stopResult(context.signal, context.timeoutMs);
    if (walk.files.length === 0) return noMatch(input.pattern, shownPath, pattern, walk, started);

    const slicer = new TimeSlicer(context.signal, { deadline });
    const dated: { path: string; mtime: number }[] = [];
    // Names the system gave as bytes that are not UTF-8: shown with U+FFFD, which names no file.
    let undecodable = 0;
    for (const file of walk.files) {
      if (slicer.due() && await slicer.pause()) return stopResult(context.signal, context.timeoutMs);
      const mtime = modificationTime(file.path);
      if (mtime === null && file.relativePath.includes("\uFFFD")) undecodable++;
      dated.push({ path: prefix + file.relativePath, mtime: mtime ?? 0 });
    }
    dated.sort((a, b) => b.mtime - a.mtime || compareStrings(a.path, b.path));
    const shown = dated.slice(0, MAX_GLOB_RESULTS);
    const lines = shown.map((entry) => displayPath(entry.path));
    const notices: string[] = [];
    if (dated.length > shown.length) {
      notices.push(
        `(Showing the ${shown.length} most recently modified of ${dated.length} matching files. ` +
          "Narrow the pattern or the path to see the others.)",
      );
    }
    if (undecodable > 0) {
      notices.push(
        `(${undecodable} path${
          undecodable === 1 ? " is" : "s are"
        } not valid UTF-8 and shown with U+FFFD (\uFFFD) ` +
          "in place of the bytes that are not: no tool can open such a path as shown; use Bash (for " +
          "example `ls -b`) to reach it.)",
      );
    }
    const ignored = skippedNotice(walk);
    if (ignored !== null) notices.push(ignored);
    if (notices.length > 0) lines.push("", ...notices);
    return textResult(lines.join("\n"), {
      ...walkMetadata(walk, started),
      count: dated.length,
      shown: shown.length,
      truncated: dated.length > shown.length,
    });
  },
};

// The result of a walk that stopped early: cancelled, or past the call's time limit.
function stopResult(signal: AbortSignal, timeoutMs: number): ToolResult {
  if (signal.aborted) return stoppedResult("Glob was cancelled", "cancelled");
  return stoppedResult(
    `Glob stopped at its time limit of ${Math.round(timeoutMs / 1000)} s: narrow the pattern or the path`,
    "timed-out",
  );
}

/**
 * Makes a pattern relative: drops a leading "./", and turns an absolute pattern under one of `bases`
 * into a relative one. Returns null for an absolute pattern elsewhere.
 */
function normalizePattern(pattern: string, bases: readonly string[]): string | null {
  let result = pattern;
  if (result.startsWith("/")) {
    const base = bases.find((candidate) =>
      result.startsWith(candidate.endsWith("/") ? candidate : `${candidate}/`)
    );
    if (base === undefined) return null;
    result = result.slice(base.endsWith("/") ? base.length : base.length + 1);
  }
  while (result.startsWith("./")) result = result.slice(2);
  return result === "" ? "**" : result;
}

/** A file's modification time (0 when the system keeps none), or null when it cannot be looked up. */
function modificationTime(path: string): number | null {
  try {
    return Deno.statSync(path).mtime?.getTime() ?? 0;
  } catch {
    return null;
  }
}

function noMatch(
  original: string,
  shownPath: string,
  pattern: string,
  walk: WalkResult,
  started: number,
): ToolResult {
  const lines = [`No files found matching "${original}" in "${shownPath}"`];
  if (!pattern.includes("/") && !pattern.startsWith("**")) {
    lines.push(
      `("${pattern}" matches only files directly in that directory; use "**/${pattern}" to search subdirectories too.)`,
    );
  }
  const ignored = skippedNotice(walk);
  if (ignored !== null) lines.push(ignored);
  return textResult(lines.join("\n"), {
    ...walkMetadata(walk, started),
    count: 0,
    shown: 0,
    truncated: false,
  });
}

/**
 * What a walk of `start` filtered by `matches` finds, from the walk of it ahead of the calls without a filter:
 * the files that pass, in the same order; as ignored, the ignored files that pass; the rest as that walk.
 */
function matchingAhead(
  ahead: ReadyWalk,
  start: string,
  matches: (path: string) => boolean,
): WalkResult & { walkedAhead: true } {
  const files: WalkedFile[] = [];
  for (const relativePath of ahead.report.files) {
    if (matches(relativePath)) files.push({ path: `${start}/${relativePath}`, relativePath });
  }
  const counts = ahead.report.counts;
  return {
    ...emptyWalk(),
    files,
    ignoredFiles: ahead.ignored.filter(matches).length,
    ignoredDirectories: counts.ignoredDirectories,
    skippedSymlinks: counts.skippedSymlinks,
    changedDirectories: counts.changedDirectories,
    ignoreProblems: counts.ignoreProblems,
    unreadable: counts.unreadable,
    walkedAhead: true,
  };
}

function emptyWalk(): WalkResult {
  return {
    files: [],
    ignoredFiles: 0,
    ignoredDirectories: 0,
    skippedSymlinks: 0,
    changedDirectories: 0,
    ignoreProblems: [],
    unreadable: [],
    listedDirectories: 0,
    recalledDirectories: 0,
    aborted: false,
  };
}

function walkMetadata(walk: WalkResult & { walkedAhead?: true }, started: number): Record<string, unknown> {
  return {
    // Whether the files came from the walk ahead of the calls (`_prewalk.ts`): no directory was listed.
    ...(walk.walkedAhead ? { walkedAhead: true } : {}),
    ignoredFiles: walk.ignoredFiles,
    ignoredDirectories: walk.ignoredDirectories,
    skippedSymlinks: walk.skippedSymlinks,
    // Directories the walk listed, and those it took from the worker's memory of earlier walks.
    listedDirectories: walk.listedDirectories,
    recalledDirectories: walk.recalledDirectories,
    durationMs: Math.round(performance.now() - started),
  };
}
