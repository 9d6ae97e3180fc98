import { deepStrictEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { closeSync, constants, openSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  DEFAULT_HEAD_LIMIT,
  type GrepInput,
  grepTool,
  MAX_GREP_LINE_CHARACTERS,
} from "../../src/tools/grep.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { WARM_UP_FILES, warmUpSearch } from "../../src/tools/_grep_run.ts";
import { runSearchProbe } from "../_fakes/search_probe.ts";
import {
  assertExcludes,
  callContext,
  createTempWorkspace,
  startToolWorker,
  toolContext,
  workerPermissions,
} from "../_fakes/tool_context.ts";

const GREP_MODULE = new URL("../../src/tools/grep.ts", import.meta.url);

async function writeTree(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(join(root, path), content);
    else await Deno.writeFile(join(root, path), content);
  }
}

function grep(root: string, input: GrepInput): Promise<ToolResult> {
  return grepTool.execute(toolContext(root), input);
}

/** The output lines before the first blank line (the notices follow it). */
function lines(result: ToolResult): string[] {
  equal(result.isError, false, result.content);
  const blank = result.content.indexOf("\n\n");
  return (blank === -1 ? result.content : result.content.slice(0, blank)).split("\n");
}

Deno.test("Grep declares itself a read-only, concurrency-safe search tool", () => {
  equal(grepTool.name, "Grep");
  equal(grepTool.category, "search");
  equal(grepTool.isReadOnly(), true);
  equal(grepTool.isDestructive(), false);
  equal(grepTool.isConcurrencySafe({ pattern: "x" }), true);
  deepStrictEqual(grepTool.jsonSchema.required, ["pattern"]);
});

Deno.test("Grep shows matching lines as path:line: text, files in path order, paths relative to the root", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "src/b.ts": "const a = 1;\nfoo(a);\n\nfoo();\n",
    "src/a.ts": "foo\n",
    "README.md": "no match here\n",
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "foo" })), [
    "src/a.ts:1: foo",
    "src/b.ts:2: foo(a);",
    "src/b.ts:4: foo();",
  ]);
  // Relative to the given directory.
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "foo", path: join(workspace.root, "src") })), [
    "a.ts:1: foo",
    "b.ts:2: foo(a);",
    "b.ts:4: foo();",
  ]);
});

Deno.test("Grep shows context lines as path-line- text, merges overlaps and separates groups with --", async () => {
  await using workspace = await createTempWorkspace();
  const text = Array.from({ length: 20 }, (_, index) => `line ${index + 1}`).join("\n") + "\n";
  await writeTree(workspace.root, {
    "a.txt": text.replace("line 3\n", "hit 3\n").replace("line 5\n", "hit 5\n").replace(
      "line 12\n",
      "hit 12\n",
    ),
    "b.txt": "hit 1\nafter\n",
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "^hit", context: 2 })), [
    "a.txt-1- line 1",
    "a.txt-2- line 2",
    "a.txt:3: hit 3",
    "a.txt-4- line 4",
    "a.txt:5: hit 5",
    "a.txt-6- line 6",
    "a.txt-7- line 7",
    "--",
    "a.txt-10- line 10",
    "a.txt-11- line 11",
    "a.txt:12: hit 12",
    "a.txt-13- line 13",
    "a.txt-14- line 14",
    "--",
    "b.txt:1: hit 1",
    "b.txt-2- after",
  ]);
});

Deno.test("Grep context stops at the first and last line of a file", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "hit\nmiddle\nhit" });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "hit", context: 5 })), [
    "a.txt:1: hit",
    "a.txt-2- middle",
    "a.txt:3: hit",
  ]);
});

