/**
 * The tool worker: runs the built-in tools inside a Deno worker whose permissions the executor derived
 * from the tool's metadata. It loads only the tool modules.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { BUILTIN_TOOLS } from "../src/tools/mod.ts";
import { recentWalks } from "../src/tools/_walk_memory.ts";
import { serveTools } from "./_runner.ts";

// The walks' listings are stamped once the result is sent (see src/tools/_walk_memory.ts).
serveTools(self, BUILTIN_TOOLS, (busy) => recentWalks.stampWhileIdle(busy));
