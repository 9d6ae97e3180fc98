/**
 * Grep: search file contents with a JavaScript regular expression.
 *
 * Written in TypeScript because the read-only worker cannot spawn ripgrep. Each file is read whole into a
 * reused buffer (opened without blocking and verified: see `_verified_read.ts`), skipped when binary,
 * decoded once, and searched with `indexOf` (literal patterns) or a global regex in bounded chunks (see
 * `_line_search.ts`); line numbers are computed only around matches. Patterns are rewritten so that V8 can
 * always finish them in linear time (`src/common/regex.ts`): Deno cannot stop a worker inside a regex call. Files are
 * read with synchronous calls, in path order as the walk finds them (so a reached limit also ends the walk),
 * yielding to the event loop now and then: measured on a 20,000-file tree, async reads with any
 * concurrency were 2× slower than this, since each async call costs more than the read it wraps.
 *
 * @module
 */
import { posix } from "node:path";
import { z } from "zod";
import { compileGlob, type GlobMatcher } from "../common/glob.ts";
import {
  countMatchingLines,
  findMatchingLines,
  formatContent,
  MAX_GREP_LINE_CHARACTERS,
} from "./_grep_lines.ts";
import { type LineMatcher, literalMatcher, regexMatcher, type SliceClock } from "./_line_search.ts";
import { isExcludedPath, safePath, validatePathInput } from "./_paths.ts";
import { compileSearchPattern } from "../common/regex.ts";
import { isBinaryPath, looksBinary, utf16Bom } from "./_text.ts";
import { TimeSlicer } from "./_time_slicer.ts";
import { readVerifiedSync, type SkipReason } from "./_verified_read.ts";
import { skippedNotice, type WalkCounts, Walker } from "./_walk.ts";
import { assertNever } from "../common/errors.ts";
import {
  defineTool,
  errorResult,
  stoppedResult,
  textResult,
  type ToolContext,
  type ToolResult,
} from "./tool.ts";

export { MAX_GREP_LINE_CHARACTERS } from "./_grep_lines.ts";

/** Matches (content), files (files_with_matches) or counts (count) returned when head_limit is not given. */
export const DEFAULT_HEAD_LIMIT = 100;
/** Files larger than this are skipped (and counted in a notice). */
export const MAX_GREP_FILE_BYTES = 256 * 1024 * 1024;

const MAX_CONTEXT = 20;
const MAX_HEAD_LIMIT = 100_000;

const GREP_DESCRIPTION = `Search the contents of files for a regular expression and show the matching lines.

When to use: to find where something is defined, used, configured or mentioned: a function name, an import, an error message, a TODO. Search first, then read only the relevant range of a file with ReadFile (offset/limit) instead of reading whole files. Several Grep calls in one turn run in parallel.

When not to use: to find files by name or path, use Glob. To read a file, use ReadFile. For searches this tool cannot express (binary files, files ignored by .gitignore, compressed archives, git history), use Bash.

Pattern: a JavaScript regular expression, matched against one line at a time ("^" and "$" are the line's start and end). Escape regex characters to search for them literally: "foo\\(" for "foo(", "\\.ts" for ".ts", "\\{" for "{". A pattern starting with "-" is just a pattern. Examples: "function\\s+parseConfig", "TODO|FIXME", "import .* from \\"zod\\"". Every search runs in linear time, so lookahead "(?=", "(?!", lookbehind "(?<=", "(?<!" and backreferences ("\\1", "\\k<name>") are rejected, as in ripgrep: match the surrounding text directly instead, or use Bash with "grep -P". Unicode property escapes such as "\\p{L}" cover characters up to U+FFFF only (emoji and other characters above count as having no property). An invalid pattern is rejected with the parser's message.

Parameters:
- path (optional): absolute path of a directory or a single file inside the workspace; omit it to search the whole workspace.
- glob (optional): only search files whose name matches, e.g. "*.ts", "*.{ts,tsx}"; a glob with a "/" is matched against the path relative to the search directory ("src/**/*.ts"). Same syntax as Glob's pattern.
- output_mode (optional): "content" (default) shows matching lines as "path:line: text"; "files_with_matches" lists the paths of files that match; "count" shows "path:N", the number of matching lines per file.
- context (optional, content mode): lines to show before and after each match (at most ${MAX_CONTEXT}), shown as "path-line- text"; "--" separates groups that are not adjacent.
- case_insensitive (optional): ignore case.
- head_limit (optional): at most this many matching lines (content mode) or files (files_with_matches and count modes); default ${DEFAULT_HEAD_LIMIT}. Raise it only when you need more: narrowing the pattern, path or glob is usually better.

Output: paths are relative to the search directory (for a single file, its name), files in path order. Lines longer than ${MAX_GREP_LINE_CHARACTERS} characters are shortened around the match. When the limit cuts the results, a final notice says more matches exist: narrow the pattern, path or glob, or raise head_limit. Binary files, the directories .git, node_modules, vendor, .idea and __pycache__, and whatever .gitignore files ignore are skipped. When nothing matches, the result says "No matches found".`;

