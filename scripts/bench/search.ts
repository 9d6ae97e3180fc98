/**
 * Benchmark of Grep and Glob against ripgrep (`rg`, `rg --files`) on a generated tree.
 *
 * The tree (≥20,000 searchable files, ≥200 MB of source-like text, plus node_modules, .gitignore'd
 * directories and binary files) is generated once from a seeded PRNG and cached under the work directory.
 * Each case runs our tool's `execute` in-process, the same call in a worker with the read-only tools'
 * permission profile, the call as deployed (through a session's tool runtime: the pipeline, the worker pool,
 * and for Grep ripgrep in the read-only shell sandbox where it is installed: `src/tools/grep_ripgrep.ts`),
 * and ripgrep as a process, alternately, several times, and reports medians and the ratios ours/rg. Both
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
import { profileFor } from "../../src/execution/profiles.ts";
import { createToolRuntime, type ToolRuntime } from "../../src/execution/runtime.ts";
import type { ShellPlan, ToolContext, ToolResult } from "../../src/tools/tool.ts";

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

/** The literal the benchmark greps for; generated files contain it now and then. */
export const BENCH_LITERAL = "parseConfigOverride";
/** The regex the benchmark greps for. */
export const BENCH_REGEX = String.raw`function\s+handle[A-Z]\w*Event`;

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

type ToolName = "Grep" | "Glob";

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
}

/** What the bench worker receives: one tool call. */
interface BenchRequest {
  tool: ToolName;
  root: string;
  input: Record<string, unknown>;
}

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

