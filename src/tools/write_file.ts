/**
 * WriteFile: creates a file or replaces a whole file, atomically, keeping the old file's format.
 *
 * @module
 */
import { z } from "zod";
import { validatePathInput } from "./_paths.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

const WRITE_FILE_DESCRIPTION =
  `Create a new file, or replace the entire content of an existing file, in the workspace.

When to use: to create a new file, or when most of a file changes. For changes to part of an existing file, use EditFile instead: it sends only the changed text and is less error-prone.

Rules:
- path must be an absolute path inside the workspace (for example "/home/me/project/src/new.ts"). Missing parent directories are created.
- To overwrite an existing file you must have read it with ReadFile in this session, and it must not have changed since (checked by content). Otherwise the write is refused with "read it first" or "modified since you read it — read it again"; then call ReadFile and retry.
- content is written exactly as given, character for character: no escaping or quote conversion. Write the complete file; there is no append mode and no placeholder like "rest unchanged".
- When overwriting, the file keeps its format: a CRLF file is written with CRLF line endings throughout, a UTF-8 BOM or UTF-16 encoding is kept, a file that is not UTF-8 (shown by ReadFile decoded as Windows-1252) stays Windows-1252 when the content fits that encoding, and the file's permissions are kept. New files are UTF-8 with the line endings you give, mode 0644.

Output: "Created" or "Overwrote" with the path, the byte count and the line count. Do not use this tool to create documentation or README files unless asked. To run formatters or build tools after writing, use Bash.`;

const WriteFileInput = z.object({
  path: z.string().describe("Absolute path of the file to create or overwrite, inside the workspace"),
  content: z.string().describe("The complete new content of the file, exactly as it should be written"),
}).strict();

/** The input of WriteFile. */
export type WriteFileInput = z.infer<typeof WriteFileInput>;

/** WriteFile: creates or overwrites a file atomically; overwriting requires a current read. */
export const writeFileTool = defineTool({
  name: "WriteFile",
  category: "file",
  description: WRITE_FILE_DESCRIPTION,
  inputSchema: WriteFileInput,
  isReadOnly: false,
  isDestructive: false,
  validateInput(input, context) {
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot write file "${input.path}": ${problem.message}`;
  },
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_write_file_run.ts")>(
      new URL("./_write_file_run.ts", import.meta.url),
    )).writeFileRunner
  ),
});
