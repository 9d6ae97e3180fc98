import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import type { GrepWalkReport } from "../../src/tools/_grep_prepass.ts";
import { Prewalk, type PrewalkRequest, readyWalkFiles, takeReadyWalk } from "../../src/tools/_prewalk.ts";
import { GREP_PREPASS } from "../../src/tools/_shared.ts";
import { Walker } from "../../src/tools/_walk.ts";
import { MEMORY_STAMP_MARGIN_MS, RecentWalks } from "../../src/tools/_walk_memory.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace, settleTree, toolContext } from "../_fakes/tool_context.ts";

/** A tree with nested ignore files, an excluded folder, a default exclusion and a binary file. */
const TREE: Record<string, string> = {
  ".gitignore": "*.log\n/build/\n",
  ".git/info/exclude": "secret.txt\n",
  "secret.txt": "",
  "build/out.js": "",
  "node_modules/pkg/index.js": "",
  "src/app.ts": "const app = 1;\n",
  "src/app.log": "",
  "src/lib/.gitignore": "gen/\n",
  "src/lib/gen/made.ts": "",
  "src/lib/util.ts": "export const util = 2;\n",
  "src/lib/logo.png": "\u0000PNG",
  "docs/readme.md": "# docs\n",
};

/** The files of TREE a walk of its root finds, in its order. */
const FILES = [
  ".gitignore",
  "docs/readme.md",
  "src/app.ts",
  "src/lib/.gitignore",
  "src/lib/logo.png",
  "src/lib/util.ts",
];

/** The directories of TREE a walk of its root lists: itself, docs, src, src/lib. */
const LISTED = 4;

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), content);
  }
}

/** `count` folders of `perFolder` files each, under `many/`. */
function wideTree(count: number, perFolder: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let folder = 0; folder < count; folder++) {
    for (let file = 0; file < perFolder; file++) files[`many/d${folder}/f${file}.ts`] = "";
  }
  return files;
}

function request(root: string): PrewalkRequest {
  return { root, additionalRoots: [], excludedPaths: [] };
}

/** Walks `root` to its end with `memory`: the files, and the directories listed and taken from the memory. */
function walkWith(root: string, memory: RecentWalks) {
  const walker = new Walker(root, { root, memory });
  const files: string[] = [];
  for (const file of walker.files()) if (file !== null) files.push(file.relativePath);
  return { files, listed: walker.listedDirectories, recalled: walker.recalledDirectories };
}

const idle = () => false;

Deno.test("a walk ahead fills the memory: the next walk of the workspace lists nothing and finds the same", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  const memory = new RecentWalks({ marginMs: 0, stampsLater: true });
  const ahead = new Prewalk({ memory });
  ahead.start(request(root), idle);
  await ahead.settled();
  ok(ahead.finished);
  const fresh = walkWith(root, new RecentWalks({ marginMs: 0 }));
  const recalled = walkWith(root, memory);
  deepStrictEqual([recalled.listed, recalled.recalled], [0, LISTED]);
  deepStrictEqual(recalled.files, fresh.files);
  deepStrictEqual(fresh.files, FILES);
});

Deno.test("a call stops the walk ahead at once; what it listed is kept, and it goes on once the worker is idle", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // Enough directories that the walk cannot end within its first slice of a few milliseconds.
  await writeTree(root, wideTree(300, 20));
  await settleTree(root);
  const memory = new RecentWalks({ marginMs: 0, stampsLater: true });
  const ahead = new Prewalk({ memory });
  let busy = false;
  ahead.start(request(root), () => busy);
  // A call arrives (the worker runs `pause` before it starts the call).
  busy = true;
  ahead.pause();
  await ahead.settled();
  equal(ahead.finished, false);
  const partial = walkWith(root, memory);
  ok(partial.recalled > 0 && partial.listed > 0, JSON.stringify(partial));
  equal(partial.listed + partial.recalled, 302);
  // While a call runs, the walk does not go on.
  ahead.resume(() => busy);
  await ahead.settled();
  equal(ahead.finished, false);
  busy = false;
  ahead.resume(() => busy);
  await ahead.settled();
  ok(ahead.finished);
  deepStrictEqual([walkWith(root, memory).listed, walkWith(root, memory).recalled], [0, 302]);
});

