import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { TimeSlicer } from "../../src/tools/_time_slicer.ts";
import { EXCLUDED_DIRECTORY_NAMES } from "../../src/tools/_shared.ts";
import { Walker, walkFiles } from "../../src/tools/_walk.ts";
import { skippedNotice } from "../../src/tools/_walk_notice.ts";
import { stampsUsable, walkIsCurrent, type WalkStamps } from "../../src/tools/_walk_stamps.ts";
import { createTempWorkspace, settleTree } from "../_fakes/tool_context.ts";

/** Writes files (path relative to root → content), creating parent directories. */
async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), content);
  }
}

async function relativePaths(
  start: string,
  root: string,
  filter?: (path: string) => boolean,
): Promise<string[]> {
  const result = await walkFiles(start, filter === undefined ? { root } : { root, filter });
  return result.files.map((file) => file.relativePath);
}

Deno.test("walkFiles lists files only, depth first with entries sorted by name", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "b.ts": "",
    "a/z.ts": "",
    "a/b/c.ts": "",
    "a-b.ts": "",
    ".env": "",
  });
  await Deno.mkdir(join(workspace.root, "empty"));
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), [
    ".env",
    "a/b/c.ts",
    "a/z.ts",
    "a-b.ts",
    "b.ts",
  ]);
  equal(result.files[1]!.path, join(workspace.root, "a/b/c.ts"));
  equal(result.aborted, false);
});

Deno.test("walkFiles skips the default excluded directories at any depth and counts them", async () => {
  await using workspace = await createTempWorkspace();
  const files: Record<string, string> = { "src/keep.ts": "" };
  for (const name of EXCLUDED_DIRECTORY_NAMES) {
    files[`${name}/top.ts`] = "";
    files[`src/${name}/nested.ts`] = "";
  }
  await writeTree(workspace.root, files);
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["src/keep.ts"]);
  equal(result.ignoredDirectories, EXCLUDED_DIRECTORY_NAMES.size * 2);
  equal(result.ignoredFiles, 0);
});

Deno.test("walkFiles applies the root .gitignore: files, directories, negation, anchors, case", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "# comment\n*.log\n!keep.log\ndist/\n/build\n*.TMP\n",
    "a.log": "",
    "keep.log": "",
    "sub/b.log": "",
    "dist/x.js": "",
    "sub/dist/y.js": "",
    "build/out.js": "",
    "sub/build/kept.js": "",
    "files/dist": "a file: directory-only patterns do not match it",
    "x.tmp": "",
    "main.ts": "",
  });
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), [
    ".gitignore",
    "files/dist",
    "keep.log",
    "main.ts",
    "sub/build/kept.js",
    "x.tmp",
  ]);
  equal(result.ignoredFiles, 2); // a.log, sub/b.log
  equal(result.ignoredDirectories, 3); // dist, sub/dist, build
});

Deno.test("walkFiles applies nested .gitignore files below their directory only, deeper rules winning", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "*.gen.ts\n",
    "pkg/.gitignore": "generated/\n!special.gen.ts\n/local.ts\n",
    "pkg/generated/a.ts": "",
    "generated/b.ts": "",
    "pkg/special.gen.ts": "",
    "other.gen.ts": "",
    "pkg/local.ts": "",
    "pkg/deep/local.ts": "",
    "local.ts": "",
  });
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), [
    ".gitignore",
    "generated/b.ts",
    "local.ts",
    "pkg/.gitignore",
    "pkg/deep/local.ts",
    "pkg/special.gen.ts",
  ]);
  equal(result.ignoredFiles, 2); // other.gen.ts, pkg/local.ts
  equal(result.ignoredDirectories, 1); // pkg/generated
});