function integer(min: number, max: number, name: string): z.ZodNumber {
  const error = `${name} must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

const GrepInput = z.object({
  pattern: z.string().min(1, { error: "pattern must not be empty" }).describe(
    'JavaScript regular expression matched against each line, e.g. "TODO|FIXME" or "^export function"',
  ),
  path: z.string().optional().describe(
    "Absolute path of a directory or file to search, inside the workspace; omit to search the workspace root",
  ),
  glob: z.string().min(1, { error: "glob must not be empty" }).optional().describe(
    'Only search files whose name matches this glob, e.g. "*.ts" or "*.{ts,tsx}"',
  ),
  context: integer(0, MAX_CONTEXT, "context").optional().describe(
    "Lines of context before and after each match (content mode only)",
  ),
  case_insensitive: z.boolean().optional().describe("Match without regard to case; default false"),
  output_mode: z.enum(["content", "files_with_matches", "count"]).optional().describe(
    '"content" (default): matching lines; "files_with_matches": paths only; "count": matching lines per file',
  ),
  head_limit: integer(1, MAX_HEAD_LIMIT, "head_limit").optional().describe(
    `Maximum matching lines (content) or files (other modes) to return; default ${DEFAULT_HEAD_LIMIT}`,
  ),
}).strict();

/** The input of Grep. */
export type GrepInput = z.infer<typeof GrepInput>;

/** Grep: searches file contents with a regex, with context lines, counts or file lists. */
export const grepTool = defineTool({
  name: "Grep",
  category: "search",
  description: GREP_DESCRIPTION,
  inputSchema: GrepInput,
  isReadOnly: true,
  // Reads only: any number may run at once, with each other and with other reads.
  isConcurrencySafe: () => true,
  validateInput(input, context) {
    const compiled = compileMatcher(input.pattern, input.case_insensitive ?? false);
    if (!compiled.ok) return compiled.message;
    if (input.glob !== undefined) {
      const glob = compileGlob(input.glob, { basename: true });
      if (!glob.ok) return `Invalid glob "${input.glob}": ${glob.message}`;
    }
    if (input.path === undefined) return null;
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot search "${input.path}": ${problem.message}`;
  },
  async execute(context, input) {
    const started = performance.now();
    const compiled = compileMatcher(input.pattern, input.case_insensitive ?? false);
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
    const resolved = await safePath(context.root, shownPath, {
      mustExist: true,
      additionalRoots: context.additionalRoots,
    });
    if (!resolved.ok) {
      return errorResult(`Cannot search "${shownPath}": ${resolved.message}`, { reason: resolved.reason });
    }
    if (isExcludedPath(resolved.path, context.excludedPaths)) {
      return errorResult(
        `Cannot search "${shownPath}": it lies in a folder the tools treat as outside the workspace`,
        { reason: "outside-workspace" },
      );
    }
    const slicer = new TimeSlicer(context.signal, { deadline: started + context.timeoutMs });
    const search = new Search(compiled.build(slicer), {
      mode: input.output_mode ?? "content",
      context: input.context ?? 0,
      limit: input.head_limit ?? DEFAULT_HEAD_LIMIT,
      slicer,
      call: context,
    });
    let walker: Walker | null = null;
    if (resolved.info?.isDirectory) {
      walker = new Walker(resolved.path, {
        root: context.root,
        additionalRoots: context.additionalRoots,
        excludedPaths: context.excludedPaths,
        slicer,
        ...(filter === undefined ? {} : { filter }),
      });
      // Files are searched as the walk finds them, in path order, so a reached limit ends the walk too.
      let sinceCheck = 0;
      for (const file of walker.files()) {
        if (file === null || ++sinceCheck === 16) {
          sinceCheck = 0;
          if (slicer.due() && await slicer.pause()) return stopResult(slicer, context);
          if (file === null) continue;
        }
        if (!await search.searchFile(file.path, file.relativePath)) break;
      }
      if (search.stopped) return stopResult(slicer, context);
    } else if (resolved.info?.isFile) {
      await search.searchFile(resolved.path, posix.basename(resolved.path));
      if (search.stopped) return stopResult(slicer, context);
      if (search.skipped.binary > 0) {
        return textResult(
          `No matches found: "${shownPath}" is a binary file; use Bash to inspect it (for example \`strings\` or \`xxd\`)`,
          { ...search.metadata(), durationMs: Math.round(performance.now() - started) },
        );
      }
    } else {
      return errorResult(`Cannot search "${shownPath}": it is neither a regular file nor a directory`, {
        reason: "not-a-file",
      });
    }
    return search.result(input.pattern, shownPath, walker, started);
  },
});

