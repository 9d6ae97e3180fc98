import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { type WalkCounts, Walker } from "../../src/tools/_walk.ts";
import {
  MAX_KEPT_WALKS,
  MEMORY_STAMP_MARGIN_MS,
  RecentWalks,
  recentWalks,
  type WalkMemory,
} from "../../src/tools/_walk_memory.ts";
import { stampsUsable, walkIsCurrent } from "../../src/tools/_walk_stamps.ts";
import { globTool } from "../../src/tools/glob.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace, settleTree, toolContext } from "../_fakes/tool_context.ts";

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), content);
  }
}

/** What a walk found and skipped. */
interface Found extends WalkCounts {
  files: string[];
}

/** A walk to its end: what it found, and how many directories it listed and took from the memory. */
interface Walked {
  found: Found;
  listed: number;
  recalled: number;
  walker: Walker;
}

function walk(
  start: string,
  root: string,
  options: { memory?: WalkMemory; filter?: (path: string) => boolean; stamp?: boolean } = {},
): Walked {
  const walker = new Walker(start, { root, ...options });
  const files: string[] = [];
  for (const file of walker.files()) if (file !== null) files.push(file.path);
  // Every counter a walk reports (what `WalkCounts` lists), and the files.
  const { ignoredFiles, ignoredDirectories, skippedSymlinks, changedDirectories, ignoreProblems } = walker;
  return {
    found: {
      files,
      ignoredFiles,
      ignoredDirectories,
      skippedSymlinks,
      changedDirectories,
      ignoreProblems,
      unreadable: walker.unreadable,
    },
    listed: walker.listedDirectories,
    recalled: walker.recalledDirectories,
    walker,
  };
}

/** A tree with every kind of rule: nested ignore files, an excluded folder, info/exclude, a bad rule. */
const TREE = {
  ".gitignore": `*.log\n/build/\n${"x".repeat(2_000)}\n`,
  ".git/info/exclude": "secret.txt\n",
  "secret.txt": "",
  "build/out.js": "",
  "node_modules/pkg/index.js": "",
  "src/app.ts": "",
  "src/app.log": "",
  "src/lib/.gitignore": "gen/\n!keep.log\n",
  "src/lib/gen/made.ts": "",
  "src/lib/keep.log": "",
  "src/lib/util.ts": "",
  "src/lib/deep/er/most.ts": "",
  "docs/readme.md": "",
};

/** The directories of TREE that a walk of its root enters: itself, src, src/lib, deep, deep/er, docs. */
const ENTERED = 6;

Deno.test("a walk from kept listings finds, skips and reports exactly what listing the tree again does", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0 });
  const first = walk(root, root, { memory });
  equal(first.listed, ENTERED);
  equal(first.recalled, 0);
  equal(memory.listingsOf(first.walker.memoryKey), ENTERED);
  const filters: (((path: string) => boolean) | undefined)[] = [
    undefined,
    (path) => path.endsWith(".ts"),
    (path) => path.endsWith(".log") || path.endsWith(".txt"),
  ];
  for (const filter of filters) {
    const options = filter === undefined ? {} : { filter };
    const again = walk(root, root, { memory, ...options });
    deepStrictEqual([again.listed, again.recalled], [0, ENTERED]);
    deepStrictEqual(again.found, walk(root, root, options).found);
  }
  // The counts are the tree's: secret.txt and src/app.log; .git, build, node_modules and src/lib/gen; the
  // rule that was too long.
  const all = walk(root, root, { memory }).found;
  equal(all.ignoredFiles, 2);
  equal(all.ignoredDirectories, 4);
  deepStrictEqual(all.ignoreProblems, ['".gitignore": 1 rule(s) longer than 1000 characters were skipped']);

  // Below the root, with the ignore files above the start.
  const lib = join(root, "src", "lib");
  walk(lib, root, { memory });
  const below = walk(lib, root, { memory });
  deepStrictEqual([below.listed, below.recalled], [0, 3]);
  deepStrictEqual(below.found, walk(lib, root).found);
  // A stamped walk from the memory has the stamps a listing walk has, current and usable.
  const stamped = walk(root, root, { memory, stamp: true });
  equal(stamped.listed, 0);
  const stamps = stamped.walker.stamps;
  ok(stamps !== null && stamps.paths.length > ENTERED && walkIsCurrent(stamps) && stampsUsable(stamps, 0));
  deepStrictEqual(stamps.paths.toSorted(), walk(root, root, { stamp: true }).walker.stamps?.paths.toSorted());
});

