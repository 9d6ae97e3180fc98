import { deepEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { DirectExecutor, type Execution, type ExecutionStatus } from "../../src/execution/executor.ts";
import { profileFor } from "../../src/execution/profiles.ts";
import { createToolRuntime } from "../../src/execution/runtime.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { ALLOW_ALL } from "../_fakes/pipeline.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import {
  type AnyTool,
  defineTool,
  textResult,
  type ToolCallContext,
  type ToolResult,
} from "../../src/tools/tool.ts";
import { z } from "zod";
import {
  probeBehaveTool,
  probeCancelTool,
  probeWriterTool,
  SANDBOX_PROBE_WORKER_URL,
  WORKER_INSTANCE,
} from "../_fakes/sandbox_probes.ts";
import { createTempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";

function contextFor(root: string, overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  return {
    root,
    timeoutMs: 10_000,
    fileRecords: {},
    strictLinks: false,
    shell: TEST_SHELL_PLAN,
    ...overrides,
  };
}

function probeExecutor(
  options: { maxWorkersPerProfile?: number; cancelGraceMs?: number } = {},
): WorkerExecutor {
  return new WorkerExecutor({ workerUrl: SANDBOX_PROBE_WORKER_URL, cancelGraceMs: 2_000, ...options });
}

const NO_SIGNAL = new AbortController().signal;

function behave(
  executor: WorkerExecutor,
  root: string,
  input: Record<string, unknown>,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ToolResult & { status: ExecutionStatus }> {
  return flatten(executor.execute(
    { tool: probeBehaveTool, input, context: contextFor(root, { timeoutMs: options.timeoutMs ?? 10_000 }) },
    { signal: options.signal ?? NO_SIGNAL },
  ));
}

/** The result with the execution's status beside its fields, for short assertions. */
async function flatten(running: Promise<Execution>): Promise<ToolResult & { status: ExecutionStatus }> {
  const { result, status } = await running;
  return { ...result, status };
}

async function waitForFile(path: string): Promise<void> {
  for (let attempt = 0; attempt < 1_000; attempt += 1) {
    try {
      await Deno.lstat(path);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw new Error(`"${path}" did not appear`);
}

Deno.test("WorkerExecutor runs a tool in a worker, not in this process, and returns its result", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const result = await behave(executor, workspace.root, { behavior: "echo", text: "hello" });
  equal(result.content, "hello");
  equal(result.isError, false);
  equal(typeof result.metadata.worker, "string");
  notEqual(result.metadata.worker, WORKER_INSTANCE);
});

Deno.test("WorkerExecutor reuses a warm worker for consecutive calls of the same profile", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const first = await behave(executor, workspace.root, { behavior: "echo", text: "1" });
  const second = await behave(executor, workspace.root, { behavior: "echo", text: "2" });
  equal(first.metadata.worker, second.metadata.worker);
  equal(executor.stats().started, 1);
});

Deno.test("WorkerExecutor runs a parallel batch on separate workers, never more than the bound", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor({ maxWorkersPerProfile: 2 });
  const results = await Promise.all(
    [1, 2, 3].map(() => behave(executor, workspace.root, { behavior: "wait", ms: 100 })),
  );
  deepEqual(results.map((result) => result.content), ["waited", "waited", "waited"]);
  equal(new Set(results.map((result) => result.metadata.worker)).size, 2);
  equal(executor.stats().started, 2);
});

Deno.test("WorkerExecutor turns a tool's throw into an error result and keeps the worker", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const before = await behave(executor, workspace.root, { behavior: "echo" });
  const thrown = await behave(executor, workspace.root, { behavior: "throw" });
  const after = await behave(executor, workspace.root, { behavior: "echo" });
  equal(thrown.isError, true);
  equal(thrown.content, "ProbeBehave failed: RangeError: probe failure");
  equal(thrown.status, "failed");
  equal(before.metadata.worker, after.metadata.worker);
});

Deno.test("WorkerExecutor turns results that break the contract into error results", async (t) => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  await t.step("a value that is not a ToolResult", async () => {
    const result = await behave(executor, workspace.root, { behavior: "not-a-result" });
    equal(result.isError, true);
    match(
      result.content,
      /^ProbeBehave failed: TypeError: the tool returned something that is not a ToolResult/,
    );
  });
  await t.step("metadata that cannot cross from the worker", async () => {
    const result = await behave(executor, workspace.root, { behavior: "uncloneable" });
    equal(result.isError, true);
    match(result.content, /^ProbeBehave failed: TypeError: the result cannot be sent from its worker/);
  });
});

