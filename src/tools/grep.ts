/**
 * Grep: search file contents with a JavaScript regular expression.
 *
 * Written in TypeScript because the read-only worker cannot spawn ripgrep. Each file is read whole into a
 * reused buffer, skipped when binary, decoded once, and searched with one `indexOf` (literal patterns) or
 * one global regex over the whole text; line numbers are computed only around matches. Files are read
 * with synchronous calls, in path order as the walk finds them (so a reached limit also ends the walk),
 * yielding to the event loop now and then: measured on a 20,000-file tree, async reads with any
 * concurrency were 2× slower than this, since each async call costs more than the read it wraps.
 *
 * @module
 */
import { posix } from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { safePath, validatePathInput } from "./_paths.ts";
import { isBinaryPath, looksBinary, utf16Bom } from "./_text.ts";
import { assertNever } from "./errors.ts";
import { skippedNotice, TimeSlicer, type WalkCounts, Walker } from "./_walk.ts";
import { defineTool, errorResult, textResult, type ToolResult } from "./tool.ts";

/** Matches (content), files (files_with_matches) or counts (count) returned when head_limit is not given. */
export const DEFAULT_HEAD_LIMIT = 100;
/** Characters of a matching or context line shown; longer lines are shortened around the match. */
export const MAX_GREP_LINE_CHARACTERS = 500;
/** Files larger than this are skipped (and counted in a notice). */
export const MAX_GREP_FILE_BYTES = 256 * 1024 * 1024;

const MAX_CONTEXT = 20;
const MAX_HEAD_LIMIT = 100_000;

