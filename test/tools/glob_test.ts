import { deepStrictEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { globTool, MAX_GLOB_RESULTS } from "../../src/tools/glob.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { runSearchProbe } from "../_fakes/search_probe.ts";
import { createTempWorkspace, toolContext } from "../_fakes/tool_context.ts";

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), content);
  }
}

/** Gives the files distinct modification times: the first path is the oldest. */
async function ageInOrder(root: string, paths: string[]): Promise<void> {
  const base = Date.UTC(2024, 0, 1) / 1000;
  for (const [index, path] of paths.entries()) await Deno.utime(join(root, path), base + index, base + index);
}

function glob(root: string, input: { pattern: string; path?: string }): Promise<ToolResult> {
  return globTool.execute(toolContext(root), input);
}

/** The listed paths: the lines before the first blank line. */
function listed(result: ToolResult): string[] {
  equal(result.isError, false, result.content);
  const blank = result.content.indexOf("\n\n");
  const list = blank === -1 ? result.content : result.content.slice(0, blank);
  return list.split("\n").filter((line) => line !== "");
}

Deno.test("Glob declares itself a read-only, concurrency-safe search tool", () => {
  equal(globTool.name, "Glob");
  equal(globTool.category, "search");
  equal(globTool.isReadOnly(), true);
  equal(globTool.isDestructive(), false);
  equal(globTool.isConcurrencySafe({ pattern: "*" }), true);
  deepStrictEqual(globTool.jsonSchema.required, ["pattern"]);
});

Deno.test("Glob matches ** at any depth and * within one directory", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.ts": "", "src/b.ts": "", "src/deep/c.ts": "", "src/d.js": "" });
  await ageInOrder(workspace.root, ["a.ts", "src/b.ts", "src/deep/c.ts", "src/d.js"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "**/*.ts" })), [
    "src/deep/c.ts",
    "src/b.ts",
    "a.ts",
  ]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "*.ts" })), ["a.ts"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "src/*" })), ["src/d.js", "src/b.ts"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "src/**/*.ts" })), [
    "src/deep/c.ts",
    "src/b.ts",
  ]);
});

Deno.test("Glob expands braces and matches dotfiles with *", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "x.ts": "",
    "y.tsx": "",
    "z.js": "",
    ".env": "",
    ".github/workflows/ci.yml": "",
  });
  await ageInOrder(workspace.root, ["x.ts", "y.tsx", "z.js", ".env", ".github/workflows/ci.yml"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "*.{ts,tsx}" })), ["y.tsx", "x.ts"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "*" })), [".env", "z.js", "y.tsx", "x.ts"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "**/*.yml" })), [".github/workflows/ci.yml"]);
});

Deno.test("Glob sorts by modification time, newest first, whatever the names", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "", "b.txt": "", "c.txt": "" });
  await ageInOrder(workspace.root, ["b.txt", "c.txt", "a.txt"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "*.txt" })), ["a.txt", "c.txt", "b.txt"]);
  await ageInOrder(workspace.root, ["a.txt", "c.txt", "b.txt"]);
  deepStrictEqual(listed(await glob(workspace.root, { pattern: "*.txt" })), ["b.txt", "c.txt", "a.txt"]);
});

Deno.test("Glob returns at most 200 paths, cut after sorting, with a notice of how many matched", async () => {
  await using workspace = await createTempWorkspace();
  const paths = Array.from(
    { length: MAX_GLOB_RESULTS + 5 },
    (_, index) => `f${String(index).padStart(3, "0")}.txt`,
  );
  await writeTree(workspace.root, Object.fromEntries(paths.map((path) => [path, ""])));
  // The alphabetically first files are the newest: a cut before sorting would drop other ones.
  await ageInOrder(workspace.root, [...paths].reverse());
  const result = await glob(workspace.root, { pattern: "*.txt" });
  const shown = listed(result);
  equal(shown.length, MAX_GLOB_RESULTS);
  deepStrictEqual(shown, paths.slice(0, MAX_GLOB_RESULTS));
  match(result.content, /Showing the 200 most recently modified of 205 matching files/);
  equal(result.metadata.count, 205);
  equal(result.metadata.truncated, true);
});

Deno.test("Glob skips excluded and .gitignore'd paths and says how many it skipped", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "*.gen.ts\nout/\n",
    "src/a.ts": "",
    "src/a.gen.ts": "",
    "src/b.gen.ts": "",
    "out/c.ts": "",
    "node_modules/m/index.ts": "",
    ".git/hooks/x.ts": "",
  });
  const result = await glob(workspace.root, { pattern: "**/*.ts" });
  deepStrictEqual(listed(result), ["src/a.ts"]);
  match(result.content, /2 files were ignored by \.gitignore/);
  match(result.content, /3 directories were not entered/);
  equal(result.metadata.ignoredFiles, 2);
  equal(result.metadata.ignoredDirectories, 3);
});

Deno.test("Glob says when nothing matches, with a hint for a pattern without a directory part", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "src/a.ts": "" });
  const result = await glob(workspace.root, { pattern: "*.ts" });
  equal(result.isError, false);
  match(result.content, /^No files found matching "\*\.ts"/);
  match(result.content, /use "\*\*\/\*\.ts" to search subdirectories/);
  const missing = await glob(workspace.root, { pattern: "nowhere/**/*.ts" });
  match(missing.content, /^No files found matching "nowhere\/\*\*\/\*\.ts"/);
});