Deno.test("Grep lists matching files in files_with_matches mode and counts lines in count mode", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "a.ts": "x\nfoo foo\nfoo\n",
    "b/c.ts": "foo\n",
    "d.ts": "bar\n",
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "foo", output_mode: "files_with_matches" })), [
    "a.ts",
    "b/c.ts",
  ]);
  const counted = await grep(workspace.root, { pattern: "foo", output_mode: "count" });
  deepStrictEqual(lines(counted), ["a.ts:2", "b/c.ts:1"]);
  match(counted.content, /3 matching lines in 2 files/);
});

Deno.test("Grep returns at most 100 matching lines by default and head_limit changes the limit", async () => {
  await using workspace = await createTempWorkspace();
  const text = Array.from({ length: 150 }, (_, index) => `match ${index + 1}`).join("\n");
  await writeTree(workspace.root, { "a.txt": text, "b.txt": "match b\n" });
  const all = await grep(workspace.root, { pattern: "match" });
  equal(lines(all).length, DEFAULT_HEAD_LIMIT);
  equal(lines(all)[99], "a.txt:100: match 100");
  match(all.content, /Showing the first 100 matching lines in path order; more matches exist/);
  equal(all.metadata.truncated, true);

  const limited = await grep(workspace.root, { pattern: "match", head_limit: 3 });
  deepStrictEqual(lines(limited), ["a.txt:1: match 1", "a.txt:2: match 2", "a.txt:3: match 3"]);
  match(limited.content, /more matches exist/);

  const exact = await grep(workspace.root, { pattern: "match", head_limit: 151 });
  equal(lines(exact).length, 151);
  equal(exact.content.includes("more matches exist"), false);

  const files = await grep(workspace.root, {
    pattern: "match",
    output_mode: "files_with_matches",
    head_limit: 1,
  });
  deepStrictEqual(lines(files), ["a.txt"]);
  match(files.content, /Showing the first 1 files/);
  const counts = await grep(workspace.root, { pattern: "match", output_mode: "count", head_limit: 1 });
  deepStrictEqual(lines(counts), ["a.txt:150"]);
  match(counts.content, /more matches exist/);
});

Deno.test("Grep shortens lines longer than 500 characters around the match", async () => {
  await using workspace = await createTempWorkspace();
  const long = "a".repeat(1500) + "NEEDLE" + "b".repeat(1500);
  await writeTree(workspace.root, { "long.txt": `${long}\nshort NEEDLE\n` });
  const [first, second] = lines(await grep(workspace.root, { pattern: "NEEDLE" }));
  ok(first!.startsWith("long.txt:1: …a"));
  ok(first!.includes("NEEDLE"));
  ok(first!.includes(`[line of ${long.length} characters shortened]`));
  ok(first!.length < MAX_GREP_LINE_CHARACTERS + 80, `too long: ${first!.length}`);
  equal(second, "long.txt:2: short NEEDLE");
});

Deno.test("Grep shows CRLF lines without \\r and anchors $ at the end of CRLF lines", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "win.txt": "first end\r\nsecond\r\nthird end\r\n" });
  const result = await grep(workspace.root, { pattern: "end$", context: 1 });
  deepStrictEqual(lines(result), ["win.txt:1: first end", "win.txt-2- second", "win.txt:3: third end"]);
  equal(result.content.includes("\r"), false);
  // JavaScript's multiline ^ also matches after a lone \r: "^$" must still find only the empty line.
  await writeTree(workspace.root, { "blank.txt": "a\r\n\r\nb\r\n" });
  const blank = await grep(workspace.root, { pattern: "^$", path: join(workspace.root, "blank.txt") });
  deepStrictEqual(lines(blank), ["blank.txt:2: "]);
});

Deno.test("Grep skips binary files: NUL bytes or a binary extension", async () => {
  await using workspace = await createTempWorkspace();
  const withNul = new TextEncoder().encode("needle\0needle\n");
  await writeTree(workspace.root, {
    "data.bin2": withNul,
    "image.png": "needle in a png name\n",
    "text.txt": "needle\n",
  });
  const result = await grep(workspace.root, { pattern: "needle" });
  deepStrictEqual(lines(result), ["text.txt:1: needle"]);
  equal(result.metadata.skippedBinary, 2);
  const single = await grep(workspace.root, { pattern: "needle", path: join(workspace.root, "data.bin2") });
  equal(single.isError, false);
  match(single.content, /is a binary file/);
});

