/**
 * The search benchmark's memory measurement (search.ts): one turn of four parallel Greps as deployed, in a
 * fresh child process (`_search_session.ts`), its memory and its children's polled while it runs.
 *
 * @module
 */
import { readRuntimeFlags } from "../compile.ts";
import { descendants, median, proportionalKilobytes, statusKilobytes } from "./_report.ts";
import { RSS_CHILD_FLAG } from "./_search_session.ts";

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
export async function measureTurnMemoryRuns(
  root: string,
  runs: number,
  sessionChild: string,
): Promise<TurnMemoryRuns> {
  const measured: TurnMemory[] = [];
  for (let run = 0; run < runs; run++) measured.push(await measureTurnMemory(root, sessionChild));
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
  let processPeakMb = 0;
  let treePeakMb = 0;
  let treeRssPeakMb = 0;
  let treeProcesses = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      processPeakMb = Math.max(processPeakMb, statusField(child.pid, "VmHWM"));
      const tree = [child.pid, ...descendants(child.pid)];
      treeProcesses = Math.max(treeProcesses, tree.length);
      treeRssPeakMb = Math.max(treeRssPeakMb, tree.reduce((sum, pid) => sum + statusField(pid, "VmRSS"), 0));
      // The Deno process's whole resident set (its binary's pages are shared with this benchmark's own Deno,
      // which a session does not have), and each child's proportional set.
      const children = tree.slice(1).reduce((sum, pid) => sum + (proportionalKilobytes(pid) ?? 0) / 1024, 0);
      treePeakMb = Math.max(treePeakMb, statusField(child.pid, "VmRSS") + children);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const output = await child.output();
  running = false;
  await poll;
  if (!output.success) throw new Error("the memory measurement's child process failed");
  const lines = new TextDecoder().decode(output.stdout).trim().split("\n");
  const { turnMs, engines } = JSON.parse(lines[lines.length - 1]!) as { turnMs: number; engines: string[] };
  return {
    processPeakMb,
    // The process's own peak may fall between two samples.
    treePeakMb: Math.max(treePeakMb, processPeakMb),
    treeRssPeakMb: Math.max(treeRssPeakMb, processPeakMb),
    treeProcesses,
    turnMs,
    engines,
  };
}