Deno.test("Glob searches the given directory and lists paths relative to it", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "pkg/src/a.ts": "", "pkg/b.ts": "", "other/c.ts": "" });
  await ageInOrder(workspace.root, ["pkg/src/a.ts", "pkg/b.ts", "other/c.ts"]);
  const result = await glob(workspace.root, { pattern: "**/*.ts", path: join(workspace.root, "pkg") });
  deepStrictEqual(listed(result), ["b.ts", "src/a.ts"]);
});

Deno.test("Glob accepts an absolute pattern inside the search directory", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "src/a.ts": "" });
  deepStrictEqual(listed(await glob(workspace.root, { pattern: `${workspace.root}/src/*.ts` })), [
    "src/a.ts",
  ]);
  const elsewhere = await glob(workspace.root, { pattern: "/etc/*.conf" });
  equal(elsewhere.isError, true);
  match(elsewhere.content, /absolute pattern must lie inside the search directory/);
});

Deno.test("Glob rejects a path outside the workspace, a file path and a relative path", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(workspace.root, { "a.ts": "" });
  await writeTree(outside.root, { "secret.ts": "" });
  await Deno.symlink(outside.root, join(workspace.root, "escape"));

  const outsideResult = await glob(workspace.root, { pattern: "*", path: outside.root });
  equal(outsideResult.isError, true);
  match(outsideResult.content, /outside the workspace/);
  const throughLink = await glob(workspace.root, { pattern: "*", path: join(workspace.root, "escape") });
  equal(throughLink.isError, true);
  match(throughLink.content, /outside the workspace/);
  const sibling = await glob(workspace.root, { pattern: "*", path: `${workspace.root}-evil` });
  equal(sibling.isError, true);

  const file = await glob(workspace.root, { pattern: "*", path: join(workspace.root, "a.ts") });
  equal(file.isError, true);
  match(file.content, /not a directory/);
  const missing = await glob(workspace.root, { pattern: "*", path: join(workspace.root, "nope") });
  equal(missing.isError, true);

  const problem = globTool.validateInput({ pattern: "*", path: "src" }, { root: workspace.root });
  notEqual(problem, null);
  match(problem!, new RegExp(`did you mean "${workspace.root}/src"`));
  equal(globTool.validateInput({ pattern: "*" }, { root: workspace.root }), null);
});

Deno.test("Glob does not follow symlinks out of the workspace and ends on symlink loops", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(outside.root, { "secret.ts": "" });
  await writeTree(workspace.root, { "src/a.ts": "" });
  await Deno.symlink(outside.root, join(workspace.root, "src/out"));
  await Deno.symlink("..", join(workspace.root, "src/loop"));
  const result = await glob(workspace.root, { pattern: "**/*.ts" });
  deepStrictEqual(listed(result), ["src/a.ts"]);
  match(result.content, /1 symlink was not followed/);
});

Deno.test("Glob rejects an empty pattern in its schema", () => {
  equal(globTool.inputSchema.safeParse({ pattern: "" }).success, false);
  equal(globTool.inputSchema.safeParse({ pattern: "*", extra: 1 }).success, false);
});

Deno.test("Glob through the real worker returns within its time limit and leaves no core busy", async (t) => {
  const timeoutMs = 3_000;
  const hostile = "*a*a*a*a*a*a*a*a*a*a*a*a*b";
  // The `ignore` package tempers "*a" (a star never eats the next literal), but not chains of "**": tested
  // against the directories of a/a/…/a, this rule backtracked for ever there.
  const hostileRules = `${hostile}\n${"a/**/".repeat(12)}b\n`;
  const deep = Array.from({ length: 40 }, () => "a").join("/");
  const cases: [string, Record<string, string>, string, (result: ToolResult) => void][] = [
    ["a pattern with many stars against a long name", { ["a".repeat(200)]: "" }, hostile, (result) => {
      equal(result.isError, false, result.content);
      match(result.content, /^No files found/);
    }],
    [
      "hostile .gitignore rules",
      { ".gitignore": hostileRules, ["a".repeat(200)]: "", [`${deep}/c`]: "" },
      "**/*",
      (
        result,
      ) => {
        deepStrictEqual(listed(result).sort(), [".gitignore", `${deep}/c`, "a".repeat(200)]);
      },
    ],
  ];
  for (const [name, files, pattern, check] of cases) {
    await t.step(name, async () => {
      await using workspace = await createTempWorkspace();
      await writeTree(workspace.root, files);
      const report = await runSearchProbe({
        tool: "Glob",
        root: workspace.root,
        input: { pattern },
        timeoutMs,
      });
      ok(report.elapsedMs < timeoutMs + 2_000, `the call took ${Math.round(report.elapsedMs)} ms`);
      ok(report.idleTicks < 20, `a thread kept a core busy after the call: ${report.idleTicks} ticks in 1 s`);
      check(report.result);
    });
  }
});

Deno.test("Glob treats excludedPaths as outside the workspace: not listed, not a search path", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { ".state/secret.txt": "", "src/a.txt": "" });
  const state = join(workspace.root, ".state");
  await Deno.symlink(state, join(workspace.root, "src/state-link"));
  const context = toolContext(workspace.root, { excludedPaths: [state] });
  const result = await globTool.execute(context, { pattern: "**/*.txt" });
  deepStrictEqual(listed(result), ["src/a.txt"]);
  const direct = await globTool.execute(context, { pattern: ".state/*.txt" });
  deepStrictEqual(direct.metadata.count, 0);
  const inside = await globTool.execute(context, { pattern: "*", path: state });
  equal(inside.isError, true);
  match(inside.content, /outside the workspace/);
});
