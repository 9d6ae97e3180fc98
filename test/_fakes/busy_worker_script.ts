/**
 * Runs a tool stuck in a synchronous loop through the WorkerExecutor, then a normal call, and prints both
 * results and the pool's stats as JSON. A separate process, because Deno 2.9 cannot stop a worker in a
 * synchronous loop (denoland/deno#35657): the thread would keep a core busy for the rest of a test run.
 * `Deno.exit` ends the process, and the stuck thread with it.
 *
 *   deno run --allow-all --unstable-worker-options test/_fakes/busy_worker_script.ts ROOT
 *
 * @module
 */
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { probeBehaveTool, SANDBOX_PROBE_WORKER_URL } from "./sandbox_probes.ts";
import { TEST_SHELL_PLAN } from "./tool_context.ts";

const root = Deno.args[0];
if (root === undefined) throw new TypeError("usage: busy_worker_script.ts ROOT");
const executor = new WorkerExecutor({ workerUrl: SANDBOX_PROBE_WORKER_URL, cancelGraceMs: 100 });
const context = { root, timeoutMs: 300, fileRecords: {}, strictLinks: false, shell: TEST_SHELL_PLAN };
const signal = new AbortController().signal;
const hung = await executor.execute({ tool: probeBehaveTool, input: { behavior: "hang-busy" }, context }, {
  signal,
});
const next = await executor.execute({
  tool: probeBehaveTool,
  input: { behavior: "echo", text: "next" },
  context,
}, {
  signal,
});
await executor.close();
console.log(JSON.stringify({ hung, next, stats: executor.stats() }));
Deno.exit(0);
