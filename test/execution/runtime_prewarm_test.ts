import { deepEqual, equal, ok } from "node:assert/strict";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

function startedKinds(executor: WorkerExecutor): string[] {
  return Object.keys(executor.stats().profiles).map((key) => key.split(" ")[0]!).sort();
}

Deno.test("createToolRuntime starts no worker; prewarm starts only the profiles the permissions can use", async (t) => {
  await using workspace = await createTempWorkspace();
  await t.step("plan mode: only the read-only worker", async () => {
    await using runtime = await testRuntime(workspace.root, { env: {} });
    const executor = runtime.executor;
    ok(executor instanceof WorkerExecutor);
    equal(executor.stats().started, 0);
    await runtime.prewarm({ mode: "plan", rules: [], canAsk: true, hooksMayDecide: false });
    deepEqual(startedKinds(executor), ["read-only"]);
    equal(executor.stats().started, 1);
  });
  await t.step("bypassPermissions with Bash denied: no shell worker", async () => {
    await using runtime = await testRuntime(workspace.root, { env: {} });
    const executor = runtime.executor;
    ok(executor instanceof WorkerExecutor);
    await runtime.prewarm({
      mode: "bypassPermissions",
      rules: [{ tool: "Bash", action: "deny" }],
      canAsk: false,
      hooksMayDecide: false,
    });
    deepEqual(startedKinds(executor), ["read-only", "writer"]);
  });
  await t.step(
    "default mode with an approver: one worker per profile, and no more when called again",
    async () => {
      await using runtime = await testRuntime(workspace.root, { env: {} });
      const executor = runtime.executor;
      ok(executor instanceof WorkerExecutor);
      const permissions = { mode: "default", rules: [], canAsk: true, hooksMayDecide: false } as const;
      await runtime.prewarm(permissions);
      deepEqual(startedKinds(executor), ["read-only", "shell", "writer"]);
      await runtime.prewarm(permissions);
      equal(executor.stats().started, 3);
    },
  );
  await t.step("the direct executor starts nothing", async () => {
    await using runtime = await testRuntime(workspace.root, { env: {}, executor: "direct" });
    await runtime.prewarm({ mode: "bypassPermissions", rules: [], canAsk: true, hooksMayDecide: false });
    equal(runtime.executor instanceof WorkerExecutor, false);
  });
});
