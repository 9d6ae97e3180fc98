/**
 * src/llm/_sdk_stream.ts: what both providers do with their raw event stream, tested on streams whose reads
 * can be held back, so that the timing cannot hide anything.
 */
import { deepStrictEqual, equal, rejects } from "node:assert/strict";
import { guardSdkStream } from "../../src/llm/_sdk_stream.ts";

/** A stream that yields one item, then holds its next read until `release` (its controller does nothing). */
function stallingStream() {
  let release = () => {};
  const stalled = new Promise<void>((resolve) => release = resolve);
  const items = (async function* () {
    yield { type: "first" };
    await stalled;
    yield { type: "late" };
  })();
  return { stream: Object.assign(items, { controller: new AbortController() }), release };
}

Deno.test("guardSdkStream ends with the abort's reason while a read is pending, whatever the stream does", async () => {
  const { stream, release } = stallingStream();
  const controller = new AbortController();
  const reason = new DOMException("Interrupted by the user", "AbortError");
  const guarded = guardSdkStream(stream, {
    signal: controller.signal,
    idleTimeoutMs: 60_000,
    baseUrl: "http://127.0.0.1:9",
    toOurError: (error) => controller.signal.aborted ? controller.signal.reason : error,
  });
  deepStrictEqual((await guarded.next()).value, { type: "first" });
  const timer = setTimeout(() => controller.abort(reason), 20);
  try {
    // Before the fix, this waited for the stream's next item (here: forever; in a loaded run, 30 s).
    await rejects(guarded.next(), (error) => error === reason);
    equal(stream.controller.signal.aborted, true, "the request is cancelled");
  } finally {
    clearTimeout(timer);
    release();
  }
});
