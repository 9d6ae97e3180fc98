/**
 * Executor benchmark: what a tool call costs per call beyond the tool's own work, and where the time of a
 * Bash call goes.
 *
 * ReadFile on a small file: a direct in-process call, the warm worker pool, and a cold worker (started for
 * the call). Bash `true`, from the bare process spawn up to the whole pipeline, each layer one row, so the
 * breakdown can be read off the table:
 *   - `bash -c true` spawned from Deno (the floor of any shell call);
 *   - the session's bubblewrap command line spawned raw, with and without its network namespace (what the
 *     sandbox itself costs, without mewcode's code);
 *   - the Bash tool called in-process without a sandbox (danger-full-access), in a bubblewrap sandbox per
 *     call, and in the sandbox kept across calls (src/tools/_shell_host.ts);
 *   - the Bash tool through the warm worker pool (the executor only; its worker keeps the sandbox);
 *   - the call through a session's `ToolRuntime.pipeline` (gates, the shell plan decided before the call and
 *     its checks after it, the worker, the kept sandbox): the goal, ≤ 10 ms at p50.
 * All variants are interleaved, so that drift in the machine's load spreads evenly over them. Each Bash call
 * follows a short idle time, as a real call follows a model turn; calls back to back are measured apart.
 *
 *   deno run --allow-all --no-prompt --unstable-worker-options scripts/bench/executor.ts [--quick]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DirectExecutor, type ToolExecutor } from "../../src/execution/executor.ts";
import { createToolRuntime, type ToolRuntime } from "../../src/execution/runtime.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { defaultLimits } from "../../src/sandbox/limits.ts";
import { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { ShellHost } from "../../src/tools/_shell_host.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import type { AnyTool, SandboxMode, ShellPlan, ToolCallContext } from "../../src/tools/tool.ts";
import { type BenchOptions, type BenchSection, type Goal, loadAverage, percentile } from "./_report.ts";

interface Sizes {
  /** ReadFile calls per warm/direct variant. */
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
  run: () => Promise<void>;
}

/** Idle time before each measured Bash call: a call follows a model turn, which takes far longer. */
const SHELL_IDLE_MS = 20;
/** The goal of issue 14 for a shell call, p50. */
const PIPELINE_GOAL_MS = 10;
/** The goal for the warm pool's overhead on ReadFile, p50. */
const WARM_OVERHEAD_GOAL_MS = 1;