Deno.test("walkFiles applies .gitignore patterns that name paths with slashes", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "docs/_build/\nsrc/**/*.snap\n",
    "docs/_build/index.html": "",
    "docs/guide.md": "",
    "other/docs/_build/kept.html": "",
    "src/a/b/c.snap": "",
    "src/a/c.ts": "",
    "lib/c.snap": "",
  });
  deepStrictEqual(await relativePaths(workspace.root, workspace.root), [
    ".gitignore",
    "docs/guide.md",
    "lib/c.snap",
    "other/docs/_build/kept.html",
    "src/a/c.ts",
  ]);
});

Deno.test("walkFiles honours .git/info/exclude", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { ".git/info/exclude": "secret.txt\n", "secret.txt": "", "open.txt": "" });
  deepStrictEqual(await relativePaths(workspace.root, workspace.root), ["open.txt"]);
});

Deno.test("walkFiles never reads ignore files through symlinks that leave the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(outside.root, { "rules": "*\n", "git/info/exclude": "*\n" });
  await writeTree(workspace.root, { "a.ts": "", "sub/b.ts": "" });
  await Deno.symlink(join(outside.root, "rules"), join(workspace.root, "sub/.gitignore"));
  await Deno.symlink(join(outside.root, "git"), join(workspace.root, ".git"));
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["a.ts", "sub/b.ts"]);
  // Walking sub/ reads the root's .git/info/exclude as an ancestor rule set: also refused.
  deepStrictEqual(await relativePaths(join(workspace.root, "sub"), workspace.root), ["b.ts"]);
});

Deno.test("walkFiles below the root applies the ignore files of the directories above", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "*.log\nsub/inner/gen/\n/sub/top.ts\n",
    "sub/.gitignore": "cache/\n",
    "sub/inner/gen/x.ts": "",
    "sub/inner/a.log": "",
    "sub/inner/cache/c.ts": "",
    "sub/inner/keep.ts": "",
    "sub/top.ts": "",
  });
  const start = join(workspace.root, "sub", "inner");
  const result = await walkFiles(start, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["keep.ts"]);
  equal(result.ignoredFiles, 1);
  equal(result.ignoredDirectories, 2);
  deepStrictEqual(await relativePaths(join(workspace.root, "sub"), workspace.root), [
    ".gitignore",
    "inner/keep.ts",
  ]);
});

Deno.test("walkFiles lists the files of an ignored directory when asked to walk it", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "dist/\n",
    "dist/bundle.js": "",
    "node_modules/x/index.js": "",
  });
  deepStrictEqual(await relativePaths(join(workspace.root, "dist"), workspace.root), ["bundle.js"]);
  deepStrictEqual(await relativePaths(join(workspace.root, "node_modules"), workspace.root), ["x/index.js"]);
});

Deno.test("walkFiles ends on symlink loops and lists each directory once", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a/b/file.ts": "" });
  await Deno.symlink("..", join(workspace.root, "a/b/up")); // a/b/up -> a
  await Deno.symlink(workspace.root, join(workspace.root, "a/root")); // a/root -> the root
  await Deno.symlink("self", join(workspace.root, "self")); // self -> self (ELOOP)
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["a/b/file.ts"]);
  equal(result.skippedSymlinks, 1);
});

Deno.test("walkFiles does not follow symlinks whose target is outside the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(outside.root, { "secret.ts": "", "dir/inner.ts": "" });
  await writeTree(workspace.root, { "own.ts": "" });
  await Deno.symlink(outside.root, join(workspace.root, "out-dir"));
  await Deno.symlink(join(outside.root, "secret.ts"), join(workspace.root, "out-file.ts"));
  await Deno.symlink(join(workspace.root, "missing"), join(workspace.root, "dangling.ts"));
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["own.ts"]);
  equal(result.skippedSymlinks, 3);
});

