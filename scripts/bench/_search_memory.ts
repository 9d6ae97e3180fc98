/**
 * The search benchmark's memory measurement (search.ts): one turn of four parallel Greps, each in a fresh
 * process whose memory and its children's are polled while it runs: `mewcode -p` of an installed package (its
 * bundle, as deployed; the goal's figure), and a session's tool runtime alone run from the sources
 * (`_search_session.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { readRuntimeFlags } from "../compile.ts";
import { startFakeAnthropic, turn } from "../../test/fake_anthropic/server.ts";
import { descendants, median, proportionalKilobytes, statusKilobytes } from "./_report.ts";
import { HEAD_START_MS, PARALLEL_GREPS, RSS_CHILD_FLAG } from "./_search_session.ts";

/** Peak memory of one turn of four parallel Greps as deployed, measured in a fresh child process. */
export interface TurnMemory {
  /** Peak resident set of the Deno process (VmHWM), in MB. */
  processPeakMb: number;
  /**
   * Peak of the process's resident set plus its children's proportional sets (PSS: the sandboxes, ripgrep),
   * in MB: the memory the turn takes, the pages the children share (the same binaries) counted once.
   */
  treePeakMb: number;
  /** Peak of the summed resident sets of the same processes, in MB: shared pages counted once per process. */
  treeRssPeakMb: number;
  /** The most processes the tree had at once. */
  treeProcesses: number;
  /** Wall time of the turn, in ms. */
  turnMs: number;
  engines: string[];
}

/** The turn's memory over several fresh processes: each figure is the median of the runs. */
export interface TurnMemoryRuns extends TurnMemory {
  runs: number;
  /** The lowest and highest `treePeakMb` of the runs. */
  treePeakRangeMb: [number, number];
}

/** A field of /proc/PID/status in MB, 0 when the process is gone. */
function statusField(pid: number, field: string): number {
  return (statusKilobytes(pid, field) ?? 0) / 1024;
}

/**
 * The turn's memory measured `runs` times, each in a fresh process: one run's peak moves by several MB with
 * when the garbage collector happens to run (measured: 116-132 MB for one commit), so the goal is judged on
 * the median, as the times are.
 */
export function measureTurnMemoryRuns(
  root: string,
  runs: number,
  sessionChild: string,
): Promise<TurnMemoryRuns> {
  return medianOfRuns(runs, () => measureTurnMemory(root, sessionChild));
}

/**
 * The same turn through `mewcode -p` (`launcher`, an installed package's) against a fake API in this process,
 * as a one-shot alias call runs it: the model's response begins, and the four calls come `HEAD_START_MS` later
 * in one message (the session starts its search worker, which walks the workspace meanwhile); the answer to
 * the results ends the run. After one unmeasured run with `warmUp` (it fills Deno's code cache for the bundle).
 */
export async function measureCliTurnMemoryRuns(
  root: string,
  runs: number,
  launcher: string,
  options: { warmUp: boolean },
): Promise<TurnMemoryRuns> {
  if (options.warmUp) await measureCliTurnMemory(root, launcher);
  return medianOfRuns(runs, () => measureCliTurnMemory(root, launcher));
}

async function medianOfRuns(runs: number, measure: () => Promise<TurnMemory>): Promise<TurnMemoryRuns> {
  const measured: TurnMemory[] = [];
  for (let run = 0; run < runs; run++) measured.push(await measure());
  const middle = (pick: (memory: TurnMemory) => number) => median(measured.map(pick));
  const trees = measured.map((memory) => memory.treePeakMb);
  return {
    processPeakMb: middle((memory) => memory.processPeakMb),
    treePeakMb: middle((memory) => memory.treePeakMb),
    treeRssPeakMb: middle((memory) => memory.treeRssPeakMb),
    treeProcesses: Math.max(...measured.map((memory) => memory.treeProcesses)),
    turnMs: middle((memory) => memory.turnMs),
    engines: [...new Set(measured.flatMap((memory) => memory.engines))],
    runs,
    treePeakRangeMb: [Math.min(...trees), Math.max(...trees)],
  };
}

