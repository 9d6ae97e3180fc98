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
 * one turn of four parallel Greps as deployed each while its memory is polled (the median of five). Both
 * sides apply the same rules: .gitignore files (nested ones too), hidden files searched,
 * .git/node_modules/vendor/.idea/__pycache__ excluded, binary files (NUL bytes) skipped; each case checks
 * that every side reports the same number of results.
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
  PARALLEL_GREPS,
  RSS_CHILD_FLAG,
  type ToolName,
} from "./_search_session.ts";
import type { ShellPlan, ToolContext, ToolResult } from "../../src/tools/tool.ts";
import {
  type BenchOptions,
  type BenchSection,
  descendants,
  type Goal,
  LineSplitter,
  loadAverage,
  median,
  proportionalKilobytes,
  statusKilobytes,
} from "./_report.ts";

/** Sizes of a generated tree. */
interface TreeShape {
  /** Label used in the cache directory name. */
  name: string;
  packages: number;
  modulesPerPackage: number;
  filesPerModule: number;
  /** Files under node_modules (ignored by both sides). */
  nodeModulesFiles: number;
}

const FULL_SHAPE: TreeShape = {
  name: "full",
  packages: 40,
  modulesPerPackage: 25,
  filesPerModule: 20,
  nodeModulesFiles: 3000,
};
const QUICK_SHAPE: TreeShape = {
  name: "quick",
  packages: 2,
  modulesPerPackage: 5,
  filesPerModule: 20,
  nodeModulesFiles: 100,
};
const TREE_VERSION = 1;

/** The module the child processes run: a session's runtime and nothing else (see there). */
const SESSION_CHILD = new URL("./_search_session.ts", import.meta.url).pathname;

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "user account order item cart price total config option value state event handler request response " +
  "client server cache store query result error status token session file path buffer stream reader " +
  "writer parser lexer node tree graph edge vertex index key map list set queue stack batch job task " +
  "worker pool thread lock timer clock date time zone locale message channel socket packet frame " +
  "header body payload schema model view controller router route param input output format render " +
  "update create delete remove insert select filter reduce merge split join sort search match scan"
).split(" ");

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function identifier(random: Random): string {
  const parts = 1 + Math.floor(random() * 3);
  let name = pick(random, WORDS);
  for (let index = 1; index < parts; index++) name += capitalize(pick(random, WORDS));
  return name;
}

function snake(random: Random): string {
  const parts = 1 + Math.floor(random() * 3);
  const words: string[] = [];
  for (let index = 0; index < parts; index++) words.push(pick(random, WORDS));
  return words.join("_");
}

type Language = "ts" | "py" | "go" | "rs" | "md" | "json";

function codeLine(language: Language, random: Random): string {
  const indent = "  ".repeat(Math.floor(random() * 4));
  const a = identifier(random);
  const b = identifier(random);
  const roll = random();
  switch (language) {
    case "ts":
      if (roll < 0.01) {
        return `${indent}export async function handle${capitalize(a)}Event(event: ${capitalize(b)}) {`;
      }
      if (roll < 0.02) return `${indent}function handle${capitalize(a)}(input: ${capitalize(b)}): void {`;
      if (roll < 0.12) {
        return `${indent}const ${a} = await ${b}.${identifier(random)}(${identifier(random)});`;
      }
      if (roll < 0.2) {
        return `${indent}// ${a} ${b} ${pick(random, WORDS)} ${pick(random, WORDS)} when needed`;
      }
      if (roll < 0.28) return `${indent}if (${a}.${b} === ${Math.floor(random() * 1000)}) return ${b};`;
      if (roll < 0.34) {
        return `import { ${a}, ${b} } from "./${pick(random, WORDS)}_${pick(random, WORDS)}.ts";`;
      }
      if (roll < 0.4) return "";
      if (roll < 0.46) return `${indent}}`;
      return `${indent}${a}.${b}(${identifier(random)}, "${pick(random, WORDS)} ${pick(random, WORDS)}");`;
    case "py":
      if (roll < 0.02) return `${indent}def handle_${snake(random)}_event(self, ${snake(random)}):`;
      if (roll < 0.15) return `${indent}${snake(random)} = self.${snake(random)}(${snake(random)})`;
      if (roll < 0.25) return `${indent}# ${a} ${b} ${pick(random, WORDS)}`;
      if (roll < 0.3) return "";
      return `${indent}if ${snake(random)} is not None: return ${snake(random)}`;
    case "go":
      if (roll < 0.02) {
        return `func handle${capitalize(a)}Event(ctx context.Context, ${a} *${capitalize(b)}) error {`;
      }
      if (roll < 0.15) return `\t${a} := ${b}.${capitalize(identifier(random))}(${identifier(random)})`;
      if (roll < 0.25) return `\tif err != nil { return fmt.Errorf("${pick(random, WORDS)} ${a}: %w", err) }`;
      if (roll < 0.3) return "";
      return `\t// ${a} ${b} ${pick(random, WORDS)}`;
    case "rs":
      if (roll < 0.02) {
        return `pub fn handle_${snake(random)}_event(${snake(random)}: &${capitalize(a)}) -> Result<()> {`;
      }
      if (roll < 0.15) return `    let ${snake(random)} = ${snake(random)}.${snake(random)}()?;`;
      if (roll < 0.3) return "";
      return `    // ${a} ${b} ${pick(random, WORDS)}`;
    case "md":
      if (roll < 0.05) return `## ${capitalize(pick(random, WORDS))} ${pick(random, WORDS)}`;
      if (roll < 0.2) return "";
      return `The ${pick(random, WORDS)} ${pick(random, WORDS)} uses \`${a}\` to ${
        pick(random, WORDS)
      } the ${b}.`;
    case "json":
      return `  "${a}": { "${b}": ${Math.floor(random() * 100000)}, "${identifier(random)}": "${
        pick(random, WORDS)
      }" },`;
  }
}

