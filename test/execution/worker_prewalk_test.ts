/**
 * The walk ahead of the calls through the real pool and the real read-only worker: the request reaches the
 * worker between calls, the worker walks, and its report comes back to the pool's caller (`prewalk-end`), as a
 * one-shot session's runtime hands it to Grep's ripgrep path (`RipgrepGrep.walkedAhead`).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { type PermissionProfile, profileFor } from "../../src/execution/profiles.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import type { GrepWalkReport } from "../../src/tools/_grep_prepass.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { createTempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";

const TREE: Record<string, string> = {
  ".gitignore": "ignored.txt\nbuild/\n",
  "a.ts": "export const a = 1;\n",
  "src/b.ts": "export const b = 2;\n",
  "src/c.md": "# c\n",
  "ignored.txt": "left out by .gitignore\n",
  "build/out.js": "left out with its folder\n",
  "node_modules/x/index.js": "never searched\n",
};

/** Runs `body` with a real pool (no worker started yet) and Grep's profile over a workspace holding TREE. */
async function withPool(
  body: (executor: WorkerExecutor, profile: PermissionProfile, root: string) => Promise<void>,
): Promise<void> {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  for (const [path, text] of Object.entries(TREE)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  const executor = new WorkerExecutor({});
  try {
    await body(executor, profileFor(grepTool, { root, shell: TEST_SHELL_PLAN }), root);
  } finally {
    await executor.close();
  }
}

/** The report `onWalked` hears, or a failure after `ms`: a wiring that drops it must fail, not hang. */
function heardWithin(
  ms: number,
): { onWalked: (report: GrepWalkReport) => void; heard: Promise<GrepWalkReport> } {
  const { promise, resolve, reject } = Promise.withResolvers<GrepWalkReport>();
  const timer = setTimeout(() => reject(new Error(`no walk report within ${ms} ms`)), ms);
  return {
    onWalked: (report) => {
      clearTimeout(timer);
      resolve(report);
    },
    heard: promise,
  };
}

Deno.test("a worker of the pool walks ahead between calls and its report reaches the caller once", async () => {
  await withPool(async (executor, profile, root) => {
    // Asked while the worker starts, as the runtime asks right after asking for its start.
    const warming = executor.prewarm([profile]);
    const reports: GrepWalkReport[] = [];
    const { onWalked, heard } = heardWithin(20_000);
    executor.prewalk(profile, { root, additionalRoots: [], excludedPaths: [] }, (report) => {
      reports.push(report);
      onWalked(report);
    });
    await warming;
    const report = await heard;
    equal(report.start, root);
    equal(report.base, root);
    // What a Grep call of the whole workspace would search: ignore rules and skipped folders applied.
    deepEqual(report.files, [".gitignore", "a.ts", "src/b.ts", "src/c.md"]);
    ok(report.stamps !== null, "the walk carries the stamps a later call checks");

    // The same worker then runs a Grep call as usual, and no second report comes.
    const { result } = await executor.execute(
      {
        tool: grepTool,
        input: { pattern: "export const", output_mode: "files_with_matches" },
        context: { root, timeoutMs: 10_000, fileRecords: {}, strictLinks: false, shell: TEST_SHELL_PLAN },
      },
      { signal: new AbortController().signal },
    );
    equal(result.isError, false, result.content);
    deepEqual(result.content.split("\n").filter((line) => line.endsWith(".ts")), ["a.ts", "src/b.ts"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    equal(reports.length, 1);
    equal(executor.stats().started, 1);
  });
});

Deno.test("a walk asked of a profile with no worker starts none and reports nothing", async () => {
  await withPool(async (executor, profile, root) => {
    const reports: GrepWalkReport[] = [];
    // A walk nobody asked a call of is not worth a worker's start (the runtime asks for one first).
    executor.prewalk(
      profile,
      { root, additionalRoots: [], excludedPaths: [] },
      (report) => reports.push(report),
    );
    equal(executor.stats().started, 0);
    // A worker started afterwards was never asked: it walks nothing and sends no report.
    await executor.prewarm([profile]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    equal(reports.length, 0);
    equal(executor.stats().started, 1);
  });
});
