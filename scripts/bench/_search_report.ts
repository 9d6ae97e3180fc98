/**
 * The search benchmark's report (search.ts): the table of cases against ripgrep, the goals, and how each
 * figure was measured, in Markdown.
 *
 * @module
 */
import { shellQuote } from "../../src/common/shell_quote.ts";
import type { BenchSection, Goal } from "./_report.ts";
import type { TurnMemoryRuns } from "./_search_memory.ts";
import { PARALLEL_GREPS, type ToolName } from "./_search_session.ts";
import { RIPGREP_SEARCHES_AT_ONCE } from "../../src/tools/grep_ripgrep.ts";
import { PACE_AFTER_MS } from "../../src/tools/_grep_prepass.ts";

/** The ripgrep flags that give it our tools' rules (see the module comment). */
export const RG_COMMON = [
  "--no-config",
  "--no-require-git",
  "--hidden",
  "-g",
  "!.git",
  "-g",
  "!node_modules",
  "-g",
  "!vendor",
  "-g",
  "!.idea",
  "-g",
  "!__pycache__",
];

/** One case of the benchmark: our call and the ripgrep command that does the same. */
export interface BenchCase {
  name: string;
  tool: ToolName;
  input: Record<string, unknown>;
  /** The metadata field of our result that counts results. */
  countField: "matches" | "files" | "count";
  /** The ripgrep arguments (before the root). */
  rgArgs: string[];
  /** Run ripgrep through `sh -c` with this pipeline suffix (e.g. "| head -n 100"). */
  pipe?: string;
  /** A remark on what the two sides do differently, if anything. */
  note?: string;
  /** A comparison with a slower rg command (sorted output), reported but left out of the goal. */
  sortedBaseline?: boolean;
}

export interface Timing {
  median: number;
  best: number;
}

export interface Row {
  benchCase: BenchCase;
  inProcess: Timing;
  inWorker: Timing;
  /** Repeated calls in one session: the runtime's recent walk of the path is reused. */
  deployed: Timing;
  /** The first call of a fresh session (a fresh process per call, as a shell alias runs it), at once. */
  firstCall: Timing;
  /** The same, `headStartMs` after the session's search worker was asked to start and walk ahead. */
  firstCallAhead: Timing;
  /** The same with a walk kept by an earlier process (Grep only; null for Glob). */
  firstCallKept: Timing | null;
  rg: Timing;
  oursCount: number;
  rgCount: number;
  /** Which search answered as deployed ("ripgrep", "typescript"), from the results' metadata. */
  engines: string[];
}

/**
 * A session's tool runtime in a process of its own, started with mewcode's runtime flags (`--deployed-child`):
 * calls as deployed run there, in a process that holds nothing but the session, as in mewcode. In this
 * process they would share the main heap with the in-process runs, whose garbage (tens of MB per run) the
 * deployed call's own work would then have to collect.
 */

function displayArgument(value: string): string {
  return /^[\w.,=/-]+$/.test(value) ? value : shellQuote(value);
}

export function inputText(input: Record<string, unknown>): string {
  return `{${Object.entries(input).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")}}`;
}

export interface ReportFacts {
  quick: boolean;
  stats: { files: number; bytes: number };
  generateMs: number;
  repetitions: number;
  firstCalls: number;
  /** How long before the first call walked ahead its worker was asked to start and walk. */
  headStartMs: number;
  rg: string;
  loadBefore: string;
  loadAfter: string;
}

/** How many processes the memory figures come from, and the range of their peaks, as text. */
function memoryRuns(memory: TurnMemoryRuns): string {
  const [low, high] = memory.treePeakRangeMb;
  return memory.runs === 1
    ? "one fresh process"
    : `the median of ${memory.runs} fresh processes, whose peaks ranged from ${low.toFixed(0)} to ${
      high.toFixed(0)
    } MB`;
}

