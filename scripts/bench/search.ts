/**
 * Benchmark of Grep and Glob against ripgrep (`rg`, `rg --files`) on a generated tree.
 *
 * The tree (≥20,000 searchable files, ≥200 MB of source-like text, plus node_modules, .gitignore'd
 * directories and binary files) is generated once from a seeded PRNG and cached under the work directory.
 * Each case runs our tool's `execute` in-process, the same call in a worker with the read-only tools'
 * permission profile, the call as deployed (through a session's tool runtime: the pipeline, the worker pool,
 * and for Grep ripgrep in the read-only shell sandbox where it is installed: `src/tools/grep_ripgrep.ts`),
 * both repeated in one session and as the first call of a fresh session, and ripgrep as a process,
 * alternately, several times, and reports medians and the ratios ours/rg. Fresh child processes then run
 * one turn of four parallel Greps as deployed each while its memory is polled (the median of nine). Both
 * sides apply the same rules: .gitignore files (nested ones too), hidden files searched,
 * .git/node_modules/vendor/.idea/__pycache__ excluded, binary files (NUL bytes) skipped; each case checks
 * that every side reports the same number of results. The tree comes from `_search_tree.ts`, the memory
 * measurement from `_search_memory.ts`, the report from `_search_report.ts`.
 *
 *   deno run -A --unstable-worker-options scripts/bench/search.ts [--quick] [--work-dir DIR]
 *
 * @module
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { globTool } from "../../src/tools/glob.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { globRunner } from "../../src/tools/_glob_run.ts";
import { grepRunner } from "../../src/tools/_grep_run.ts";
import { recentWalks } from "../../src/tools/_walk_memory.ts";
import { profileFor } from "../../src/execution/profiles.ts";
import { readRuntimeFlags } from "../compile.ts";
import {
  BENCH_LITERAL,
  BENCH_REGEX,
  type BenchRequest,
  DEPLOYED_CHILD_FLAG,
  HEAD_START_MS,
} from "./_search_session.ts";
import type { ShellPlan, ToolContext, ToolResult } from "../../src/tools/tool.ts";
import { type BenchOptions, type BenchSection, LineSplitter, loadAverage, median } from "./_report.ts";
import { ensureSearchTree } from "./_search_tree.ts";
import { measureCliTurnMemoryRuns, measureTurnMemoryRuns } from "./_search_memory.ts";
import { sharedPackage } from "./_package.ts";
import { type BenchCase, report, RG_COMMON, type Row, type Timing } from "./_search_report.ts";
import { shellQuote } from "../../src/common/shell_quote.ts";

/** The module the child processes run: a session's runtime and nothing else (see there). */
/**
 * Fresh processes whose median memory judges the four-Grep goal: one process's peak moves by up to 15 MB
 * with when the collector runs (measured on one commit: 116-132 MB), and a median of five still moved by 4.
 */
const TURN_MEMORY_RUNS = 9;
const SESSION_CHILD = new URL("./_search_session.ts", import.meta.url).pathname;

function lineCount(text: string): number {
  if (text === "") return 0;
  const lines = text.split("\n");
  return text.endsWith("\n") ? lines.length - 1 : lines.length;
}

function numberField(result: ToolResult, name: string): number {
  const value = result.metadata[name];
  if (typeof value !== "number") {
    throw new TypeError(`Missing metadata.${name} in ${result.content.slice(0, 200)}`);
  }
  return value;
}

function benchContext(root: string): ToolContext {
  return {
    root,
    timeoutMs: 600_000,
    fileRecords: {},
    strictLinks: false,
    shell: BENCH_SHELL,
    signal: new AbortController().signal,
  };
}

const BENCH_SHELL: ShellPlan = {
  mode: "read-only",
  network: false,
  wrapper: [],
  shell: "/bin/sh",
  env: {},
  prologue: [],
  seccomp: null,
  unavailable: "the search benchmark runs no shell",
};

/**
 * Runs one call in this thread, validating the input as the pipeline would; with the tool's runner, as the
 * tool worker does (a restricted worker may not read the runner's module when the definition imports it).
 */
function runTool(request: BenchRequest): Promise<ToolResult> {
  const context = benchContext(request.root);
  switch (request.tool) {
    case "Grep":
      return grepRunner.execute(context, grepTool.inputSchema.parse(request.input));
    case "Glob":
      return globRunner.execute(context, globTool.inputSchema.parse(request.input));
    default:
      throw new TypeError(`Unknown tool: ${String(request.tool satisfies never)}`);
  }
}