/** Runs the executor benchmark and returns its section of the report. */
export async function benchExecutor(options: BenchOptions): Promise<BenchSection> {
  const sizes: Sizes = options.quick
    ? { calls: 40, coldCalls: 3, shellCalls: 6, warmup: 2 }
    : { calls: 1_000, coldCalls: 30, shellCalls: 150, warmup: 20 };
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
  await using sandboxed = await openSandbox(root, "workspace-write", env);
  await using unsandboxed = await openSandbox(root, "danger-full-access", env);
  if (sandboxed.sandbox.unavailable !== null) {
    throw new Error(`bench: the shell sandbox cannot run: ${sandboxed.sandbox.unavailable}`);
  }
  const direct = new DirectExecutor();
  await using warm = new WorkerExecutor();
  await using runtime = await sessionRuntime(root, env);
  // Most sessions run in a git repository, whose metadata each call's plan protects too.
  const repository = await gitRepository(`${options.workDir}/executor-repository`, source);
  await using repositoryRuntime = await sessionRuntime(repository, env);
  const host = new ShellHost();

  const read = await measureReadFile(sizes, { root, file, plan: sandboxed.plan, direct, warm });
  const shell = await measureBash(sizes, {
    root,
    sandboxed: sandboxed.plan,
    unsandboxed: unsandboxed.plan,
    direct,
    warm,
    runtime,
    repositoryRuntime,
    host,
  });
  await host.close();

  const p50 = (series: Series) => percentile(series.times, 0.5);
  const warmOverhead = p50(read.warm) - p50(read.direct);
  const pipeline = p50(shell.pipeline);
  const goals: Goal[] = [
    {
      name: "Bash `true` through the whole pipeline (gates, worker, bubblewrap), p50",
      target: `≤ ${PIPELINE_GOAL_MS} ms`,
      measured: `${formatMs(pipeline)} ms (\`bash -c true\` spawned directly ${
        formatMs(p50(shell.spawn))
      } ms; in-process in a sandbox per call ${formatMs(p50(shell.directBwrap))} ms, in the kept sandbox ${
        formatMs(p50(shell.directKept))
      } ms)`,
      met: pipeline <= PIPELINE_GOAL_MS,
    },
    {
      name: "ReadFile: overhead of the warm worker pool over a direct call, p50",
      target: `< ${WARM_OVERHEAD_GOAL_MS} ms`,
      measured: `${formatMs(warmOverhead)} ms (direct ${formatMs(p50(read.direct))} ms)`,
      met: warmOverhead < WARM_OVERHEAD_GOAL_MS,
    },
  ];
  const markdown = [
    "## Executor overhead",
    "",
    `Per-call time of one tool call. Load average at the end: ${loadAverage()}. ${sizes.calls} ReadFile ` +
    `calls per variant on a ${new TextEncoder().encode(source).length}-byte file, ${sizes.coldCalls} ` +
    `cold ones, ${sizes.shellCalls} Bash calls per variant; every table's variants interleaved. Each Bash ` +
    `call follows ${SHELL_IDLE_MS} ms of idle time, as a call follows a model turn (the sandbox Bash keeps ` +
    "starts the next command's shell after each call); the last row measures calls back to back.",
    "",
    table([read.direct, read.warm, read.cold], read.direct, "direct"),
    "",
    "Bash `true`, layer by layer (the ratio is against `bash -c true` spawned directly):",
    "",
    table(
      [
        shell.spawn,
        shell.rawBwrapShareNet,
        shell.rawBwrap,
        shell.directBash,
        shell.directBwrap,
        shell.directKept,
        shell.warmBwrap,
        shell.pipeline,
        shell.repositoryPipeline,
        shell.backToBack,
      ],
      shell.spawn,
      "spawn",
    ),
    "",
    `Bubblewrap (the session's command line, raw) costs ${
      formatMs(p50(shell.rawBwrap) - p50(shell.spawn))
    } ms over a bare spawn, of which its network namespace ${
      formatMs(p50(shell.rawBwrap) - p50(shell.rawBwrapShareNet))
    } ms; a sandbox per call adds the Bash tool's own code (pipes, the readiness announcement, the ` +
    `resource-limit prologue) ${formatMs(p50(shell.directBwrap) - p50(shell.rawBwrap))} ms. The sandbox ` +
    `kept across calls (what a tool worker uses) costs ${
      formatMs(p50(shell.directKept))
    } ms a call instead (a shell forked before the command came, the kill of what the command left, ` +
    `the check of the sandbox's mounts); the worker adds ${
      formatMs(p50(shell.warmBwrap) - p50(shell.directKept))
    } ms, the pipeline's gates and the per-call sandbox plan and checks ${
      formatMs(p50(shell.pipeline) - p50(shell.warmBwrap))
    } ms. A cold worker costs ${formatMs(p50(read.cold) - p50(read.direct))} ms more than a direct ` +
    "ReadFile call; the pool pays it once per profile, while the first API request is in flight.",
  ].join("\n");
  return { markdown, goals };
}

/** ReadFile: direct and warm interleaved, then cold. */
async function measureReadFile(
  sizes: Sizes,
  parts: { root: string; file: string; plan: ShellPlan; direct: ToolExecutor; warm: ToolExecutor },
): Promise<{ direct: Series; warm: Series; cold: Series }> {
  const input = { path: parts.file };
  const context = contextFor(parts.root, parts.plan);
  const direct = series(
    "ReadFile, direct in-process call",
    () => callOrThrow(parts.direct, readFileTool, input, context),
  );
  const warm = series(
    "ReadFile, warm worker pool",
    () => callOrThrow(parts.warm, readFileTool, input, context),
  );
  await interleave([direct, warm], sizes.warmup, sizes.calls);
  const cold = series("ReadFile, cold worker (started for the call, then closed)", async () => {
    const executor = new WorkerExecutor();
    try {
      await callOrThrow(executor, readFileTool, input, context);
    } finally {
      await executor.close();
    }
  });
  await interleave([cold], 0, sizes.coldCalls);
  return { direct, warm, cold };
}

