/**
 * Agent benchmarks. First, the wall time of one model turn that asks for 4 concurrency-safe Grep calls, streamed
 * by the fake Anthropic server with a delay after each tool_use block (a model still writing), under
 * streaming execution (safe calls start as their block arrives), batched execution (all start when the
 * stream ends) and sequential execution (one at a time after the stream). Real HTTP, real provider, real
 * tools; only the model is fake. Second, the agent's own time in a ReadFile turn as deployed
 * (`benchReadFileTurns`).
 *
 *   deno run --allow-all --no-prompt --unstable-worker-options scripts/bench/agent.ts [--quick]
 *
 * @module
 */
import { join } from "node:path";
import { runAgent } from "../../src/agent/loop.ts";
import type { ExecutionMode } from "../../src/execution/scheduler.ts";
import { createToolRuntime, type ToolRuntime } from "../../src/execution/runtime.ts";
import { AnthropicProvider } from "../../src/llm/anthropic_provider.ts";
import { policyForMode } from "../../src/permissions/modes.ts";
import { startFakeAnthropic, turn } from "../../test/fake_anthropic/server.ts";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { NO_SHELL } from "../../test/_fakes/pipeline.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import { QUIET_FOLDER_MS } from "../../src/tools/_verified_read.ts";
import { sharedPackage } from "./_package.ts";
import {
  type BenchOptions,
  type BenchSection,
  type Goal,
  LineSplitter,
  median,
  percentile,
} from "./_report.ts";

const MODES: readonly ExecutionMode[] = ["streaming", "batched", "sequential"];
const PATTERNS = ["needle_alpha", "needle_beta", "needle_gamma", "needle_delta"];
/** ReadFile turns per session in the agent-time benchmark. */
const READ_TURNS = 20;
/** The goal: the agent's own time between two API calls of a ReadFile turn, median. */
const READ_TURN_GOAL_MS = 5;

interface Sizes {
  files: number;
  linesPerFile: number;
  delayMs: number;
  runs: number;
}

/** Runs the agent benchmarks: streaming tool execution, and the agent's own time in a ReadFile turn. */
export async function benchAgent(options: BenchOptions): Promise<BenchSection> {
  const streaming = await benchStreaming(options);
  const readFile = await benchReadFileTurns(options);
  return { markdown: `${streaming.trim()}\n\n${readFile.markdown.trim()}\n`, goals: readFile.goals };
}

async function benchStreaming(options: BenchOptions): Promise<string> {
  const sizes: Sizes = options.quick
    ? { files: 80, linesPerFile: 200, delayMs: 60, runs: 2 }
    : { files: 400, linesPerFile: 1_000, delayMs: 150, runs: 5 };
  const root = await Deno.realPath(await prepareTree(options.workDir, sizes));
  await using runtime = await createToolRuntime({
    root,
    readOnly: true,
    sandbox: "read-only",
    sandboxNetwork: false,
    strictLinks: false,
    policy: policyForMode("default"),
    env: {},
  });
  // One unmeasured turn first, so every mode finds the executor warm (workers started, modules loaded).
  await measureTurn(runtime, root, "batched", sizes.delayMs);
  const times = new Map<ExecutionMode, number[]>(MODES.map((mode) => [mode, []]));
  const grepMs: number[] = [];
  for (let run = 0; run < sizes.runs; run++) {
    // Round-robin over the modes, so drift in the machine's load spreads evenly.
    for (const mode of MODES) {
      const measured = await measureTurn(runtime, root, mode, sizes.delayMs);
      times.get(mode)?.push(measured.turnMs);
      grepMs.push(...measured.callMs);
    }
  }
  const medians = new Map(MODES.map((mode) => [mode, median(times.get(mode) ?? [])]));
  const executor = runtime.executor.constructor.name;
  const sequential = medians.get("sequential") ?? NaN;
  const streaming = medians.get("streaming") ?? NaN;
  const rows = MODES.map((mode) => {
    const ms = medians.get(mode) ?? NaN;
    return `| ${mode} | ${ms.toFixed(0)} | ${(sequential / ms).toFixed(2)}× |`;
  });
  return [
    "## Agent: streaming tool execution",
    "",
    `One model turn asking for 4 Grep calls over ${sizes.files} files × ${sizes.linesPerFile} lines; the fake ` +
    `server streams each tool_use block, then waits ${sizes.delayMs} ms before the next (and before the end ` +
    "of the message), as a model that is still writing. Wall time from the request to the moment all four " +
    `results are ready, median of ${sizes.runs} runs; one Grep call takes ${median(grepMs).toFixed(0)} ms ` +
    `(median over all runs). Tools run in the ${executor}, warmed up by one unmeasured turn.`,
    "",
    "| execution | turn wall time (ms) | speed-up vs sequential |",
    "|---|---|---|",
    ...rows,
    "",
    `Streaming vs sequential execution: ${
      (sequential / streaming).toFixed(2)
    }× (above 1: streaming finished ` +
    `the turn sooner). The stream alone lasts at least ${PATTERNS.length} × ${sizes.delayMs} = ` +
    `${
      PATTERNS.length * sizes.delayMs
    } ms; under streaming execution the calls run inside that time, while ` +
    "batched and sequential execution add them after it.",
    "",
  ].join("\n");
}

