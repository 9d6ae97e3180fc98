/**
 * Executor benchmark: what the sandbox costs per call. ReadFile on a small file through a cold worker
 * (a new worker for every call), the warm pool, and a direct in-process call; Bash `true` through the warm
 * pool under bubblewrap (the default sandbox), in-process under bubblewrap, and in-process without a
 * sandbox (danger-full-access). Ratios are against the direct call measured in the same run, with the
 * measurements interleaved so that drift in the machine's load spreads evenly.
 *
 *   deno run --allow-all --no-prompt --unstable-worker-options scripts/bench/executor.ts [--quick]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DirectExecutor, type ToolExecutor } from "../../src/execution/executor.ts";
import { defaultLimits } from "../../src/sandbox/limits.ts";
import { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import type { AnyTool, SandboxMode, ShellPlan, ToolCallContext } from "../../src/tools/tool.ts";

interface Sizes {
  /** Calls per warm/direct variant. */
  calls: number;
  /** Calls with a new worker each. */
  coldCalls: number;
  /** Bash calls per variant. */
  shellCalls: number;
  /** Unmeasured calls per variant first (JIT, caches, workers). */
  warmup: number;
}

/** One measured variant: its label and its per-call times in milliseconds. */
interface Series {
  label: string;
  times: number[];
}

/** Runs the executor benchmark and returns its Markdown section. */
export async function benchExecutor(options: { workDir: string; quick: boolean }): Promise<string> {
  const sizes: Sizes = options.quick
    ? { calls: 100, coldCalls: 5, shellCalls: 20, warmup: 10 }
    : { calls: 1_000, coldCalls: 30, shellCalls: 150, warmup: 50 };
  const directory = `${options.workDir}/executor`;
  await Deno.mkdir(directory, { recursive: true });
  const root = await Deno.realPath(directory);
  const file = `${root}/small.ts`;
  const source = Array.from(
    { length: 40 },
    (_, index) => `export const value${index} = ${index}; // a small source file`,
  ).join("\n") + "\n";
  await Deno.writeTextFile(file, source);
  const env = Deno.env.toObject();
  const sandboxed = await shellPlan(root, "workspace-write", env);
  const unsandboxed = await shellPlan(root, "danger-full-access", env);
  if (sandboxed.unavailable !== null) {
    throw new Error(`bench: the shell sandbox cannot run: ${sandboxed.unavailable}`);
  }

  const readInput = { path: file };
  const readContext = contextFor(root, sandboxed);
  const direct = new DirectExecutor();
  await using warm = new WorkerExecutor();

  // ReadFile: direct and warm interleaved, then cold.
  const directRead: Series = { label: "ReadFile, direct in-process call", times: [] };
  const warmRead: Series = { label: "ReadFile, warm worker pool", times: [] };
  for (let index = 0; index < sizes.warmup; index++) {
    await timeCall(direct, readFileTool, readInput, readContext);
    await timeCall(warm, readFileTool, readInput, readContext);
  }
  for (let index = 0; index < sizes.calls; index++) {
    directRead.times.push(await timeCall(direct, readFileTool, readInput, readContext));
    warmRead.times.push(await timeCall(warm, readFileTool, readInput, readContext));
  }
  const coldRead: Series = { label: "ReadFile, cold worker (started for the call, then closed)", times: [] };
  for (let index = 0; index < sizes.coldCalls; index++) {
    const started = performance.now();
    const cold = new WorkerExecutor();
    await callOrThrow(cold, readFileTool, readInput, readContext);
    await cold.close();
    coldRead.times.push(performance.now() - started);
  }

  // Bash `true`: three variants interleaved.
  const bashInput = { command: "true" };
  const sandboxedContext = contextFor(root, sandboxed);
  const unsandboxedContext = contextFor(root, unsandboxed);
  const directBash: Series = { label: "Bash `true`, direct, no sandbox (danger-full-access)", times: [] };
  const directBwrap: Series = { label: "Bash `true`, direct, bubblewrap", times: [] };
  const warmBwrap: Series = { label: "Bash `true`, warm worker pool, bubblewrap (default)", times: [] };
  for (let index = 0; index < sizes.warmup + sizes.shellCalls; index++) {
    const measured = index >= sizes.warmup;
    const a = await timeCall(direct, bashTool, bashInput, unsandboxedContext);
    const b = await timeCall(direct, bashTool, bashInput, sandboxedContext);
    const c = await timeCall(warm, bashTool, bashInput, sandboxedContext);
    if (!measured) continue;
    directBash.times.push(a);
    directBwrap.times.push(b);
    warmBwrap.times.push(c);
  }

  const warmOverhead = percentile(warmRead.times, 50) - percentile(directRead.times, 50);
  return [
    "## Executor overhead",
    "",
    "Per-call time of one tool call through the executor interface (the pipeline's gates excluded). " +
    "The warm pool is what mewcode uses: a worker per permission profile, started before the first call. " +
    `${sizes.calls} ReadFile calls per variant on a ${
      new TextEncoder().encode(source).length
    }-byte file, ${sizes.coldCalls} cold ones, ${sizes.shellCalls} Bash calls per variant.`,
    "",
    table([directRead, warmRead, coldRead], directRead),
    "",
    table([directBash, directBwrap, warmBwrap], directBash),
    "",
    `Warm-pool overhead of ReadFile: ${formatMs(warmOverhead)} ms at p50 (target < 1 ms: ${
      warmOverhead < 1 ? "met" : "NOT met"
    }). A cold worker costs ${
      formatMs(percentile(coldRead.times, 50) - percentile(directRead.times, 50))
    } ms ` +
    "more than a direct call; the pool pays it once per profile, while the first API request is in flight. " +
    `Bubblewrap adds ${
      formatMs(percentile(directBwrap.times, 50) - percentile(directBash.times, 50))
    } ms to a shell call, the worker ${
      formatMs(percentile(warmBwrap.times, 50) - percentile(directBwrap.times, 50))
    } ms on top.`,
  ].join("\n");
}

