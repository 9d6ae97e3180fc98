/**
 * The read-only tools' worker (ReadFile, Glob, Grep): started with the read-only profile's permissions
 * (read the workspace, nothing else), it loads only the code that runs their calls: no input schemas, no
 * zod, and none of the writers' or the shell's code (each profile has its entry: writer_worker.ts,
 * shell_worker.ts), which every read-only worker of a parallel batch of searches would otherwise hold.
 * Between calls it walks the workspace ahead of the searches.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { globRunner } from "../src/tools/_glob_run.ts";
import { readFileRunner } from "../src/tools/_read_file_run.ts";
import { recentWalks } from "../src/tools/_walk_memory.ts";
import {
  nextMessage,
  Prewalk,
  type PrewalkRequest,
  walkedAheadFiles,
  walkedAheadReport,
} from "../src/tools/_prewalk.ts";
import type { FromWorker } from "../src/tools/worker_protocol.ts";
import { grepRunner, warmUpSearch } from "../src/tools/_grep_run.ts";
import { serveTools } from "./_runner.ts";

const prewalk = new Prewalk();
let calls = 0;
serveTools(self, [readFileRunner, globRunner, grepRunner], {
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
    void prewalk.whenEnded().then(async () => {
      if (await warmUp(request, busy)) sendReport(busy);
    });
  },
});

// Once the walk ahead has ended and the worker has warmed up, a worker that has run no call yet sends its report
// to the main process, where the first Grep call finds it as a recent walk: that call then no longer waits for
// the report to be copied over and indexed while ripgrep searches (measured: 30-60 ms of the two cores' time in
// the call). Only after the warm-up: a call with a recent walk tells the worker how many files to expect, and a
// cold worker's pace over its first files would make it give up a search it would end within its budget
// (`_grep_run.ts`). A call that came first took the report with its result, or walks itself.
function sendReport(busy: () => boolean): void {
  const report = walkedAheadReport();
  if (report === null || calls > 0 || busy()) return;
  self.postMessage({ type: "prewalk-end", report } satisfies FromWorker);
}

// Once the walk ahead has ended, a worker that has run no call yet searches the first files it found, so
// that its first Grep call finds the search path compiled (`warmUpSearch`). Resolves to whether it searched
// them all, no call having come meanwhile.
async function warmUp(request: PrewalkRequest, busy: () => boolean): Promise<boolean> {
  const files = walkedAheadFiles();
  if (files === null || calls > 0 || busy()) return false;
  try {
    await warmUpSearch({ ...request, files }, { busy: () => calls > 0 || busy(), between: nextMessage });
  } catch {
    // Only a head start: the calls search as they always do.
    return false;
  }
  return calls === 0 && !busy();
}
