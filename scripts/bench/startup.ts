/**
 * Start-up benchmark: what a user waits for and what mewcode holds in memory, as deployed (through the
 * launcher scripts/mewcode, which execs Deno), each against a Deno hello world started the same way in the
 * same run:
 *
 *   - `mewcode --version` vs `deno run hello.ts` (the hello world prints one line);
 *   - the time from spawning `mewcode -p "…"` to its first request arriving at the fake Anthropic server,
 *     through the launcher and with `deno run … main.ts` directly, vs a hello world that sends one request;
 *   - the peak resident memory of a one-turn text answer and of a 20-turn ReadFile session (the whole
 *     process tree: Deno with its worker threads, plus any sandbox children alive when sampled) vs the
 *     hello world's.
 *
 * Memory is sampled from /proc while the process runs (VmHWM of the Deno process, which is its peak
 * so far, plus the resident memory of its descendants at each sample), since nothing can be read after it
 * exits. The workspace is a small git repository with an AGENTS.md, so the run does what it does in a
 * real project (git status in the sandbox, memory files).
 *
 *   deno run --allow-all --no-prompt scripts/bench/startup.ts [--quick]
 *
 * @module
 */
import { join } from "node:path";
import { type FakeAnthropic, startFakeAnthropic, turn } from "../../test/fake_anthropic/server.ts";
import { readRuntimeFlags } from "../compile.ts";
import { sharedPackage } from "./_package.ts";
import {
  type BenchOptions,
  type BenchSection,
  descendants,
  type Goal,
  loadAverage,
  median,
  statusKilobytes,
} from "./_report.ts";

const CHECKOUT = new URL("../../", import.meta.url).pathname;
const MAIN = join(CHECKOUT, "main.ts");
const CONFIG = join(CHECKOUT, "deno.json");

/** How often /proc is sampled while a process runs. */
const SAMPLE_INTERVAL_MS = 5;
/** A run that takes longer is killed: a hang fails the benchmark instead of stalling it. */
const RUN_LIMIT_MS = 60_000;
/** ReadFile calls in the long session. */
const READ_TURNS = 20;
/** How long after its response begins the fake model writes its text answer. */
const ANSWER_DELAY_MS = 300;

/** One measured process: its wall time, the first request (if any) and the peak memory of its tree. */
interface Measured {
  wallMs: number;
  /** ms from spawn to the first request's arrival at the fake server; NaN when there was none. */
  firstRequestMs: number;
  /** Peak resident memory of the process tree in bytes. */
  peakRssBytes: number;
  code: number;
}

