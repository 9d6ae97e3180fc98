/**
 * EditFile: replaces exact text in a file, keeping every byte outside the edit, the line endings, the BOM,
 * the encoding and the final-newline state. One fallback: a whitespace-flexible, line-by-line match.
 *
 * @module
 */
import { z } from "zod";
import { identicalMessage } from "./_shared.ts";
import { validatePathInput } from "./_paths.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

export { applyEdit, type Change, type EditOutcome, keepFinalNewline } from "./_edit_apply.ts";

const EDIT_FILE_DESCRIPTION =
  `Replace exact text in an existing file: old_string is found in the file and replaced by new_string.

When to use: for targeted changes to part of a file (fix a line, rename within a function, add a block after a known line). Prefer it to WriteFile for existing files. To change many places, call it once per place, or use replace_all for the same text everywhere in this file. To create a new file, use WriteFile (or EditFile with an empty old_string).

Rules:
- path must be an absolute path inside the workspace. You must have read the file with ReadFile in this session, and it must not have changed since; your own successful edits keep that record current, so several edits in a row need no re-read.
- old_string must match the file exactly, including indentation and blank lines. Copy it from the ReadFile output WITHOUT the line-number prefix (everything before and including the tab). Do not include the "\\r" of CRLF files: line endings are handled for you.
- old_string must occur exactly once, unless replace_all is true. If it occurs several times, include more surrounding lines to make it unique. If it is not found, the error shows the closest region of the file with line numbers.
- If there is no exact match, one fallback is tried: a line-by-line match that ignores trailing whitespace, tabs versus spaces, a uniform indentation shift and how accented letters are encoded (composed or decomposed). It is used only when exactly one place matches, new_string is re-indented to the file's indentation, and the result says so.
- new_string is inserted literally ("$&", "$1" and "$$" are plain text). It must differ from old_string. An empty new_string deletes old_string.
- An empty old_string creates the file with new_string when it does not exist (an error if it exists and is not empty).
- The file keeps its line endings (CRLF stays CRLF), BOM, encoding, permissions and whether it ends with a newline; bytes outside the replaced text are unchanged.

Output: how many replacements were made and a few numbered lines around each change, to check the result. Use Grep to find the places to change across files and Bash to run tests afterwards.`;

const EditFileInput = z.object({
  path: z.string().describe("Absolute path of the file to edit, inside the workspace"),
  old_string: z.string().describe(
    "The exact text to replace, copied from the file without line-number prefixes; must be unique unless replace_all is true. Empty to create a new file",
  ),
  new_string: z.string().describe(
    "The text to put in its place, inserted literally; must differ from old_string",
  ),
  replace_all: z.boolean().optional().describe(
    "Replace every occurrence of old_string in this file instead of requiring exactly one; default false",
  ),
}).strict();

/** The input of EditFile. */
export type EditFileInput = z.infer<typeof EditFileInput>;

/** EditFile: exact (or one whitespace-flexible) text replacement that preserves the rest of the file. */
export const editFileTool = defineTool({
  name: "EditFile",
  category: "file",
  description: EDIT_FILE_DESCRIPTION,
  inputSchema: EditFileInput,
  isReadOnly: false,
  isDestructive: false,
  validateInput(input, context) {
    const problem = validatePathInput(input.path, context.root);
    if (problem !== null) return `Cannot edit file "${input.path}": ${problem.message}`;
    if (input.old_string === input.new_string) return identicalMessage(input.path);
    return null;
  },
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_edit_file_run.ts")>(new URL("./_edit_file_run.ts", import.meta.url)))
      .editFileRunner
  ),
});
