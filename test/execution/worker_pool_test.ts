import { deepEqual, equal, throws } from "node:assert/strict";
import { type PermissionProfile, profileFor } from "../../src/execution/profiles.ts";
import { type RunOutcome, type WorkerCall, WorkerPool } from "../../src/execution/worker_pool.ts";
import { probeReadOnlyTool, probeWriterTool, SANDBOX_PROBE_WORKER_URL } from "../_fakes/sandbox_probes.ts";
import { createTempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";

const NO_SIGNAL = new AbortController().signal;

function profiles(root: string): { readOnly: PermissionProfile; writer: PermissionProfile } {
  return {
    readOnly: profileFor(probeReadOnlyTool, { root, shell: TEST_SHELL_PLAN }),
    writer: profileFor(probeWriterTool, { root, shell: TEST_SHELL_PLAN }),
  };
}

function behaveCall(root: string, input: Record<string, unknown>): WorkerCall {
  return {
    callId: crypto.randomUUID(),
    toolName: "ProbeBehave",
    input,
    context: { root, timeoutMs: 10_000, fileRecords: {}, strictLinks: false, shell: TEST_SHELL_PLAN },
  };
}

function contentOf(outcome: RunOutcome): string {
  if (outcome.type !== "result") throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.result.content;
}

function workerOf(outcome: RunOutcome): number {
  if (outcome.type !== "result") throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.workerId;
}

Deno.test("WorkerPool.prewarm starts one ready worker per profile, and no more when called again", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL });
  try {
    const { readOnly, writer } = profiles(workspace.root);
    await pool.prewarm([readOnly, writer, readOnly]);
    const stats = pool.stats();
    equal(stats.started, 2);
    deepEqual(stats.profiles[readOnly.key], { starting: 0, idle: 1, busy: 0, waiting: 0 });
    deepEqual(stats.profiles[writer.key], { starting: 0, idle: 1, busy: 0, waiting: 0 });
    await pool.prewarm([readOnly, writer]);
    equal(pool.stats().started, 2);
    const outcome = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo", text: "warm" }), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    equal(contentOf(outcome), "warm");
    equal(pool.stats().started, 2);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool.run uses a worker that is still starting instead of starting a second one", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL });
  try {
    const { readOnly } = profiles(workspace.root);
    const warming = pool.prewarm([readOnly]);
    const outcome = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo", text: "x" }), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    await warming;
    equal(contentOf(outcome), "x");
    equal(pool.stats().started, 1);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool queues calls beyond the bound and gives them the next free worker", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL, maxWorkersPerProfile: 1 });
  try {
    const { readOnly } = profiles(workspace.root);
    await pool.prewarm([readOnly]);
    const options = { signal: NO_SIGNAL, timeoutMs: 10_000 };
    const first = pool.run(readOnly, behaveCall(workspace.root, { behavior: "wait", ms: 50 }), options);
    const second = pool.run(
      readOnly,
      behaveCall(workspace.root, { behavior: "echo", text: "second" }),
      options,
    );
    deepEqual(pool.stats().profiles[readOnly.key], { starting: 0, idle: 0, busy: 1, waiting: 1 });
    const [firstOutcome, secondOutcome] = await Promise.all([first, second]);
    equal(contentOf(firstOutcome), "waited");
    equal(contentOf(secondOutcome), "second");
    equal(workerOf(firstOutcome), workerOf(secondOutcome));
    equal(pool.stats().started, 1);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool drops a queued call whose signal aborts, without running it", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL, maxWorkersPerProfile: 1 });
  try {
    const { readOnly } = profiles(workspace.root);
    await pool.prewarm([readOnly]);
    const first = pool.run(readOnly, behaveCall(workspace.root, { behavior: "wait", ms: 50 }), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    const controller = new AbortController();
    const queued = pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo" }), {
      signal: controller.signal,
      timeoutMs: 10_000,
    });
    controller.abort();
    deepEqual(await queued, { type: "aborted" });
    equal(pool.stats().profiles[readOnly.key]?.waiting, 0);
    equal(contentOf(await first), "waited");
    equal(pool.stats().started, 1);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool replaces a worker whose call timed out, keeping the profile warm", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL, cancelGraceMs: 50 });
  try {
    const { readOnly } = profiles(workspace.root);
    await pool.prewarm([readOnly]);
    const outcome = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "hang-forever" }), {
      signal: NO_SIGNAL,
      timeoutMs: 100,
    });
    deepEqual(outcome, { type: "timeout" });
    const counts = pool.stats().profiles[readOnly.key];
    equal((counts?.starting ?? 0) + (counts?.idle ?? 0), 1);
    equal(pool.stats().started, 2);
    const next = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo", text: "fresh" }), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    equal(contentOf(next), "fresh");
    equal(workerOf(next), 2);
  } finally {
    await pool.close();
  }
  equal(pool.stats().draining, 0);
});

