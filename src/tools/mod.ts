/**
 * The built-in tools, in the order they are offered to the model.
 *
 * @module
 */
import { bashTool } from "./bash.ts";
import { editFileTool } from "./edit_file.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { readFileTool } from "./read_file.ts";
import type { AnyTool } from "./tool.ts";
import { writeFileTool } from "./write_file.ts";

/** Every built-in tool; `createRegistry` picks the ones a session may use. */
export const BUILTIN_TOOLS: readonly AnyTool[] = [
  readFileTool,
  globTool,
  grepTool,
  editFileTool,
  writeFileTool,
  bashTool,
];
