/**
 * When a session starts its tool workers: after its first request is on its way, and only for the profiles
 * its permissions can use. Real workers, the fake Anthropic server over HTTP.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { openSession, type Session, type SessionOptions } from "../../src/session/session.ts";
import { APPROVE_ALL } from "../../src/permissions/decision.ts";
import { type FakeAnthropic, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const NO_SIGNAL = new AbortController().signal;

function open(root: string, server: FakeAnthropic, options: Partial<SessionOptions>): Promise<Session> {
  return openSession({
    workspace: { root, aliases: [] },
    env: { ...server.env(), HOME: root },
    model: "claude-sonnet-5-5",
    maxTokens: 1000,
    maxTurns: null,
    permissionMode: "default",
    readOnly: false,
    sandbox: "workspace-write",
    sandboxNetwork: false,
    strictLinks: false,
    persist: false,
    needsModel: true,
    headless: true,
    ...options,
  });
}

function executorOf(session: Session): WorkerExecutor {
  const executor = session.tools.executor;
  ok(executor instanceof WorkerExecutor);
  return executor;
}

/** The kinds of the profiles with a ready worker. */
function readyKinds(executor: WorkerExecutor): string[] {
  return Object.entries(executor.stats().profiles)
    .filter(([, counts]) => counts.idle > 0)
    .map(([key]) => key.split(" ")[0]!)
    .sort();
}

/** Polls until `done` holds; fails after `limitMs` (a bound against hangs, not a timing assertion). */
async function eventually(done: () => boolean, limitMs = 20_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > until) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("a session starts no worker before its first request, then only those its mode can use", async (t) => {
  await using workspace = await createTempWorkspace();
  await t.step("plan mode: the read-only worker only", async () => {
    await using server = await startFakeAnthropic([turn().text("Planned.").stop("end_turn")]);
    await using session = await open(workspace.root, server, {
      permissionMode: "plan",
      approver: APPROVE_ALL,
    });
    const executor = executorOf(session);
    equal(executor.stats().started, 0);
    const events = await Array.fromAsync(session.run("plan it", { signal: NO_SIGNAL }));
    equal(events.at(-1)?.type, "turn-end");
    await eventually(() => readyKinds(executor).length > 0);
    // Its only profile is ready: nothing else was or will be started.
    deepEqual(readyKinds(executor), ["read-only"]);
    equal(executor.stats().started, 1);
  });
  await t.step("default mode with an approver: every profile, one worker each", async () => {
    await using server = await startFakeAnthropic([turn().text("Done.").stop("end_turn")]);
    await using session = await open(workspace.root, server, { approver: APPROVE_ALL });
    const executor = executorOf(session);
    equal(executor.stats().started, 0);
    await Array.fromAsync(session.run("do it", { signal: NO_SIGNAL }));
    await eventually(() => readyKinds(executor).length === 3);
    deepEqual(readyKinds(executor), ["read-only", "shell", "writer"]);
    equal(executor.stats().started, 3);
  });
  await t.step("a session that never runs a prompt starts no worker", async () => {
    await using server = await startFakeAnthropic([]);
    await using session = await open(workspace.root, server, { approver: APPROVE_ALL });
    await new Promise((resolve) => setTimeout(resolve, 100));
    equal(executorOf(session).stats().started, 0);
  });
});