Deno.test("Grep decodes UTF-16 files with a BOM and drops a UTF-8 BOM", async () => {
  await using workspace = await createTempWorkspace();
  const utf16 = new Uint8Array([
    0xff,
    0xfe,
    ..."hello\nneedle\n".split("").flatMap((c) => [c.charCodeAt(0), 0]),
  ]);
  await writeTree(workspace.root, {
    "wide.txt": utf16,
    "bom.txt": new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("needle first\n")]),
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "^needle" })), [
    "bom.txt:1: needle first",
    "wide.txt:2: needle",
  ]);
});

Deno.test("Grep rejects an invalid regular expression with the parser's message", async () => {
  await using workspace = await createTempWorkspace();
  const problem = grepTool.validateInput({ pattern: "foo(" }, { root: workspace.root });
  notEqual(problem, null);
  match(problem!, /Invalid pattern "foo\(": Invalid regular expression: .*Unterminated group/);
  const result = await grep(workspace.root, { pattern: "[z-a]" });
  equal(result.isError, true);
  match(result.content, /Invalid regular expression/);
});

Deno.test("Grep treats a pattern that starts with - as a pattern", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.sh": "ls -foo\nls -la\n" });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "-foo" })), ["a.sh:1: ls -foo"]);
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "-l[a]" })), ["a.sh:2: ls -la"]);
});

Deno.test("Grep searches a single file given as path and shows its name", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "dir/one.ts": "alpha\nbeta\n", "dir/two.ts": "beta\n" });
  deepStrictEqual(
    lines(await grep(workspace.root, { pattern: "beta", path: join(workspace.root, "dir/one.ts") })),
    [
      "one.ts:2: beta",
    ],
  );
});

Deno.test("Grep rejects paths outside the workspace, through symlinks too, and relative paths", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await writeTree(outside.root, { "secret.txt": "needle\n" });
  await Deno.symlink(join(outside.root, "secret.txt"), join(workspace.root, "link.txt"));
  for (const path of [outside.root, join(outside.root, "secret.txt"), join(workspace.root, "link.txt")]) {
    const result = await grep(workspace.root, { pattern: "needle", path });
    equal(result.isError, true, path);
    match(result.content, /outside the workspace/);
  }
  const missing = await grep(workspace.root, { pattern: "needle", path: join(workspace.root, "missing") });
  equal(missing.isError, true);
  const problem = grepTool.validateInput({ pattern: "x", path: "src" }, { root: workspace.root });
  match(problem!, /path must be absolute/);
});

Deno.test("Grep filters file names with glob, braces included, and paths with a slash", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "a.ts": "hit\n",
    "b.tsx": "hit\n",
    "c.js": "hit\n",
    "src/deep/d.ts": "hit\n",
    "lib/e.ts": "hit\n",
  });
  const files = (glob: string) =>
    grep(workspace.root, { pattern: "hit", glob, output_mode: "files_with_matches" });
  deepStrictEqual(lines(await files("*.ts")), ["a.ts", "lib/e.ts", "src/deep/d.ts"]);
  deepStrictEqual(lines(await files("*.{ts,tsx}")), ["a.ts", "b.tsx", "lib/e.ts", "src/deep/d.ts"]);
  deepStrictEqual(lines(await files("src/**/*.ts")), ["src/deep/d.ts"]);
});

Deno.test("Grep skips excluded directories and .gitignore'd files like Glob", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    ".gitignore": "*.log\nbuild/\n",
    "app.ts": "needle\n",
    "debug.log": "needle\n",
    "build/out.js": "needle\n",
    "node_modules/dep/index.js": "needle\n",
    "vendor/lib.go": "needle\n",
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "needle" })), ["app.ts:1: needle"]);
  const none = await grep(workspace.root, { pattern: "needle", glob: "*.log" });
  match(none.content, /^No matches found/);
  match(none.content, /1 file was ignored by \.gitignore/);
});