async function prepareTree(workDir: string, sizes: Sizes): Promise<string> {
  const root = join(workDir, `agent-tree-${sizes.files}x${sizes.linesPerFile}`);
  const marker = join(root, ".complete");
  if (await Deno.stat(marker).then(() => true, () => false)) return root;
  await Deno.mkdir(root, { recursive: true });
  const line = "the quick brown fox jumps over the lazy dog while the scheduler keeps the model's order\n";
  const body = line.repeat(sizes.linesPerFile);
  for (let index = 0; index < sizes.files; index++) {
    const dir = join(root, "src", `d${index % 20}`);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(dir, `f${index}.txt`), body);
  }
  await Deno.writeTextFile(marker, "");
  return root;
}

async function measureTurn(
  runtime: ToolRuntime,
  root: string,
  mode: ExecutionMode,
  delayMs: number,
): Promise<{ turnMs: number; callMs: number[] }> {
  let builder = turn();
  for (const pattern of PATTERNS) {
    builder = builder.toolUse("Grep", { pattern, path: join(root, "src") }).delay(delayMs);
  }
  await using server = await startFakeAnthropic([
    builder.stop("tool_use"),
    turn().text("done").stop("end_turn"),
  ]);
  const provider = new AnthropicProvider({ apiKey: server.apiKey, baseUrl: server.url });
  let started = 0;
  let turnMs = NaN;
  const callMs: number[] = [];
  for await (
    const event of runAgent({
      provider,
      pipeline: runtime.pipeline,
      prompt: "Search for the needles",
      model: "claude-bench",
      maxTokens: 1000,
      system: "bench",
      signal: new AbortController().signal,
      execution: mode,
      resultDir: null,
    })
  ) {
    if (event.type === "request-start" && event.turn === 1) started = performance.now();
    if (event.type === "request-start" && event.turn === 2) turnMs = performance.now() - started;
    if (event.type === "tool-call-end") {
      if (event.result.isError) throw new Error(`Grep failed in the benchmark: ${event.result.content}`);
      callMs.push(event.durationMs);
    }
    if (event.type === "turn-end" && event.reason !== "end_turn") {
      throw new Error(`The benchmark run ended with ${event.reason}: ${event.message}`);
    }
  }
  return { turnMs, callMs };
}

/**
 * The agent's own time in a ReadFile turn, as deployed: `scripts/mewcode -p` of an installed package (its
 * bundle: _package.ts) as a real process against the fake server, which asks for one ReadFile per turn. The time counted is the gap the server sees between
 * writing the last event of response k and receiving request k+1: the stream's end reaching the loop, the
 * call through the gates and the worker, the transcript, and building and sending the next request. The
 * baseline is the same ReadFile called directly in this process.
 */
