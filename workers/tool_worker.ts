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
import { nextMessage, Prewalk, type PrewalkRequest, walkedAheadFiles } from "../src/tools/_prewalk.ts";
import { warmUpSearch } from "../src/tools/_grep_run.ts";
import { serveTools } from "./_runner.ts";

const prewalk = new Prewalk();
let calls = 0;
serveTools(self, TOOL_RUNNERS, {
  // The walks' listings are stamped once the result is sent (see src/tools/_walk_memory.ts), and a walk
  // ahead that a call suspended goes on.
  idle(busy) {
    recentWalks.stampWhileIdle(busy);
    prewalk.resume(busy);
  },
  beforeCall() {
    calls++;
    prewalk.pause();
  },
  prewalk(request, busy) {
    prewalk.start(request, busy);
    void prewalk.whenEnded().then(() => warmUp(request, busy));
  },
});

// Once the walk ahead has ended, a worker that has run no call yet searches the first files it found, so
// that its first Grep call finds the search path compiled (`warmUpSearch`).
async function warmUp(request: PrewalkRequest, busy: () => boolean): Promise<void> {
  const files = walkedAheadFiles();
  if (files === null || calls > 0 || busy()) return;
  try {
    await warmUpSearch({ ...request, files }, { busy: () => calls > 0 || busy(), between: nextMessage });
  } catch {
    // Only a head start: the calls search as they always do.
  }
}