Deno.test("WorkerPool replaces an idle worker that fails after its call returned", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: SANDBOX_PROBE_WORKER_URL });
  try {
    const { readOnly } = profiles(workspace.root);
    const options = { signal: NO_SIGNAL, timeoutMs: 10_000 };
    const first = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "crash-later" }), options);
    equal(contentOf(first), "returned");
    equal(workerOf(first), 1);
    for (let attempt = 0; attempt < 1_000 && pool.stats().started < 2; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    equal(pool.stats().started, 2);
    const next = await pool.run(
      readOnly,
      behaveCall(workspace.root, { behavior: "echo", text: "next" }),
      options,
    );
    equal(contentOf(next), "next");
    equal(workerOf(next), 2);
    equal(pool.stats().profiles[readOnly.key]?.busy, 0);
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool reports a profile whose worker cannot start, and prewarm does not reject", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({ workerUrl: new URL("./no_such_worker.ts", import.meta.url) });
  try {
    const { readOnly } = profiles(workspace.root);
    await pool.prewarm([readOnly]);
    deepEqual(pool.stats().profiles[readOnly.key], { starting: 0, idle: 0, busy: 0, waiting: 0 });
    const outcome = await pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo" }), {
      signal: NO_SIGNAL,
      timeoutMs: 10_000,
    });
    equal(outcome.type, "start-failed");
  } finally {
    await pool.close();
  }
});

Deno.test("WorkerPool.close stops every worker and ends queued calls as closed", async () => {
  await using workspace = await createTempWorkspace();
  const pool = new WorkerPool({
    workerUrl: SANDBOX_PROBE_WORKER_URL,
    maxWorkersPerProfile: 1,
    cancelGraceMs: 50,
  });
  const { readOnly, writer } = profiles(workspace.root);
  await pool.prewarm([readOnly, writer]);
  const options = { signal: NO_SIGNAL, timeoutMs: 10_000 };
  const running = pool.run(readOnly, behaveCall(workspace.root, { behavior: "hang-forever" }), options);
  const queued = pool.run(readOnly, behaveCall(workspace.root, { behavior: "echo" }), options);
  await pool.close();
  deepEqual(await running, { type: "closed" });
  deepEqual(await queued, { type: "closed" });
  const stats = pool.stats();
  deepEqual(stats.profiles[readOnly.key], { starting: 0, idle: 0, busy: 0, waiting: 0 });
  deepEqual(stats.profiles[writer.key], { starting: 0, idle: 0, busy: 0, waiting: 0 });
  equal(stats.draining, 0);
  deepEqual(await pool.run(writer, behaveCall(workspace.root, { behavior: "echo" }), options), {
    type: "closed",
  });
});

Deno.test("WorkerPool refuses a bound below one worker per profile", () => {
  throws(() => new WorkerPool({ maxWorkersPerProfile: 0 }), RangeError);
});