/** A worker with the permissions the executor gives read-only tools, running calls one at a time. */
class BenchWorker {
  #worker: Worker;

  constructor(root: string) {
    const profile = profileFor(grepTool, { root, shell: BENCH_SHELL });
    this.#worker = new Worker(import.meta.url, {
      type: "module",
      name: "bench-search",
      deno: { permissions: profile.permissions },
    });
  }

  run(request: BenchRequest): Promise<ToolResult> {
    const { promise, resolve, reject } = Promise.withResolvers<ToolResult>();
    this.#worker.onmessage = (event: MessageEvent<ToolResult>) => resolve(event.data);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`bench worker failed: ${event.message}`));
    };
    this.#worker.postMessage(request);
    return promise;
  }

  close(): void {
    this.#worker.terminate();
  }
}

// The body of the bench worker (this module, loaded in a worker).
function serveBenchWorker(): void {
  const scope = globalThis as unknown as {
    onmessage: ((event: MessageEvent<BenchRequest>) => void) | null;
    postMessage(message: ToolResult): void;
  };
  let running = 0;
  scope.onmessage = async (event) => {
    running++;
    const result = await runTool(event.data);
    running--;
    scope.postMessage(result);
    // As the tool worker does once a result is sent (workers/tool_worker.ts).
    if (running === 0) recentWalks.stampWhileIdle(() => running > 0);
  };
}

function isWorkerThread(): boolean {
  return typeof (globalThis as Record<string, unknown>).WorkerGlobalScope === "function";
}

async function runRg(root: string, args: string[], pipe: string | undefined): Promise<string> {
  const command = pipe === undefined
    ? new Deno.Command("rg", { args: [...args, root], stdout: "piped", stderr: "piped" })
    : new Deno.Command("sh", {
      args: ["-c", `rg ${args.map(shellQuote).join(" ")} ${shellQuote(root)} ${pipe}`],
      stdout: "piped",
      stderr: "piped",
    });
  const output = await command.output();
  // rg exits 1 when nothing matches; anything else is a failure of the benchmark itself.
  if (output.code > 1) throw new Error(`rg failed: ${new TextDecoder().decode(output.stderr)}`);
  return new TextDecoder().decode(output.stdout);
}