const GREP_DESCRIPTION = `Search the contents of files for a regular expression and show the matching lines.

When to use: to find where something is defined, used, configured or mentioned: a function name, an import, an error message, a TODO. Search first, then read only the relevant range of a file with ReadFile (offset/limit) instead of reading whole files. Several Grep calls in one turn run in parallel.

When not to use: to find files by name or path, use Glob. To read a file, use ReadFile. For searches this tool cannot express (binary files, files ignored by .gitignore, compressed archives, git history), use Bash.

Pattern: a JavaScript regular expression, matched against one line at a time ("^" and "$" are the line's start and end). Escape regex characters to search for them literally: "foo\\(" for "foo(", "\\.ts" for ".ts", "\\{" for "{". A pattern starting with "-" is just a pattern. Examples: "function\\s+parseConfig", "TODO|FIXME", "import .* from \\"zod\\"". An invalid pattern is rejected with the parser's message.

Parameters:
- path (optional): absolute path of a directory or a single file inside the workspace; omit it to search the whole workspace.
- glob (optional): only search files whose name matches, e.g. "*.ts", "*.{ts,tsx}"; a glob with a "/" is matched against the path relative to the search directory ("src/**/*.ts").
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

/** How one Grep call finds the first match on a line. */
interface Matcher {
  /** Index of the first match at or after `from` that lies within one line, or -1. */
  next(text: string, from: number): number;
  /**
   * Whether texts must have CRLF turned into LF first: with the `m` flag, `^` and `$` also match next to a
   * lone `\r`, so "^$" would match at the end of every CRLF line.
   */
  normalizeCrlf: boolean;
}

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
    if (input.path === undefined) return null;
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot search "${input.path}": ${problem.message}`;
  },
  async execute(context, input) {
    const started = performance.now();
    const compiled = compileMatcher(input.pattern, input.case_insensitive ?? false);
    if (!compiled.ok) return errorResult(compiled.message, { reason: "invalid-pattern" });
    const shownPath = input.path ?? context.root;
    const resolved = await safePath(context.root, shownPath, { mustExist: true });
    if (!resolved.ok) {
      return errorResult(`Cannot search "${shownPath}": ${resolved.message}`, { reason: resolved.reason });
    }
    const search = new Search(compiled.matcher, {
      mode: input.output_mode ?? "content",
      context: input.context ?? 0,
      limit: input.head_limit ?? DEFAULT_HEAD_LIMIT,
    });
    const slicer = new TimeSlicer(context.signal);
    let walker: Walker | null = null;
    if (resolved.info?.isDirectory) {
      const glob = input.glob;
      const filter = glob === undefined
        ? undefined
        : picomatch(glob, { dot: true, basename: !glob.includes("/") });
      walker = new Walker(resolved.path, { root: context.root, filter });
      // Files are searched as the walk finds them, in path order, so a reached limit ends the walk too.
      let sinceCheck = 0;
      for (const file of walker.files()) {
        if (++sinceCheck === 16) {
          sinceCheck = 0;
          if (slicer.due() && await slicer.pause()) {
            return errorResult("Grep was cancelled", { reason: "aborted" });
          }
        }
        if (!search.searchFile(file.path, file.relativePath)) break;
      }
    } else if (resolved.info?.isFile) {
      search.searchFile(resolved.path, posix.basename(resolved.path));
      if (search.skippedBinary > 0) {
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

type CompileResult = { ok: true; matcher: Matcher } | { ok: false; message: string };

const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/** Escapes whose meaning needs the `u` flag (without it, `\\p{L}` would silently match "p{L}"). */
const UNICODE_ESCAPES = /\\[pP]\{|\\u\{/;

/**
 * Builds the matcher for a pattern: `indexOf` for a literal, else one global multiline regex. The `u` flag
 * is used only when the pattern needs it (`\p{…}`, `\u{…}`) or only parses with it: V8's linear-time
 * fallback for catastrophic backtracking (enabled in scripts/runtime_flags.txt) does not cover `u` regexes.
 */
function compileMatcher(pattern: string, caseInsensitive: boolean): CompileResult {
  if (!caseInsensitive && !REGEX_SYNTAX.test(pattern) && !pattern.includes("\n")) {
    return { ok: true, matcher: { next: (text, from) => text.indexOf(pattern, from), normalizeCrlf: false } };
  }
  const flags = caseInsensitive ? "gmi" : "gm";
  const attempts = UNICODE_ESCAPES.test(pattern) ? [`${flags}u`] : [flags, `${flags}u`];
  let regex: RegExp | null = null;
  let failure = "";
  for (const attempt of attempts) {
    try {
      regex = new RegExp(pattern, attempt);
      break;
    } catch (error) {
      failure ||= error instanceof Error ? error.message : String(error);
    }
  }
  if (regex === null) return { ok: false, message: `Invalid pattern "${pattern}": ${failure}` };
  const lineRegex = new RegExp(regex.source, regex.flags.replace("g", ""));
  return {
    ok: true,
    matcher: {
      next: (text, from) => nextRegexMatch(regex, lineRegex, text, from),
      normalizeCrlf: /[$^]/.test(pattern),
    },
  };
}

/**
 * One global regex over the whole text finds the earliest line that matches. A match that crosses a line
 * break (through `\s`, `[^x]`, …) does not count: its first line is tested alone, and the search resumes
 * on the next line, so results equal a line-by-line search.
 */
function nextRegexMatch(regex: RegExp, lineRegex: RegExp, text: string, from: number): number {
  let position = from;
  while (position <= text.length) {
    regex.lastIndex = position;
    const match = regex.exec(text);
    if (match === null) return -1;
    if (!match[0].includes("\n")) return match.index;
    const lineStart = match.index === 0 ? 0 : text.lastIndexOf("\n", match.index - 1) + 1;
    const newline = text.indexOf("\n", match.index);
    const lineEnd = newline === -1 ? text.length : newline;
    const alone = lineRegex.exec(text.slice(lineStart, lineEnd));
    if (alone !== null) return lineStart + alone.index;
    if (newline === -1) return -1;
    position = newline + 1;
  }
  return -1;
}

interface SearchOptions {
  mode: NonNullable<GrepInput["output_mode"]>;
  context: number;
  limit: number;
}

/** The state of one Grep call: reads files, finds matches and builds the output as it goes. */
class Search {
  #matcher: Matcher;
  #options: SearchOptions;
  #buffer = new Uint8Array(1 << 20);
  #decoder = new TextDecoder();
  #lines: string[] = [];
  /** Matching lines (content and count modes) and files with a match found so far. */
  matches = 0;
  files = 0;
  /** Whether the limit cut the results. */
  truncated = false;
  skippedBinary = 0;
  skippedLarge = 0;
  unreadable = 0;

  constructor(matcher: Matcher, options: SearchOptions) {
    this.#matcher = matcher;
    this.#options = options;
  }

  /** Searches one file; returns false when the limit is reached and the search should stop. */
  searchFile(path: string, shownPath: string): boolean {
    if (isBinaryPath(shownPath)) {
      this.skippedBinary++;
      return true;
    }
    const text = this.#readText(path);
    if (text === null) return true;
    const { mode, limit } = this.#options;
    switch (mode) {
      case "files_with_matches":
        if (countMatchingLines(text, this.#matcher, 1) === 0) return true;
        if (this.files === limit) return this.#cut();
        this.files++;
        this.#lines.push(shownPath);
        return true;
      case "count": {
        const count = countMatchingLines(text, this.#matcher);
        if (count === 0) return true;
        if (this.files === limit) return this.#cut();
        this.files++;
        this.matches += count;
        this.#lines.push(`${shownPath}:${count}`);
        return true;
      }
      case "content": {
        const found = findMatchingLines(text, this.#matcher, limit - this.matches + 1);
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

  // Reads a file into the reused buffer and decodes it; null (and counted) when skipped.
  #readText(path: string): string | null {
    let length = 0;
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path);
    } catch {
      this.unreadable++;
      return null;
    }
    try {
      while (true) {
        if (length === this.#buffer.length) {
          if (length >= MAX_GREP_FILE_BYTES) {
            this.skippedLarge++;
            return null;
          }
          const grown = new Uint8Array(Math.min(this.#buffer.length * 2, MAX_GREP_FILE_BYTES + 1));
          grown.set(this.#buffer);
          this.#buffer = grown;
        }
        const wanted = this.#buffer.length - length;
        const read = file.readSync(this.#buffer.subarray(length));
        if (read === null || read === 0) break;
        length += read;
        // A regular file returns fewer bytes than asked only at its end: skip the read that would say so.
        if (read < wanted) break;
      }
    } catch {
      this.unreadable++;
      return null;
    } finally {
      file.close();
    }
    const bytes = this.#buffer.subarray(0, length);
    if (looksBinary(bytes)) {
      this.skippedBinary++;
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
      skippedBinary: this.skippedBinary,
      skippedLarge: this.skippedLarge,
      unreadable: this.unreadable,
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
    const notSearched: string[] = [];
    if (this.skippedLarge > 0) {
      notSearched.push(`${this.skippedLarge} larger than ${MAX_GREP_FILE_BYTES >> 20} MiB`);
    }
    if (this.unreadable > 0) notSearched.push(`${this.unreadable} unreadable`);
    if (this.#lines.length === 0 && this.skippedBinary > 0) notSearched.push(`${this.skippedBinary} binary`);
    const notes = notSearched.length > 0 ? [`(Files not searched: ${notSearched.join(", ")}.)`] : [];
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
}

/** A matching line: its 1-based number, where it starts and ends in the text, and where the match is. */
interface LineMatch {
  line: number;
  start: number;
  end: number;
  column: number;
}

// A match at the very end of a text that ends with a line break would be on a line that does not exist.
function isPastLastLine(text: string, index: number): boolean {
  return index >= text.length && (text.length === 0 || text.charCodeAt(text.length - 1) === 10);
}

// Counts matching lines, stopping at `max` (1 answers "does the file match?").
function countMatchingLines(text: string, matcher: Matcher, max = Infinity): number {
  let count = 0;
  let from = 0;
  while (count < max && from <= text.length) {
    const index = matcher.next(text, from);
    if (index === -1 || isPastLastLine(text, index)) break;
    count++;
    const newline = text.indexOf("\n", index);
    if (newline === -1) break;
    from = newline + 1;
  }
  return count;
}

function findMatchingLines(text: string, matcher: Matcher, max: number): LineMatch[] {
  const found: LineMatch[] = [];
  let from = 0;
  let line = 1;
  let counted = 0;
  while (found.length < max && from <= text.length) {
    const index = matcher.next(text, from);
    if (index === -1 || isPastLastLine(text, index)) break;
    const start = index === 0 ? 0 : text.lastIndexOf("\n", index - 1) + 1;
    const newline = text.indexOf("\n", index);
    const end = newline === -1 ? text.length : newline;
    for (let at = text.indexOf("\n", counted); at !== -1 && at < start; at = text.indexOf("\n", at + 1)) {
      line++;
    }
    counted = start;
    found.push({ line, start, end, column: index });
    if (newline === -1) break;
    from = newline + 1;
  }
  return found;
}

// Appends "path:line: text" for matches and "path-line- text" for context, with "--" between groups.
function formatContent(
  out: string[],
  text: string,
  path: string,
  matches: LineMatch[],
  context: number,
): void {
  if (context === 0) {
    for (const match of matches) {
      out.push(outputLine(path, ":", match.line, shorten(text, match.start, match.end, match.column)));
    }
    return;
  }
  if (out.length > 0) out.push("--");
  let printed = 0; // the last line number printed
  let printedEnd = -1; // where that line ends in the text
  const printAfter = (upTo: number) => {
    while (printed < upTo && printedEnd < text.length) {
      const start = printedEnd + 1;
      if (isPastLastLine(text, start)) return;
      const newline = text.indexOf("\n", start);
      const end = newline === -1 ? text.length : newline;
      printed++;
      printedEnd = end;
      out.push(outputLine(path, "-", printed, shorten(text, start, end, start)));
    }
  };
  for (const match of matches) {
    if (printed > 0) printAfter(Math.min(printed + context, match.line - 1));
    const first = Math.max(printed + 1, match.line - context);
    if (printed > 0 && first > printed + 1) out.push("--");
    const before: string[] = [];
    let start = match.start;
    for (let line = match.line - 1; line >= first; line--) {
      const end = start - 1;
      start = end === 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
      before.push(outputLine(path, "-", line, shorten(text, start, end, start)));
    }
    out.push(...before.reverse());
    out.push(outputLine(path, ":", match.line, shorten(text, match.start, match.end, match.column)));
    printed = match.line;
    printedEnd = match.end;
  }
  printAfter(printed + context);
}

// "path:12: text" or "path-12- text". Built with join, which copies: a template literal would keep a
// reference to the slice, and through it to the whole text of the file, until the output is returned.
function outputLine(path: string, marker: ":" | "-", line: number, text: string): string {
  return [path, marker, String(line), marker, " ", text].join("");
}

// The line without its "\r", shortened to a window around `focus` when it is too long.
function shorten(text: string, start: number, end: number, focus: number): string {
  let lineEnd = end;
  if (lineEnd > start && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
  if (lineEnd - start <= MAX_GREP_LINE_CHARACTERS) return text.slice(start, lineEnd);
  const windowStart = Math.max(start, Math.min(focus - 100, lineEnd - MAX_GREP_LINE_CHARACTERS));
  const windowEnd = windowStart + MAX_GREP_LINE_CHARACTERS;
  const head = windowStart > start ? "…" : "";
  const tail = windowEnd < lineEnd ? "…" : "";
  return `${head}${text.slice(windowStart, windowEnd)}${tail} [line of ${
    lineEnd - start
  } characters shortened]`;
}