Deno.test("Grep ignores case when case_insensitive is set", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "Needle\nneedle\nNEEDLE\nother\n" });
  equal(lines(await grep(workspace.root, { pattern: "needle" })).length, 1);
  equal(lines(await grep(workspace.root, { pattern: "needle", case_insensitive: true })).length, 3);
});

Deno.test("Grep says No matches found when nothing matches", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "alpha\n" });
  const result = await grep(workspace.root, { pattern: "omega" });
  equal(result.isError, false);
  match(result.content, /^No matches found for pattern "omega"/);
});

Deno.test("Grep matches line by line: anchors per line, no match across a line break", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, {
    "a.txt": "foo\nbar\n  baz\nfoo bar\n",
    "b.txt": "x\n\ny\n",
  });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "^bar" })), ["a.txt:2: bar"]);
  // "foo\s+bar" would match "foo\nbar" across lines in a whole-text search; only line 4 matches alone.
  deepStrictEqual(lines(await grep(workspace.root, { pattern: String.raw`foo\s+bar` })), [
    "a.txt:4: foo bar",
  ]);
  deepStrictEqual(lines(await grep(workspace.root, { pattern: String.raw`\s+baz$` })), ["a.txt:3:   baz"]);
  // An empty-line pattern finds the empty line, not a phantom line after the final newline.
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "^$", path: join(workspace.root, "b.txt") })), [
    "b.txt:2: ",
  ]);
});

Deno.test("Grep supports Unicode property escapes and patterns valid only without the u flag", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "plain\ncafé ☕\na-b\n" });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: String.raw`\p{So}` })), ["a.txt:2: café ☕"]);
  deepStrictEqual(lines(await grep(workspace.root, { pattern: String.raw`a\-b` })), ["a.txt:3: a-b"]);
});

Deno.test("Grep numbers lines correctly deep into a file and on a last line without newline", async () => {
  await using workspace = await createTempWorkspace();
  const text = Array.from({ length: 5000 }, (_, index) => (index % 1000 === 999 ? "mark" : "x")).join("\n");
  await writeTree(workspace.root, { "big.txt": text });
  deepStrictEqual(lines(await grep(workspace.root, { pattern: "mark" })), [
    "big.txt:1000: mark",
    "big.txt:2000: mark",
    "big.txt:3000: mark",
    "big.txt:4000: mark",
    "big.txt:5000: mark",
  ]);
});

Deno.test("Grep validates context and head_limit in its schema", () => {
  const parse = (input: Record<string, unknown>) =>
    grepTool.inputSchema.safeParse({ pattern: "x", ...input });
  equal(parse({}).success, true);
  equal(parse({ context: 3, head_limit: 5, output_mode: "count" }).success, true);
  equal(parse({ context: -1 }).success, false);
  equal(parse({ context: 21 }).success, false);
  equal(parse({ head_limit: 0 }).success, false);
  equal(parse({ head_limit: 1.5 }).success, false);
  equal(parse({ output_mode: "lines" }).success, false);
  equal(grepTool.inputSchema.safeParse({ pattern: "" }).success, false);
});

Deno.test("Grep rejects lookarounds and backreferences with a message the model can act on", async () => {
  await using workspace = await createTempWorkspace();
  const problem = grepTool.validateInput({ pattern: "foo(?=bar)" }, { root: workspace.root });
  equal(
    problem,
    'Cannot search with pattern "foo(?=bar)": lookahead "(?=" is not supported, because every search must ' +
      'finish in linear time; rewrite the pattern without it, or use Bash with "grep -P"',
  );
  const result = await grep(workspace.root, { pattern: "(a)\\1" });
  equal(result.isError, true);
  match(result.content, /backreference "\\1" is not supported/);
});