async function timed<T>(run: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function searchableStats(root: string): Promise<{ files: number; bytes: number }> {
  const listed = await runRg(root, [...RG_COMMON, "--files"], undefined);
  const paths = listed.split("\n").filter((line) => line !== "");
  let bytes = 0;
  for (const path of paths) bytes += (await Deno.stat(path)).size;
  return { files: paths.length, bytes };
}

async function rgVersion(): Promise<string> {
  const output = await new Deno.Command("rg", { args: ["--version"], stdout: "piped" }).output();
  return new TextDecoder().decode(output.stdout).split("\n")[0] ?? "rg";
}

/** The cases of a `--quick` run (a smoke run in seconds: each first call is a fresh process). */
const QUICK_CASES = ["Grep literal, all matching lines", "Grep regex, default limit", "Glob **/*.ts"];

function benchCases(): BenchCase[] {
  const all = 100_000;
  return [
    {
      name: "Grep literal, all matching lines",
      tool: "Grep",
      input: { pattern: BENCH_LITERAL, head_limit: all },
      countField: "matches",
      rgArgs: ["-n", "--no-heading", BENCH_LITERAL],
    },
    {
      name: "Grep regex, all matching lines",
      tool: "Grep",
      input: { pattern: BENCH_REGEX, head_limit: all },
      countField: "matches",
      rgArgs: ["-n", "--no-heading", BENCH_REGEX],
    },
    {
      name: "Grep regex, files_with_matches",
      tool: "Grep",
      input: { pattern: BENCH_REGEX, output_mode: "files_with_matches", head_limit: all },
      countField: "files",
      rgArgs: ["-l", BENCH_REGEX],
    },
    {
      name: "Grep literal, count",
      tool: "Grep",
      input: { pattern: BENCH_LITERAL, output_mode: "count", head_limit: all },
      countField: "files",
      rgArgs: ["-c", BENCH_LITERAL],
    },
    {
      name: "Grep regex, default limit",
      tool: "Grep",
      input: { pattern: BENCH_REGEX },
      countField: "matches",
      rgArgs: ["-n", "--no-heading", BENCH_REGEX],
      pipe: "| head -n 100",
      note: "ours stops after the first 100 lines in path order; rg is stopped by `head` after any 100",
    },
    {
      name: "Grep literal, no match",
      tool: "Grep",
      input: { pattern: "noSuchIdentifierAnywhere" },
      countField: "matches",
      rgArgs: ["-n", "--no-heading", "noSuchIdentifierAnywhere"],
      note: "ours also counts the files it skipped (ignored, binary) for its notice",
    },
    {
      name: "Glob **/*.ts",
      tool: "Glob",
      input: { pattern: "**/*.ts" },
      countField: "count",
      rgArgs: ["--files", "-g", "*.ts"],
      note: "ours also stats every match and sorts by mtime; rg only lists",
    },
    {
      name: "Glob **/*.ts, both sorted by mtime",
      tool: "Glob",
      input: { pattern: "**/*.ts" },
      countField: "count",
      rgArgs: ["--files", "-g", "*.ts", "--sortr", "modified"],
      note: "rg sorts on one thread; not part of the goal, which compares with `rg --files`",
      sortedBaseline: true,
    },
  ];
}

/** Wall times of one side over the repetitions. */
class DeployedProcess {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: ReadableStreamDefaultReader<string>;

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
      .getReader();
  }

  /**
   * Starts the process and waits until its runtime is open and its read-only worker has started; or, with a
   * head start, until that long after the worker was asked to start and walk the workspace ahead.
   */
  static async start(
    root: string,
    options: { walkStore?: string; headStartMs?: number } = {},
  ): Promise<DeployedProcess> {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...await readRuntimeFlags(),
        SESSION_CHILD,
        DEPLOYED_CHILD_FLAG,
        root,
        options.walkStore ?? "",
        options.headStartMs === undefined ? "" : String(options.headStartMs),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const session = new DeployedProcess(child);
    await session.#reply();
    return session;
  }

  /** Runs one call; its time is measured in the child, around the call alone. */
  async run(request: BenchRequest): Promise<DeployedReply> {
    await this.#writer.write(new TextEncoder().encode(`${JSON.stringify(request)}\n`));
    return await this.#reply();
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => undefined);
    // Cancelling the line reader cancels the pipes below it, down to the child's stdout.
    await this.#lines.cancel().catch(() => undefined);
    const status = await this.#child.status;
    if (!status.success) throw new Error(`the deployed-call process exited with ${status.code}`);
  }

  async #reply(): Promise<DeployedReply> {
    const line = await this.#lines.read();
    if (line.done) throw new Error("the deployed-call process ended early (its error is above)");
    return JSON.parse(line.value) as DeployedReply;
  }
}

/** A call's answer from the deployed-call process. */
interface DeployedReply {
  ms: number;
  engine: string | null;
  content: string;
}

/** The first call of a fresh session: a new process, its runtime opened and its worker started (not timed). */
async function timeFirstCall(
  root: string,
  request: BenchRequest,
  options: { walkStore?: string; headStartMs?: number } = {},
): Promise<number> {
  const session = await DeployedProcess.start(root, options);
  try {
    return (await session.run(request)).ms;
  } finally {
    await session.close();
  }
}

function timing(values: number[]): Timing {
  return { median: median(values), best: Math.min(...values) };
}

/** Runs the search benchmark: Grep and Glob against ripgrep, and the memory of a turn of parallel Greps. */
export async function benchSearch(options: BenchOptions): Promise<BenchSection> {
  const generateStarted = performance.now();
  const tree = await ensureSearchTree(options.workDir, options.quick);
  const root = await Deno.realPath(tree.directory);
  const generateMs = performance.now() - generateStarted;
  // A walk of a tree changed in the last 3 s is never kept (its stamps could miss a change): a tree just
  // generated would leave the kept-walk column without kept walks.
  if (tree.changed) await new Promise((resolve) => setTimeout(resolve, 3_500));
  const stats = await searchableStats(root);
  const repetitions = options.quick ? 2 : 7;
  const firstCalls = options.quick ? 1 : 5;
  const loadBefore = loadAverage();
  const worker = new BenchWorker(root);
  const deployed = await DeployedProcess.start(root);
  const rows: Row[] = [];
  try {
    // The smoke run takes one case of each path: ripgrep's, the worker's own search, Glob's.
    const cases = benchCases().filter((benchCase) => !options.quick || QUICK_CASES.includes(benchCase.name));
    for (const benchCase of cases) {
      rows.push(await measureCase(benchCase, { root, worker, deployed, repetitions, firstCalls }));
    }
  } finally {
    worker.close();
    await deployed.close();
  }
  const memoryRuns = options.quick ? 1 : TURN_MEMORY_RUNS;
  const runtimeMemory = await measureTurnMemoryRuns(root, memoryRuns, SESSION_CHILD);
  const launcher = await sharedPackage({ bundle: true });
  const memory = await measureCliTurnMemoryRuns(root, memoryRuns, launcher, { warmUp: !options.quick });
  return report(rows, { deployed: memory, runtime: runtimeMemory }, {
    quick: options.quick,
    stats,
    generateMs,
    repetitions,
    firstCalls,
    headStartMs: HEAD_START_MS,
    rg: await rgVersion(),
    loadBefore,
    loadAfter: loadAverage(),
  });
}