async function shellPlan(root: string, mode: SandboxMode, env: Record<string, string>): Promise<ShellPlan> {
  const sandbox = await ShellSandbox.open({
    root,
    mode,
    network: false,
    env,
    limits: defaultLimits(),
    excluded: [],
    protectedPaths: PROTECTED_PATHS,
  });
  // The plan of one call, as the pipeline would prepare it; its cgroups live until the process exits.
  return (await sandbox.prepareCall()).plan;
}

function contextFor(root: string, shell: ShellPlan): ToolCallContext {
  return { root, timeoutMs: 60_000, fileRecords: {}, strictLinks: false, shell };
}

async function timeCall(
  executor: ToolExecutor,
  tool: AnyTool,
  input: unknown,
  context: ToolCallContext,
): Promise<number> {
  const started = performance.now();
  await callOrThrow(executor, tool, input, context);
  return performance.now() - started;
}

async function callOrThrow(
  executor: ToolExecutor,
  tool: AnyTool,
  input: unknown,
  context: ToolCallContext,
): Promise<void> {
  const { result } = await executor.execute({ tool, input, context }, {
    signal: new AbortController().signal,
  });
  if (result.isError) throw new Error(`bench: ${tool.name} failed: ${result.content}`);
}

function table(rows: Series[], baseline: Series): string {
  const base = percentile(baseline.times, 50);
  const lines = [
    "| path | p50 ms | p95 ms | p50 vs direct | overhead p50 ms |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    const p50 = percentile(row.times, 50);
    lines.push(
      `| ${row.label} | ${formatMs(p50)} | ${formatMs(percentile(row.times, 95))} | ${
        (p50 / base).toFixed(2)
      }× | ${formatMs(p50 - base)} |`,
    );
  }
  return lines.join("\n");
}

/** The nearest-rank percentile. */
function percentile(values: readonly number[], rank: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function formatMs(value: number): string {
  return Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { quick: { type: "boolean" }, "work-dir": { type: "string" } },
  });
  const workDir = values["work-dir"] ?? new URL("../../.bench/", import.meta.url).pathname;
  await Deno.mkdir(workDir, { recursive: true });
  console.log(await benchExecutor({ workDir, quick: values.quick ?? false }));
}