Deno.test("walkFiles follows symlinks to files and directories inside the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "shared/lib.ts": "", "app/main.ts": "" });
  await Deno.symlink(join(workspace.root, "shared"), join(workspace.root, "app/shared"));
  await Deno.symlink("main.ts", join(workspace.root, "app/alias.ts"));
  // From app/, the linked directory lies outside the walk: it is listed through the link.
  deepStrictEqual(await relativePaths(join(workspace.root, "app"), workspace.root), [
    "alias.ts",
    "main.ts",
    "shared/lib.ts",
  ]);
  // From the root, shared/ is walked directly, and not a second time through app/shared.
  deepStrictEqual(await relativePaths(workspace.root, workspace.root), [
    "app/alias.ts",
    "app/main.ts",
    "shared/lib.ts",
  ]);
});

Deno.test("walkFiles keeps only files the filter accepts and counts only those as ignored", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "old.*\n",
    "a.ts": "",
    "b.md": "",
    "old.ts": "",
    "old.md": "",
    "sub/c.ts": "",
  });
  const result = await walkFiles(workspace.root, {
    root: workspace.root,
    filter: (path) => path.endsWith(".ts"),
  });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["a.ts", "sub/c.ts"]);
  equal(result.ignoredFiles, 1);
});

Deno.test("Walker yields files lazily so a caller can stop the walk early", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a/1.ts": "", "b/2.ts": "", "c/3.ts": "", "d/node_modules/x.js": "" });
  const walker = new Walker(workspace.root, { root: workspace.root });
  const seen: string[] = [];
  for (const file of walker.files()) {
    if (file === null) continue;
    seen.push(file.relativePath);
    if (seen.length === 2) break;
  }
  deepStrictEqual(seen, ["a/1.ts", "b/2.ts"]);
  equal(walker.ignoredDirectories, 0); // d/ was never reached
});

Deno.test("walkFiles stops with aborted set when the signal is aborted", async () => {
  await using workspace = await createTempWorkspace();
  const files: Record<string, string> = {};
  for (let index = 0; index < 300; index++) files[`f${index}.ts`] = "";
  await writeTree(workspace.root, files);
  const controller = new AbortController();
  controller.abort();
  const result = await walkFiles(workspace.root, { root: workspace.root, signal: controller.signal });
  equal(result.aborted, true);
  equal(result.files.length < 300, true);
});

Deno.test("skippedNotice describes what a walk skipped, or nothing", () => {
  const none = { ignoredFiles: 0, ignoredDirectories: 0, skippedSymlinks: 0, changedDirectories: 0 };
  equal(skippedNotice({ ...none, ignoreProblems: [], unreadable: [] }), null);
  const notice = skippedNotice({
    ignoredFiles: 2,
    ignoredDirectories: 1,
    skippedSymlinks: 1,
    changedDirectories: 1,
    ignoreProblems: ['".gitignore": 1 rule(s) with too many wildcards were skipped'],
    unreadable: [
      "data (permission denied)",
      "a/b (the path is too long)",
      "c (permission denied)",
      "d/e (x)",
    ],
  })!;
  equal(
    notice.split("\n").at(-1),
    "(Could not read 4 directories, so their files are missing from this result: data (permission denied), " +
      "a/b (the path is too long), c (permission denied), and 1 more.)",
  );
  equal(notice.includes("2 files were ignored by .gitignore"), true);
  equal(notice.includes("1 directory was not entered"), true);
  equal(notice.includes("1 symlink was not followed"), true);
  equal(notice.includes("1 directory changed while being listed"), true);
  equal(notice.includes('(Ignore file ".gitignore": 1 rule(s) with too many wildcards were skipped.)'), true);
});

Deno.test("Walker skips a directory swapped for a symlink between its parent's listing and its own", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(workspace.root, { "a.txt": "", "dir/inside.txt": "" });
  await writeTree(outside.root, { "secret.txt": "" });
  const walker = new Walker(workspace.root, { root: workspace.root });
  const seen: string[] = [];
  for (const file of walker.files()) {
    if (file === null) continue;
    seen.push(file.relativePath);
    if (file.relativePath !== "a.txt") continue;
    // The root is listed; "dir" is entered after "a.txt" is yielded: swap it now.
    await Deno.rename(join(workspace.root, "dir"), join(workspace.root, "dir.real"));
    await Deno.symlink(outside.root, join(workspace.root, "dir"));
  }
  deepStrictEqual(seen, ["a.txt"]);
  equal(walker.changedDirectories, 1);
});

