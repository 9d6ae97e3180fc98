/**
 * Grep: search file contents with a JavaScript regular expression. The definition offered to the model (its
 * description and input schema); the search itself is in `_grep_run.ts`.
 *
 * That search is how Grep runs in its read-only worker. Where ripgrep is installed, the runtime lets ripgrep
 * search the contents in the read-only shell sandbox instead (`grep_ripgrep.ts`), with the worker's walk as the
 * authority on which files are searched and its matcher and output format (`_grep_collector.ts`).
 *
 * @module
 */
import { z } from "zod";
import { compileGlob } from "../common/glob.ts";
import { MAX_GREP_LINE_CHARACTERS } from "./_grep_lines.ts";
import { compileGrepMatcher } from "./_grep_matcher.ts";
import { DEFAULT_HEAD_LIMIT } from "./_shared.ts";
import { validatePathInput } from "./_paths.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

export { MAX_GREP_LINE_CHARACTERS } from "./_grep_lines.ts";
export { MAX_GREP_FILE_BYTES } from "./_grep_collector.ts";
export { DEFAULT_HEAD_LIMIT } from "./_shared.ts";

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

Output: paths are relative to the search directory (for a single file, its name), files in path order; a path holding a line break or another control character is shown as a JSON string ("a\\nb.ts"): decode it before passing it to another tool. Lines longer than ${MAX_GREP_LINE_CHARACTERS} characters are shortened around the match. When the limit cuts the results, a final notice says more matches exist: narrow the pattern, path or glob, or raise head_limit. Binary files, the directories .git, node_modules, vendor, .idea and __pycache__, and whatever .gitignore files ignore are skipped. When nothing matches, the result says "No matches found".`;

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
    const compiled = compileGrepMatcher(input.pattern, input.case_insensitive ?? false);
    if (!compiled.ok) return compiled.message;
    if (input.glob !== undefined) {
      const glob = compileGlob(input.glob, { basename: true });
      if (!glob.ok) return `Invalid glob "${input.glob}": ${glob.message}`;
    }
    if (input.path === undefined) return null;
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot search "${input.path}": ${problem.message}`;
  },
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_grep_run.ts")>(new URL("./_grep_run.ts", import.meta.url))).grepRunner
  ),
});