/** What is spawned: a command line, its environment and working directory. */
interface Spawnable {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/** Runs the start-up benchmark (see the module doc). */
export async function benchStartup(options: BenchOptions): Promise<BenchSection> {
  const runs = options.quick ? 1 : 9;
  const loadBefore = loadAverage();
  const flags = await readRuntimeFlags();
  const dir = await Deno.makeTempDir({ prefix: "mewcode-bench-startup-" });
  try {
    const fixture = await prepareFixture(dir);
    // As installed: the files the npm package ships, the bundle among them, and beside them the same
    // without the bundle (a checkout where `deno task bundle` never ran); both find the checkout's Deno.
    const launcher = await sharedPackage({ bundle: true });
    const sourcesLauncher = await sharedPackage({ bundle: false });
    const deno = Deno.execPath();
    const helloWorld: Spawnable = {
      command: deno,
      args: ["run", ...flags, "--quiet", fixture.hello],
      env: fixture.env,
      cwd: fixture.root,
    };
    const version = (via: "launcher" | "direct"): Spawnable =>
      via === "launcher" ? { command: launcher, args: ["--version"], env: fixture.env, cwd: fixture.root } : {
        command: deno,
        args: ["run", ...flags, "--quiet", "--config", CONFIG, MAIN, "--version"],
        env: fixture.env,
        cwd: fixture.root,
      };
    const prompt = (via: "launcher" | "sources" | "direct", args: string[]): Spawnable =>
      via === "launcher"
        ? { command: launcher, args, env: fixture.env, cwd: fixture.root }
        : via === "sources"
        ? { command: sourcesLauncher, args, env: fixture.env, cwd: fixture.root }
        : {
          command: deno,
          args: ["run", ...flags, "--quiet", "--config", CONFIG, MAIN, ...args],
          env: fixture.env,
          cwd: fixture.root,
        };

    // Warm the module cache and the page cache once; the measured runs alternate between the sides.
    if (!options.quick) {
      await measure(helloWorld, null);
      await measure(version("launcher"), null);
    }
    await measureWithServer(prompt("launcher", ["-p", "hello"]), [answer()]);
    await measureWithServer(prompt("sources", ["-p", "hello"]), [answer()]);

    const samples = {
      hello: [] as Measured[],
      helloRequest: [] as Measured[],
      versionLauncher: [] as Measured[],
      versionDirect: [] as Measured[],
      promptLauncher: [] as Measured[],
      promptSources: [] as Measured[],
      promptDirect: [] as Measured[],
      reads: [] as Measured[],
    };
    const helloRequest: Spawnable = {
      ...helloWorld,
      args: ["run", ...flags, "--quiet", fixture.helloRequest],
    };
    for (let run = 0; run < runs; run++) {
      samples.hello.push(await measure(helloWorld, null));
      samples.versionLauncher.push(await measure(version("launcher"), null));
      samples.versionDirect.push(await measure(version("direct"), null));
      samples.helloRequest.push(await measureWithServer(helloRequest, [answer()]));
      samples.promptLauncher.push(await measureWithServer(prompt("launcher", ["-p", "hello"]), [answer()]));
      samples.promptSources.push(await measureWithServer(prompt("sources", ["-p", "hello"]), [answer()]));
      samples.promptDirect.push(await measureWithServer(prompt("direct", ["-p", "hello"]), [answer()]));
      if (!options.quick || run === 0) {
        samples.reads.push(
          await measureWithServer(
            prompt("launcher", ["-p", "read the file twenty times"]),
            readScript(fixture.file),
          ),
        );
      }
    }
    const failed = Object.entries(samples).flatMap(([name, list]) =>
      list.filter((sample) => sample.code !== 0).map(() => name)
    );
    if (failed.length > 0) throw new Error(`Startup benchmark: runs failed: ${failed.join(", ")}`);
    return report({
      samples,
      runs,
      loadBefore,
      loadAfter: loadAverage(),
      launcherDeno: await launcherDeno(launcher, fixture),
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A small git repository with an AGENTS.md, a file to read, the hello worlds, and a MEWCODE_HOME. */
async function prepareFixture(dir: string): Promise<{
  root: string;
  file: string;
  hello: string;
  helloRequest: string;
  env: Record<string, string>;
}> {
  const root = join(dir, "workspace");
  const home = join(dir, "home");
  await Deno.mkdir(join(root, "src"), { recursive: true });
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(root, "AGENTS.md"), "# Project\n\nRun `deno task test` before committing.\n");
  const file = join(root, "src", "app.ts");
  const lines = Array.from({ length: 200 }, (_, index) => `export const value${index} = ${index};`);
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
  for (const args of [["init", "-q"], ["add", "."]]) {
    await new Deno.Command("git", { args, cwd: root, stdout: "null", stderr: "null" }).output();
  }
  const hello = join(dir, "hello.ts");
  await Deno.writeTextFile(hello, 'console.log("hello");\n');
  // The least a Deno program can do to reach the same point: one streaming request, its answer read.
  const helloRequest = join(dir, "hello_request.ts");
  await Deno.writeTextFile(
    helloRequest,
    `const response = await fetch(Deno.env.get("ANTHROPIC_BASE_URL") + "/v1/messages", {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": "test", "anthropic-version": "2023-06-01" },
  body: JSON.stringify({ model: "m", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hello" }] }),
});
console.log((await response.text()).length);
`,
  );
  const realRoot = await Deno.realPath(root);
  return {
    root: realRoot,
    file: join(realRoot, "src", "app.ts"),
    hello,
    helloRequest,
    // Added to this process's environment (HOME stays: Deno's cache is found through it).
    env: {
      MEWCODE_HOME: home,
      ANTHROPIC_API_KEY: "test",
      // The status line and colours are for terminals; these runs have none.
      NO_COLOR: "1",
    },
  };
}

/**
 * The text answer: its words come ANSWER_DELAY_MS after the response begins, as a real model's do at the
 * least, so what mewcode does meanwhile (it builds its tools once the model answers) counts in its memory.
 */
function answer() {
  return turn().delay(ANSWER_DELAY_MS).text("Hello.").stop("end_turn");
}

/**
 * READ_TURNS turns that each read a page of the file, then a text answer. Each page starts elsewhere: the
 * same call three times in a row would be refused by the repeat guard, without reading anything.
 */
function readScript(file: string) {
  const turns = Array.from(
    { length: READ_TURNS },
    (_, index) =>
      turn().toolUse("ReadFile", { path: file, offset: 1 + index * 5, limit: 40 }, {
        id: `toolu_read_${index}`,
      })
        .stop("tool_use"),
  );
  return [...turns, turn().text("Read it.").stop("end_turn")];
}

async function measureWithServer(
  spawnable: Spawnable,
  script: ReturnType<typeof answer>[],
): Promise<Measured> {
  await using server = await startFakeAnthropic(script);
  return await measure({ ...spawnable, env: { ...spawnable.env, ANTHROPIC_BASE_URL: server.url } }, server);
}

/** Spawns the process, samples its memory until it exits, and times it. */
async function measure(spawnable: Spawnable, server: FakeAnthropic | null): Promise<Measured> {
  const startedAt = performance.timeOrigin + performance.now();
  const child = new Deno.Command(spawnable.command, {
    args: spawnable.args,
    env: spawnable.env,
    cwd: spawnable.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(RUN_LIMIT_MS),
  }).spawn();
  const sampler = sampleMemory(child.pid);
  const output = await child.output();
  const wallMs = performance.timeOrigin + performance.now() - startedAt;
  const peakRssBytes = await sampler.stop();
  if (output.code !== 0) {
    console.error(
      `startup bench: ${spawnable.command} ${spawnable.args.join(" ")} exited ${output.code}:\n` +
        new TextDecoder().decode(output.stderr),
    );
  }
  const first = server?.requests[0]?.receivedAt;
  return {
    wallMs,
    firstRequestMs: first === undefined ? NaN : first - startedAt,
    peakRssBytes,
    code: output.code,
  };
}

/**
 * Samples the process tree's memory every SAMPLE_INTERVAL_MS: the process's own peak (VmHWM) plus its
 * descendants' resident memory, the largest sum seen.
 */
function sampleMemory(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const own = statusKilobytes(pid, "VmHWM");
      if (own === null) break;
      const children = descendants(pid).reduce(
        (sum, child) => sum + (statusKilobytes(child, "VmRSS") ?? 0),
        0,
      );
      peak = Math.max(peak, (own + children) * 1024);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

interface Samples {
  hello: Measured[];
  helloRequest: Measured[];
  versionLauncher: Measured[];
  versionDirect: Measured[];
  promptLauncher: Measured[];
  promptSources: Measured[];
  promptDirect: Measured[];
  reads: Measured[];
}

/**
 * The Deno the launcher runs (`MEWCODE_PRINT_COMMAND`): next to the package, as the README's first command
 * installs it (`npm install --prefix`), the launcher finds it without searching PATH; a Deno found on PATH
 * costs it two more programs (`readlink`, `find`), ~10 ms here.
 */
async function launcherDeno(
  launcher: string,
  fixture: { root: string; env: Record<string, string> },
): Promise<string> {
  const output = await new Deno.Command(launcher, {
    args: ["--version"],
    cwd: fixture.root,
    env: { ...fixture.env, MEWCODE_PRINT_COMMAND: "1" },
    stdout: "piped",
    stderr: "null",
  }).output();
  const path = new TextDecoder().decode(output.stdout).split("\n")[0] ?? "";
  const where = path.startsWith(await Deno.realPath(join(CHECKOUT, "node_modules")).catch(() => CHECKOUT))
    ? "next to the package, as the README's first command installs it"
    : "found on PATH (the README's first command installs it next to the checkout instead)";
  return `${path} (${where})`;
}

function report(
  input: { samples: Samples; runs: number; loadBefore: string; loadAfter: string; launcherDeno: string },
): BenchSection {
  const { samples } = input;
  const wall = (list: Measured[]) => median(list.map((sample) => sample.wallMs));
  const first = (list: Measured[]) => median(list.map((sample) => sample.firstRequestMs));
  const rss = (list: Measured[]) => median(list.map((sample) => sample.peakRssBytes)) / 1024 / 1024;
  const hello = wall(samples.hello);
  const helloRequest = first(samples.helloRequest);
  const helloRss = rss(samples.hello);
  const versionLauncher = wall(samples.versionLauncher);
  const firstLauncher = first(samples.promptLauncher);
  const oneTurnRss = rss(samples.promptLauncher);
  const readsRss = rss(samples.reads);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const mb = (value: number) => `${value.toFixed(1)} MB`;
  const goals: Goal[] = [
    {
      name: "`mewcode --version` vs a Deno hello world",
      target: "≤ 1.5× hello world",
      measured: `${(versionLauncher / hello).toFixed(2)}× (${ms(versionLauncher)}; hello world ${ms(hello)})`,
      met: versionLauncher <= 1.5 * hello,
    },
    {
      name: "first model request after spawning `mewcode -p`",
      target: "≤ 95 ms",
      measured: `${ms(firstLauncher)} (hello world's request ${ms(helloRequest)})`,
      met: firstLauncher <= 95,
    },
    {
      name: "peak RSS of a one-turn `-p` answer",
      target: "≤ 80 MB",
      measured: `${mb(oneTurnRss)} (hello world ${mb(helloRss)})`,
      met: oneTurnRss <= 80,
    },
    {
      name: `peak RSS of a ${READ_TURNS}-turn ReadFile session`,
      target: "≤ 110 MB",
      measured: `${mb(readsRss)} (hello world ${mb(helloRss)})`,
      met: readsRss <= 110,
    },
  ];
  const row = (name: string, list: Measured[], baseline: number, value: (list: Measured[]) => number) =>
    `| ${name} | ${value(list).toFixed(0)} | ${(value(list) / baseline).toFixed(2)}× |`;
  const rssRow = (name: string, list: Measured[]) =>
    `| ${name} | ${rss(list).toFixed(1)} | ${(rss(list) / helloRss).toFixed(2)}× |`;
  const markdown = [
    "## Start-up: time to first request and memory",
    "",
    `Median of ${input.runs} runs per case (the cases alternating; ${samples.reads.length} runs of the ` +
    `${READ_TURNS}-turn session), after unmeasured warm-up runs. A small git repository with an AGENTS.md ` +
    `as the workspace; the fake Anthropic server on 127.0.0.1 begins its response at once and writes the text ` +
    `answer ${ANSWER_DELAY_MS} ms later (the ReadFile turns at once). The baselines are Deno hello ` +
    "worlds run with mewcode's runtime flags: one prints a line, one sends a single streaming request to " +
    "the same server. `mewcode` is scripts/mewcode of a copy of the files the npm package ships: with the " +
    "bundle (`deno task bundle`, as an installed package runs it) and without it (as a checkout where it " +
    "was never built runs the TypeScript sources). " +
    `The launcher ran Deno ${input.launcherDeno}. Load average (1, 5, 15 min) at the ` +
    `start: ${input.loadBefore}; at the end: ${input.loadAfter}.`,
    "",
    "| wall time to exit | ms | vs hello world |",
    "|---|---:|---:|",
    row("`deno run hello.ts`", samples.hello, hello, wall),
    row("`mewcode --version` (scripts/mewcode, the bundle)", samples.versionLauncher, hello, wall),
    row("`deno run … main.ts --version`", samples.versionDirect, hello, wall),
    "",
    "| spawn → first request at the server | ms | vs hello world |",
    "|---|---:|---:|",
    row("hello world sending one request", samples.helloRequest, helloRequest, first),
    row('`mewcode -p "hello"` (scripts/mewcode, the bundle)', samples.promptLauncher, helloRequest, first),
    row('`mewcode -p "hello"` (scripts/mewcode, the sources)', samples.promptSources, helloRequest, first),
    row('`deno run … main.ts -p "hello"`', samples.promptDirect, helloRequest, first),
    "",
    "| peak RSS of the process tree | MB | vs hello world |",
    "|---|---:|---:|",
    rssRow("`deno run hello.ts`", samples.hello),
    rssRow("hello world sending one request", samples.helloRequest),
    rssRow('`mewcode -p "hello"`: one turn, a text answer', samples.promptLauncher),
    rssRow(`\`mewcode -p\`: ${READ_TURNS} turns, one ReadFile each`, samples.reads),
    "",
    `Whole one-turn run (spawn to exit, the ${ANSWER_DELAY_MS} ms of the answer included): ${
      ms(wall(samples.promptLauncher))
    }; the ${READ_TURNS}-turn session: ` +
    `${ms(wall(samples.reads))}.`,
  ].join("\n");
  return { markdown, goals };
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const workDir = await Deno.makeTempDir({ prefix: "mewcode-bench-" });
  try {
    const section = await benchStartup({ workDir, quick });
    console.log(section.markdown);
    console.log();
    for (const goal of section.goals) {
      console.log(`${goal.met ? "met" : "NOT MET"}: ${goal.name}: ${goal.measured} (target ${goal.target})`);
    }
  } finally {
    await Deno.remove(workDir, { recursive: true });
  }
}
