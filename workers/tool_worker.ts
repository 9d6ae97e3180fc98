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
import { Prewalk } from "../src/tools/_prewalk.ts";
import { serveTools } from "./_runner.ts";

const prewalk = new Prewalk();
serveTools(self, TOOL_RUNNERS, {
  // The walks' listings are stamped once the result is sent (see src/tools/_walk_memory.ts), and a walk
  // ahead that a call suspended goes on.
  idle(busy) {
    recentWalks.stampWhileIdle(busy);
    prewalk.resume(busy);
  },
  beforeCall: () => prewalk.pause(),
  prewalk: (request, busy) => prewalk.start(request, busy),
});
