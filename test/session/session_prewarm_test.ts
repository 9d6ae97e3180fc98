/**
 * When a session starts its tool workers: a terminal session after its first request is on its way, and
 * only for the profiles its permissions can use; a one-shot session when the model begins a call, only for
 * that call's tool. Real workers, the fake Anthropic server over HTTP.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { openSession, type Session, type SessionOptions } from "../../src/session/session.ts";
import { APPROVE_ALL } from "../../src/permissions/decision.ts";
import { type FakeAnthropic, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { join } from "node:path";
import { STATUS_NOT_GATHERED } from "../../src/session/repo_context.ts";

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
    headless: false,
    ...options,
  });
}

async function executorOf(session: Session): Promise<WorkerExecutor> {
  const executor = (await session.toolRuntime()).executor;
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
    const executor = await executorOf(session);
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
    const executor = await executorOf(session);
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
    equal((await executorOf(session)).stats().started, 0);
  });
});

Deno.test("a one-shot session loads its tools once the model answers and starts only the workers it calls", async (t) => {
  await using workspace = await createTempWorkspace();
  const file = join(workspace.root, "notes.txt");
  await Deno.writeTextFile(file, "one\ntwo\n");
  await t.step("a text answer builds the tools once the model answers, and starts no worker", async () => {
    await using server = await startFakeAnthropic([turn().text("Hello.").stop("end_turn")]);
    await using session = await open(workspace.root, server, { headless: true, approver: APPROVE_ALL });
    equal(session.toolsStarted, false);
    const events = await Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
    equal(events.at(-1)?.type, "turn-end");
    // The catalog offered every tool all the same.
    deepEqual(
      (server.requests[0]?.body as { tools: { name: string }[] }).tools.map((tool) => tool.name),
      session.catalog.enabledNames(),
    );
    equal(session.toolsStarted, true);
    equal((await executorOf(session)).stats().started, 0);
  });
  await t.step("the tools load while the model works on its first token, not once it has", async () => {
    await using server = await startFakeAnthropic([turn().delay(1_500).text("Hello.").stop("end_turn")]);
    await using session = await open(workspace.root, server, { headless: true, approver: APPROVE_ALL });
    const running = Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
    await eventually(() => session.toolsStarted);
    // At most the response's first event has left the server (the retry layer holds message_start back): its
    // text is 1.5 s away.
    ok(server.sent.every((event) => event.event === "message_start"), JSON.stringify(server.sent));
    equal((await running).at(-1)?.type, "turn-end");
  });
  await t.step("the tools load once the request is on the wire, before the response begins", async () => {
    await using server = await startFakeAnthropic([
      turn({ headDelayMs: 1_500 }).text("Hello.").stop("end_turn"),
    ]);
    await using session = await open(workspace.root, server, { headless: true, approver: APPROVE_ALL });
    const running = Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
    await eventually(() => session.toolsStarted);
    // Nothing of the response (not even its head) has left the server yet, and will not for 1.5 s.
    deepEqual(server.sent, []);
    await eventually(() => server.requests.length === 1);
    deepEqual(server.sent, []);
    equal((await running).at(-1)?.type, "turn-end");
  });
  await t.step(
    "a ReadFile call starts the read-only worker only, in a mode that could use all three",
    async () => {
      await using server = await startFakeAnthropic([
        turn().toolUse("ReadFile", { path: file }).stop("tool_use"),
        turn().text("Read it.").stop("end_turn"),
      ]);
      await using session = await open(workspace.root, server, { headless: true, approver: APPROVE_ALL });
      const events = await Array.fromAsync(session.run("read it", { signal: NO_SIGNAL }));
      const ended = events.find((event) => event.type === "tool-call-end");
      ok(ended?.type === "tool-call-end" && !ended.result.isError, JSON.stringify(ended));
      ok(ended.result.content.includes("two"));
      equal(session.toolsStarted, true);
      const executor = await executorOf(session);
      await eventually(() => readyKinds(executor).length > 0);
      deepEqual(readyKinds(executor), ["read-only"]);
      equal(executor.stats().started, 1, JSON.stringify(executor.stats()));
    },
  );
  await t.step("a repository's SessionStart hook runs in the sandbox, which starts for it", async () => {
    await using server = await startFakeAnthropic([turn().text("Hello.").stop("end_turn")]);
    await using session = await open(workspace.root, server, {
      headless: true,
      approver: APPROVE_ALL,
      hooks: {
        user: {},
        repository: {
          SessionStart: [{
            hooks: [{ type: "command", command: "echo repository context; touch hook-ran" }],
          }],
        },
        sandboxRepositoryHooks: true,
      },
    });
    const events = await Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
    equal(
      events.at(-1)?.type,
      "turn-end",
      JSON.stringify(events.filter((event) => event.type === "warning")),
    );
    const system = (server.requests[0]?.body as { system: { text: string }[] | string }).system;
    ok(JSON.stringify(system).includes("repository context"), JSON.stringify(system));
    ok((await Deno.stat(join(workspace.root, "hook-ran"))).isFile);
    equal(session.toolsStarted, true);
  });
});

Deno.test("a one-shot prompt names the git branch and says the status was not gathered", async () => {
  await using workspace = await createTempWorkspace();
  for (const args of [["init", "-q", "-b", "trunk"], ["config", "user.email", "t@example.com"]]) {
    const git = await new Deno.Command("git", { args, cwd: workspace.root, stdout: "null", stderr: "null" })
      .output();
    ok(git.success);
  }
  await Deno.writeTextFile(join(workspace.root, "changed.txt"), "new\n");
  await using server = await startFakeAnthropic([turn().text("Hello.").stop("end_turn")]);
  await using session = await open(workspace.root, server, { headless: true, approver: APPROVE_ALL });
  await Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
  const system = JSON.stringify((server.requests[0]?.body as { system: unknown }).system);
  ok(system.includes("Git HEAD: branch trunk"), system);
  ok(system.includes(`Git status: unavailable (${STATUS_NOT_GATHERED})`), system);
  ok(!system.includes("changed.txt"), "no git status ran");
});

Deno.test("a one-shot session whose tools cannot start ends each call with why, and the run goes on", async () => {
  await using workspace = await createTempWorkspace();
  await using server = await startFakeAnthropic([
    turn().toolUse("ReadFile", { path: join(workspace.root, "a.txt") }).stop("tool_use"),
    turn().text("I could not read it.").stop("end_turn"),
  ]);
  // An executor kind that does not exist makes building the tool runtime throw.
  await using session = await open(workspace.root, server, {
    headless: true,
    executor: "no-such-executor" as SessionOptions["executor"] & string,
  });
  const events = await Array.fromAsync(session.run("read a.txt", { signal: NO_SIGNAL }));
  const ended = events.find((event) => event.type === "tool-call-end");
  ok(ended?.type === "tool-call-end", JSON.stringify(events.map((event) => event.type)));
  equal(ended.outcome.status, "failed");
  ok(ended.result.content.includes("mewcode's tools could not start"), ended.result.content);
  const last = events.at(-1);
  ok(last?.type === "turn-end" && last.reason === "end_turn", JSON.stringify(last));
  // The model got the failure as the call's result.
  ok(JSON.stringify(server.requests[1]?.body).includes("could not start"));
  deepEqual(await session.finish(), []);
});

Deno.test("a one-shot session walks a large repository ahead when the response begins, a small one not", async (t) => {
  const textAnswer = async (root: string) => {
    await using server = await startFakeAnthropic([turn().text("Hello.").stop("end_turn")]);
    await using session = await open(root, server, { headless: true, approver: APPROVE_ALL });
    const events = await Array.fromAsync(session.run("hello", { signal: NO_SIGNAL }));
    equal(events.at(-1)?.type, "turn-end");
    const executor = await executorOf(session);
    // The worker the walk ahead asked for starts after the answer's first event; give it its time.
    await eventually(() => executor.stats().started > 0, 1_000).catch(() => undefined);
    return executor.stats().started;
  };
  await t.step("a git repository whose index lists some 2,000 files: the read-only worker", async () => {
    await using workspace = await createTempWorkspace();
    await git(workspace.root, ["init", "-q"]);
    for (let index = 0; index < 2_500; index++) {
      await Deno.writeTextFile(join(workspace.root, `file-${index}-of-a-large-repository.txt`), "");
    }
    await git(workspace.root, ["add", "--intent-to-add", "--all"]);
    equal(await textAnswer(workspace.root), 1);
  });
  await t.step("a small git repository: no worker", async () => {
    await using workspace = await createTempWorkspace();
    await git(workspace.root, ["init", "-q"]);
    await Deno.writeTextFile(join(workspace.root, "notes.txt"), "one\n");
    await git(workspace.root, ["add", "--intent-to-add", "--all"]);
    equal(await textAnswer(workspace.root), 0);
  });
});

async function git(root: string, args: string[]): Promise<void> {
  const { success, stderr } = await new Deno.Command("git", { args, cwd: root, stderr: "piped" }).output();
  ok(success, new TextDecoder().decode(stderr));
}