Deno.test("a walk lists again only what changed, and finds what a new walk finds", async (t) => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(outside, "private.ts"), "");
    const changes: [string, () => Promise<void>, number, (files: string[]) => boolean][] = [
      [
        "a file added deep down",
        () => Deno.writeTextFile(join(root, "src/lib/deep/er/new.ts"), ""),
        1,
        (files) => files.includes(join(root, "src/lib/deep/er/new.ts")),
      ],
      [
        "a file removed",
        () => Deno.remove(join(root, "src/app.ts")),
        1,
        (files) => !files.includes(join(root, "src/app.ts")),
      ],
      [
        "a folder added",
        () => writeTree(root, { "src/new/a/b.ts": "" }),
        3,
        (files) => files.includes(join(root, "src/new/a/b.ts")),
      ],
      [
        "a .gitignore edited",
        () => Deno.writeTextFile(join(root, "src/lib/.gitignore"), "gen/\nutil.ts\n"),
        1,
        (
          files,
        ) => !files.includes(join(root, "src/lib/util.ts")),
      ],
      ["a folder's mode changed", () => Deno.chmod(join(root, "src/lib/deep"), 0o700), 1, () => true],
      [
        "info/exclude emptied",
        () => Deno.writeTextFile(join(root, ".git/info/exclude"), ""),
        0,
        (files) => files.includes(join(root, "secret.txt")),
      ],
      [
        "a folder swapped for a symlink that leaves the workspace",
        async () => {
          await Deno.remove(join(root, "docs"), { recursive: true });
          await Deno.symlink(outside, join(root, "docs"));
        },
        1,
        (files) => !files.some((file) => file.startsWith(join(root, "docs"))),
      ],
    ];
    for (const [name, change, listed, shows] of changes) {
      await t.step(name, async () => {
        await Deno.remove(root, { recursive: true }).catch(() => {});
        await Deno.mkdir(root);
        await writeTree(root, TREE);
        await settleTree(root);
        const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0 });
        walk(root, root, { memory });
        equal(walk(root, root, { memory }).listed, 0);
        await change();
        const after = walk(root, root, { memory });
        equal(after.listed, listed);
        ok(shows(after.found.files), after.found.files.join("\n"));
        deepStrictEqual(after.found, walk(root, root).found);
      });
    }
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("only listings whose stamps can show a change are kept", async (t) => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  await t.step("none of a tree whose status changed within the last seconds", () => {
    // The modification times lie an hour back; the status-change times, set by that, are recent.
    const memory = new RecentWalks({ recordFirstWalk: true });
    const first = walk(root, root, { memory });
    equal(memory.listingsOf(first.walker.memoryKey), 0);
    equal(walk(root, root, { memory }).recalled, 0);
  });
  await t.step("not those of folders reached through a symlink", async () => {
    // build/ is ignored: its files are reached only through the link.
    await Deno.symlink(join(root, "build"), join(root, "link"));
    await settleTree(root);
    const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0 });
    walk(root, root, { memory });
    const again = walk(root, root, { memory });
    deepStrictEqual([again.listed, again.recalled], [1, ENTERED]);
    ok(again.found.files.includes(join(root, "link/out.js")));
    await Deno.remove(join(root, "link"));
  });
  await t.step("those a walk stopped early listed, and nothing more", async () => {
    await settleTree(root);
    const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0 });
    const walker = new Walker(root, { root, memory });
    for (const file of walker.files()) if (file !== null) break;
    const kept = memory.listingsOf(walker.memoryKey);
    ok(kept > 0 && kept < ENTERED, String(kept));
    const next = walk(root, root, { memory });
    deepStrictEqual([next.listed, next.recalled], [ENTERED - kept, kept]);
    deepStrictEqual(next.found, walk(root, root).found);
  });
  await t.step("none of a walk larger than the memory holds", () => {
    const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0, maxEntries: 5 });
    walk(root, root, { memory });
    equal(memory.size, 0);
  });
});

Deno.test("a memory that stamps after the walk keeps what did not change since the walk began", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0, stampsLater: true });
  const first = walk(root, root, { memory });
  equal(memory.listingsOf(first.walker.memoryKey), 0);
  memory.stampWhileIdle(() => false);
  await memory.settled();
  equal(memory.listingsOf(first.walker.memoryKey), ENTERED);
  equal(walk(root, root, { memory }).listed, 0);
  // A call that comes stops the stamping; the next idle time goes on.
  const interrupted = new RecentWalks({ recordFirstWalk: true, marginMs: 0, stampsLater: true });
  walk(root, root, { memory: interrupted });
  interrupted.stampWhileIdle(() => true);
  await interrupted.settled();
  equal(interrupted.listingsOf(first.walker.memoryKey), 0);
  interrupted.stampWhileIdle(() => false);
  await interrupted.settled();
  equal(interrupted.listingsOf(first.walker.memoryKey), ENTERED);

  // A change between the listing and the stamp shows a time after the walk began. The file system's clock
  // lags the wall clock by up to a tick: the margin covers it (and settleTree's status-change time is past it).
  await new Promise((resolve) => setTimeout(resolve, 150));
  const memoryKey = first.walker.memoryKey;
  const fresh = new RecentWalks({ recordFirstWalk: true, marginMs: 100, stampsLater: true });
  walk(root, root, { memory: fresh });
  Deno.writeTextFileSync(join(root, "src/lib/deep/late.ts"), "");
  fresh.stampWhileIdle(() => false);
  await fresh.settled();
  equal(fresh.listingsOf(memoryKey), ENTERED - 1);
  const next = walk(root, root, { memory: fresh });
  deepStrictEqual([next.listed, next.recalled], [1, ENTERED - 1]);
  ok(next.found.files.includes(join(root, "src/lib/deep/late.ts")));
  // A caller that wants the walk's stamps gets them at once, and so does the memory.
  const stamped = new RecentWalks({ recordFirstWalk: true, marginMs: 0, stampsLater: true });
  await settleTree(root);
  walk(root, root, { memory: stamped, stamp: true });
  equal(stamped.listingsOf(memoryKey), ENTERED);
});