// The result of a search that stopped early: cancelled, or past the call's time limit.
function stopResult(slicer: TimeSlicer, context: ToolContext): ToolResult {
  if (slicer.stopReason() === "aborted") return stoppedResult("Grep was cancelled", "cancelled");
  return stoppedResult(
    `Grep stopped at its time limit of ${Math.round(context.timeoutMs / 1000)} s before searching every ` +
      "file: narrow the path, the glob or the pattern",
    "timed-out",
  );
}

type CompileResult =
  | { ok: true; build: (clock: SliceClock) => LineMatcher }
  | { ok: false; message: string };

const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/**
 * Builds the matcher for a pattern: `indexOf` for a literal, else a regex rewritten for V8's linear-time
 * engine (`src/common/regex.ts`) and run in bounded chunks (`_line_search.ts`).
 */
function compileMatcher(pattern: string, caseInsensitive: boolean): CompileResult {
  if (!caseInsensitive && !REGEX_SYNTAX.test(pattern) && !pattern.includes("\n")) {
    return { ok: true, build: () => literalMatcher(pattern) };
  }
  const compiled = compileSearchPattern(pattern, { ignoreCase: caseInsensitive, flags: "gm" });
  if (!compiled.ok) return compiled;
  const { regex, units, assertions } = compiled;
  const normalizeCrlf = /[$^]/.test(pattern);
  return {
    ok: true,
    build: (clock) => regexMatcher(regex, { units, assertions, normalizeCrlf, clock }),
  };
}

interface SearchOptions {
  mode: NonNullable<GrepInput["output_mode"]>;
  context: number;
  limit: number;
  slicer: TimeSlicer;
  /** The call's context: root, excluded folders, strict links. */
  call: ToolContext;
}

/** Files not searched, by reason. */
interface Skipped {
  binary: number;
  large: number;
  unreadable: number;
  notRegular: number;
  changed: number;
  hardLinked: number;
}

const SKIP_COUNTERS: Readonly<Record<Exclude<SkipReason, "too-large">, keyof Skipped>> = {
  "unreadable": "unreadable",
  "not-regular": "notRegular",
  "changed": "changed",
  "hard-linked": "hardLinked",
};