async function measureCase(
  benchCase: BenchCase,
  setup: {
    root: string;
    worker: BenchWorker;
    deployed: DeployedProcess;
    repetitions: number;
    firstCalls: number;
  },
): Promise<Row> {
  const { root, worker, deployed: session } = setup;
  const request: BenchRequest = { tool: benchCase.tool, root, input: benchCase.input };
  const rgArgs = [...RG_COMMON, ...benchCase.rgArgs];
  // One warm-up run of each side (JIT, page cache, worker start), also used to compare results.
  const ours = await runTool(request);
  if (ours.isError) throw new Error(`${benchCase.name}: ${ours.content}`);
  const fromWorker = await worker.run(request);
  const oursCount = numberField(ours, benchCase.countField);
  if (numberField(fromWorker, benchCase.countField) !== oursCount) {
    throw new Error(`${benchCase.name}: the worker found other results: ${fromWorker.content.slice(0, 200)}`);
  }
  const deployed = await session.run(request);
  if (deployed.content !== ours.content) {
    throw new Error(`${benchCase.name}: as deployed, other results: ${deployed.content.slice(0, 200)}`);
  }
  const rgCount = lineCount(await runRg(root, rgArgs, benchCase.pipe));
  const times = {
    inProcess: [] as number[],
    inWorker: [] as number[],
    deployed: [] as number[],
    rg: [] as number[],
  };
  const engines = new Set<string>();
  for (let repetition = 0; repetition < setup.repetitions; repetition++) {
    times.inProcess.push(await timed(() => runTool(request)));
    times.inWorker.push(await timed(() => worker.run(request)));
    const call = await session.run(request);
    times.deployed.push(call.ms);
    // Grep says which search answered; Glob has one.
    if (call.engine !== null) engines.add(call.engine);
    times.rg.push(await timed(() => runRg(root, rgArgs, benchCase.pipe)));
  }
  const firstCall: number[] = [];
  const firstCallAhead: number[] = [];
  for (let repetition = 0; repetition < setup.firstCalls; repetition++) {
    firstCall.push(await timeFirstCall(root, request));
    firstCallAhead.push(await timeFirstCall(root, request, { headStartMs: HEAD_START_MS }));
  }
  // The first call of a process that finds the walk an earlier process kept (the earlier one not timed).
  let firstCallKept: number[] | null = null;
  if (benchCase.tool === "Grep") {
    const walkStore = await Deno.makeTempDir({ prefix: "mewcode-bench-walks-" });
    try {
      await timeFirstCall(root, request, { walkStore });
      firstCallKept = [];
      for (let repetition = 0; repetition < setup.firstCalls; repetition++) {
        firstCallKept.push(await timeFirstCall(root, request, { walkStore }));
      }
    } finally {
      await Deno.remove(walkStore, { recursive: true });
    }
  }
  return {
    benchCase,
    inProcess: timing(times.inProcess),
    inWorker: timing(times.inWorker),
    deployed: timing(times.deployed),
    firstCall: timing(firstCall),
    firstCallAhead: timing(firstCallAhead),
    firstCallKept: firstCallKept === null ? null : timing(firstCallKept),
    rg: timing(times.rg),
    oursCount,
    rgCount,
    engines: [...engines].sort(),
  };
}

if (isWorkerThread()) {
  serveBenchWorker();
} else if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const workDirIndex = Deno.args.indexOf("--work-dir");
  const workDir = workDirIndex === -1 ? join(tmpdir(), "mewcode-bench") : Deno.args[workDirIndex + 1];
  if (workDir === undefined) throw new TypeError("--work-dir needs a directory");
  await Deno.mkdir(workDir, { recursive: true });
  const section = await benchSearch({ workDir, quick });
  console.log(section.markdown);
  for (const goal of section.goals) {
    console.log(`- ${goal.met ? "met" : "NOT MET"}: ${goal.name}: ${goal.measured}`);
  }
}
