/**
 * The tool worker: runs the built-in tools inside a Deno worker whose permissions the executor derived
 * from the tool's metadata. It loads only the tool modules.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { BUILTIN_TOOLS } from "../src/tools/mod.ts";
import { serveTools } from "./_runner.ts";

serveTools(self, BUILTIN_TOOLS);
