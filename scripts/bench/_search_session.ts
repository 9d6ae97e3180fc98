/**
 * The search benchmark's child processes (`search.ts` starts them with mewcode's runtime flags): a session's
 * tool runtime over the tree and nothing else, as in mewcode. The benchmark's own module loads node:path
 * and node:os, whose compatibility layer mewcode's main process never loads (~10 MB): a child importing it
 * would measure more memory, and slower calls, than a session has.
 *
 *   deno run … _search_session.ts --deployed-child ROOT [WALK_STORE] [HEAD_START_MS]
 *                                                                      each request line on stdin, answered
 *   deno run … _search_session.ts --rss-child ROOT                     one turn of four parallel Greps
 *
 * @module
 */
import { createToolRuntime, type ToolRuntime } from "../../src/execution/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { LineSplitter } from "./_report.ts";

/** The literal the benchmark greps for; generated files contain it now and then. */
export const BENCH_LITERAL = "parseConfigOverride";
/** The regex the benchmark greps for. */
export const BENCH_REGEX = String.raw`function\s+handle[A-Z]\w*Event`;

/** The tools the benchmark compares with ripgrep. */
export type ToolName = "Grep" | "Glob";

/** One call of a benchmark case. */
export interface BenchRequest {
  tool: ToolName;
  root: string;
  input: Record<string, unknown>;
}

export const DEPLOYED_CHILD_FLAG = "--deployed-child";

/** How a one-shot session walks ahead (`ToolRuntime.walkAhead`). */
const ONE_SHOT = { onlyLargeRepository: true } as const;

/** The permissions the deployed session prewarms for: every read-only tool may run. */
const PREWARM_PERMISSIONS = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;

export const RSS_CHILD_FLAG = "--rss-child";

/**
 * How long before its first call a one-shot session's search worker starts and walks the workspace ahead: when
 * the model's response begins, the model has still to write its call (a Grep call and a sentence before it
 * are some 30 to 60 tokens, half a second to a second at 50 to 80 tokens a second).
 */
export const HEAD_START_MS = 500;

/** The Grep calls of one turn in the memory measurement: four searches of the whole tree at once. */
export const PARALLEL_GREPS: readonly Record<string, unknown>[] = [
  { pattern: BENCH_LITERAL, head_limit: 100_000 },
  { pattern: BENCH_REGEX, head_limit: 100_000 },
  { pattern: BENCH_REGEX, output_mode: "files_with_matches", head_limit: 100_000 },
  { pattern: "noSuchIdentifierAnywhere" },
];

/**
 * A session's tool runtime over the tree: read-only tools, the read-only shell sandbox, all calls allowed;
 * Grep's walks kept across processes in `walkStore` when given.
 */
function openRuntime(root: string, walkStore?: string): Promise<ToolRuntime> {
  return createToolRuntime({
    ...(walkStore === undefined ? {} : { walkStore }),
    root,
    readOnly: true,
    sandbox: "read-only",
    sandboxNetwork: false,
    strictLinks: false,
    policy: { decide: () => Promise.resolve({ behavior: "allow" }) },
    env: Deno.env.toObject(),
  });
}

/** Runs one call as a session does: the pipeline's gates, then the worker pool or ripgrep in the sandbox. */
async function runDeployed(runtime: ToolRuntime, request: BenchRequest): Promise<ToolResult> {
  const call = { id: crypto.randomUUID(), name: request.tool, input: request.input };
  const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
  if (result.isError) throw new Error(`${request.tool} as deployed failed: ${result.content}`);
  return result;
}

/**
 * The deployed-call process: opens the runtime, starts its read-only worker with a Glob of a missing
 * directory (which walks nothing), answers one line, then runs each request line it reads, after the
 * runtime's prewarm for the call's tool (as a session prewarms while a call's input streams: for Grep, its
 * ripgrep modules load). With a head start, the worker starts as a one-shot session's does when the model's
 * response begins (`ToolRuntime.walkAhead`: it walks the workspace meanwhile), and the first line is answered
 * `headStartMs` later, as the model's call comes once the model has written it.
 */
async function serveDeployedCalls(
  root: string,
  walkStore: string | undefined,
  headStartMs: number | undefined,
): Promise<void> {
  const runtime = await openRuntime(root, walkStore);
  try {
    if (headStartMs === undefined) {
      await runDeployed(runtime, { tool: "Glob", root, input: { pattern: "no-such-directory/*" } });
    } else {
      void runtime.walkAhead(PREWARM_PERMISSIONS, ONE_SHOT);
      await new Promise((resolve) => setTimeout(resolve, headStartMs));
    }
    console.log(JSON.stringify({ ms: 0, engine: null, content: "" }));
    const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter());
    for await (const line of lines) {
      const request = JSON.parse(line) as BenchRequest;
      // What a session does while the call's input streams, before it can run (not timed).
      await runtime.prewarm(PREWARM_PERMISSIONS, request.tool);
      const started = performance.now();
      const result = await runDeployed(runtime, request);
      const ms = performance.now() - started;
      const engine = result.metadata.engine === undefined ? null : String(result.metadata.engine);
      console.log(JSON.stringify({ ms, engine, content: result.content }));
    }
  } finally {
    await runtime.close();
  }
}

/** The child's side: one session, its head start, then the turn; prints its own timing as JSON. */
async function runRssChild(root: string): Promise<void> {
  const runtime = await openRuntime(root);
  try {
    // As a one-shot session: its search worker starts, and walks the workspace, when the model's response
    // begins; the calls come once the model has written them.
    void runtime.walkAhead(PREWARM_PERMISSIONS, ONE_SHOT);
    await new Promise((resolve) => setTimeout(resolve, HEAD_START_MS));
    const started = performance.now();
    const results = await Promise.all(
      PARALLEL_GREPS.map((input) => runDeployed(runtime, { tool: "Grep", root, input })),
    );
    const turnMs = performance.now() - started;
    const engines = results.map((result) => String(result.metadata.engine));
    console.log(JSON.stringify({ turnMs, engines }));
  } finally {
    await runtime.close();
  }
}

if (import.meta.main && Deno.args[0] === DEPLOYED_CHILD_FLAG) {
  const [root, walkStore, headStart] = Deno.args.slice(1);
  await serveDeployedCalls(root!, walkStore || undefined, headStart ? Number(headStart) : undefined);
} else if (import.meta.main && Deno.args[0] === RSS_CHILD_FLAG) {
  await runRssChild(Deno.args[1]!);
}
