/**
 * The writers' worker (WriteFile, EditFile): started with the writer profile's permissions (read and write
 * the workspace, nothing else), it loads only the code that runs their calls (`serveTools`).
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { editFileRunner } from "../src/tools/_edit_file_run.ts";
import { writeFileRunner } from "../src/tools/_write_file_run.ts";
import { serveTools } from "./_runner.ts";

serveTools(self, [editFileRunner, writeFileRunner]);