async function benchReadFileTurns(options: BenchOptions): Promise<BenchSection> {
  const sessions = options.quick ? 1 : 3;
  const turns = options.quick ? 5 : READ_TURNS;
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-bench-read-" }));
  const home = await Deno.makeTempDir({ prefix: "mewcode-bench-home-" });
  try {
    const file = join(root, "small.ts");
    await Deno.writeTextFile(
      file,
      Array.from({ length: 40 }, (_, index) => `export const value${index} = ${index};\n`).join(""),
    );
    const written = Date.now();
    const launcher = await sharedPackage({ bundle: true });
    // The workspace's folders age past QUIET_FOLDER_MS, as a repository's have unless something renames in
    // them right now: a read in folders changed in the last seconds checks its path eight times, not once.
    const aged = written + QUIET_FOLDER_MS + 1_000 - Date.now();
    if (aged > 0) await new Promise((resolve) => setTimeout(resolve, aged));
    const gaps: number[] = [];
    for (let session = 0; session < sessions; session++) {
      gaps.push(...await readFileSession(launcher, { root, home, file, turns }));
    }
    const direct = await directReadFileMs(root, file, options.quick ? 50 : 500);
    const p50 = median(gaps);
    const p95 = percentile(gaps, 0.95);
    const goal: Goal = {
      name: "agent time of a ReadFile turn, between API calls (p50)",
      target: `≤ ${READ_TURN_GOAL_MS} ms`,
      measured: `${p50.toFixed(2)} ms (p95 ${p95.toFixed(2)} ms; a direct ReadFile call ${
        direct.toFixed(2)
      } ms)`,
      met: p50 <= READ_TURN_GOAL_MS,
    };
    const markdown = [
      "## Agent: time per ReadFile turn",
      "",
      `\`scripts/mewcode -p\` of an installed package (with its bundle) as a real process against the fake ` +
      "server, which asks for one ReadFile of a " +
      "small file per turn (20 lines, each turn from another line, so the repeat guard never refuses a " +
      `call), ${turns} turns per session, ${sessions} session(s). Measured at the server: ` +
      "from writing the last event of a response to reading the last byte of the next request (the " +
      "agent's whole share of a turn: stream end, gates, worker, transcript, next request). The server " +
      "runs in a process of its own, as the API does, and keeps the connection open between turns. " +
      `The file was written more than ${(QUIET_FOLDER_MS + 1_000) / 1000} s before the first session, as a ` +
      "repository's files were: a read whose folders changed in the last " +
      `${
        QUIET_FOLDER_MS / 1000
      } s checks its path eight times instead of once (src/tools/_verified_read.ts). ` +
      "Baseline: the same ReadFile called directly in the benchmark's process.",
      "",
      "| measure | p50 ms | p95 ms | p50 vs direct call |",
      "|---|---:|---:|---:|",
      `| agent time per ReadFile turn | ${p50.toFixed(2)} | ${p95.toFixed(2)} | ${
        (p50 / direct).toFixed(1)
      }× |`,
      `| ReadFile called directly (baseline) | ${direct.toFixed(2)} | | 1.0× |`,
      "",
    ].join("\n");
    return { markdown, goals: [goal] };
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

/**
 * One `-p` session of `turns` ReadFile turns; returns the agent's time per turn in ms. The fake server runs in
 * a process of its own (`runReadServer`), with Deno's default flags: in this process, which runs with
 * mewcode's 1 MB young generation and holds the other benchmarks' heap, its own collections delayed its reads
 * and added them to the agent's time (measured: 0.2–0.7 ms a turn).
 */
async function readFileSession(
  launcher: string,
  session: { root: string; home: string; file: string; turns: number },
): Promise<number[]> {
  const { root, home, file, turns } = session;
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--no-prompt",
      import.meta.filename!,
      READ_SERVER_FLAG,
      file,
      String(turns),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = server.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    .getReader();
  try {
    const ready = await lines.read();
    if (ready.done) throw new Error("bench: the fake server process ended before it listened");
    const serverEnv = JSON.parse(ready.value) as Record<string, string>;
    const output = await new Deno.Command(launcher, {
      args: ["-p", "Read the file again and again", "--max-turns", String(turns + 1)],
      cwd: root,
      env: { ...serverEnv, MEWCODE_HOME: home, MEWCODE_DENO: Deno.execPath(), NO_COLOR: "1" },
      clearEnv: false,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `bench: mewcode -p failed (exit ${output.code}): ${new TextDecoder().decode(output.stderr)}`,
      );
    }
    await server.stdin.close();
    const answer = await lines.read();
    if (answer.done) throw new Error("bench: the fake server process ended without its measurements");
    const reply = JSON.parse(answer.value) as { gaps: number[] } | { error: string };
    if ("error" in reply) throw new Error(`bench: ${reply.error}`);
    return reply.gaps;
  } finally {
    await server.stdin.close().catch(() => undefined);
    // Cancelling the line reader cancels the pipes below it, down to the child's stdout.
    await lines.cancel().catch(() => undefined);
    await server.status;
  }
}

const READ_SERVER_FLAG = "--read-server";

/**
 * The fake server's process of a ReadFile session: prints the variables that point mewcode at it (one JSON
 * line), serves until its standard input closes, then prints the gaps it measured (one JSON line): from
 * writing the last event of response N to receiving the last byte of request N + 1.
 */
async function runReadServer(file: string, turns: number): Promise<void> {
  // Each turn reads from another line: the same call three times in a row would be refused by the repeat
  // guard without reading anything.
  const script = Array.from(
    { length: turns },
    (_, index) => turn().toolUse("ReadFile", { path: file, offset: 1 + index, limit: 20 }).stop("tool_use"),
  );
  // The connection stays open between turns, as the API's does: one connection per session, not per turn.
  await using server = await startFakeAnthropic([...script, turn().text("done").stop("end_turn")], {
    keepAlive: true,
  });
  console.log(JSON.stringify(server.env()));
  for await (const _ of Deno.stdin.readable) {
    // The parent writes nothing: it closes the stream once the session has ended.
  }
  const gaps: number[] = [];
  for (let request = 1; request <= turns; request++) {
    const lastEvent = server.sent.filter((event) => event.request === request).at(-1);
    const next = server.requests[request];
    if (lastEvent === undefined || next === undefined) {
      console.log(JSON.stringify({ error: `turn ${request} has no reply` }));
      return;
    }
    gaps.push(next.receivedAt - lastEvent.at);
  }
  console.log(JSON.stringify({ gaps }));
}

/** The median time of a ReadFile call in this process, with every permission (the baseline). */
async function directReadFileMs(root: string, file: string, calls: number): Promise<number> {
  const executor = new DirectExecutor();
  const context = { root, timeoutMs: 60_000, fileRecords: {}, strictLinks: false, shell: NO_SHELL };
  const times: number[] = [];
  for (let index = 0; index < calls; index++) {
    const started = performance.now();
    const { result } = await executor.execute({ tool: readFileTool, input: { path: file }, context }, {
      signal: new AbortController().signal,
    });
    if (result.isError) throw new Error(`bench: ReadFile failed: ${result.content}`);
    times.push(performance.now() - started);
  }
  return median(times.slice(Math.floor(calls / 5)));
}

if (import.meta.main && Deno.args[0] === READ_SERVER_FLAG) {
  await runReadServer(Deno.args[1]!, Number(Deno.args[2]));
} else if (import.meta.main) {
  const workDir = new URL("../../.bench/", import.meta.url).pathname;
  await Deno.mkdir(workDir, { recursive: true });
  console.log((await benchAgent({ workDir, quick: Deno.args.includes("--quick") })).markdown);
}
