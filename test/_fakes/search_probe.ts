/**
 * A probe run as its own process (`runSearchProbe`): one Grep or Glob call through the real WorkerExecutor
 * (the production tool worker, its permissions and its time limit), then the CPU time the process uses in
 * the second after the executor has closed. Deno cannot stop a worker stuck in a synchronous loop, so a
 * search that outlives its call keeps a core busy (~100 ticks per second); a bounded one leaves it idle.
 * A process of its own, because `deno test --parallel` runs other test files in this process's threads.
 *
 * @module
 */
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { globTool } from "../../src/tools/glob.ts";
import { grepTool } from "../../src/tools/grep.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { TEST_SHELL_PLAN } from "./tool_context.ts";

/** One probe: a tool call in a workspace, with a time limit. */
export interface ProbeRequest {
  tool: "Grep" | "Glob";
  root: string;
  input: Record<string, unknown>;
  timeoutMs: number;
}

/** What the probe measured. */
export interface ProbeReport {
  result: ToolResult;
  /** Wall time of the call as the executor returned it. */
  elapsedMs: number;
  /** utime + stime of the whole process in the second after the executor closed, in clock ticks. */
  idleTicks: number;
}

const PROBE_URL = new URL(import.meta.url);
const RUNTIME_FLAGS = new URL("../../scripts/runtime_flags.txt", import.meta.url);

/** The `--v8-flags=…` line mewcode ships with (scripts/runtime_flags.txt), so the probe runs what ships. */
export async function shippedV8Flags(): Promise<string> {
  const lines = (await Deno.readTextFile(RUNTIME_FLAGS)).split("\n");
  const line = lines.find((candidate) => candidate.startsWith("--v8-flags="));
  if (line === undefined) throw new Error("scripts/runtime_flags.txt has no --v8-flags= line");
  return line.trim();
}

/** Runs a probe in a new `deno` process with the shipped V8 flags and returns its report. */
export async function runSearchProbe(request: ProbeRequest): Promise<ProbeReport> {
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-check",
      "--allow-all",
      "--no-prompt",
      "--unstable-worker-options",
      await shippedV8Flags(),
      PROBE_URL.pathname,
      JSON.stringify(request),
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(request.timeoutMs + 60_000),
  });
  const output = await command.output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`The search probe failed: ${new TextDecoder().decode(output.stderr)}${stdout}`);
  }
  return JSON.parse(stdout) as ProbeReport;
}

function cpuTicks(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  // Fields after the command name (which may hold spaces, inside parentheses): state is field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime (14) and stime (15)
}

async function probe(request: ProbeRequest): Promise<void> {
  const tool = request.tool === "Grep" ? grepTool : globTool;
  const executor = new WorkerExecutor({ cancelGraceMs: 500 });
  const started = performance.now();
  const { result } = await executor.execute(
    {
      tool,
      input: request.input,
      context: {
        root: request.root,
        timeoutMs: request.timeoutMs,
        fileRecords: {},
        strictLinks: false,
        shell: TEST_SHELL_PLAN,
      },
    },
    { signal: new AbortController().signal },
  );
  const elapsedMs = performance.now() - started;
  await executor.close();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = cpuTicks();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const report: ProbeReport = { result, elapsedMs, idleTicks: cpuTicks() - before };
  console.log(JSON.stringify(report));
  // Exit even if a worker's thread still spins: the process is the probe.
  Deno.exit(0);
}

if (import.meta.main) await probe(JSON.parse(Deno.args[0]!) as ProbeRequest);