/** Bash `true`, every layer interleaved. */
async function measureBash(
  sizes: Sizes,
  parts: {
    root: string;
    sandboxed: ShellPlan;
    unsandboxed: ShellPlan;
    direct: ToolExecutor;
    warm: ToolExecutor;
    runtime: ToolRuntime;
    repositoryRuntime: ToolRuntime;
    host: ShellHost;
  },
) {
  const input = { command: "true" };
  const sandboxedContext = contextFor(parts.root, parts.sandboxed);
  const unsandboxedContext = contextFor(parts.root, parts.unsandboxed);
  const plan = parts.sandboxed;
  const spawn = series("`bash -c true` spawned directly (no tool code, no sandbox)", async () => {
    await spawnOrThrow(plan.shell, ["-c", "true"], plan.env, null);
  });
  const [bwrap = plan.shell, ...flags] = plan.wrapper;
  const rawBwrap = series("bubblewrap (the session's command line) + `bash -c true`, raw spawn", async () => {
    await spawnOrThrow(bwrap, [...flags, plan.shell, "-c", "true"], plan.env, plan.seccomp);
  });
  const shareNet = flags.filter((flag) => flag !== "--unshare-net");
  const rawBwrapShareNet = series(
    "the same without its network namespace (not a product setting)",
    async () => {
      await spawnOrThrow(bwrap, [...shareNet, plan.shell, "-c", "true"], plan.env, plan.seccomp);
    },
  );
  const directBash = series(
    "Bash `true`, in-process, no sandbox (danger-full-access)",
    () => callOrThrow(parts.direct, bashTool, input, unsandboxedContext),
  );
  const directBwrap = series(
    "Bash `true`, in-process, a bubblewrap sandbox per call",
    () => callOrThrow(parts.direct, bashTool, input, sandboxedContext),
  );
  // As in a tool worker: the sandbox is kept across calls, each command runs in a fresh subshell.
  const keptContext = { ...sandboxedContext, shellRunner: parts.host };
  const directKept = series(
    "Bash `true`, in-process, the sandbox kept across calls",
    () => callOrThrow(parts.direct, bashTool, input, keptContext),
  );
  const warmBwrap = series(
    "Bash `true`, warm worker pool, kept sandbox (executor only)",
    () => callOrThrow(parts.warm, bashTool, input, sandboxedContext),
  );
  let id = 0;
  const through = (runtime: ToolRuntime) => async () => {
    const { result } = await runtime.pipeline.run(
      { id: `bench-${id++}`, name: "Bash", input },
      { signal: new AbortController().signal },
    );
    if (result.isError) throw new Error(`bench: Bash failed through the pipeline: ${result.content}`);
  };
  const throughPipeline = through(parts.runtime);
  const pipeline = series(
    "**Bash `true` through the whole pipeline** (gates, plan, worker, kept sandbox)",
    throughPipeline,
  );
  const repositoryPipeline = series(
    "the whole pipeline in a git repository (its metadata protected too; not the goal's row)",
    through(parts.repositoryRuntime),
  );
  const all = {
    spawn,
    rawBwrap,
    rawBwrapShareNet,
    directBash,
    directBwrap,
    directKept,
    warmBwrap,
    pipeline,
    repositoryPipeline,
  };
  // Every call follows idle time, as a Bash call follows a model turn: the kept sandbox starts the next
  // command's shell after each call, and back-to-back calls (measured apart) pay for that start.
  await interleave(Object.values(all), sizes.warmup, sizes.shellCalls, SHELL_IDLE_MS);
  const backToBack = series(
    "the whole pipeline, calls back to back (no idle time between them)",
    throughPipeline,
  );
  await interleave([backToBack], sizes.warmup, sizes.shellCalls);
  return { ...all, backToBack };
}

function series(label: string, run: () => Promise<void>): Series {
  return { label, times: [], run };
}