Deno.test("Grep through the real worker returns within its time limit and leaves no core busy", async (t) => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "a".repeat(40) + "!\n" });
  const timeoutMs = 3_000;
  const cases: [string, GrepInput, (result: ToolResult) => void][] = [
    [
      "case-insensitive catastrophic backtracking",
      { pattern: "(a+)+$", case_insensitive: true },
      (result) => {
        equal(result.isError, false, result.content);
        match(result.content, /^No matches found/);
      },
    ],
    ["a lookahead", { pattern: "a+(?=!)" }, (result) => {
      equal(result.isError, true);
      match(result.content, /lookahead "\(\?=" is not supported/);
    }],
  ];
  for (const [name, input, check] of cases) {
    await t.step(name, async () => {
      const report = await runSearchProbe({ tool: "Grep", root: workspace.root, input, timeoutMs });
      ok(report.elapsedMs < timeoutMs + 2_000, `the call took ${Math.round(report.elapsedMs)} ms`);
      ok(report.idleTicks < 20, `a thread kept a core busy after the call: ${report.idleTicks} ticks in 1 s`);
      check(report.result);
    });
  }
});

Deno.test("Grep skips a named pipe swapped in for a file after the listing, and returns promptly", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const files: Record<string, string> = { "zz.txt": "needle\n" };
  for (let index = 0; index < 2_000; index++) files[`f${String(index).padStart(4, "0")}.txt`] = "needle\n";
  await writeTree(workspace.root, files);
  const pipe = join(outside.root, "pipe");
  const target = join(workspace.root, "zz.txt");
  const made = await new Deno.Command("mkfifo", { args: [pipe] }).output();
  ok(made.success, "mkfifo failed");
  using worker = startToolWorker({ grepTool: GREP_MODULE }, workerPermissions(workspace.root, "read"));
  const input = { pattern: "needle", output_mode: "count", head_limit: 10_000 };
  await worker.execute("grepTool", callContext(workspace.root), input); // warm up
  let swapped = false;
  for (let attempt = 0; attempt < 40 && !swapped; attempt++) {
    if ((await Deno.lstat(target)).isFifo) {
      await Deno.rename(target, pipe);
      await Deno.writeTextFile(target, "needle\n");
    }
    const call = worker.execute("grepTool", callContext(workspace.root), input);
    await new Promise((resolve) => setTimeout(resolve, (attempt * 7) % 80));
    await Deno.rename(pipe, target);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 10_000));
    const result = await Promise.race([call, timeout]);
    clearTimeout(timer);
    if (result === null) {
      unblockReader(target);
      await call;
      throw new Error("Grep blocked on the named pipe");
    }
    swapped = result.metadata.skippedNotRegular === 1;
    if (swapped) match(result.content, /1 not regular files/);
  }
  ok(swapped, "the pipe never replaced the file between the listing and the open: raise the attempts");
});

// A reader blocked in open() on a named pipe returns once a writer opens it; O_NONBLOCK fails instead of
// waiting when nobody reads.
function unblockReader(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // Nobody is blocked on it.
  }
}

Deno.test("Grep never returns a line from outside while a directory is swapped for a symlink", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const inside: Record<string, string> = {};
  const secret: Record<string, string> = {};
  for (let index = 0; index < 20; index++) {
    inside[`dir/f${index}.txt`] = "needle inside\n";
    secret[`f${index}.txt`] = "needle OUTSIDE\n";
  }
  // Files searched before "dir" (names sort first) leave time between the listing of the root and of "dir".
  for (let index = 0; index < 300; index++) inside[`a${String(index).padStart(3, "0")}.txt`] = "hay\n";
  await writeTree(workspace.root, inside);
  await writeTree(outside.root, secret);
  const script = `cd "$1" || exit 1
for i in $(seq 1 100000); do mv dir dir.real && ln -s "$2" dir && rm dir && mv dir.real dir; done`;
  const swapper = new Deno.Command("bash", {
    args: ["-c", script, "swapper", workspace.root, outside.root],
    stdout: "null",
    stderr: "null",
    // Its own process group, so that the mv, ln and rm it is running die with it.
    detached: true,
  }).spawn();
  let runs = 0;
  try {
    const until = performance.now() + 10_000;
    for (; runs < 200 && performance.now() < until; runs++) {
      const result = await grep(workspace.root, { pattern: "needle", head_limit: 1_000 });
      assertExcludes(result.content, "OUTSIDE");
    }
  } finally {
    Deno.kill(-swapper.pid, "SIGKILL");
    await swapper.status;
    await restoreDirectory(workspace.root);
  }
  ok(runs > 10, `only ${runs} searches ran`);
});