Deno.test("Walker skips a directory whose ancestor was swapped for a symlink to a copy of its tree elsewhere", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  // The same names outside: the path "a/b/y" leads somewhere once "a" is a symlink to the outside.
  await writeTree(workspace.root, { "a/b/x.txt": "", "a/b/y/inside.txt": "" });
  await writeTree(outside.root, { "b/x.txt": "", "b/y/secret.txt": "" });
  const walker = new Walker(workspace.root, { root: workspace.root });
  const seen: string[] = [];
  for (const file of walker.files()) {
    if (file === null) continue;
    seen.push(file.relativePath);
    if (file.relativePath !== "a/b/x.txt") continue;
    // "a/b" is listed; "a/b/y" is entered after "a/b/x.txt" is yielded: swap "a", two levels up, now.
    await Deno.rename(join(workspace.root, "a"), join(workspace.root, "a.real"));
    await Deno.symlink(outside.root, join(workspace.root, "a"));
  }
  deepStrictEqual(seen, ["a/b/x.txt"]);
  equal(walker.changedDirectories, 1);
});

Deno.test("walkFiles treats excludedPaths as outside the workspace, through symlinks too", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { ".state/secret.ts": "", "src/a.ts": "" });
  const state = join(workspace.root, ".state");
  await Deno.symlink(state, join(workspace.root, "src/state"));
  await Deno.symlink(join(state, "secret.ts"), join(workspace.root, "src/secret.ts"));
  const result = await walkFiles(workspace.root, { root: workspace.root, excludedPaths: [state] });
  deepStrictEqual(result.files.map((file) => file.relativePath), ["src/a.ts"]);
  equal(result.skippedSymlinks, 2);
  equal(result.ignoredDirectories, 0, "an excluded folder is outside the workspace, not ignored");
});

Deno.test("Walker yields null pause points when its time slice is used up", async () => {
  await using workspace = await createTempWorkspace();
  const files: Record<string, string> = {};
  for (let index = 0; index < 100; index++) files[`f${index}.ts`] = "";
  await writeTree(workspace.root, files);
  const slicer = new TimeSlicer(undefined);
  const walker = new Walker(workspace.root, { root: workspace.root, slicer });
  await new Promise((resolve) => setTimeout(resolve, 60)); // use up the first slice
  const items = Array.from(walker.files());
  equal(items.filter((item) => item === null).length > 0, true);
  equal(items.filter((item) => item !== null).length, 100);
});

Deno.test("walkFiles stops with aborted set at its deadline", async () => {
  await using workspace = await createTempWorkspace();
  const files: Record<string, string> = {};
  for (let index = 0; index < 300; index++) files[`f${index}.ts`] = "";
  await writeTree(workspace.root, files);
  const result = await walkFiles(workspace.root, { root: workspace.root, deadline: performance.now() - 1 });
  equal(result.aborted, true);
});

Deno.test("walkFiles skips an ignore file that is a named pipe instead of waiting for a writer", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.ts": "", "sub/b.ts": "" });
  await Deno.mkdir(join(workspace.root, ".git/info"), { recursive: true });
  const made = await new Deno.Command("mkfifo", { args: [join(workspace.root, ".git/info/exclude")] })
    .output();
  equal(made.success, true, "mkfifo failed");
  deepStrictEqual(await relativePaths(workspace.root, workspace.root), ["a.ts", "sub/b.ts"]);
  deepStrictEqual(await relativePaths(join(workspace.root, "sub"), workspace.root), ["b.ts"]);
});

