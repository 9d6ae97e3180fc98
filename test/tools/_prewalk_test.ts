import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import type { GrepWalkReport } from "../../src/tools/_grep_prepass.ts";
import { mountPointsSync } from "../../src/common/mounts.ts";
import {
  Prewalk,
  type PrewalkRequest,
  readyWalk,
  readyWalkFiles,
  walkedAheadFiles,
} from "../../src/tools/_prewalk.ts";
import { GREP_PREPASS } from "../../src/tools/_shared.ts";
import { Walker } from "../../src/tools/_walk.ts";
import { MEMORY_STAMP_MARGIN_MS } from "../../src/tools/_walk_memory.ts";
import { globTool } from "../../src/tools/glob.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { profileFor } from "../../src/execution/profiles.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import { WALK_AHEAD_MIN_INDEX_BYTES } from "../../src/execution/runtime.ts";
import { createTempWorkspace, settleTree, TEST_SHELL_PLAN, toolContext } from "../_fakes/tool_context.ts";

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

const idle = () => false;

/** Waits until the tree's status-change times lie 3 s in the past (settleTree set them now; see `stampsUsable`). */
function pastMargin(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, MEMORY_STAMP_MARGIN_MS + 100));
}

/**
 * A walk ahead of `root` that a call suspended after its first slice (the worker suspends it before the call
 * starts); `worker.busy` says whether a call runs.
 */
async function suspendedWalkAhead(root: string): Promise<{ ahead: Prewalk; worker: { busy: boolean } }> {
  const ahead = new Prewalk();
  const worker = { busy: false };
  ahead.start(request(root), () => worker.busy);
  worker.busy = true;
  ahead.pause();
  await ahead.settled();
  equal(ahead.ended, false);
  return { ahead, worker };
}

async function walkAhead(
  root: string,
  options: { maxFiles?: number; maxMs?: number; maxChars?: number } = {},
): Promise<Prewalk> {
  const ahead = new Prewalk(options);
  ahead.start(request(root), idle);
  await ahead.settled();
  return ahead;
}

Deno.test("Glob of a pattern from the root takes the files of the walk ahead: what a walk finds and skips", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  await pastMargin();
  const context = toolContext(root);
  const patterns = ["**/*.ts", "**/*.log", "*", "**", "src/**/*.ts", "**/nothing-like-this"];
  const walked = [];
  for (const pattern of patterns) walked.push(await globTool.execute(context, { pattern }));
  const ahead = await walkAhead(root);
  ok(ahead.ended);
  for (const [index, pattern] of patterns.entries()) {
    const taken = await globTool.execute(context, { pattern });
    equal(taken.content, walked[index]!.content, pattern);
    equal(taken.metadata.ignoredFiles, walked[index]!.metadata.ignoredFiles, pattern);
    equal(taken.metadata.ignoredDirectories, walked[index]!.metadata.ignoredDirectories, pattern);
    // A pattern below the root ("src/…") walks from there.
    equal(taken.metadata.walkedAhead, pattern.startsWith("src/") ? undefined : true, pattern);
  }
  ok(walked[1]!.content.includes("1 file was ignored"), walked[1]!.content);
  // Deny rules apply to each call's files: such a call walks.
  const denying = toolContext(root, {
    deniedReads: {
      rules: [{ rule: "Read(docs/**)", origin: "a test", specifier: "docs/**" }],
      home: "/nonexistent",
    },
  });
  const denied = await globTool.execute(denying, { pattern: "**" });
  equal(denied.metadata.walkedAhead, undefined);
  ok(!denied.content.includes("docs/readme.md"), denied.content);
  // A changed tree: the walk ahead no longer holds, and Glob walks.
  await Deno.writeTextFile(join(root, "src/lib/new.ts"), "");
  const changed = await globTool.execute(context, { pattern: "**/*.ts" });
  equal(changed.metadata.walkedAhead, undefined);
  ok(changed.content.startsWith("src/lib/new.ts\n"), changed.content);
});

Deno.test("a call suspends the walk ahead, which goes on from where it was once the worker is idle", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // Enough files that the walk cannot end within its first slice of a few milliseconds.
  await writeTree(root, wideTree(300, 20));
  const key = new Walker(root, { root }).memoryKey;
  // A call arrives.
  const { ahead, worker } = await suspendedWalkAhead(root);
  // While a call runs, the walk does not go on.
  ahead.resume(() => worker.busy);
  await ahead.settled();
  equal(ahead.ended, false);
  equal(readyWalkFiles(key), null);
  worker.busy = false;
  ahead.resume(() => worker.busy);
  await ahead.settled();
  ok(ahead.ended);
  equal(readyWalkFiles(key), 6_000);
});

