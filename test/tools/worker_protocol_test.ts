import { equal } from "node:assert/strict";
import { isFromWorker } from "../../src/tools/worker_protocol.ts";

Deno.test("a worker's progress message is accepted only with a call and known news", () => {
  equal(isFromWorker({ type: "run-progress", callId: "a", progress: "budget-spent" }), true);
  // Anything else is a broken worker's message, which the pool answers by replacing the worker.
  equal(isFromWorker({ type: "run-progress", callId: "a", progress: "spent" }), false);
  equal(isFromWorker({ type: "run-progress", callId: "a" }), false);
  equal(isFromWorker({ type: "run-progress", callId: 1, progress: "budget-spent" }), false);
  equal(isFromWorker({ type: "run-progress", progress: "budget-spent" }), false);
});