/** Runs each variant once per round, `warmup` rounds unmeasured, then `rounds` measured. */
async function interleave(
  variants: readonly Series[],
  warmup: number,
  rounds: number,
  idleMs = 0,
): Promise<void> {
  for (let round = 0; round < warmup + rounds; round++) {
    for (const variant of variants) {
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
      const started = performance.now();
      await variant.run();
      if (round >= warmup) variant.times.push(performance.now() - started);
    }
  }
}

async function openSandbox(
  root: string,
  mode: SandboxMode,
  env: Record<string, string>,
): Promise<{ sandbox: ShellSandbox; plan: ShellPlan } & AsyncDisposable> {
  const sandbox = await ShellSandbox.open({
    root,
    mode,
    network: false,
    env,
    limits: defaultLimits(),
    excluded: [],
    protectedPaths: PROTECTED_PATHS,
  });
  // The plan of one call, as the pipeline would prepare it.
  const call = await sandbox.prepareCall();
  await call.finish();
  return { sandbox, plan: call.plan, [Symbol.asyncDispose]: () => sandbox.close() };
}

/** A session's tool runtime as the agent uses it, with a policy that allows everything. */
async function sessionRuntime(root: string, env: Record<string, string>): Promise<ToolRuntime> {
  return await createToolRuntime({
    root,
    readOnly: false,
    sandbox: "workspace-write",
    sandboxNetwork: false,
    strictLinks: false,
    policy: { decide: () => Promise.resolve({ behavior: "allow" }) },
    env,
    ripgrep: false,
  });
}

/**
 * A git repository with one commit of `source` at `path`, as its real path: made once per work folder (a
 * first run's config settles while ReadFile is measured, as a user's has long before a session reads it).
 */
async function gitRepository(path: string, source: string): Promise<string> {
  await Deno.mkdir(path, { recursive: true });
  const root = await Deno.realPath(path);
  const git = async (...args: string[]) => {
    const { success, stderr } = await new Deno.Command("git", { args, cwd: root, stdout: "null" }).output();
    if (!success) throw new Error(`bench: git ${args.join(" ")} failed: ${new TextDecoder().decode(stderr)}`);
  };
  try {
    await Deno.lstat(`${root}/.git`);
  } catch {
    await Deno.writeTextFile(`${root}/small.ts`, source);
    await git("init", "-q");
    await git("add", "small.ts");
    await git(
      "-c",
      "user.name=bench",
      "-c",
      "user.email=bench@localhost",
      "-c",
      "commit.gpgsign=false",
      "commit",
      "-q",
      "-m",
      "bench",
    );
  }
  return root;
}

function contextFor(root: string, shell: ShellPlan): ToolCallContext {
  return { root, timeoutMs: 60_000, fileRecords: {}, strictLinks: false, shell };
}

async function spawnOrThrow(
  program: string,
  args: string[],
  env: Record<string, string>,
  stdin: Uint8Array | null,
): Promise<void> {
  const child = new Deno.Command(program, {
    args,
    clearEnv: true,
    env,
    stdin: stdin === null ? "null" : "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  if (stdin !== null) {
    const writer = child.stdin.getWriter();
    await writer.write(stdin);
    await writer.close();
  }
  const status = await child.status;
  if (!status.success) throw new Error(`bench: ${program} failed with exit code ${status.code}`);
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

function table(rows: readonly Series[], baseline: Series, baselineName: string): string {
  const base = percentile(baseline.times, 0.5);
  const lines = [
    `| path | p50 ms | p95 ms | p50 vs ${baselineName} | overhead p50 ms |`,
    "|---|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    const p50 = percentile(row.times, 0.5);
    lines.push(
      `| ${row.label} | ${formatMs(p50)} | ${formatMs(percentile(row.times, 0.95))} | ${
        (p50 / base).toFixed(2)
      }× | ${formatMs(p50 - base)} |`,
    );
  }
  return lines.join("\n");
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
  const section = await benchExecutor({ workDir, quick: values.quick ?? false });
  console.log(section.markdown);
  for (const goal of section.goals) {
    console.log(`- ${goal.met ? "met" : "NOT met"}: ${goal.name}: ${goal.target}; measured ${goal.measured}`);
  }
}