// Puts "dir" back if the swapper was killed while it was away.
async function restoreDirectory(root: string): Promise<void> {
  const info = await Deno.lstat(join(root, "dir")).catch(() => null);
  if (info?.isSymlink) await Deno.remove(join(root, "dir"));
  if (info === null || info.isSymlink) await Deno.rename(join(root, "dir.real"), join(root, "dir"));
}

Deno.test("Grep skips and counts files with several hard links when strictLinks is on", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { "a.txt": "needle\n", "c.txt": "needle\n" });
  await Deno.link(join(workspace.root, "a.txt"), join(workspace.root, "b.txt"));
  const strict = await grepTool.execute(toolContext(workspace.root, { strictLinks: true }), {
    pattern: "needle",
  });
  deepStrictEqual(lines(strict), ["c.txt:1: needle"]);
  equal(strict.metadata.skippedHardLinked, 2);
  match(strict.content, /Files not searched: 2 with several hard links \(strict link checking is on\)/);
  const relaxed = await grep(workspace.root, { pattern: "needle" });
  deepStrictEqual(lines(relaxed), ["a.txt:1: needle", "b.txt:1: needle", "c.txt:1: needle"]);
});

Deno.test("Grep treats excludedPaths as outside the workspace: not searched, not a search path", async () => {
  await using workspace = await createTempWorkspace();
  await writeTree(workspace.root, { ".state/secret.txt": "needle\n", "src/a.txt": "needle\n" });
  const state = join(workspace.root, ".state");
  await Deno.symlink(join(state, "secret.txt"), join(workspace.root, "src/link.txt"));
  const context = toolContext(workspace.root, { excludedPaths: [state] });
  const result = await grepTool.execute(context, { pattern: "needle" });
  deepStrictEqual(lines(result), ["src/a.txt:1: needle"]);
  const inside = await grepTool.execute(context, { pattern: "needle", path: state });
  equal(inside.isError, true);
  match(inside.content, /outside the workspace/);
  const file = await grepTool.execute(context, { pattern: "needle", path: join(state, "secret.txt") });
  equal(file.isError, true);
});

Deno.test("warmUpSearch searches the first files of a walk and stops as soon as a call has come", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  const files: Record<string, string> = { "bin.dat": "\u0000\u0001" };
  for (let index = 0; index < WARM_UP_FILES + 10; index++) {
    files[`f${String(index).padStart(3, "0")}.ts`] = `function f${index}() {\n  return ${index};\n}\n`;
  }
  await writeTree(root, files);
  const names = Object.keys(files).sort();
  // Listed files that are gone, or binary, are skipped as a call skips them.
  const target = { root, additionalRoots: [], excludedPaths: [], files: ["gone.ts", ...names] };
  const between = () => Promise.resolve();
  equal(await warmUpSearch(target, { busy: () => false, between }), WARM_UP_FILES);
  let searched = 0;
  const counting = () => {
    searched++;
    return Promise.resolve();
  };
  equal(await warmUpSearch(target, { busy: () => searched >= 3, between: counting }), 3);
  equal(await warmUpSearch(target, { busy: () => true, between }), 0);
});