const EXTENSIONS: readonly [string, Language][] = [
  ["ts", "ts"],
  ["ts", "ts"],
  ["ts", "ts"],
  ["ts", "ts"],
  ["tsx", "ts"],
  ["tsx", "ts"],
  ["js", "ts"],
  ["js", "ts"],
  ["py", "py"],
  ["py", "py"],
  ["go", "go"],
  ["go", "go"],
  ["rs", "rs"],
  ["md", "md"],
  ["json", "json"],
];

/** A pool of lines per language; files are built from it, which keeps generation fast. */
function linePools(random: Random): Record<Language, string[]> {
  const pools = {} as Record<Language, string[]>;
  for (const language of ["ts", "py", "go", "rs", "md", "json"] as const) {
    const lines: string[] = [];
    for (let index = 0; index < 40_000; index++) lines.push(codeLine(language, random));
    pools[language] = lines;
  }
  return pools;
}

function fileText(random: Random, lines: readonly string[], targetBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < targetBytes) {
    let line = pick(random, lines);
    if (random() < 1 / 2500) line = `  const merged = ${BENCH_LITERAL}(defaults, ${identifier(random)});`;
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join("\n") + "\n";
}

/** Generates the tree under `directory` (which must not exist yet). */
async function generateTree(directory: string, shape: TreeShape): Promise<void> {
  const random = mulberry32(0x6d657763);
  const pools = linePools(random);
  const encoder = new TextEncoder();
  await Deno.mkdir(directory, { recursive: true });
  await Deno.writeTextFile(join(directory, ".gitignore"), "node_modules/\ndist/\n*.log\n/tmp/\n");
  await Deno.mkdir(join(directory, ".github", "workflows"), { recursive: true });
  for (let index = 0; index < 5; index++) {
    await Deno.writeTextFile(
      join(directory, ".github", "workflows", `ci${index}.yml`),
      `name: ci${index}\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n`,
    );
  }
  const writes: Promise<void>[] = [];
  const flush = async () => {
    await Promise.all(writes);
    writes.length = 0;
  };
  const write = async (path: string, text: string | Uint8Array) => {
    writes.push(
      typeof text === "string" ? Deno.writeTextFile(path, text) : Deno.writeFile(path, text),
    );
    if (writes.length >= 64) await flush();
  };
  for (let packageIndex = 0; packageIndex < shape.packages; packageIndex++) {
    const packageDirectory = join(directory, "packages", `pkg${String(packageIndex).padStart(2, "0")}`);
    await Deno.mkdir(join(packageDirectory, "generated"), { recursive: true });
    await Deno.mkdir(join(packageDirectory, "dist"), { recursive: true });
    // A nested .gitignore: both sides must apply it.
    await write(join(packageDirectory, ".gitignore"), "generated/\n*.snap\n");
    for (let index = 0; index < 10; index++) {
      const lines = pools.ts;
      await write(join(packageDirectory, "generated", `gen${index}.ts`), fileText(random, lines, 8000));
      await write(join(packageDirectory, "dist", `bundle${index}.js`), fileText(random, lines, 8000));
      await write(join(packageDirectory, `case${index}.snap`), fileText(random, lines, 2000));
    }
    await write(join(packageDirectory, "build.log"), fileText(random, pools.md, 4000));
    const binary = new Uint8Array(4096);
    for (let index = 0; index < binary.length; index++) binary[index] = Math.floor(random() * 256);
    binary.set(encoder.encode(BENCH_LITERAL), 100);
    binary[10] = 0;
    await write(join(packageDirectory, "blob.dat"), binary);
    for (let moduleIndex = 0; moduleIndex < shape.modulesPerPackage; moduleIndex++) {
      const moduleDirectory = join(packageDirectory, "src", `mod${String(moduleIndex).padStart(2, "0")}`);
      await Deno.mkdir(join(moduleDirectory, "internal"), { recursive: true });
      for (let fileIndex = 0; fileIndex < shape.filesPerModule; fileIndex++) {
        const [extension, language] = pick(random, EXTENSIONS);
        const subdirectory = fileIndex % 5 === 4 ? join(moduleDirectory, "internal") : moduleDirectory;
        // Sizes from ~1 KB to ~20 KB, mean ~10.6 KB.
        const size = 1000 + Math.floor(random() * random() * 40_000) + Math.floor(random() * 1500);
        await write(
          join(subdirectory, `${identifier(random)}_${fileIndex}.${extension}`),
          fileText(random, pools[language], size),
        );
      }
    }
  }
  const nodeModules = join(directory, "node_modules");
  for (let index = 0; index < shape.nodeModulesFiles; index++) {
    const packageDirectory = join(nodeModules, `dep${Math.floor(index / 30)}`, "lib");
    if (index % 30 === 0) await Deno.mkdir(packageDirectory, { recursive: true });
    await write(join(packageDirectory, `file${index}.js`), fileText(random, pools.ts, 6000));
  }
  await flush();
}