Deno.test("a walk ahead gives up past its file limit, and a tree with a symlink gives none", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, wideTree(50, 10));
  const key = new Walker(root, { root }).memoryKey;
  const limited = await walkAhead(root, { maxFiles: 100 });
  ok(limited.ended);
  equal(readyWalkFiles(key), null);
  await Deno.symlink("many/d1", join(root, "link"));
  await walkAhead(root);
  equal(readyWalkFiles(key), null);
  await Deno.remove(join(root, "link"));
  await walkAhead(root);
  equal(readyWalkFiles(key), 500);
});

Deno.test("a walk ahead gives up past its time limit", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // More than one slice of a few milliseconds can walk.
  await writeTree(root, wideTree(300, 20));
  const key = new Walker(root, { root }).memoryKey;
  const limited = await walkAhead(root, { maxMs: 0 });
  ok(limited.ended);
  equal(readyWalkFiles(key), null);
});

/** `count` empty folders under `empty/`, then one file after them (`z.txt`): a walk finds no file for long. */
async function emptyFolders(root: string, count: number): Promise<void> {
  await Deno.mkdir(join(root, "empty"));
  for (let folder = 0; folder < count; folder++) await Deno.mkdir(join(root, `empty/d${folder}`));
  await Deno.writeTextFile(join(root, "z.txt"), "");
}

Deno.test("a walk ahead that finds no file for long still lets messages in and keeps to its time limit", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // Listing 3,000 folders takes far more than a slice of a few milliseconds.
  await emptyFolders(root, 3_000);
  const key = new Walker(root, { root }).memoryKey;
  // It gives up at its time limit, before the file after the folders.
  const limited = await walkAhead(root, { maxMs: 0 });
  ok(limited.ended);
  equal(readyWalkFiles(key), null);
  const ahead = new Prewalk();
  ahead.start(request(root), idle);
  // Its first slice ended without a file found: a call's message can come in.
  equal(ahead.ended, false);
  await ahead.settled();
  ok(ahead.ended);
  equal(readyWalkFiles(key), 1);
});

Deno.test("a walk ahead ends as soon as it saw what its stamps cannot vouch for", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await emptyFolders(root, 3_000);
  // Walked first: the walk can keep no report from here on.
  await Deno.symlink("z.txt", join(root, "a-link"));
  // Counts the folders listed.
  const readDirSync = Deno.readDirSync;
  let listed = 0;
  Deno.readDirSync = (path) => {
    listed++;
    return readDirSync(path);
  };
  try {
    await walkAhead(root);
  } finally {
    Deno.readDirSync = readDirSync;
  }
  equal(readyWalkFiles(new Walker(root, { root }).memoryKey), null);
  // At most the folders of one slice of a few milliseconds, not the 3,000 that keep nothing.
  ok(listed < 1_000, `${listed} folders listed`);
});

Deno.test("a walk ahead gives up past the characters of paths it may keep", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const long = "d".repeat(200);
  await writeTree(root, {
    [`${long}/${long}/a.ts`]: "",
    [`${long}/${long}/b.ts`]: "",
    "c.log": "",
    ".gitignore": "*.log\n",
  });
  const key = new Walker(root, { root }).memoryKey;
  // Paths of 827 characters: ".gitignore", "c.log" (ignored) and two of 406.
  await walkAhead(root, { maxChars: 826 });
  equal(readyWalkFiles(key), null);
  await walkAhead(root, { maxChars: 827 });
  equal(readyWalkFiles(key), 3);
});

Deno.test("the mount table's points are read with their escapes decoded", async () => {
  await using workspace = await createTempWorkspace();
  const table = join(workspace.root, "mountinfo");
  await Deno.writeTextFile(
    table,
    "21 26 0:20 / /proc rw,relatime - proc proc rw\n" +
      "90 26 0:50 / /home/a\\040b/net\\134share rw - fuse.sshfs host: rw\n",
  );
  deepStrictEqual(mountPointsSync(table), ["/proc", "/home/a b/net\\share"]);
  equal(mountPointsSync(join(workspace.root, "missing")), null);
});