Deno.test("WorkerExecutor stops a hung tool at its time limit and replaces the worker", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor({ cancelGraceMs: 50 });
  const before = await behave(executor, workspace.root, { behavior: "echo" });
  const hung = await behave(executor, workspace.root, { behavior: "hang-forever" }, { timeoutMs: 200 });
  equal(hung.isError, true);
  equal(hung.status, "timed-out");
  equal(
    hung.content,
    "ProbeBehave did not finish within 200 ms and was stopped: narrow the request or split it",
  );
  const after = await behave(executor, workspace.root, { behavior: "echo" });
  equal(after.isError, false);
  notEqual(after.metadata.worker, before.metadata.worker);
});

Deno.test("WorkerExecutor returns a timeout for a tool stuck in a synchronous loop and keeps serving", async () => {
  await using workspace = await createTempWorkspace();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--no-prompt",
      "--unstable-worker-options",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      new URL("../_fakes/busy_worker_script.ts", import.meta.url).pathname,
      workspace.root,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  equal(output.code, 0, stderr);
  const report = JSON.parse(new TextDecoder().decode(output.stdout));
  equal(report.hung.status, "timed-out");
  equal(report.next.result.content, "next");
  equal(report.next.result.isError, false);
  equal(report.stats.abandoned, 1);
  equal(report.stats.draining, 0);
});

Deno.test("WorkerExecutor reports a crashed worker as an error result and replaces it", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const before = await behave(executor, workspace.root, { behavior: "echo" });
  const crashed = await behave(executor, workspace.root, { behavior: "crash" });
  equal(crashed.isError, true);
  equal(crashed.status, "failed");
  match(crashed.content, /^ProbeBehave failed: its worker stopped unexpectedly \(probe crash\)/);
  const after = await behave(executor, workspace.root, { behavior: "echo" });
  equal(after.isError, false);
  notEqual(after.metadata.worker, before.metadata.worker);
});

Deno.test("WorkerExecutor cancels an aborted call in its worker, then replaces the worker", async () => {
  await using workspace = await createTempWorkspace();
  const executor = probeExecutor();
  const run = (tool: AnyTool, input: Record<string, unknown>, signal = NO_SIGNAL) =>
    flatten(executor.execute({ tool, input, context: contextFor(workspace.root) }, { signal }));
  try {
    const before = await run(probeWriterTool, { attempt: "write-inside" });
    const controller = new AbortController();
    const running = run(probeCancelTool, { label: "a" }, controller.signal);
    await waitForFile(`${workspace.root}/started-a`);
    controller.abort();
    const aborted = await running;
    equal(aborted.isError, true);
    equal(aborted.status, "aborted");
    match(aborted.content, /^ProbeCancel was cancelled before it finished/);
    const after = await run(probeWriterTool, { attempt: "write-inside" });
    equal(after.isError, false);
    notEqual(after.metadata.worker, before.metadata.worker);
  } finally {
    await executor.close();
  }
  // close() waited for the cancelled call: the tool saw its signal abort and left its marker.
  match(await Deno.readTextFile(`${workspace.root}/cancelled-a`), /AbortError/);
  equal(executor.stats().abandoned, 0);
});

Deno.test("WorkerExecutor returns a cancelled result without starting a worker when already aborted", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const controller = new AbortController();
  controller.abort();
  const result = await behave(executor, workspace.root, { behavior: "echo" }, { signal: controller.signal });
  equal(result.status, "aborted");
  equal(executor.stats().started, 0);
});