Deno.test("the memory keeps the most recently used walks", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const starts = Array.from({ length: MAX_KEPT_WALKS + 1 }, (_, index) => join(root, `tree${index}`));
  for (const start of starts) await writeTree(start, { "a.ts": "", "sub/b.ts": "" });
  await settleTree(root);
  const memory = new RecentWalks({ recordFirstWalk: true, marginMs: 0 });
  for (const start of starts.slice(0, MAX_KEPT_WALKS)) walk(start, root, { memory });
  // The first is used again, so the second is the least recently used when a fifth comes.
  equal(walk(starts[0]!, root, { memory }).listed, 0);
  walk(starts[MAX_KEPT_WALKS]!, root, { memory });
  equal(memory.size, MAX_KEPT_WALKS);
  equal(walk(starts[1]!, root, { memory }).recalled, 0);
  equal(walk(starts[0]!, root, { memory }).listed, 0);
  // Other roots or excluded folders make another walk.
  equal(walk(starts[0]!, starts[0]!, { memory }).recalled, 0);
});

Deno.test("Glob answers from the worker's kept listings as from a new walk, and sees a new file", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  // The tree was written a moment ago: its status-change times are recent (see `stampsUsable`).
  recentWalks.marginMs = 0;
  const context = toolContext(root);
  const key = new Walker(root, { root }).memoryKey;
  const first = await globTool.execute(context, { pattern: "**/*.ts" });
  // Most processes walk a tree once: the first walk of a start is not recorded, the second is.
  equal(recentWalks.listingsOf(key), 0);
  equal((await globTool.execute(context, { pattern: "**/*.ts" })).content, first.content);
  equal(recentWalks.listingsOf(key), ENTERED);
  const second = await globTool.execute(context, { pattern: "**/*.ts" });
  equal(second.content, first.content);
  deepStrictEqual([second.metadata.listedDirectories, second.metadata.recalledDirectories], [0, ENTERED]);
  const logs = await globTool.execute(context, { pattern: "**/*.log" });
  ok(logs.content.includes("src/lib/keep.log"), logs.content);
  ok(logs.content.includes("1 file was ignored by .gitignore"), logs.content);
  await Deno.writeTextFile(join(root, "src/lib/deep/fresh.ts"), "");
  const after = await globTool.execute(context, { pattern: "**/*.ts" });
  ok(after.content.startsWith("src/lib/deep/fresh.ts\n"), after.content);
});

Deno.test("a session's read-only worker walks a tree unchanged since its last Glob from memory", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, TREE);
  await settleTree(root);
  // The worker keeps listings whose status-change times lie 3 s before the walk (settleTree just set them).
  await new Promise((resolve) => setTimeout(resolve, MEMORY_STAMP_MARGIN_MS + 100));
  await using runtime = await testRuntime(root, { readOnly: true, sandbox: "read-only" });
  const glob = async (pattern: string) => {
    const call = { id: crypto.randomUUID(), name: "Glob", input: { pattern } };
    const { result } = await runtime.pipeline.run(call, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result;
  };
  const first = await glob("**/*.ts");
  deepStrictEqual([first.metadata.listedDirectories, first.metadata.recalledDirectories], [ENTERED, 0]);
  // The second walk of the start records (the first only marks it), and the worker stamps the listings
  // once the result is sent.
  const again = await glob("*.md");
  deepStrictEqual([again.metadata.listedDirectories, again.metadata.recalledDirectories], [ENTERED, 0]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = await glob("**/*.ts");
  deepStrictEqual([second.metadata.listedDirectories, second.metadata.recalledDirectories], [0, ENTERED]);
  equal(second.content, first.content);
  await Deno.writeTextFile(join(root, "docs/new.ts"), "");
  const third = await glob("**/*.ts");
  deepStrictEqual([third.metadata.listedDirectories, third.metadata.recalledDirectories], [1, ENTERED - 1]);
  ok(third.content.startsWith("docs/new.ts\n"), third.content);
});