Deno.test("walkFiles reports ignore files whose rules were left out", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { ".gitignore": `${"x".repeat(2_000)}\n*.log\n`, "a.log": "", "b.ts": "" });
  const result = await walkFiles(workspace.root, { root: workspace.root });
  deepStrictEqual(result.files.map((file) => file.relativePath), [".gitignore", "b.ts"]);
  deepStrictEqual(result.ignoreProblems, [
    '".gitignore": 1 rule(s) longer than 1000 characters were skipped',
  ]);
});

/** Walks `start` to the end with stamps; returns them (null when the walk cannot be stamped). */
function stampedWalk(start: string, root: string): WalkStamps | null {
  const walker = new Walker(start, { root, stamp: true });
  for (const _ of walker.files()) { /* walk to the end */ }
  return walker.stamps;
}

Deno.test("a stamped walk holds until the tree changes in a way a walk would see", async (t) => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, {
    ".gitignore": "*.log\n",
    "a.txt": "",
    "src/b.ts": "",
    "src/deep/c.ts": "",
    "node_modules/pkg/index.js": "",
  });
  const fresh = async (start = root): Promise<WalkStamps> => {
    await settleTree(root);
    const stamps = stampedWalk(start, root);
    ok(stamps !== null);
    ok(walkIsCurrent(stamps), "a walk is current right after it ran");
    return stamps;
  };
  const changes: [string, () => Promise<void>][] = [
    ["a file added deep down", () => Deno.writeTextFile(join(root, "src/deep/new.ts"), "")],
    ["a file removed", () => Deno.remove(join(root, "src/b.ts"))],
    ["a file renamed", () => Deno.rename(join(root, "a.txt"), join(root, "a2.txt"))],
    ["an ignored file added", () => Deno.writeTextFile(join(root, "src/x.log"), "")],
    ["a .gitignore edited in place", () => Deno.writeTextFile(join(root, ".gitignore"), "*.tmp\n")],
    ["a .gitignore added below", () => Deno.writeTextFile(join(root, "src/.gitignore"), "deep/\n")],
    ["a directory's permissions changed", () => Deno.chmod(join(root, "src"), 0o700)],
  ];
  for (const [name, change] of changes) {
    await t.step(name, async () => {
      const stamps = await fresh();
      await change();
      equal(walkIsCurrent(stamps), false);
    });
  }
  await t.step("nothing a walk would see: a file's contents, and what lies in excluded folders", async () => {
    const stamps = await fresh();
    await Deno.writeTextFile(join(root, "src/deep/c.ts"), "changed contents\n");
    await Deno.writeTextFile(join(root, "node_modules/pkg/other.js"), "");
    equal(walkIsCurrent(stamps), true);
  });
  await t.step("ignore files above a walk's start: one edited, one that appears", async () => {
    let stamps = await fresh(join(root, "src"));
    await Deno.writeTextFile(join(root, ".gitignore"), "*.log\nother\n");
    equal(walkIsCurrent(stamps), false);
    stamps = await fresh(join(root, "src"));
    await Deno.mkdir(join(root, ".git/info"), { recursive: true });
    equal(walkIsCurrent(stamps), true, "the folder above the start is not walked");
    await Deno.writeTextFile(join(root, ".git/info/exclude"), "deep/\n");
    equal(walkIsCurrent(stamps), false);
  });
  await t.step("a walk that met a symlink cannot be stamped", async () => {
    await Deno.symlink(join(root, "src"), join(root, "link"));
    equal(stampedWalk(root, root), null);
  });
});

Deno.test("stamps can show a change only once their times lie a margin before the walk", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeTree(root, { ".gitignore": "*.log\n", "src/b.ts": "" });
  const recent = stampedWalk(root, root);
  ok(recent !== null);
  // Modified just now: a change within the same clock tick would not show.
  equal(stampsUsable(recent, 3_000), false);
  // Modification times an hour old; status-change times (which cannot be set) of a second ago.
  await settleTree(root);
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  const settled = stampedWalk(root, root);
  ok(settled !== null);
  equal(stampsUsable(settled, 1_100), true);
  equal(stampsUsable(settled, 60_000), false);
});