Deno.test("WorkerExecutor cancels a running call and ends it with an error result when closed", async () => {
  await using workspace = await createTempWorkspace();
  const executor = probeExecutor();
  const running = flatten(executor.execute(
    { tool: probeCancelTool, input: { label: "b" }, context: contextFor(workspace.root) },
    { signal: NO_SIGNAL },
  ));
  await waitForFile(`${workspace.root}/started-b`);
  await executor.close();
  const result = await running;
  equal(result.isError, true);
  equal(result.status, "aborted");
  match(result.content, /^ProbeCancel was stopped before it finished: the session is shutting down/);
  match(await Deno.readTextFile(`${workspace.root}/cancelled-b`), /AbortError/);
  const late = await behave(executor, workspace.root, { behavior: "echo" });
  equal(late.status, "aborted");
  equal(executor.stats().started, 1);
});

Deno.test("WorkerExecutor hands a call's progress to its caller before the result", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const heard: string[] = [];
  let ended = false;
  const running = executor.execute(
    {
      tool: probeBehaveTool,
      input: { behavior: "progress", ms: 60_000 },
      context: contextFor(workspace.root),
    },
    {
      signal: NO_SIGNAL,
      progress: (progress) => heard.push(`${progress}${ended ? " after the result" : ""}`),
    },
  ).finally(() => ended = true);
  // The call waits a minute after its news: only the news can arrive first.
  for (let attempt = 0; heard.length === 0 && attempt < 500; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  deepEqual(heard, ["budget-spent"]);
  equal(ended, false);
  await executor.close();
  equal((await running).status, "aborted");
  // Without a listener the news is dropped, and the call ends as usual.
  await using second = probeExecutor();
  const quiet = await behave(second, workspace.root, { behavior: "progress", ms: 0 });
  deepEqual([quiet.status, quiet.content], ["completed", "told"]);
});

Deno.test("WorkerExecutor reports a tool its worker does not have as an error result", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = probeExecutor();
  const stranger = defineTool({
    name: "Stranger",
    description: "A tool no worker entry loads",
    category: "other",
    inputSchema: z.object({}).strict(),
    isReadOnly: true,
    execute: () => Promise.resolve(textResult("never")),
  });
  const { result } = await executor.execute({
    tool: stranger,
    input: {},
    context: contextFor(workspace.root),
  }, {
    signal: NO_SIGNAL,
  });
  equal(result.isError, true);
  match(result.content, /^Cannot run Stranger: this worker has no tool "Stranger"/);
});

Deno.test("WorkerExecutor reports a worker that cannot start as an error result", async () => {
  await using workspace = await createTempWorkspace();
  await using executor = new WorkerExecutor({ workerUrl: new URL("./no_such_worker.ts", import.meta.url) });
  const result = await behave(executor, workspace.root, { behavior: "echo" });
  equal(result.isError, true);
  equal(result.status, "failed");
  match(result.content, /^Cannot run ProbeBehave: its sandboxed worker could not start: .+mewcode doctor/s);
  ok(!result.content.includes("undefined"));
});

Deno.test("createToolRuntime runs tools in prewarmed workers by default, in-process with executor direct", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/a.txt`, "a\n");
  const options = {
    root: workspace.root,
    readOnly: true,
    sandbox: "read-only" as const,
    sandboxNetwork: false,
    strictLinks: false,
    policy: ALLOW_ALL,
    env: {},
  };
  {
    await using runtime = await createToolRuntime(options);
    ok(runtime.executor instanceof WorkerExecutor);
    await runtime.executor.prewarm([
      profileFor(readFileTool, { root: workspace.root, shell: runtime.shell }),
    ]);
    equal(runtime.executor.stats().started, 1);
    const { result } = await runtime.pipeline.run({
      id: "1",
      name: "ReadFile",
      input: { path: `${workspace.root}/a.txt` },
    }, {
      signal: NO_SIGNAL,
    });
    equal(result.content, "1\ta");
    equal(runtime.executor.stats().started, 1);
  }
  {
    await using runtime = await createToolRuntime({ ...options, executor: "direct" });
    ok(runtime.executor instanceof DirectExecutor);
  }
});