/** The state of one Grep call: reads files, finds matches and builds the output as it goes. */
class Search {
  #matcher: LineMatcher;
  #options: SearchOptions;
  #buffer: Uint8Array = new Uint8Array(1 << 20);
  #decoder = new TextDecoder();
  #lines: string[] = [];
  /** Matching lines (content and count modes) and files with a match found so far. */
  matches = 0;
  files = 0;
  /** Whether the limit cut the results. */
  truncated = false;
  /** Whether the slicer stopped the search (cancelled or past the deadline). */
  stopped = false;
  skipped: Skipped = { binary: 0, large: 0, unreadable: 0, notRegular: 0, changed: 0, hardLinked: 0 };

  constructor(matcher: LineMatcher, options: SearchOptions) {
    this.#matcher = matcher;
    this.#options = options;
  }

  /** Searches one file; resolves to false when the search should stop (limit reached, or `stopped`). */
  async searchFile(path: string, shownPath: string): Promise<boolean> {
    if (isBinaryPath(shownPath)) {
      this.skipped.binary++;
      return true;
    }
    const text = this.#readText(path);
    if (text === null) return true;
    const { mode, limit, slicer } = this.#options;
    switch (mode) {
      case "files_with_matches": {
        const count = await countMatchingLines(text, this.#matcher, { slicer, max: 1 });
        if (count === null) return this.#stop();
        if (count === 0) return true;
        if (this.files === limit) return this.#cut();
        this.files++;
        this.#lines.push(shownPath);
        return true;
      }
      case "count": {
        const count = await countMatchingLines(text, this.#matcher, { slicer });
        if (count === null) return this.#stop();
        if (count === 0) return true;
        if (this.files === limit) return this.#cut();
        this.files++;
        this.matches += count;
        this.#lines.push(`${shownPath}:${count}`);
        return true;
      }
      case "content": {
        const found = await findMatchingLines(text, this.#matcher, { slicer, max: limit - this.matches + 1 });
        if (found === null) return this.#stop();
        if (found.length === 0) return true;
        const kept = found.slice(0, limit - this.matches);
        if (kept.length > 0) {
          this.files++;
          this.matches += kept.length;
          formatContent(this.#lines, text, shownPath, kept, this.#options.context);
        }
        return kept.length === found.length ? true : this.#cut();
      }
      default:
        return assertNever(mode);
    }
  }

  #cut(): false {
    this.truncated = true;
    return false;
  }

  #stop(): false {
    this.stopped = true;
    return false;
  }

  // Reads a file into the reused buffer and decodes it; null (and counted) when skipped.
  #readText(path: string): string | null {
    const { call } = this.#options;
    const read = readVerifiedSync(path, {
      root: call.root,
      additionalRoots: call.additionalRoots,
      excludedPaths: call.excludedPaths,
      strictLinks: call.strictLinks,
      maxBytes: MAX_GREP_FILE_BYTES,
      buffer: this.#buffer,
    });
    if (!read.ok) {
      if (read.reason === "too-large") this.skipped.large++;
      else this.skipped[SKIP_COUNTERS[read.reason]]++;
      return null;
    }
    this.#buffer = read.buffer;
    const bytes = read.bytes;
    if (looksBinary(bytes)) {
      this.skipped.binary++;
      return null;
    }
    // A UTF-16 BOM makes looksBinary say text; the default decoder drops a UTF-8 BOM.
    const wide = utf16Bom(bytes);
    const text = wide === null ? this.#decoder.decode(bytes) : new TextDecoder(wide).decode(bytes);
    return this.#matcher.normalizeCrlf && text.includes("\r\n") ? text.replaceAll("\r\n", "\n") : text;
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

  /** The tool result once the search is over. */
  result(pattern: string, shownPath: string, walk: WalkCounts | null, started: number): ToolResult {
    const metadata = {
      ...this.metadata(),
      ignoredFiles: walk?.ignoredFiles ?? 0,
      ignoredDirectories: walk?.ignoredDirectories ?? 0,
      durationMs: Math.round(performance.now() - started),
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
