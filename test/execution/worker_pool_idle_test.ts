import { deepEqual, equal, throws } from "node:assert/strict";
import { profileFor } from "../../src/execution/profiles.ts";
import { type RunOutcome, type WorkerCall, WorkerPool } from "../../src/execution/worker_pool.ts";
import { probeReadOnlyTool, SANDBOX_PROBE_WORKER_URL } from "../_fakes/sandbox_probes.ts";
import { createTempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";

const NO_SIGNAL = new AbortController().signal;

function waitCall(root: string, ms: number): WorkerCall {
  return {
    callId: crypto.randomUUID(),
    toolName: "ProbeBehave",
    input: { behavior: "wait", ms },
    context: { root, timeoutMs: 10_000, fileRecords: {}, strictLinks: false, shell: TEST_SHELL_PLAN },
  };
}

function workerOf(outcome: RunOutcome): number {
  if (outcome.type !== "result") throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.workerId;
}

/** Polls until `done` holds; fails after `limitMs` (a bound against hangs, not a timing assertion). */
async function eventually(done: () => boolean, limitMs = 10_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > until) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("WorkerPool releases idle workers beyond one per profile after the idle time, and keeps the last", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL, idleReleaseMs: 50 });
  try {
    const profile = profileFor(probeReadOnlyTool, { root: workspace.root, shell: TEST_SHELL_PLAN });
    // Three calls at once need three workers.
    const outcomes = await Promise.all(
      [1, 2, 3].map(() =>
        pool.run(profile, waitCall(workspace.root, 200), { signal: NO_SIGNAL, timeoutMs: 10_000 })
      ),
    );
    equal(new Set(outcomes.map(workerOf)).size, 3);
    await eventually(() => pool.stats().released === 2);
    deepEqual(pool.stats().profiles[profile.key], { starting: 0, idle: 1, busy: 0, waiting: 0 });
    // The one left stays, however long it idles, and serves the next call without a new start.
    await new Promise((resolve) => setTimeout(resolve, 200));
    equal(pool.stats().released, 2);
    const next = await pool.run(profile, waitCall(workspace.root, 0), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    equal(next.type, "result");
    equal(pool.stats().started, 3);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool keeps a worker that is reused before its idle time runs out", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL, idleReleaseMs: 2_000 });
  try {
    const profile = profileFor(probeReadOnlyTool, { root: workspace.root, shell: TEST_SHELL_PLAN });
    const run = () =>
      pool.run(profile, waitCall(workspace.root, 100), { signal: NO_SIGNAL, timeoutMs: 10_000 });
    await Promise.all([run(), run()]);
    equal(pool.stats().started, 2);
    // Busy again before the idle time passed: both are kept for now.
    await Promise.all([run(), run()]);
    equal(pool.stats().released, 0);
    equal(pool.stats().started, 2);
    await eventually(() => pool.stats().released === 1);
    equal(pool.stats().profiles[profile.key]?.idle, 1);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool refuses a negative idle release time", () => {
  throws(() => new WorkerPool({ idleReleaseMs: -1 }), RangeError);
});
