/**
 * The tool worker: runs the built-in tools inside a Deno worker whose permissions the executor derived
 * from the tool's metadata. It loads only what runs the calls (`src/tools/runners.ts`): no input schemas,
 * no zod.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { TOOL_RUNNERS } from "../src/tools/runners.ts";
import { recentWalks } from "../src/tools/_walk_memory.ts";
import { serveTools } from "./_runner.ts";

// The walks' listings are stamped once the result is sent (see src/tools/_walk_memory.ts).
serveTools(self, TOOL_RUNNERS, (busy) => recentWalks.stampWhileIdle(busy));
