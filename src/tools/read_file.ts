/**
 * ReadFile: a text file's lines with line numbers, a page at a time.
 *
 * @module
 */
import { z } from "zod";
import { validatePathInput } from "./_paths.ts";
import { DEFAULT_READ_LIMIT, pagingProblem } from "./_shared.ts";
import { MAX_LINE_CHARACTERS } from "./_text.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

export { DEFAULT_READ_LIMIT, MAX_READ_CHARACTERS } from "./_shared.ts";

const READ_FILE_DESCRIPTION = `Read a text file from the workspace and return its lines with line numbers.

When to use: to look at a file's contents before changing it or answering questions about it. You must read a file with this tool before overwriting it with WriteFile or changing it with EditFile. Reading several files in one turn is fine: reads run in parallel.

When not to use: to find files, use Glob; to find where something is defined or used, use Grep, then read just the relevant range with offset/limit. Do not read binary files (images, archives, executables): this tool refuses them; inspect them with Bash (for example \`file\`, \`xxd | head\`). Do not read directories: use Glob.

Parameters:
- path must be an absolute path inside the workspace (for example "/home/me/project/src/main.ts"). Relative paths are rejected.
- offset (optional) is the 1-based line number to start from; limit (optional) is how many lines to return (default ${DEFAULT_READ_LIMIT}). Both must be positive integers. Use them for large files.

Output: each line as "<line number><TAB><text>", numbered from 1 and absolute (offset 10 shows 10, 11, ...). Tabs are kept; the \\r of CRLF line endings is not shown. Lines longer than ${MAX_LINE_CHARACTERS} characters are cut with a visible marker. When the read stops before the end of the file, a final notice gives the total number of lines and the offset to continue from. An empty file is reported as empty. A UTF-8 BOM is not shown; UTF-16 files with a BOM are decoded. A file that is not valid UTF-8 is shown decoded as Windows-1252/Latin-1 with a warning saying so. If the file does not exist, the error suggests similar names in the same directory.`;

const ReadFileInput = z.object({
  path: z.string().describe("Absolute path of the file to read, inside the workspace"),
  offset: z.number({ error: "offset must be a positive integer (a 1-based line number)" })
    .int({ error: "offset must be a positive integer (a 1-based line number)" })
    .positive({ error: "offset must be a positive integer (a 1-based line number)" })
    .optional()
    .describe("1-based line number to start reading from; omit to start at line 1"),
  limit: z.number({ error: "limit must be a positive integer (a number of lines)" })
    .int({ error: "limit must be a positive integer (a number of lines)" })
    .positive({ error: "limit must be a positive integer (a number of lines)" })
    .optional()
    .describe(`Maximum number of lines to return; omit for ${DEFAULT_READ_LIMIT}`),
}).strict();

/** The input of ReadFile. */
export type ReadFileInput = z.infer<typeof ReadFileInput>;

/** ReadFile: reads a text file with line numbers; records the file's hash for later writes. */
export const readFileTool = defineTool({
  name: "ReadFile",
  category: "file",
  description: READ_FILE_DESCRIPTION,
  inputSchema: ReadFileInput,
  isReadOnly: true,
  // Reads only: any number may run at once, with each other and with other reads.
  isConcurrencySafe: () => true,
  validateInput(input, context) {
    const problem = validatePathInput(input.path, context.root);
    if (problem !== null) return `Cannot read file "${input.path}": ${problem.message}`;
    return pagingProblem(input);
  },
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_read_file_run.ts")>(new URL("./_read_file_run.ts", import.meta.url)))
      .readFileRunner
  ),
});