/** Runs one call in this thread, validating the input as the pipeline would. */
function runTool(request: BenchRequest): Promise<ToolResult> {
  const context = benchContext(request.root);
  switch (request.tool) {
    case "Grep":
      return grepTool.execute(context, grepTool.inputSchema.parse(request.input));
    case "Glob":
      return globTool.execute(context, globTool.inputSchema.parse(request.input));
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
  scope.onmessage = async (event) => scope.postMessage(await runTool(event.data));
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
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
      note: "rg sorts on one thread",
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
  deployed: Timing;
  rg: Timing;
  oursCount: number;
  rgCount: number;
  /** Which search answered as deployed ("ripgrep", "typescript"), from the results' metadata. */
  engines: string[];
}

/** Runs one call as a session does: the pipeline's gates, then the worker pool or ripgrep in the sandbox. */
async function runDeployed(runtime: ToolRuntime, request: BenchRequest): Promise<ToolResult> {
  const call = { id: crypto.randomUUID(), name: request.tool, input: request.input };
  const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
  if (result.isError) throw new Error(`${request.tool} as deployed failed: ${result.content}`);
  return result;
}

/** A session's tool runtime over the tree: read-only tools, the read-only shell sandbox, all calls allowed. */
function openRuntime(root: string): Promise<ToolRuntime> {
  return createToolRuntime({
    root,
    readOnly: true,
    sandbox: "read-only",
    sandboxNetwork: false,
    strictLinks: false,
    policy: { decide: () => Promise.resolve({ behavior: "allow" }) },
    env: Deno.env.toObject(),
  });
}

function timing(values: number[]): Timing {
  return { median: median(values), best: Math.min(...values) };
}

function loadAverage(): string {
  try {
    return Deno.loadavg().map((value) => value.toFixed(1)).join(", ");
  } catch {
    return "unknown";
  }
}

function inputText(input: Record<string, unknown>): string {
  return `{${Object.entries(input).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")}}`;
}

/** Runs the search benchmark and returns its Markdown section for BENCHMARKS.md. */
export async function benchSearch(options: { workDir: string; quick: boolean }): Promise<string> {
  const generateStarted = performance.now();
  const root = await Deno.realPath(await ensureSearchTree(options.workDir, options.quick));
  const generateMs = performance.now() - generateStarted;
  const stats = await searchableStats(root);
  const repetitions = options.quick ? 3 : 9;
  const loadBefore = loadAverage();
  const worker = new BenchWorker(root);
  const runtime = await openRuntime(root);
  const rows: Row[] = [];
  try {
    for (const benchCase of benchCases()) {
      const request: BenchRequest = { tool: benchCase.tool, root, input: benchCase.input };
      const rgArgs = [...RG_COMMON, ...benchCase.rgArgs];
      // One warm-up run of each side (JIT, page cache, worker start), also used to compare result counts.
      const ours = await runTool(request);
      if (ours.isError) throw new Error(`${benchCase.name}: ${ours.content}`);
      const fromWorker = await worker.run(request);
      const oursCount = numberField(ours, benchCase.countField);
      if (numberField(fromWorker, benchCase.countField) !== oursCount) {
        throw new Error(
          `${benchCase.name}: the worker found other results: ${fromWorker.content.slice(0, 200)}`,
        );
      }
      const deployed = await runDeployed(runtime, request);
      if (numberField(deployed, benchCase.countField) !== oursCount || deployed.content !== ours.content) {
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
      for (let repetition = 0; repetition < repetitions; repetition++) {
        times.inProcess.push(await timed(() => runTool(request)));
        times.inWorker.push(await timed(() => worker.run(request)));
        times.deployed.push(
          await timed(async () => engines.add(String((await runDeployed(runtime, request)).metadata.engine))),
        );
        times.rg.push(await timed(() => runRg(root, rgArgs, benchCase.pipe)));
      }
      rows.push({
        benchCase,
        inProcess: timing(times.inProcess),
        inWorker: timing(times.inWorker),
        deployed: timing(times.deployed),
        rg: timing(times.rg),
        oursCount,
        rgCount,
        engines: [...engines].sort(),
      });
    }
  } finally {
    worker.close();
    await runtime.close();
  }
  return report(rows, {
    quick: options.quick,
    stats,
    generateMs,
    repetitions,
    rg: await rgVersion(),
    loadBefore,
    loadAfter: loadAverage(),
  });
}

function report(
  rows: Row[],
  facts: {
    quick: boolean;
    stats: { files: number; bytes: number };
    generateMs: number;
    repetitions: number;
    rg: string;
    loadBefore: string;
    loadAfter: string;
  },
): string {
  const ratio = (ours: Timing, rg: Timing) =>
    `${(ours.median / rg.median).toFixed(2)}× (${(ours.best / rg.best).toFixed(2)}×)`;
  const ms = (value: Timing) => `${value.median.toFixed(0)} (${value.best.toFixed(0)})`;
  const table = rows.map((row) => {
    const same = row.oursCount === row.rgCount
      ? `${row.oursCount} = ${row.rgCount}`
      : `**${row.oursCount} ≠ ${row.rgCount}**`;
    return [
      row.benchCase.name,
      same,
      ms(row.inProcess),
      ms(row.inWorker),
      `${ms(row.deployed)} ${row.engines.join("/")}`,
      ms(row.rg),
      ratio(row.inWorker, row.rg),
      ratio(row.deployed, row.rg),
    ].join(" | ").replace(/^/, "| ") + " |";
  });
  const commands = rows.map((row) =>
    `- ${row.benchCase.name}: ours \`${row.benchCase.tool} ${inputText(row.benchCase.input)}\`; ` +
    `rg \`rg ${row.benchCase.rgArgs.map(displayArgument).join(" ")}${
      row.benchCase.pipe === undefined ? "" : ` ${row.benchCase.pipe}`
    }\`` +
    (row.benchCase.note === undefined ? "" : ` (${row.benchCase.note})`)
  );
  const worst = (tool: ToolName, pick: (row: Row) => Timing, of: keyof Timing) =>
    Math.max(...rows.filter((row) => row.benchCase.tool === tool).map((row) => pick(row)[of] / row.rg[of]));
  const verdict = (tool: ToolName, target: number) => {
    const parts = [
      ["as deployed", (row: Row) => row.deployed],
      ["in the read-only worker alone", (row: Row) => row.inWorker],
      ["in-process", (row: Row) => row.inProcess],
    ] as const;
    return parts.map(([label, pick]) => {
      const value = worst(tool, pick, "median");
      return `${label} worst ${value.toFixed(2)}× by medians (${value <= target ? "met" : "**not met**"}), ` +
        `${worst(tool, pick, "best").toFixed(2)}× by best runs`;
    }).join("; ");
  };
  const { stats } = facts;
  return [
    "## Search: Grep and Glob against ripgrep",
    "",
    `Tree${facts.quick ? " (quick, small)" : ""}: ${stats.files} searchable files, ` +
    `${(stats.bytes / 1e6).toFixed(0)} MB of generated source-like text (seeded PRNG), plus node_modules, ` +
    ".gitignore'd directories (nested .gitignore files too) and binary files that both sides skip; " +
    `${facts.generateMs > 1000 ? `generated in ${(facts.generateMs / 1000).toFixed(1)} s` : "cached"} ` +
    "under the work directory.",
    `Machine: ${navigator.hardwareConcurrency} logical CPUs, Deno ${Deno.version.deno}, ${facts.rg}. ` +
    `${facts.repetitions} runs per side, the four sides alternating, after one warm-up run each ` +
    `(warm page cache). Load average (1, 5, 15 min) at the start: ${facts.loadBefore}; at the end: ` +
    `${facts.loadAfter} (other work on the machine makes the medians noisy; the best runs are steadier).`,
    "",
    "- in-process: the tool's `execute` called in this process (all permissions).",
    "- read-only worker: the same call in a Deno worker with the executor's read-only profile " +
    "(`read: [root]`, nothing else), timed around the message round trip. Deno checks every open of a " +
    "restricted worker by resolving each component of the path (a `readlink` per component), which " +
    "costs more than the search.",
    "- as deployed: the call through a session's tool runtime (`createToolRuntime`: the pipeline's gates, " +
    "the warm worker pool, and for Grep ripgrep in the read-only shell sandbox: the worker searches for " +
    "40 ms, then only walks while ripgrep searches the contents; `src/tools/grep_ripgrep.ts`). After the " +
    "time, which search answered every run: `ripgrep`, or `typescript` (the worker finished within its " +
    "budget). Its results are checked against in-process's, character for character.",
    "- rg: one process per run, its default thread count, output read through a pipe, no sandbox.",
    "",
    "Times in ms as median (best); ratios ours/rg as median ratio (best-run ratio).",
    "",
    "| case | results (ours = rg) | ours in-process | ours in read-only worker | ours as deployed | rg | " +
    "worker/rg | deployed/rg |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...table,
    "",
    `Both sides apply the same rules: rg runs with \`${
      RG_COMMON.map(displayArgument).join(" ")
    }\` (gitignore rules without ` +
    "requiring a git repository, hidden files searched, our default exclusions), and binary files (NUL " +
    "bytes) are skipped by both; the result counts above show they find the same things.",
    ...commands,
    "",
    `Target Grep within 1.5× of rg: ${verdict("Grep", 1.5)}.`,
    `Target Glob within 1.5× of \`rg --files\`: ${verdict("Glob", 1.5)}.`,
    "",
  ].join("\n");
}

if (isWorkerThread()) {
  serveBenchWorker();
} else if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const workDirIndex = Deno.args.indexOf("--work-dir");
  const workDir = workDirIndex === -1 ? join(tmpdir(), "mewcode-bench") : Deno.args[workDirIndex + 1];
  if (workDir === undefined) throw new TypeError("--work-dir needs a directory");
  await Deno.mkdir(workDir, { recursive: true });
  console.log(await benchSearch({ workDir, quick }));
}