async function measureTurnMemory(root: string, sessionChild: string): Promise<TurnMemory> {
  const child = new Deno.Command(Deno.execPath(), {
    // mewcode's own runtime flags: its V8 flags size the heaps, its permissions are what the tools need.
    args: [
      "run",
      ...await readRuntimeFlags(),
      sessionChild,
      RSS_CHILD_FLAG,
      root,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const polling = pollTree(child.pid);
  const output = await child.output();
  const peaks = await polling.stop();
  if (!output.success) throw new Error("the memory measurement's child process failed");
  const lines = new TextDecoder().decode(output.stdout).trim().split("\n");
  const { turnMs, engines } = JSON.parse(lines[lines.length - 1]!) as { turnMs: number; engines: string[] };
  return { ...peaks, turnMs, engines };
}

async function measureCliTurnMemory(root: string, launcher: string): Promise<TurnMemory> {
  const home = await Deno.makeTempDir({ prefix: "mewcode-bench-home-" });
  try {
    let calls = turn().delay(HEAD_START_MS);
    PARALLEL_GREPS.forEach((input, index) => {
      calls = calls.toolUse("Grep", input, { id: `toolu_grep_${index}` });
    });
    await using server = await startFakeAnthropic([
      calls.stop("tool_use"),
      turn().text("Done.").stop("end_turn"),
    ]);
    const child = new Deno.Command(launcher, {
      args: ["-p", "Find where parseConfigOverride and the event handlers are", "--max-turns", "3"],
      cwd: root,
      env: {
        MEWCODE_HOME: home,
        MEWCODE_DENO: Deno.execPath(),
        ANTHROPIC_API_KEY: "bench",
        ANTHROPIC_BASE_URL: server.url,
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const polling = pollTree(child.pid);
    const output = await child.output();
    const peaks = await polling.stop();
    if (!output.success || server.requests.length !== 2) {
      throw new Error(`mewcode -p failed the four-Grep turn: ${new TextDecoder().decode(output.stderr)}`);
    }
    // The calls' share: from the end of the message that asked for them to the request that brings the results.
    const asked = server.sent.filter((event) => event.request === 1).at(-1)!.at;
    return {
      ...peaks,
      turnMs: server.requests[1]!.receivedAt - asked,
      engines: await transcriptEngines(home),
    };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** The engines the session's Grep results name (`metadata.engine`), from its transcript under `home`. */
async function transcriptEngines(home: string): Promise<string[]> {
  const engines: string[] = [];
  const visit = async (folder: string): Promise<void> => {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) await visit(path);
      else if (entry.name.endsWith(".jsonl")) {
        for (const line of (await Deno.readTextFile(path)).split("\n")) {
          const engine = line.includes('"engine"') ? JSON.parse(line)?.metadata?.engine : undefined;
          if (typeof engine === "string") engines.push(engine);
        }
      }
    }
  };
  await visit(home);
  return engines;
}

/** Polls the memory of `pid` and its descendants every 10 ms until `stop`, which gives the peaks. */
function pollTree(pid: number): { stop(): Promise<Omit<TurnMemory, "turnMs" | "engines">> } {
  let processPeakMb = 0;
  let treePeakMb = 0;
  let treeRssPeakMb = 0;
  let treeProcesses = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      processPeakMb = Math.max(processPeakMb, statusField(pid, "VmHWM"));
      const tree = [pid, ...descendants(pid)];
      treeProcesses = Math.max(treeProcesses, tree.length);
      treeRssPeakMb = Math.max(
        treeRssPeakMb,
        tree.reduce((sum, each) => sum + statusField(each, "VmRSS"), 0),
      );
      // The Deno process's whole resident set (its binary's pages are shared with this benchmark's own Deno,
      // which a session does not have), and each child's proportional set.
      const children = tree.slice(1).reduce(
        (sum, each) => sum + (proportionalKilobytes(each) ?? 0) / 1024,
        0,
      );
      treePeakMb = Math.max(treePeakMb, statusField(pid, "VmRSS") + children);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await poll;
      return {
        processPeakMb,
        // The process's own peak may fall between two samples.
        treePeakMb: Math.max(treePeakMb, processPeakMb),
        treeRssPeakMb: Math.max(treeRssPeakMb, processPeakMb),
        treeProcesses,
      };
    },
  };
}