/** The worst ratio ours/rg by medians over the rows of a tool, and the case it is in. */
function worstRatio(
  rows: Row[],
  tool: ToolName,
  pick: (row: Row) => Timing | null,
): { ratio: number; name: string } {
  let worst = { ratio: 0, name: "" };
  for (const row of rows) {
    const picked = pick(row);
    if (row.benchCase.tool !== tool || row.benchCase.sortedBaseline === true || picked === null) continue;
    const ratio = picked.median / row.rg.median;
    if (ratio > worst.ratio) worst = { ratio, name: row.benchCase.name };
  }
  return worst;
}

/** The four-Grep turn's memory: through `mewcode -p` of the installed package (the goal's), and the tool runtime alone. */
export interface TurnMemories {
  deployed: TurnMemoryRuns;
  runtime: TurnMemoryRuns;
}

function goals(rows: Row[], memories: TurnMemories): Goal[] {
  const memory = memories.deployed;
  const deployedGoal = (tool: ToolName, name: string, target: string): Goal => {
    const warm = worstRatio(rows, tool, (row) => row.deployed);
    const ahead = worstRatio(rows, tool, (row) => row.firstCallAhead);
    const first = worstRatio(rows, tool, (row) => row.firstCall);
    const kept = worstRatio(rows, tool, (row) => row.firstCallKept);
    return {
      name,
      target,
      measured: `repeated calls ${warm.ratio.toFixed(2)}× (${warm.name}); first call of a session ` +
        `${ahead.ratio.toFixed(2)}× (${ahead.name}); first call at once, without the walk ahead ` +
        `${first.ratio.toFixed(2)}× (${first.name})` +
        (kept.name === "" ? "" : `; at once with a kept walk ${kept.ratio.toFixed(2)}× (${kept.name})`),
      met: warm.ratio <= 1.5 && ahead.ratio <= 1.5,
    };
  };
  return [
    deployedGoal("Grep", "Grep as deployed ≤ 1.5× rg (worst case by medians)", "≤ 1.5× rg"),
    deployedGoal("Glob", "Glob as deployed ≤ 1.5× rg --files", "≤ 1.5× rg --files"),
    {
      name: "four parallel Greps: peak memory ≤ 125 MB",
      target: "≤ 125 MB",
      measured: `${memory.treePeakMb.toFixed(0)} MB: \`mewcode -p\` of the installed package with the ` +
        `sandboxes and ripgrep (their PSS; ${memoryRuns(memory)}; the Deno process alone ` +
        `${memory.processPeakMb.toFixed(0)} MB; all resident sets summed ${
          memory.treeRssPeakMb.toFixed(0)
        } MB); the tool runtime alone, from the sources, ${memories.runtime.treePeakMb.toFixed(0)} MB`,
      met: memory.treePeakMb <= 125,
    },
  ];
}