Deno.test("a walk ahead stops at its file limit and keeps what it listed, without a report for Grep", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, wideTree(50, 10));
  await settleTree(root);
  const memory = new RecentWalks({ marginMs: 0, stampsLater: true });
  const ahead = new Prewalk({ memory, maxFiles: 100 });
  ahead.start(request(root), idle);
  await ahead.settled();
  ok(ahead.finished);
  const after = walkWith(root, memory);
  ok(after.recalled >= 10 && after.recalled < 52, JSON.stringify(after));
  equal(after.files.length, 500);
  const key = new Walker(root, { root }).memoryKey;
  equal(readyWalkFiles(key), null);
  // Resuming a walk that reached its limit does nothing.
  ahead.resume(idle);
  equal(readyWalkFiles(key), null);
});

/** A Grep call's prepass that reports its walk: what the worker does for a Grep call helped by ripgrep. */
async function prepassWalk(root: string): Promise<GrepWalkReport> {
  const input = {
    pattern: "nothing-matches-this",
    [GREP_PREPASS]: { budgetMs: 0, prefilter: null, walk: true },
  };
  const result = await grepTool.execute(toolContext(root), input as never);
  const walk = result.metadata.walk as GrepWalkReport | undefined;
  ok(walk !== undefined, JSON.stringify(result));
  return walk;
}

/** A report without its stamps' time (two walks of the same tree differ only there). */
function withoutTime(report: GrepWalkReport): unknown {
  return { ...report, stamps: report.stamps === null ? null : { ...report.stamps, takenAt: 0 } };
}

Deno.test("Grep's walk takes the report of a walk ahead once, and only while the tree is as it was", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  const key = new Walker(root, { root }).memoryKey;
  // The report's stamps must lie 3 s before the walk ahead began (see `stampsUsable`).
  await new Promise((resolve) => setTimeout(resolve, MEMORY_STAMP_MARGIN_MS + 100));
  const walked = await prepassWalk(root);
  const ahead = new Prewalk({ memory: new RecentWalks({ stampsLater: true }) });
  ahead.start(request(root), idle);
  await ahead.settled();
  equal(readyWalkFiles(key), walked.files.length);
  // The call takes the report instead of walking: it is the report a walk gives, and it is given once.
  const taken = await prepassWalk(root);
  equal(readyWalkFiles(key), null);
  deepStrictEqual(withoutTime(taken), withoutTime(walked));
  notEqual(taken.stamps?.takenAt, walked.stamps?.takenAt);
  deepStrictEqual(taken.files, FILES);

  // A tree changed since the walk ahead: its report is not taken, and the call walks.
  const again = new Prewalk({ memory: new RecentWalks({ stampsLater: true }) });
  again.start(request(root), idle);
  await again.settled();
  await Deno.writeTextFile(join(root, "src/lib/new.ts"), "");
  equal(takeReadyWalk(key), null);
  ok((await prepassWalk(root)).files.includes("src/lib/new.ts"));

  // A walk ahead of a tree changed less than 3 s before it began gives no report (its stamps could miss a
  // change in the same tick of the clock).
  const early = new Prewalk({ memory: new RecentWalks({ stampsLater: true }) });
  early.start(request(root), idle);
  await early.settled();
  equal(takeReadyWalk(key), null);
});

Deno.test("a session's first Glob finds the workspace walked ahead by its worker", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  // The worker keeps listings whose status-change times lie 3 s before the walk (settleTree just set them).
  await new Promise((resolve) => setTimeout(resolve, MEMORY_STAMP_MARGIN_MS + 100));
  const permissions = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;
  const glob = async (runtime: Awaited<ReturnType<typeof testRuntime>>) => {
    const call = { id: crypto.randomUUID(), name: "Glob", input: { pattern: "**/*.ts" } };
    const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result;
  };
  await using ahead = await testRuntime(root, { readOnly: true, sandbox: "read-only" });
  await ahead.walkAhead(permissions);
  // The walk of a few directories ends within milliseconds of the worker's start.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const first = await glob(ahead);
  deepStrictEqual([first.metadata.listedDirectories, first.metadata.recalledDirectories], [0, LISTED]);
  await using plain = await testRuntime(root, { readOnly: true, sandbox: "read-only" });
  const unaided = await glob(plain);
  deepStrictEqual([unaided.metadata.listedDirectories, unaided.metadata.recalledDirectories], [LISTED, 0]);
  equal(first.content, unaided.content);
});
