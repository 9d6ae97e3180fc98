/**
 * Glob: find files by path pattern, newest first.
 *
 * Patterns compile to regexes that V8 can always finish in linear time (`src/common/glob.ts`): Deno cannot stop a
 * worker inside a regex call, and a pattern such as "*a*a*a*…b" against a long name would backtrack for ever.
 *
 * @module
 */
import { z } from "zod";
import { compileGlob } from "../common/glob.ts";
import { validatePathInput } from "./_paths.ts";
import { MAX_GLOB_RESULTS } from "./_shared.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

export { MAX_GLOB_RESULTS } from "./_shared.ts";

const GLOB_DESCRIPTION = `Find files whose path matches a glob pattern, newest first.

When to use: to find files by name or location, for example every test file ("**/*_test.ts"), a file whose name you half remember ("**/*config*"), or what a directory holds ("src/tools/*"). Several Glob calls in one turn run in parallel.

When not to use: to find files by their content (a definition, a call, a message), use Grep. To read a file you found, use ReadFile. For anything about files other than their paths (sizes, permissions, git history), use Bash.

Pattern syntax (matched against paths relative to the search directory):
- "*" matches within one path segment, "**" matches any number of directories: "*.ts" matches only files directly in the search directory, "**/*.ts" matches them at any depth, "src/**/*.ts" only under src.
- "{a,b}" alternatives ("**/*.{ts,tsx}"), "?" one character, "[abc]" character classes.
- "*" also matches names that start with a dot (".env", ".github/workflows/ci.yml").

Parameters:
- pattern: the glob, relative to the search directory.
- path (optional): absolute path of the directory to search, inside the workspace; omit it to search the whole workspace.

Output: one path per line, relative to the search directory, most recently modified first, at most ${MAX_GLOB_RESULTS} (a notice says how many more matched: then narrow the pattern or the path). Directories are not listed, only files. The directories .git, node_modules, vendor, .idea and __pycache__ and everything .gitignore files ignore are skipped; a notice says how many were. Symlinks are followed only to targets inside the workspace. A path holding a line break or another control character is shown as a JSON string ("a\\nb.ts"): decode it before passing it to another tool. When nothing matches, the result says so.`;

const GlobInput = z.object({
  pattern: z.string().min(1, { error: "pattern must not be empty" }).describe(
    'Glob matched against paths relative to the search directory, e.g. "**/*.ts", "src/**/*.{ts,tsx}", "*.json"',
  ),
  path: z.string().optional().describe(
    "Absolute path of the directory to search, inside the workspace; omit to search the workspace root",
  ),
}).strict();

/** The input of Glob. */
export type GlobInput = z.infer<typeof GlobInput>;

/** Glob: lists the files under a directory whose relative path matches a pattern, newest first. */
export const globTool = defineTool({
  name: "Glob",
  category: "search",
  description: GLOB_DESCRIPTION,
  inputSchema: GlobInput,
  isReadOnly: true,
  // Reads only: any number may run at once, with each other and with other reads.
  isConcurrencySafe: () => true,
  validateInput(input, context) {
    if (input.pattern.includes("\0")) return `Invalid pattern: it contains a NUL byte`;
    const compiled = compileGlob(input.pattern);
    if (!compiled.ok) return `Invalid pattern "${input.pattern}": ${compiled.message}`;
    if (input.path === undefined) return null;
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot search "${input.path}": ${problem.message}`;
  },
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_glob_run.ts")>(new URL("./_glob_run.ts", import.meta.url))).globRunner
  ),
});
