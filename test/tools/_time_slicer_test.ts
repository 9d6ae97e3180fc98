/**
 * The time slicer's pause gives the event loop a real turn: what arrives meanwhile (a timer, a message such
 * as the worker's cancel request) runs, and an abort it makes stops the work at that pause.
 */
import { equal } from "node:assert/strict";
import { TimeSlicer } from "../../src/tools/_time_slicer.ts";

/** Runs slices until the slicer says stop; returns how many pauses that took (at most `limit`). */
async function pausesUntilStopped(slicer: TimeSlicer, limit: number): Promise<number> {
  for (let pauses = 1; pauses <= limit; pauses++) {
    while (!slicer.due()) {
      // A slice of synchronous work.
    }
    if (await slicer.pause()) return pauses;
  }
  return Infinity;
}

Deno.test("TimeSlicer.pause lets a timer and a message from elsewhere run, and stops on the abort they make", async () => {
  const byTimer = new AbortController();
  setTimeout(() => byTimer.abort(), 0);
  equal(await pausesUntilStopped(new TimeSlicer(byTimer.signal), 3) <= 2, true);

  const byMessage = new AbortController();
  const { port1, port2 } = new MessageChannel();
  port1.onmessage = () => byMessage.abort();
  port2.postMessage("cancel");
  try {
    equal(await pausesUntilStopped(new TimeSlicer(byMessage.signal), 3) <= 2, true);
  } finally {
    port1.close();
    port2.close();
  }
  equal(new TimeSlicer(byMessage.signal).stopReason(), "aborted");
});