export function report(rows: Row[], memories: TurnMemories, facts: ReportFacts): BenchSection {
  const memory = memories.deployed;
  const runtime = memories.runtime;
  const ratio = (ours: Timing, rg: Timing) =>
    `${(ours.median / rg.median).toFixed(2)}× (${(ours.best / rg.best).toFixed(2)}×)`;
  const ms = (value: Timing) => `${value.median.toFixed(0)} (${value.best.toFixed(0)})`;
  const table = rows.map((row) => {
    const same = row.oursCount === row.rgCount
      ? `${row.oursCount} = ${row.rgCount}`
      : `**${row.oursCount} ≠ ${row.rgCount}**`;
    return "| " + [
      row.benchCase.name,
      same,
      ms(row.inProcess),
      ms(row.inWorker),
      `${ms(row.deployed)} ${row.engines.join("/")}`,
      ms(row.firstCallAhead),
      ms(row.firstCall),
      row.firstCallKept === null ? "–" : ms(row.firstCallKept),
      ms(row.rg),
      ratio(row.inWorker, row.rg),
      ratio(row.deployed, row.rg),
      ratio(row.firstCallAhead, row.rg),
      ratio(row.firstCall, row.rg),
      row.firstCallKept === null ? "–" : ratio(row.firstCallKept, row.rg),
    ].join(" | ") + " |";
  });
  const commands = rows.map((row) =>
    `- ${row.benchCase.name}: ours \`${row.benchCase.tool} ${inputText(row.benchCase.input)}\`; ` +
    `rg \`rg ${row.benchCase.rgArgs.map(displayArgument).join(" ")}${
      row.benchCase.pipe === undefined ? "" : ` ${row.benchCase.pipe}`
    }\`` +
    (row.benchCase.note === undefined ? "" : ` (${row.benchCase.note})`)
  );
  const { stats } = facts;
  const markdown = [
    "## Search: Grep and Glob against ripgrep",
    "",
    `Tree${facts.quick ? " (quick, small)" : ""}: ${stats.files} searchable files, ` +
    `${(stats.bytes / 1e6).toFixed(0)} MB of generated source-like text (seeded PRNG), plus node_modules, ` +
    ".gitignore'd directories (nested .gitignore files too) and binary files that both sides skip; a git " +
    "repository whose index lists the files (added with --intent-to-add: no objects); " +
    `${facts.generateMs > 1000 ? `generated in ${(facts.generateMs / 1000).toFixed(1)} s` : "cached"} ` +
    "under the work directory.",
    `Machine: ${navigator.hardwareConcurrency} logical CPUs, Deno ${Deno.version.deno}, ${facts.rg}. ` +
    `${facts.repetitions} runs per side, the sides alternating, after one warm-up run each (warm page ` +
    `cache); ${facts.firstCalls} first calls. Load average (1, 5, 15 min) at the start: ${facts.loadBefore}; ` +
    `at the end: ${facts.loadAfter} (other work on the machine makes the medians noisy; the best runs are ` +
    "steadier).",
    "",
    "- in-process: the tool's `execute` called in this process (all permissions). Glob and Grep walks take the " +
    "directories that did not change from the listings of the process's earlier walks (`src/tools/_walk_memory.ts`; " +
    "from the third walk of a folder on), in every column but rg.",
    "- read-only worker: the same call in a Deno worker with the executor's read-only profile " +
    "(`read: [root]`, nothing else), timed around the message round trip; like the tool worker, it stamps " +
    "its kept listings once the result is sent. Deno checks every open of a restricted worker by resolving " +
    "each component of the path, which costs more than the search.",
    "- as deployed: the call through a session's tool runtime (`createToolRuntime`: the pipeline's gates, " +
    "the warm worker pool, and for Grep ripgrep in the read-only shell sandbox, `src/tools/grep_ripgrep.ts`: " +
    "the worker searches for 40 ms (calls with a head_limit above 1000 skip this; a search that has found " +
    "half of what it may show goes on; one that a recent walk of the path shows cannot end within the " +
    `budget at its pace gives up after ${PACE_AFTER_MS} ms), then ripgrep searches the contents, started when the ` +
    "worker says it gave up, while the worker walks, the walk starting with the call; ripgrep runs in the " +
    "read-only sandbox kept across searches, `src/sandbox/kept_command.ts`, started while the call streams). Repeated calls in one session " +
    "reuse the walk of the same path from the last 30 s when the worker's search saw a match, and when the " +
    "walk's stamps still hold (an lstat of each directory it listed) when it did not; after the time, which search " +
    "answered: `ripgrep`, or `typescript` (the worker finished within its budget). Results are checked " +
    "against in-process's, character for character. The session runs in a process of its own, started with " +
    "mewcode's runtime flags, which times each call around the call alone: in the benchmark's process the " +
    "calls would share the main heap with the in-process runs and collect their garbage.",
    "- first call: the call as deployed in a fresh session (a new process per call, as a shell alias runs " +
    "one; its runtime opened), as a one-shot session runs it: when the model's response begins, the session " +
    "starts the read-only worker (in a repository whose index lists some 2,000 files or more), which walks " +
    "the workspace while the model writes " +
    "(`src/tools/_prewalk.ts`: it keeps the listings, and the report of the walk that Grep's worker gives " +
    `ripgrep's answer); the call comes ${facts.headStartMs} ms later (a Grep call and a sentence before it ` +
    "are 30 to 60 tokens, half a second to a second for a model writing 50 to 80 tokens a second; an " +
    "interactive session's worker starts at its first request, seconds earlier), after the prewarm a " +
    "session does while the call's input streams (for Grep, its ripgrep modules load). The goal is judged on " +
    "this column and on repeated calls.",
    "- first call at once: the same without a head start: the worker started, then the call at once, with " +
    "nothing walked ahead; as the first call sees a tree that changed everywhere since the session began " +
    "(a checkout of another branch).",
    "- at once, kept walk: the same, where an earlier process kept its walk of the tree " +
    "(`$MEWCODE_HOME/projects/<slug>/walks`), which the worker finds current by its stamps: the next alias " +
    "call in an unchanged tree.",
    "- rg: one process per run, its default thread count, output read through a pipe, no sandbox.",
    "",
    "Times in ms as median (best); ratios ours/rg as median ratio (best-run ratio).",
    "",
    "| case | results (ours = rg) | in-process | read-only worker | as deployed | first call | " +
    "first call at once | at once, kept walk | rg | worker/rg | deployed/rg | first call/rg | at once/rg | " +
    "kept walk/rg |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...table,
    "",
    `Both sides apply the same rules: rg runs with \`${RG_COMMON.map(displayArgument).join(" ")}\` ` +
    "(gitignore rules without requiring a git repository, hidden files searched, our default exclusions), " +
    "and binary files (NUL bytes) are skipped by both; the result counts above show they find the same things.",
    ...commands,
    "",
    `Memory: one turn of ${PARALLEL_GREPS.length} parallel Greps over the whole tree as deployed: ` +
    "`scripts/mewcode -p` of an installed package (with its bundle) in the tree, against a fake API in the " +
    "benchmark's process whose response begins at once and asks for the four calls in one message " +
    `${facts.headStartMs} ms later (meanwhile the session's search worker walks the workspace ahead, as a ` +
    "one-shot session's does when the model's response begins); the run ends with the answer to the results. " +
    "Large results are saved to files and shown in part, as the model gets them. Each run is a fresh process, " +
    "polled every 10 ms, one after the other, after an unmeasured one; each figure below is " +
    `${memoryRuns(memory)}. The process and its children (up to ` +
    `${memory.treeProcesses} processes: per search two bubblewrap processes and the shell, which becomes ` +
    `ripgrep; at most ${RIPGREP_SEARCHES_AT_ONCE} searches at once) peak at ${
      memory.treePeakMb.toFixed(0)
    } MB, counting the Deno process's resident set and each child's ` +
    "proportional set size (PSS: a page that several processes map, such as those of the same binary, split " +
    "among them). Their resident sets summed peak at " +
    `${
      memory.treeRssPeakMb.toFixed(0)
    } MB, which counts the pages of the same binaries once per process; the ` +
    "goal is judged on the first figure. The Deno process alone peaks at " +
    `${memory.processPeakMb.toFixed(0)} MB (VmHWM). The calls took ${
      memory.turnMs.toFixed(0)
    } ms (from the ` +
    "end of the message that asked for them to the request with their results); engines: " +
    `${memory.engines.join(", ")}. Inputs: ${PARALLEL_GREPS.map(inputText).join("; ")}. ` +
    "The same turn in a session's tool runtime alone (`createToolRuntime` run from the sources, whole results " +
    `kept, no model loop): ${runtime.treePeakMb.toFixed(0)} MB (${memoryRuns(runtime)}; the Deno process ` +
    `${runtime.processPeakMb.toFixed(0)} MB), in ${runtime.turnMs.toFixed(0)} ms; engines: ` +
    `${runtime.engines.join(", ")}.`,
    "",
  ].join("\n");
  return { markdown, goals: goals(rows, memories) };
}