Deno.test("a workspace with another file system mounted inside is not walked ahead", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  await pastMargin();
  const table = join(await Deno.makeTempDir(), "mountinfo");
  const permissions = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;
  const firstGlob = async (mounts: string[]) => {
    await Deno.writeTextFile(
      table,
      mounts.map((point, id) => `${id} 1 0:${id} / ${point} rw - ext4 x rw\n`).join(""),
    );
    await using runtime = await testRuntime(root, {
      readOnly: true,
      sandbox: "read-only",
      mountInfoFile: table,
    });
    await runtime.walkAhead(permissions);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const call = { id: crypto.randomUUID(), name: "Glob", input: { pattern: "**/*.ts" } };
    const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result.metadata.walkedAhead;
  };
  // The workspace itself on a mount of its own, and mounts elsewhere, do not matter.
  equal(await firstGlob(["/", root, `${root}-other`]), true);
  equal(await firstGlob(["/", `${root}/docs`]), undefined);
  await Deno.remove(dirname(table), { recursive: true });
});

Deno.test("a one-shot session's walk ahead is decided at its first ask, not again at each response", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  // Only the index's size counts (WALK_AHEAD_MIN_INDEX_BYTES): a large repository.
  await Deno.mkdir(join(root, ".git"), { recursive: true });
  await Deno.writeFile(join(root, ".git/index"), new Uint8Array(WALK_AHEAD_MIN_INDEX_BYTES));
  await settleTree(root);
  await pastMargin();
  const table = join(await Deno.makeTempDir(), "mountinfo");
  await Deno.writeTextFile(table, `1 1 0:1 / ${root}/docs rw - ext4 x rw\n`);
  const permissions = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;
  await using runtime = await testRuntime(root, {
    readOnly: true,
    sandbox: "read-only",
    mountInfoFile: table,
  });
  await runtime.walkAhead(permissions, { onlyLargeRepository: true });
  // The mount is gone by the next response's start: the first answer (no walk) still holds.
  await Deno.writeTextFile(table, "");
  await runtime.walkAhead(permissions, { onlyLargeRepository: true });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const call = { id: crypto.randomUUID(), name: "Glob", input: { pattern: "**/*.ts" } };
  const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
  equal(result.isError, false, result.content);
  equal(result.metadata.walkedAhead, undefined);
  await Deno.remove(dirname(table), { recursive: true });
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

Deno.test("Grep's walk takes the report of a walk ahead while the tree is as it was", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  const key = new Walker(root, { root }).memoryKey;
  await pastMargin();
  const walked = await prepassWalk(root);
  await walkAhead(root);
  equal(readyWalkFiles(key), walked.files.length);
  // The call takes the report instead of walking: it is the report a walk gives.
  const taken = await prepassWalk(root);
  deepStrictEqual(withoutTime(taken), withoutTime(walked));
  notEqual(taken.stamps?.takenAt, walked.stamps?.takenAt);
  deepStrictEqual(taken.files, FILES);

  // A tree changed since the walk ahead: its report is not taken, and the call walks.
  await Deno.writeTextFile(join(root, "src/lib/new.ts"), "");
  equal(readyWalk(key), null);
  ok((await prepassWalk(root)).files.includes("src/lib/new.ts"));

  // A walk ahead of a tree changed less than 3 s before it began gives no report to use (its stamps could
  // miss a change in the same tick of the clock).
  await walkAhead(root);
  notEqual(readyWalkFiles(key), null);
  equal(readyWalk(key), null);
});

Deno.test("a call that would walk the whole workspace finishes a suspended walk ahead instead of walking anew", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  // Enough files that the walk cannot end within its first slice of a few milliseconds.
  await writeTree(root, wideTree(300, 20));
  await settleTree(root);
  await pastMargin();
  const suspended = async () => (await suspendedWalkAhead(root)).ahead;
  // Grep's walk for ripgrep: the report is the walk ahead's (its stamps taken before the call began), and the
  // walk ahead has ended.
  const grepAhead = await suspended();
  const grepStart = Date.now();
  const report = await prepassWalk(root);
  ok(grepAhead.ended);
  equal(report.files.length, 6_000);
  ok(report.stamps !== null && report.stamps.takenAt < grepStart, JSON.stringify(report.stamps?.takenAt));
  // Glob of a pattern from the root.
  const globAhead = await suspended();
  const listed = await globTool.execute(toolContext(root), { pattern: "**/d1/*.ts" });
  ok(globAhead.ended);
  equal(listed.metadata.walkedAhead, true);
  equal(listed.content.split("\n").filter((line) => line.startsWith("many/d1/f")).length, 20);
  // A call cancelled while it finishes the walk stops there.
  const stoppedAhead = await suspended();
  const cancelled = new AbortController();
  cancelled.abort();
  const stopped = await globTool.execute(toolContext(root, { signal: cancelled.signal }), { pattern: "**" });
  equal(stopped.content, "Glob was cancelled");
  equal(stoppedAhead.ended, false);
  // A call of a folder inside the workspace walks that folder alone, and leaves the walk ahead suspended.
  const partAhead = await suspended();
  const part = await globTool.execute(toolContext(root), { pattern: "many/d1/*.ts" });
  equal(part.metadata.walkedAhead, undefined);
  equal(partAhead.ended, false);
});