/** Returns the cached tree for `quick` under `workDir`, generating it on first use. */
export async function ensureSearchTree(workDir: string, quick: boolean): Promise<string> {
  const shape = quick ? QUICK_SHAPE : FULL_SHAPE;
  const directory = join(workDir, `search-tree-v${TREE_VERSION}-${shape.name}`);
  const marker = `${directory}.complete`;
  try {
    await Deno.stat(marker);
    return directory;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.remove(directory, { recursive: true }).catch(() => {});
  await generateTree(directory, shape);
  await Deno.writeTextFile(marker, new Date().toISOString());
  return directory;
}

/** The ripgrep flags that give it our tools' rules (see the module comment). */
const RG_COMMON = [
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

interface BenchCase {
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

/** What the bench worker receives: one tool call. */

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

function displayArgument(value: string): string {
  return /^[\w.,=/-]+$/.test(value) ? value : shellQuote(value);
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
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
interface Timing {
  median: number;
  best: number;
}

interface Row {
  benchCase: BenchCase;
  inProcess: Timing;
  inWorker: Timing;
  /** Repeated calls in one session: the runtime's recent walk of the path is reused. */
  deployed: Timing;
  /** The first call of a fresh session (a fresh process per call, as a shell alias runs it). */
  firstCall: Timing;
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

  /** Starts the process and waits until its runtime is open and its read-only worker has started. */
  static async start(root: string, walkStore?: string): Promise<DeployedProcess> {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...await readRuntimeFlags(),
        SESSION_CHILD,
        DEPLOYED_CHILD_FLAG,
        root,
        ...(walkStore === undefined ? [] : [walkStore]),
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
async function timeFirstCall(root: string, request: BenchRequest, walkStore?: string): Promise<number> {
  const session = await DeployedProcess.start(root, walkStore);
  try {
    return (await session.run(request)).ms;
  } finally {
    await session.close();
  }
}

function timing(values: number[]): Timing {
  return { median: median(values), best: Math.min(...values) };
}

function inputText(input: Record<string, unknown>): string {
  return `{${Object.entries(input).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")}}`;
}

/** Peak memory of one turn of four parallel Greps as deployed, measured in a fresh child process. */
interface TurnMemory {
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
interface TurnMemoryRuns extends TurnMemory {
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
 * when the garbage collector happens to run (measured: 124-131 MB for one commit), so the goal is judged on
 * the median, as the times are.
 */
async function measureTurnMemoryRuns(root: string, runs: number): Promise<TurnMemoryRuns> {
  const measured: TurnMemory[] = [];
  for (let run = 0; run < runs; run++) measured.push(await measureTurnMemory(root));
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

async function measureTurnMemory(root: string): Promise<TurnMemory> {
  const child = new Deno.Command(Deno.execPath(), {
    // mewcode's own runtime flags: its V8 flags size the heaps, its permissions are what the tools need.
    args: [
      "run",
      ...await readRuntimeFlags(),
      SESSION_CHILD,
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

/** Runs the search benchmark: Grep and Glob against ripgrep, and the memory of a turn of parallel Greps. */
export async function benchSearch(options: BenchOptions): Promise<BenchSection> {
  const generateStarted = performance.now();
  const root = await Deno.realPath(await ensureSearchTree(options.workDir, options.quick));
  const generateMs = performance.now() - generateStarted;
  // A walk of a tree changed in the last 3 s is never kept (its stamps could miss a change): a tree just
  // generated would leave the kept-walk column without kept walks.
  if (generateMs > 1000) await new Promise((resolve) => setTimeout(resolve, 3_500));
  const stats = await searchableStats(root);
  const repetitions = options.quick ? 2 : 7;
  const firstCalls = options.quick ? 1 : 5;
  const loadBefore = loadAverage();
  const worker = new BenchWorker(root);
  const deployed = await DeployedProcess.start(root);
  const rows: Row[] = [];
  try {
    for (const benchCase of benchCases()) {
      rows.push(await measureCase(benchCase, { root, worker, deployed, repetitions, firstCalls }));
    }
  } finally {
    worker.close();
    await deployed.close();
  }
  const memory = await measureTurnMemoryRuns(root, options.quick ? 1 : 5);
  return report(rows, memory, {
    quick: options.quick,
    stats,
    generateMs,
    repetitions,
    firstCalls,
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
  for (let repetition = 0; repetition < setup.firstCalls; repetition++) {
    firstCall.push(await timeFirstCall(root, request));
  }
  // The first call of a process that finds the walk an earlier process kept (the earlier one not timed).
  let firstCallKept: number[] | null = null;
  if (benchCase.tool === "Grep") {
    const walkStore = await Deno.makeTempDir({ prefix: "mewcode-bench-walks-" });
    try {
      await timeFirstCall(root, request, walkStore);
      firstCallKept = [];
      for (let repetition = 0; repetition < setup.firstCalls; repetition++) {
        firstCallKept.push(await timeFirstCall(root, request, walkStore));
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
    firstCallKept: firstCallKept === null ? null : timing(firstCallKept),
    rg: timing(times.rg),
    oursCount,
    rgCount,
    engines: [...engines].sort(),
  };
}

interface ReportFacts {
  quick: boolean;
  stats: { files: number; bytes: number };
  generateMs: number;
  repetitions: number;
  firstCalls: number;
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

function goals(rows: Row[], memory: TurnMemoryRuns): Goal[] {
  const deployedGoal = (tool: ToolName, name: string, target: string): Goal => {
    const warm = worstRatio(rows, tool, (row) => row.deployed);
    const first = worstRatio(rows, tool, (row) => row.firstCall);
    const kept = worstRatio(rows, tool, (row) => row.firstCallKept);
    return {
      name,
      target,
      measured: `repeated calls ${warm.ratio.toFixed(2)}× (${warm.name}); first call of a session ` +
        `${first.ratio.toFixed(2)}× (${first.name})` +
        (kept.name === "" ? "" : `; first call with a kept walk ${kept.ratio.toFixed(2)}× (${kept.name})`),
      met: warm.ratio <= 1.5 && first.ratio <= 1.5,
    };
  };
  return [
    deployedGoal("Grep", "Grep as deployed ≤ 1.5× rg (worst case by medians)", "≤ 1.5× rg"),
    deployedGoal("Glob", "Glob as deployed ≤ 1.5× rg --files", "≤ 1.5× rg --files"),
    {
      name: "four parallel Greps: peak memory ≤ 125 MB",
      target: "≤ 125 MB",
      measured: `${memory.treePeakMb.toFixed(0)} MB with the sandboxes and ripgrep (their PSS; ` +
        `${memoryRuns(memory)}; the Deno process alone ` +
        `${memory.processPeakMb.toFixed(0)} MB; all resident sets summed ${
          memory.treeRssPeakMb.toFixed(0)
        } MB); ` +
        `the turn took ${memory.turnMs.toFixed(0)} ms`,
      met: memory.treePeakMb <= 125,
    },
  ];
}

function report(rows: Row[], memory: TurnMemoryRuns, facts: ReportFacts): BenchSection {
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
      ms(row.firstCall),
      row.firstCallKept === null ? "–" : ms(row.firstCallKept),
      ms(row.rg),
      ratio(row.inWorker, row.rg),
      ratio(row.deployed, row.rg),
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
    ".gitignore'd directories (nested .gitignore files too) and binary files that both sides skip; " +
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
    "half of what it may show goes on), then ripgrep searches the contents, started when the worker says " +
    "it gave up, while the worker walks, the walk starting with the call). Repeated calls in one session " +
    "reuse the walk of the same path from the last 30 s when the worker's search saw a match, and when the " +
    "walk's stamps still hold (an lstat of each directory it listed) when it did not; after the time, which search " +
    "answered: `ripgrep`, or `typescript` (the worker finished within its budget). Results are checked " +
    "against in-process's, character for character. The session runs in a process of its own, started with " +
    "mewcode's runtime flags, which times each call around the call alone: in the benchmark's process the " +
    "calls would share the main heap with the in-process runs and collect their garbage.",
    "- first call: the call as deployed in a fresh session (a new process, its runtime opened and its " +
    "read-only worker started, then prewarmed for the call's tool as a session does while the call's input " +
    "streams, which for Grep loads its ripgrep modules; no recent walk), as a fresh process per call sees " +
    "it the first time in a tree, or after the tree changed.",
    "- first call, kept walk: the same, where an earlier process kept its walk of the tree " +
    "(`$MEWCODE_HOME/projects/<slug>/walks`), which the worker finds current by its stamps: the next alias " +
    "call in an unchanged tree. The goal is judged on the first call without it.",
    "- rg: one process per run, its default thread count, output read through a pipe, no sandbox.",
    "",
    "Times in ms as median (best); ratios ours/rg as median ratio (best-run ratio).",
    "",
    "| case | results (ours = rg) | in-process | read-only worker | as deployed | first call | " +
    "first call, kept walk | rg | worker/rg | deployed/rg | first call/rg | kept walk/rg |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...table,
    "",
    `Both sides apply the same rules: rg runs with \`${RG_COMMON.map(displayArgument).join(" ")}\` ` +
    "(gitignore rules without requiring a git repository, hidden files searched, our default exclusions), " +
    "and binary files (NUL bytes) are skipped by both; the result counts above show they find the same things.",
    ...commands,
    "",
    `Memory: one turn of ${PARALLEL_GREPS.length} parallel Greps over the whole tree as deployed, in a fresh ` +
    `process (one warm-up Glob first), polled every 10 ms, one process after the other; each figure below is ` +
    `${memoryRuns(memory)}. The process and its children (up to ` +
    `${memory.treeProcesses} processes: per search two bubblewrap processes and the shell, which becomes ` +
    `ripgrep) peak at ${
      memory.treePeakMb.toFixed(0)
    } MB, counting the Deno process's resident set and each child's ` +
    "proportional set size (PSS: a page that several processes map, such as those of the same binary, split " +
    "among them). Their resident sets summed peak at " +
    `${
      memory.treeRssPeakMb.toFixed(0)
    } MB, which counts the pages of the same binaries once per process; the ` +
    "goal is judged on the first figure. The Deno process alone peaks at " +
    `${memory.processPeakMb.toFixed(0)} MB (VmHWM). The turn took ${memory.turnMs.toFixed(0)} ms; engines: ` +
    `${memory.engines.join(", ")}. Inputs: ${PARALLEL_GREPS.map(inputText).join("; ")}.`,
    "",
  ].join("\n");
  return { markdown, goals: goals(rows, memory) };
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
