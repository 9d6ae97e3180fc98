/**
 * What runs each built-in tool's calls, without the tools' input schemas: the tool worker serves these, so
 * it never loads zod (measured: ~45 ms and ~4 MB of heap a worker). The definitions (`mod.ts`) take their
 * names and `execute` from here; the main process validates every input before a worker sees it.
 *
 * @module
 */
import { bashRunner } from "./_bash_run.ts";
import { editFileRunner } from "./_edit_file_run.ts";
import { globRunner } from "./_glob_run.ts";
import { grepRunner } from "./_grep_run.ts";
import { readFileRunner } from "./_read_file_run.ts";
import { writeFileRunner } from "./_write_file_run.ts";
import type { ToolRunner } from "./tool.ts";

/** Every built-in tool's runner. */
// deno-lint-ignore no-explicit-any -- each runner takes its own tool's (validated) input
export const TOOL_RUNNERS: readonly ToolRunner<any>[] = [
  readFileRunner,
  globRunner,
  grepRunner,
  editFileRunner,
  writeFileRunner,
  bashRunner,
];