Deno.test("a session's first Glob finds the workspace walked ahead by its worker", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  await pastMargin();
  const permissions = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;
  const glob = async (runtime: Awaited<ReturnType<typeof testRuntime>>) => {
    const call = { id: crypto.randomUUID(), name: "Glob", input: { pattern: "**/*.ts" } };
    const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result;
  };
  await using plain = await testRuntime(root, { readOnly: true, sandbox: "read-only" });
  const unaided = await glob(plain);
  equal(unaided.metadata.walkedAhead, undefined);
  await using ahead = await testRuntime(root, { readOnly: true, sandbox: "read-only" });
  await ahead.walkAhead(permissions);
  // The walk of a few directories ends within milliseconds of the worker's start.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const first = await glob(ahead);
  equal(first.metadata.walkedAhead, true);
  equal(first.content, unaided.content);
});

Deno.test("a walk ahead says when it has ended and keeps its files, in path order, for the worker's warm-up", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  const ahead = new Prewalk();
  let ended = false;
  const ending = ahead.whenEnded().then(() => ended = true);
  ahead.start(request(root), idle);
  await ending;
  equal(ahead.ended, true);
  deepStrictEqual(walkedAheadFiles(), FILES);
  // One that gives up ends too.
  await writeTree(root, wideTree(2, 5));
  const given = new Prewalk({ maxFiles: 3 });
  given.start(request(root), idle);
  await given.whenEnded();
  equal(given.ended, true);
  equal(ended, true);
});

Deno.test("a session's first Grep answers as without the walk ahead while its worker warms up after the walk", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const files: Record<string, string> = {};
  for (let index = 0; index < 150; index++) {
    files[`src/m${String(index).padStart(3, "0")}.ts`] =
      `export function handle${index}() {\n  return ${index};\n}\n`;
  }
  await writeTree(root, files);
  await settleTree(root);
  await pastMargin();
  const permissions = { mode: "default", rules: [], canAsk: false, hooksMayDecide: false } as const;
  const grep = async (runtime: Awaited<ReturnType<typeof testRuntime>>, pattern: string) => {
    const call = { id: crypto.randomUUID(), name: "Grep", input: { pattern } };
    const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result.content;
  };
  await using plain = await testRuntime(root, { readOnly: true, sandbox: "read-only", ripgrep: false });
  const expected = [await grep(plain, String.raw`function\s+handle1\d`), await grep(plain, "return 14")];
  for (const waitMs of [0, 30, 300]) {
    await using ahead = await testRuntime(root, { readOnly: true, sandbox: "read-only", ripgrep: false });
    await ahead.walkAhead(permissions);
    // At once (the walk or the warm-up under way), during the warm-up, and after it.
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    deepStrictEqual(
      [await grep(ahead, String.raw`function\s+handle1\d`), await grep(ahead, "return 14")],
      expected,
    );
  }
});

Deno.test("a read-only worker sends the report of its walk ahead to the main process once the walk has ended", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await using executor = new WorkerExecutor();
  const profile = profileFor(grepTool, { root, shell: TEST_SHELL_PLAN });
  await executor.prewarm([profile]);
  const sent = Promise.withResolvers<GrepWalkReport>();
  executor.prewalk(profile, request(root), sent.resolve);
  const timer = setTimeout(() => sent.reject(new Error("no report within 5 s")), 5_000);
  try {
    const report = await sent.promise;
    // What a Grep call of the whole workspace would take from the worker's walk ahead.
    deepStrictEqual(report.files, FILES);
    equal(report.start, root);
    notEqual(report.stamps, null);
  } finally {
    clearTimeout(timer);
  }
});
