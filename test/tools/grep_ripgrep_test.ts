import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { defaultLimits } from "../../src/sandbox/limits.ts";
import { resolveHelpers } from "../../src/sandbox/helpers.ts";
import { runRipgrep } from "../../src/sandbox/ripgrep_command.ts";
import { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { type GrepInput, grepTool } from "../../src/tools/grep.ts";
import {
  type GrepOutcome,
  RIPGREP_LATE_START_BUDGETS,
  RipgrepGrep,
  type RipgrepGrepOptions,
} from "../../src/tools/grep_ripgrep.ts";
import { EXTENDED_BUDGET_FACTOR, GREP_PREPASS } from "../../src/tools/_shared.ts";
import type { GrepPrepass } from "../../src/tools/_grep_prepass.ts";
import { Prewalk, walkedAheadReport } from "../../src/tools/_prewalk.ts";
import { readRipgrepOutput, RipgrepOutputReader } from "../../src/tools/_ripgrep_output.ts";
import { WalkStore } from "../../src/execution/walk_store.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import type { ToolCallContext, ToolResult } from "../../src/tools/tool.ts";
import { callContext, createTempWorkspace, settleTree } from "../_fakes/tool_context.ts";
import { processesWith, SEARCH_SANDBOX_WORD } from "../_fakes/processes.ts";

const helpers = await resolveHelpers({ root: "/nonexistent", path: Deno.env.get("PATH") });
const missing = helpers.rg === null || helpers.bwrap === null;

async function writeTree(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(join(root, path), content);
    else await Deno.writeFile(join(root, path), content);
  }
}

function bytes(...parts: (string | number[])[]): Uint8Array {
  const chunks = parts.map((part) =>
    typeof part === "string" ? new TextEncoder().encode(part) : Uint8Array.from(part)
  );
  const result = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    result.set(chunk, at);
    at += chunk.length;
  }
  return result;
}

/** Runs Grep in this process, as the worker would, and says how it ended. */
async function grepHere(
  input: Record<string, unknown>,
  context: ToolCallContext,
  signal: AbortSignal,
): Promise<GrepOutcome> {
  const result = await grepTool.execute({ ...context, signal }, input as GrepInput);
  return { result, status: result.isError ? "failed" : "completed" };
}

/** Waits until `done` holds, checking every 5 ms, for at most `limitMs`. */
async function waitUntil(done: () => boolean, limitMs = 5_000): Promise<void> {
  for (let waited = 0; !done() && waited < limitMs; waited += 5) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A session's ripgrep path over a real read-only sandbox; the worker's part runs in this process. */
async function openRipgrep(
  root: string,
  options: Partial<RipgrepGrepOptions> & {
    additionalRoots?: string[];
    excluded?: string[];
    /** Told the arguments of each ripgrep search. */
    onSearch?: (search: readonly string[]) => void;
    /** Told when each ripgrep search has ended. */
    onSearchEnd?: () => void;
    /** Awaited before each ripgrep search runs (while it holds its turn). */
    beforeSearch?: () => Promise<void>;
  } = {},
): Promise<{ grep: RipgrepGrep; context: ToolCallContext } & AsyncDisposable> {
  const sandbox = await ShellSandbox.open({
    root,
    additionalRoots: options.additionalRoots ?? [],
    mode: "read-only",
    network: false,
    env: Deno.env.toObject(),
    limits: defaultLimits(),
    excluded: options.excluded ?? [],
    protectedPaths: PROTECTED_PATHS,
  });
  const rg = sandbox.helpers.rg!;
  const grep = new RipgrepGrep({
    // Always leave the contents to ripgrep, even in these small trees.
    prepassBudgetMs: 0,
    runWorker: grepHere,
    runRipgrep: async (search, runOptions) => {
      options.onSearch?.(search.search);
      await options.beforeSearch?.();
      try {
        return await runRipgrep(sandbox, { rg, cat: sandbox.helpers.cat, ...search }, runOptions);
      } finally {
        options.onSearchEnd?.();
      }
    },
    ...options,
  });
  const context = callContext(root, {
    additionalRoots: options.additionalRoots ?? [],
    excludedPaths: options.excluded ?? [],
  });
  return {
    grep,
    context,
    [Symbol.asyncDispose]: async () => {
      await grep.idle();
      await sandbox.close();
    },
  };
}

/**
 * Runs a call through the ripgrep path and checks its result against Grep's own in this process, character
 * for character; says which engine answered and whether a recent walk was used.
 */
async function checkedRun(
  setup: { grep: RipgrepGrep; context: ToolCallContext },
  input: GrepInput,
): Promise<{ engine: unknown; recent: boolean }> {
  const outcome = await setup.grep.run(input, setup.context, new AbortController().signal);
  const expected = await grepTool.execute({ ...setup.context, signal: new AbortController().signal }, input);
  ok(outcome !== null, setup.grep.lastFallback ?? "declined");
  equal(outcome.result.content, expected.content);
  deepStrictEqual(comparable(outcome.result), comparable(expected));
  return { engine: outcome.result.metadata.engine, recent: setup.grep.lastUsedRecentWalk };
}

/** The metadata both paths report: all but the duration and the engine. */
function comparable(result: ToolResult): Record<string, unknown> {
  const { durationMs: _duration, engine: _engine, ...rest } = result.metadata;
  return rest;
}

/** Runs a call both ways and checks they give the same result; returns the engine that answered. */
async function compare(
  setup: { grep: RipgrepGrep; context: ToolCallContext },
  input: GrepInput,
): Promise<{ engine: unknown; fallback: string | null; result: ToolResult }> {
  setup.grep.forget();
  const outcome = await setup.grep.run(input, setup.context, new AbortController().signal);
  const expected = await grepTool.execute({ ...setup.context, signal: new AbortController().signal }, input);
  const label = JSON.stringify(input);
  ok(outcome !== null, `${label}: ripgrep declined before running: ${setup.grep.lastFallback}`);
  equal(outcome.result.content, expected.content, `${label} (fallback: ${setup.grep.lastFallback})`);
  equal(outcome.result.isError, expected.isError, label);
  deepStrictEqual(comparable(outcome.result), comparable(expected), label);
  return {
    engine: outcome.result.metadata.engine,
    fallback: setup.grep.lastFallback,
    result: outcome.result,
  };
}

const context20 = Array.from(
  { length: 20 },
  (_, index) => [3, 5, 12, 19].includes(index + 1) ? `hit match ${index + 1}` : `line ${index + 1}`,
).join("\n") + "\n";

/** The edge cases of the tools' own tests, in one tree: ripgrep must agree with Grep on all of them. */
const EDGE_TREE: Record<string, string | Uint8Array> = {
  ".gitignore": "*.log\n!keep.log\nbuild/\n/only-root.txt\nsub/**/deep.txt\n",
  "keep.log": "match kept by a negation\n",
  "x.log": "match ignored\n",
  "only-root.txt": "match anchored rule\n",
  "sub/only-root.txt": "match not anchored here\n",
  "sub/a/deep.txt": "match deep ignored\n",
  "sub/a/shallow.txt": "match deep kept\n",
  "sub/.gitignore": "*.tmp\n!important.tmp\n",
  "sub/x.tmp": "match nested ignore\n",
  "sub/important.tmp": "match nested negation\n",
  "build/out.txt": "match build\n",
  ".hidden/secret.txt": "match hidden file\n",
  ".env": "MATCH=1\nmatch=2\n",
  "node_modules/m.js": "match node_modules\n",
  "vendor/v.txt": "match vendor\n",
  "src/vendor": "match a file named vendor\n",
  "__pycache__/c.txt": "match pycache\n",
  "bin/nul.dat": bytes("match before\0binary\n"),
  "bin/nul-no-match.dat": bytes("abc\0def\n"),
  "bin/match-then-nul.dat": bytes("match on the first line\n", "x".repeat(5000), [0], "\nmatch after\n"),
  "bin/invalid-then-nul.dat": bytes("ab", [0xff, 0xc3], "match", [0], "\n"),
  "bin/wide-then-nul.dat": bytes("é😀 match", [0], "\n"),
  "late-nul.txt": bytes("x".repeat(9000), "\nmatch before\n", [0], "\nmatch again\n", [0, 0], "match\n"),
  "image.png": "match png by extension\n",
  "IMAGE.PNG": "match PNG by extension\n",
  ".png": "match a dotfile named .png\n",
  "crlf.txt": "match crlf\r\nsecond\r\n\r\nmatch end\r\n",
  "cr-last.txt": "a\r\nmatch last\r",
  "long.txt": `${"x".repeat(600)}match${"y".repeat(600)}\nshort match\n`,
  "very-long.txt": `${"z".repeat(20_000)} match ${"z".repeat(50)}\n`,
  "unicode.txt": "café match\nnaïve ÉCOLE match\n😀 emoji match\nΣίσυφος\n",
  "invalid.txt": bytes("caf", [0xe9], " match\nok ", [0xff, 0xfe], " match\n"),
  "bom8.txt": bytes([0xef, 0xbb, 0xbf], "match after a bom\n"),
  "bom-mid.txt": bytes("first\n", [0xef, 0xbb, 0xbf], "match after U+FEFF within the file\n"),
  "utf16.txt": bytes([0xff, 0xfe], ...[..."match wide\n"].map((c) => [c.charCodeAt(0), 0])),
  "empty.txt": "",
  "no-newline.txt": "first\nmatch without newline",
  "context.txt": context20,
  "many.txt": Array.from({ length: 150 }, (_, index) => `match ${index}`).join("\n") + "\n",
  "lines/empty-lines.txt": "a\n\n\nb\n",
  "lines/lone-cr.txt": "before\rmatch after a lone cr\n",
  "z/last.ts": "export const match = 1;\n",
  "z/last.md": "# match\n",
};

const EDGE_INPUTS: GrepInput[] = [
  { pattern: "match" },
  { pattern: "match", context: 2 },
  { pattern: "match", context: 1, head_limit: 40 },
  { pattern: "match", output_mode: "count" },
  { pattern: "match", output_mode: "files_with_matches" },
  { pattern: "match", output_mode: "files_with_matches", head_limit: 3 },
  { pattern: "match", output_mode: "count", head_limit: 4 },
  { pattern: "MATCH", case_insensitive: true },
  { pattern: "match", head_limit: 7 },
  { pattern: "match", head_limit: 100_000 },
  { pattern: "^match" },
  { pattern: "match$" },
  { pattern: "^$" },
  { pattern: "^\\s*$", output_mode: "count" },
  { pattern: "é" },
  { pattern: "caf." },
  { pattern: "[^\\x00-\\x7F]", output_mode: "count" },
  { pattern: "\\p{L}+ match" },
  { pattern: "😀" },
  { pattern: "\\uD83D\\uDE00" },
  { pattern: ". emoji" },
  { pattern: "\\bmatch\\b", context: 1 },
  { pattern: "ma.ch", glob: "*.txt" },
  { pattern: "match", glob: "*.{ts,md}" },
  { pattern: "match", glob: "**/*.tmp" },
  { pattern: "match", glob: "*.log", output_mode: "count" },
  { pattern: "x{600}", output_mode: "count" },
  { pattern: "z+ match" },
  { pattern: "école", case_insensitive: true },
  { pattern: "σίσυφος", case_insensitive: true },
  { pattern: "after a lone" },
  { pattern: "^match after" },
  { pattern: "zzz-no-match" },
  { pattern: "zzz-no-match", glob: "*.txt" },
  { pattern: "match|second", context: 1 },
  { pattern: "-starts-with-dash" },
];

Deno.test({
  name: "Grep through ripgrep gives Grep's results on the edge cases of the tools' fixtures",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, EDGE_TREE);
    // A symlink out of the workspace: Grep does not follow it, nor does ripgrep.
    await Deno.symlink("/etc", join(workspace.root, "etc-link"));
    await Deno.symlink("/etc/passwd", join(workspace.root, "passwd-link"));
    await using setup = await openRipgrep(workspace.root);
    for (const input of EDGE_INPUTS) {
      await t.step(JSON.stringify(input), async () => {
        const { engine, fallback } = await compare(setup, input);
        // "cr-last.txt" ends with "\r" and no line break: Grep keeps that "\r", which "^$" can match before.
        if (input.pattern.endsWith("$") && input.pattern.startsWith("^")) {
          match(fallback ?? "", /ending in \\r/);
          return;
        }
        equal(engine, "ripgrep", `fell back: ${fallback}`);
      });
    }
    await t.step("a search of a subdirectory, with the root's ignore files above it", async () => {
      await Deno.mkdir(join(workspace.root, ".git"));
      const { engine } = await compare(setup, { pattern: "match", path: join(workspace.root, "sub") });
      equal(engine, "ripgrep");
    });
  },
});

Deno.test({
  name: "Grep through ripgrep matches Grep on the benchmark's generated tree",
  ignore: missing,
  async fn(t) {
    const { ensureSearchTree } = await import("../../scripts/bench/_search_tree.ts");
    const { BENCH_LITERAL, BENCH_REGEX } = await import("../../scripts/bench/_search_session.ts");
    await using work = await createTempWorkspace("mewcode-bench-tree-");
    const root = await Deno.realPath((await ensureSearchTree(work.root, true)).directory);
    await using setup = await openRipgrep(root);
    const inputs: GrepInput[] = [
      { pattern: BENCH_LITERAL, head_limit: 100_000 },
      { pattern: BENCH_REGEX, head_limit: 100_000 },
      { pattern: BENCH_REGEX, output_mode: "files_with_matches", head_limit: 100_000 },
      { pattern: BENCH_LITERAL, output_mode: "count", head_limit: 100_000 },
      { pattern: BENCH_REGEX },
      { pattern: "import .* from", context: 2, head_limit: 500 },
      { pattern: "^\\s+// ", case_insensitive: true, glob: "*.{ts,tsx}", output_mode: "count" },
      { pattern: "no such text anywhere" },
    ];
    for (const input of inputs) {
      await t.step(JSON.stringify(input), async () => {
        const { engine, fallback } = await compare(setup, input);
        equal(engine, "ripgrep", `fell back: ${fallback}`);
      });
    }
    await t.step("parallel calls, which share one walk of the tree", async () => {
      setup.grep.forget();
      const outcomes = await Promise.all(
        inputs.slice(0, 4).map((input) => setup.grep.run(input, setup.context, new AbortController().signal)),
      );
      for (const [index, outcome] of outcomes.entries()) {
        const input = inputs[index]!;
        const expected = await grepTool.execute(
          { ...setup.context, signal: new AbortController().signal },
          input,
        );
        ok(outcome !== null, JSON.stringify(input));
        equal(outcome.result.content, expected.content, JSON.stringify(input));
        equal(outcome.result.metadata.engine, "ripgrep", JSON.stringify(input));
      }
    });
  },
});

/** A script's output as the reader sees it: the header, then ripgrep's lines. */
function scriptOutput(...lines: (string | number[])[]): Uint8Array {
  return bytes("mewcode-rg\0/ws\0\n", ...lines);
}

Deno.test("ripgrep's output reads the same in pieces split at any byte as whole", () => {
  const output = scriptOutput(
    "./a.txt\x00003:12:caf",
    [0xc3, 0xa9],
    " match\n",
    "./a.txt\x00004-20-context\n",
    "--\n",
    "./b b.txt\x00001:0:",
    [0xef, 0xbb, 0xbf],
    "match after U+FEFF\n",
    "./bin.dat\x00001:0:ab",
    [0xff, 0xc3],
    "x",
    [0],
    "tail\n",
    "./bin.dat\x00002:9:match in a binary file\n",
    "./late.txt\x00002:9000:match",
    [0],
    "\n",
    "\n2 matches\n3 files searched\n250 bytes searched\n0.01 seconds",
  );
  const whole = readRipgrepOutput(output, "");
  equal(whole.malformed, false);
  equal(whole.start, "/ws");
  equal(whole.searched, 3);
  equal(whole.bytesSearched, 250);
  deepStrictEqual(whole.files.get("a.txt"), {
    numbers: [3, 4],
    texts: ["café match", "context"],
    matches: [0],
    sureMatches: 0,
    nul: null,
  });
  // A line may begin with U+FEFF: it is kept, as Grep keeps it.
  deepStrictEqual(whole.files.get("b b.txt")!.texts, ["\uFEFFmatch after U+FEFF"]);
  // Exact in bytes, past an invalid sequence; the reader without `binaryBelow` keeps every line.
  equal(whole.files.get("bin.dat")!.nul, 5);
  equal(whole.files.get("bin.dat")!.texts.length, 2);
  equal(whole.files.get("late.txt")!.nul, 9005);
  for (let split = 1; split < output.length; split++) {
    const reader = new RipgrepOutputReader();
    reader.push(output.subarray(0, split));
    deepStrictEqual(reader.finish(output.subarray(split), ""), whole, `split at byte ${split}`);
  }
  // Through one reused buffer, as the sandboxed command hands output over: what the reader keeps is its own.
  for (const size of [1, 7, 64]) {
    const reader = new RipgrepOutputReader();
    const buffer = new Uint8Array(size);
    for (let at = 0; at < output.length; at += size) {
      const piece = output.subarray(at, at + size);
      buffer.set(piece);
      reader.push(buffer.subarray(0, piece.length));
      buffer.fill(0x58);
    }
    deepStrictEqual(reader.finish(new Uint8Array(), ""), whole, `pieces of ${size} bytes`);
  }
});

Deno.test("ripgrep's output drops what the caller does not need, reads no more than its limit, refuses odd shapes", () => {
  const output = scriptOutput(
    "./bin.dat\x00001:0:match\n",
    "./bin.dat\x00002:6:ab",
    [0],
    "\n",
    "./bin.dat\x00003:10:match again\n",
    "./late.txt\x00002:9000:match",
    [0],
    "\n",
  );
  const report = new RipgrepOutputReader({ binaryBelow: 8189 }).finish(output, "rg: an error\n");
  deepStrictEqual(report.files.get("bin.dat"), {
    numbers: [],
    texts: [],
    matches: [],
    sureMatches: 0,
    nul: 8,
  });
  deepStrictEqual(report.files.get("late.txt"), {
    numbers: [2],
    texts: ["match\0"],
    matches: [0],
    sureMatches: 0,
    nul: 9005,
  });
  deepStrictEqual(report.errors, ["rg: an error"]);

  const limited = new RipgrepOutputReader({ limit: output.length - 1 });
  limited.push(output);
  equal(limited.overflowed, true);
  equal(limited.finish(new Uint8Array(), "").files.size, 0);
  const exact = new RipgrepOutputReader({ limit: output.length });
  exact.push(output);
  equal(exact.overflowed, false);

  // Where the caller needs only their length, short matching lines without a NUL byte are only counted, in
  // any file; context lines, longer ones and those with a NUL byte are kept.
  const short = new RipgrepOutputReader({ binaryBelow: 8189, textsAbove: 6 }).finish(
    scriptOutput(
      "./a.txt\x00001:0:match\n",
      "./a.txt\x00002:6:a longer match\n",
      "./a.txt\x00003-21-ctx\n",
      "./late.txt\x00001:0:match\n",
      "./late.txt\x00002:9000:match",
      [0],
      "\n",
      "./c.txt\x00004:30:short\n",
    ),
    "",
  );
  deepStrictEqual(short.files.get("a.txt"), {
    numbers: [2, 3],
    texts: ["a longer match", "ctx"],
    matches: [0],
    sureMatches: 1,
    nul: null,
  });
  deepStrictEqual(short.files.get("late.txt"), {
    numbers: [2],
    texts: ["match\0"],
    matches: [0],
    sureMatches: 1,
    nul: 9005,
  });
  deepStrictEqual(short.files.get("c.txt"), {
    numbers: [],
    texts: [],
    matches: [],
    sureMatches: 1,
    nul: null,
  });
  // ripgrep prints a file's lines together; lines of a file already read make the report unusable.
  const split = readRipgrepOutput(
    scriptOutput("./a.txt\x00001:0:match\n", "./b.txt\x00001:0:match\n", "./a.txt\x00002:6:match\n"),
    "",
  );
  equal(split.malformed, true);
  equal(
    readRipgrepOutput(scriptOutput("./a.txt\x00001:0:match\n--\n./a.txt\x00009:60:match\n"), "").malformed,
    false,
  );

  const bad = readRipgrepOutput(bytes("something else\n./a.txt\x00001:0:match\n"), "");
  equal(bad.malformed, true);
  equal(bad.files.size, 0);
  equal(readRipgrepOutput(bytes("mewcode-rg\0/ws\0"), "").malformed, true, "a header without its line break");
  equal(readRipgrepOutput(scriptOutput("./a.txt\x00001;0;match\n"), "").malformed, true, "another separator");
});

Deno.test({
  name: "Grep through ripgrep falls back to the worker where ripgrep would see other files or bytes",
  ignore: missing,
  async fn(t) {
    const cases: {
      name: string;
      tree: Record<string, string | Uint8Array>;
      prepare?: (root: string) => Promise<void>;
      reason: RegExp;
      /** A cause found in one file's bytes, not the tree's shape: not remembered as the tree's. */
      once?: boolean;
    }[] = [
      {
        name: "a symlink to a file inside the workspace, which Grep follows",
        tree: { "a.txt": "match\n" },
        prepare: (root) => Deno.symlink(join(root, "a.txt"), join(root, "b.txt")),
        reason: /searched 1 files where Grep searches 2/,
      },
      {
        name: "a symlink to an ignored directory inside the workspace, which Grep follows",
        tree: { ".gitignore": "real/\n", "real/a.txt": "match\n" },
        prepare: (root) => Deno.symlink(join(root, "real"), join(root, "alias")),
        reason: /searched 1 files where Grep searches 2/,
      },
      {
        name: "a nested repository, where ripgrep stops applying the parent's .gitignore",
        tree: { ".gitignore": "*.log\n", "nested/a.log": "match\n", "nested/b.txt": "match\n" },
        prepare: (root) => Deno.mkdir(join(root, "nested/.git")),
        reason: /searched "nested\/a\.log", which Grep does not/,
      },
      {
        name: "a .rgignore, which ripgrep would obey",
        tree: { ".rgignore": "a.txt\n", "a.txt": "match\n" },
        reason: /\.rgignore/,
      },
      {
        name: "a first NUL byte so close to 8 KiB that a UTF-8 BOM would decide",
        tree: { "edge.txt": bytes("x".repeat(8190), [0], "\nmatch\n") },
        reason: /NUL byte too close to 8 KiB/,
        once: true,
      },
      {
        name: "rules in .git/info/exclude",
        tree: { ".git/info/exclude": "a.txt\n", "a.txt": "match\n", "b.txt": "match\n" },
        reason: /exclude/,
      },
      {
        name: "a .gitignore with more rules than Grep applies",
        tree: { ".gitignore": `${"x".repeat(1_200)}\na.txt\n`, "a.txt": "match\n", "b.txt": "match\n" },
        reason: /rules Grep leaves out/,
      },
    ];
    for (const testCase of cases) {
      await t.step(testCase.name, async () => {
        await using workspace = await createTempWorkspace();
        await writeTree(workspace.root, testCase.tree);
        await testCase.prepare?.(workspace.root);
        await using setup = await openRipgrep(workspace.root);
        const { engine, fallback } = await compare(setup, { pattern: "match" });
        equal(engine, "typescript");
        match(fallback ?? "", testCase.reason);
        // The next call on the same path does not ask ripgrep again: the tree is small (as any tree here),
        // and a cause in the tree is remembered as such.
        const again = await setup.grep.run({ pattern: "match" }, setup.context, new AbortController().signal);
        equal(again, null);
        match(
          setup.grep.lastFallback ?? "",
          testCase.once === true ? /tree is small/ : /recent call fell back/,
        );
      });
    }
  },
});

Deno.test({
  name: "Grep through ripgrep answers where a symlinked directory is one Grep walks anyway",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "real/a.txt": "match\n" });
    await Deno.symlink(join(workspace.root, "real"), join(workspace.root, "alias"));
    await using setup = await openRipgrep(workspace.root);
    const { engine, result } = await compare(setup, { pattern: "match" });
    equal(engine, "ripgrep");
    equal(result.content, "real/a.txt:1: match");
  },
});

Deno.test({
  name: "ripgrep searches a literal from a rarer character, and Grep's answer is the literal's alone",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      "a.ts": "parseConfigOverride(x)\nConfigOverride alone\n",
      "b.ts": "const ConfigOverride = 1;\n",
      "c.ts": "nothing here\n",
      "d.ts": "x; parseConfigOverride; parseConfigOverride\nnot parseConfig Override\n",
      "late.dat": bytes("x".repeat(9000), "\nConfigOverride ", [0], "\n"),
    });
    const searches: string[][] = [];
    await using setup = await openRipgrep(workspace.root, {
      onSearch: (search) => searches.push([...search]),
    });
    const inputs: GrepInput[] = [
      { pattern: "parseConfigOverride" },
      { pattern: "parseConfigOverride", output_mode: "count" },
      { pattern: "parseConfigOverride", output_mode: "files_with_matches" },
      { pattern: "parseConfigOverride", context: 1 },
    ];
    for (const input of inputs) equal((await compare(setup, input)).engine, "ripgrep");
    // ripgrep was asked for the tail (its first byte rarer in code than "p"), Grep's matcher kept the rest.
    for (const search of searches) ok(search.includes("ConfigOverride"), JSON.stringify(search));
    equal(
      (await compare(setup, { pattern: "parseConfigOverride", output_mode: "count" })).result.content,
      "a.ts:1\nd.ts:1\n\n(2 matching lines in 2 files.)",
    );
    // A short literal is searched whole.
    await compare(setup, { pattern: "useState" });
    ok(searches.at(-1)!.includes("useState"), JSON.stringify(searches.at(-1)));
  },
});

Deno.test({
  name: "A ripgrep report longer than the session reads ends ripgrep, and Grep answers as usual",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      "many.txt": "a matching line\n".repeat(2_000),
      "one.txt": "matching\n",
    });
    await using setup = await openRipgrep(workspace.root, { maxOutputChars: 4_000 });
    const { engine, fallback } = await compare(setup, { pattern: "matching", head_limit: 10_000 });
    equal(engine, "typescript");
    // Not "exited with 153": ripgrep was stopped at the cap of its report's file, which is what was wrong.
    equal(fallback, "ripgrep printed more than can be read");
    // Within the limit, ripgrep answers.
    equal((await compare(setup, { pattern: "matching", glob: "one.txt" })).engine, "ripgrep");
  },
});

Deno.test({
  name:
    "Parallel Grep calls run no more ripgrep searches at once than the session allows, and answer the same",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      "a.txt": "alpha\nbeta\n",
      "b/c.txt": "beta\ngamma\n",
      "d.txt": "gamma alpha\n",
    });
    let running = 0;
    let most = 0;
    let searches = 0;
    await using setup = await openRipgrep(workspace.root, {
      searchesAtOnce: 1,
      onSearch: () => {
        searches++;
        most = Math.max(most, ++running);
      },
      onSearchEnd: () => running--,
    });
    const inputs: GrepInput[] = [{ pattern: "alpha" }, { pattern: "beta" }, { pattern: "gam+a" }];
    const [outcomes, expected] = await Promise.all([
      Promise.all(inputs.map((input) => setup.grep.run(input, setup.context, new AbortController().signal))),
      Promise.all(
        inputs.map((input) =>
          grepTool.execute({ ...setup.context, signal: new AbortController().signal }, input)
        ),
      ),
    ]);
    deepStrictEqual(
      outcomes.map((outcome) => outcome?.result.content),
      expected.map((result) => result.content),
    );
    equal(most, 1);
    ok(searches >= 2, `only ${searches} ripgrep searches ran`);
  },
});

Deno.test({
  name:
    "A Grep call that ends while its search waits for its turn returns, and the next call still gets ripgrep",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "alpha\n" });
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let searches = 0;
    await using setup = await openRipgrep(workspace.root, {
      searchesAtOnce: 1,
      onSearch: () => void searches++,
      // The first search holds the only turn until released.
      beforeSearch: () => searches === 1 ? held : Promise.resolve(),
    });
    const first = setup.grep.run({ pattern: "alpha" }, setup.context, new AbortController().signal);
    await waitUntil(() => searches === 1);
    const controller = new AbortController();
    const second = setup.grep.run({ pattern: "alpha" }, setup.context, controller.signal);
    // The second call's search waits for the turn the first holds; then the call ends.
    await new Promise((resolve) => setTimeout(resolve, 300));
    equal(searches, 1);
    controller.abort(new DOMException("the call was cancelled", "AbortError"));
    await second;
    release();
    ok((await first) !== null);
    // ripgrep still answers the next call: the cancelled wait did not make it look unavailable.
    const { engine, fallback } = await compare(setup, { pattern: "alpha" });
    equal(engine, "ripgrep", String(fallback));
  },
});

Deno.test({
  name: "Grep through ripgrep keeps a small search in the worker, which answers within its budget",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match\n" });
    await using setup = await openRipgrep(workspace.root, { prepassBudgetMs: 10_000 });
    const { engine } = await compare(setup, { pattern: "match" });
    equal(engine, "typescript");
  },
});

Deno.test({
  name: "Grep through ripgrep answers a path that is a file, or outside the workspace, as the worker does",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match\n" });
    await Deno.symlink("/etc", join(workspace.root, "etc-link"));
    await using setup = await openRipgrep(workspace.root);
    const file = await compare(setup, { pattern: "match", path: join(workspace.root, "a.txt") });
    equal(file.engine, "typescript");
    const outside = await compare(setup, { pattern: "root", path: join(workspace.root, "etc-link") });
    equal(outside.result.isError, true);
    match(outside.result.content, /outside/);
  },
});

Deno.test({
  name:
    "Grep as deployed uses ripgrep when installed, the worker when it is missing, and never a prepass from input",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match one\n", "b/c.txt": "match two\n" });
    const { createToolRuntime } = await import("../../src/execution/runtime.ts");
    const open = (rg: string | null) =>
      createToolRuntime({
        root: workspace.root,
        readOnly: true,
        sandbox: "read-only",
        sandboxNetwork: false,
        strictLinks: false,
        policy: { decide: () => Promise.resolve({ behavior: "allow" }) },
        env: Deno.env.toObject(),
        helpers: { ...helpers, rg },
        ripgrep: { prepassBudgetMs: 0 },
      });
    const call = (input: Record<string, unknown>) => ({ id: "call", name: "Grep", input });
    const signal = new AbortController().signal;
    {
      await using runtime = await open(helpers.rg);
      const result = await runtime.pipeline.run(call({ pattern: "match" }), { signal });
      equal(result.result.content, "a.txt:1: match one\nb/c.txt:1: match two");
      equal(result.result.metadata.engine, "ripgrep");
      ok(
        await processesWith([workspace.root, SEARCH_SANDBOX_WORD]) > 0,
        "the search sandbox stays for the next",
      );
      const forged = await runtime.pipeline.run(
        call({ pattern: "match", mewcodePrepass: { budgetMs: 0, prefilter: null } }),
        { signal },
      );
      equal(forged.result.isError, true);
      match(forged.result.content, /mewcodePrepass/);
      await runtime.close();
      equal(await processesWith([workspace.root, SEARCH_SANDBOX_WORD]), 0, "it ends with the runtime");
    }
    {
      await using runtime = await open(null);
      const result = await runtime.pipeline.run(call({ pattern: "match" }), { signal });
      equal(result.result.content, "a.txt:1: match one\nb/c.txt:1: match two");
      equal(result.result.metadata.engine, "typescript");
    }
  },
});

Deno.test({
  name: "Grep through ripgrep reuses a recent walk, and gives Grep's results when the tree changed since",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      ".gitignore": "*.log\n",
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
      "b/d.txt": "nothing\n",
    });
    await using setup = await openRipgrep(workspace.root, { smallTreeFiles: 0 });
    const run = (input: GrepInput) => checkedRun(setup, input);
    await t.step("the first call walks, the next one reuses that walk", async () => {
      deepStrictEqual(await run({ pattern: "match" }), { engine: "ripgrep", recent: false });
      deepStrictEqual(await run({ pattern: "match c" }), { engine: "ripgrep", recent: true });
    });
    await t.step("a new file with a match, made outside the session's tools", async () => {
      await Deno.writeTextFile(join(workspace.root, "b/new.txt"), "match new\n");
      deepStrictEqual(await run({ pattern: "match" }), { engine: "ripgrep", recent: false });
    });
    await t.step("a removed file and a new one without a match", async () => {
      await Deno.remove(join(workspace.root, "b/d.txt"));
      await Deno.writeTextFile(join(workspace.root, "e.txt"), "nothing either\n");
      deepStrictEqual(await run({ pattern: "match" }), { engine: "ripgrep", recent: true });
    });
    await t.step("no match: the notice counts what is ignored now", async () => {
      await Deno.writeTextFile(join(workspace.root, "b/x.log"), "ignored\n");
      deepStrictEqual(await run({ pattern: "no such text" }), { engine: "ripgrep", recent: false });
    });
    await t.step("the session's own writes drop the walks", async () => {
      setup.grep.forget();
      deepStrictEqual(await run({ pattern: "match" }), { engine: "ripgrep", recent: false });
    });
  },
});

Deno.test({
  name: "Grep through ripgrep answers under deny and ask rules, and never shows what they leave out",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    await writeTree(root, {
      ".env": "match hunter1\n",
      "sub/.env": "match hunter2\n",
      "keys/id.pem": "match hunter3\n",
      // Left out by its rule, and skipped by ripgrep's binary type as well: not in ripgrep's count.
      "keys/photo.png": "match hunter4\n",
      "src/app.ts": "match app\n",
      "src/lib/util.ts": "match util\nno\nmatch again\n",
      "README.md": "match readme\n",
    });
    // Left out too, but never searched by ripgrep, which follows no symlink.
    await Deno.symlink(".env", join(root, "notenv"));
    await using setup = await openRipgrep(root, { smallTreeFiles: 0 });
    setup.context = {
      ...setup.context,
      deniedReads: {
        home: root,
        rules: [
          { rule: "ReadFile(.env)", origin: "the test", specifier: ".env" },
          { rule: "ReadFile(keys/**)", origin: "the test", specifier: "keys/**", asks: true },
        ],
      },
    };
    for (
      const input of [
        { pattern: "match" },
        { pattern: "match", output_mode: "files_with_matches" },
        { pattern: "match", output_mode: "count" },
        { pattern: "hunter" },
        { pattern: "match", path: join(root, "sub") },
        { pattern: "again", context: 1 },
      ] as GrepInput[]
    ) {
      await t.step(JSON.stringify(input).replaceAll(root, "ROOT"), async () => {
        const { engine, fallback, result } = await compare(setup, input);
        // A search of `sub`, where every file is left out, has nothing to search: no ripgrep.
        if (input.path === undefined) equal(engine, "ripgrep", `fell back: ${fallback}`);
        ok(!/hunter\d/.test(result.content), result.content);
        ok(!/\.env|id\.pem|photo|notenv/.test(result.content.split("\n(")[0]!), result.content);
        match(result.content, /left out/);
      });
    }
  },
});

Deno.test({
  name: "Grep through ripgrep runs ripgrep again with a size limit where the files searched add up to it",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match one\n", "b/c.txt": "match two\n" });
    const limited: boolean[] = [];
    await using setup = await openRipgrep(workspace.root, {
      largeTreeBytes: 10,
      onSearch: (search) => limited.push(search.includes("--max-filesize")),
    });
    const { engine, fallback } = await compare(setup, { pattern: "match" });
    equal(engine, "ripgrep", `fell back: ${fallback}`);
    deepStrictEqual(limited, [false, true]);
    // The next call asks for the limit at once, and agrees too.
    const again = await compare(setup, { pattern: "two", output_mode: "count" });
    equal(again.engine, "ripgrep", `fell back: ${again.fallback}`);
    deepStrictEqual(limited, [false, true, true]);
  },
});

Deno.test({
  name: "Grep through ripgrep ends a ripgrep it started when the worker answers within its budget",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match\n" });
    // ripgrep starts at once, and the worker still answers first: the sandbox must end with the call.
    let searches = 0;
    await using setup = await openRipgrep(workspace.root, {
      prepassBudgetMs: 10_000,
      lateStartMs: 0,
      onSearch: () => searches++,
      // The worker answers only after ripgrep has started.
      runWorker: async (input, context, signal) => {
        await waitUntil(() => searches > 0);
        return await grepHere(input, context, signal);
      },
    });
    const { engine } = await compare(setup, { pattern: "match" });
    equal(engine, "typescript");
    equal(searches, 1);
  },
});

Deno.test({
  name: "Grep through ripgrep starts ripgrep the moment the worker says its budget is spent",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match\n" });
    let searches = 0;
    await using setup = await openRipgrep(workspace.root, {
      // A budget this long starts ripgrep late only after minutes: the news alone can start it.
      prepassBudgetMs: 60_000,
      onSearch: () => searches++,
      runWorker: async (input, context, signal, progress) => {
        progress?.("budget-spent");
        await waitUntil(() => searches > 0);
        return await grepHere(input, context, signal);
      },
    });
    await compare(setup, { pattern: "match" });
    equal(searches, 1);
  },
});

Deno.test({
  name: "Grep through ripgrep never starts ripgrep while the worker searches on past its budget",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match\n" });
    // A dense search may go on up to EXTENDED_BUDGET_FACTOR budgets without saying its budget is spent
    // (`overBudget`): this worker answers at the last of them, silent, and ripgrep must not have started.
    const budgetMs = 100;
    ok(RIPGREP_LATE_START_BUDGETS > EXTENDED_BUDGET_FACTOR);
    let searches = 0;
    await using setup = await openRipgrep(workspace.root, {
      prepassBudgetMs: budgetMs,
      onSearch: () => searches++,
      runWorker: async (input, context, signal) => {
        const answerAt = performance.now() + budgetMs * EXTENDED_BUDGET_FACTOR;
        const outcome = await grepHere(input, context, signal);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, answerAt - performance.now())));
        return outcome;
      },
    });
    const { engine } = await compare(setup, { pattern: "match" });
    equal(engine, "typescript");
    equal(searches, 0);
  },
});

Deno.test({
  name: "Grep through ripgrep walks alongside ripgrep when the worker saw no match within its budget",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      ".gitignore": "*.log\n",
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
    });
    // A budget spent before the first file: the worker never answers, and never sees a match.
    await using setup = await openRipgrep(workspace.root, { prepassBudgetMs: 1e-9, smallTreeFiles: 0 });
    const run = (input: GrepInput) => checkedRun(setup, input);
    await t.step("the first call searches and walks in one worker call", async () => {
      deepStrictEqual(await run({ pattern: "match" }), { engine: "ripgrep", recent: false });
    });
    await t.step("a later call without a match shows the counts of now", async () => {
      await Deno.writeTextFile(join(workspace.root, "b/x.log"), "ignored\n");
      deepStrictEqual(await run({ pattern: "no such text" }), { engine: "ripgrep", recent: false });
    });
  },
});

Deno.test({
  name: "Grep through ripgrep tells the worker's budgeted search how many files a recent walk found",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      ".gitignore": "*.log\n",
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
      "b/d.log": "match d\n",
    });
    // What each budgeted search was told to expect (`WalkRecorder.overBudget` judges its pace by it).
    const expected: (number | undefined)[] = [];
    await using setup = await openRipgrep(workspace.root, {
      prepassBudgetMs: 1e-9,
      smallTreeFiles: 0,
      runWorker: (input, context, signal) => {
        const prepass = input[GREP_PREPASS] as GrepPrepass | undefined;
        if (prepass !== undefined && prepass.budgetMs > 0) expected.push(prepass.expectedFiles);
        return grepHere(input, context, signal);
      },
    });
    await checkedRun(setup, { pattern: "match" });
    await checkedRun(setup, { pattern: "match", output_mode: "count" });
    // The first call has no walk to go by; the second has the first's: .gitignore, a.txt and b/c.txt (the
    // .log is ignored).
    deepStrictEqual(expected, [undefined, 3]);
  },
});

Deno.test({
  name: "Grep through ripgrep shows a recent walk's counts without walking again while its stamps hold",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    await writeTree(workspace.root, {
      ".gitignore": "*.log\n",
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
      "b/old.log": "ignored\n",
    });
    // Both ways a call can reach a result without matches: with a budgeted search in the worker (which
    // checks the stamps when its budget is spent), and without one (checked after ripgrep's search).
    for (const budget of [1e-9, 0]) {
      await t.step(`worker budget ${budget}`, async () => {
        // A tree not touched for an hour; the stamps' margin is lowered from 3 s, and waited out.
        await settleTree(workspace.root);
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        await using setup = await openRipgrep(workspace.root, {
          prepassBudgetMs: budget,
          smallTreeFiles: 0,
          stampMarginMs: 1_100,
        });
        const run = (input: GrepInput) => checkedRun(setup, input);
        deepStrictEqual(await run({ pattern: "no such text" }), { engine: "ripgrep", recent: false });
        deepStrictEqual(await run({ pattern: "nor this" }), { engine: "ripgrep", recent: true });
        // An ignored file appears: the counts shown must be those of now.
        await Deno.writeTextFile(join(workspace.root, "b/new.log"), "ignored too\n");
        deepStrictEqual(await run({ pattern: "nothing here" }), { engine: "ripgrep", recent: false });
        await Deno.remove(join(workspace.root, "b/new.log"));
      });
    }
  },
});

Deno.test({
  name: "Grep through ripgrep uses a walk kept by an earlier process once its stamps are found current",
  ignore: missing,
  async fn(t) {
    await using workspace = await createTempWorkspace();
    await using state = await createTempWorkspace();
    await writeTree(workspace.root, {
      ".gitignore": "*.log\n",
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
      "b/old.log": "ignored\n",
    });
    const store = new WalkStore(join(state.root, "walks"));
    const keptFiles = () => [...Deno.readDirSync(join(state.root, "walks"))].map((entry) => entry.name);
    // Each process of a session (here, each RipgrepGrep) starts without walks of its own.
    const process = async (input: GrepInput, budget: number) => {
      await using setup = await openRipgrep(workspace.root, {
        prepassBudgetMs: budget,
        smallTreeFiles: 0,
        stampMarginMs: 1_100,
        keeper: store,
      });
      const { engine, recent } = await checkedRun(setup, input);
      return { engine, kept: recent };
    };
    for (const budget of [1e-9, 0]) {
      await t.step(`worker budget ${budget}`, async () => {
        await settleTree(workspace.root);
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        deepStrictEqual(await process({ pattern: "no such text" }, budget), {
          engine: "ripgrep",
          kept: false,
        });
        equal(keptFiles().length, 1);
        const file = Deno.statSync(join(state.root, "walks", keptFiles()[0]!));
        // With and without matches: the kept walk is used, and not written again.
        deepStrictEqual(await process({ pattern: "nor this" }, budget), { engine: "ripgrep", kept: true });
        deepStrictEqual(await process({ pattern: "match" }, budget), { engine: "ripgrep", kept: true });
        equal(Deno.statSync(join(state.root, "walks", keptFiles()[0]!)).ino, file.ino);
        // The tree changes: the next process walks again, with the counts of now.
        await Deno.writeTextFile(join(workspace.root, "b/new.log"), "ignored too\n");
        deepStrictEqual(await process({ pattern: "nothing here" }, budget), {
          engine: "ripgrep",
          kept: false,
        });
        await Deno.remove(join(workspace.root, "b/new.log"));
      });
    }
  },
});

Deno.test({
  name: "Grep through ripgrep keeps walks made under deny rules for processes with the same rules only",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await using state = await createTempWorkspace();
    const root = workspace.root;
    await writeTree(root, { ".env": "match hunter1\n", "a.txt": "match a\n", "b/c.txt": "match c\n" });
    const store = new WalkStore(join(state.root, "walks"));
    const rule = (specifier: string) => ({ rule: `ReadFile(${specifier})`, origin: "the test", specifier });
    const process = async (input: GrepInput, rules: ReturnType<typeof rule>[]) => {
      await using setup = await openRipgrep(root, {
        prepassBudgetMs: 0,
        smallTreeFiles: 0,
        stampMarginMs: 1_100,
        keeper: store,
      });
      setup.context = { ...setup.context, deniedReads: { home: root, rules } };
      const { engine, recent } = await checkedRun(setup, input);
      return { engine, kept: recent };
    };
    await settleTree(root);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const denyEnv = [rule(".env")];
    deepStrictEqual(await process({ pattern: "no such text" }, denyEnv), { engine: "ripgrep", kept: false });
    // The next process under the same rule: the kept walk, which leaves `.env` out and counts it.
    deepStrictEqual(await process({ pattern: "match" }, denyEnv), { engine: "ripgrep", kept: true });
    deepStrictEqual(await process({ pattern: "hunter" }, denyEnv), { engine: "ripgrep", kept: true });
    // Other rules: a walk of its own.
    deepStrictEqual(await process({ pattern: "match" }, [rule("b/**")]), { engine: "ripgrep", kept: false });
  },
});

Deno.test({
  name:
    "Grep through ripgrep takes the walk ahead as a recent walk, and keeps it for later processes once current",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await using state = await createTempWorkspace();
    const root = workspace.root;
    await writeTree(root, {
      "a.txt": "match a\n",
      "b/c.txt": "match c\n",
      "d.bin": bytes("x", [0], "match\n"),
    });
    await settleTree(root);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // The walk a read-only worker makes ahead of the calls, and sends once it has ended.
    const ahead = new Prewalk();
    ahead.start({ root, additionalRoots: [], excludedPaths: [] }, () => false);
    await ahead.whenEnded();
    const report = walkedAheadReport();
    ok(report !== null);
    const store = new WalkStore(join(state.root, "walks"));
    const open = () =>
      openRipgrep(root, { prepassBudgetMs: 0, smallTreeFiles: 0, stampMarginMs: 1_100, keeper: store });
    {
      await using setup = await open();
      setup.grep.walkedAhead(report, root);
      // Results identical to Grep's own, from the walk ahead: no walk in the call.
      deepStrictEqual(await checkedRun(setup, { pattern: "no such text" }), {
        engine: "ripgrep",
        recent: true,
      });
      deepStrictEqual(await checkedRun(setup, { pattern: "match" }), { engine: "ripgrep", recent: true });
      // A glob is another walk.
      deepStrictEqual(await checkedRun(setup, { pattern: "match", glob: "*.txt" }), {
        engine: "ripgrep",
        recent: false,
      });
    }
    {
      // The first call found it current, so the next process finds it kept.
      await using setup = await open();
      deepStrictEqual(await checkedRun(setup, { pattern: "no such text" }), {
        engine: "ripgrep",
        recent: true,
      });
    }
    {
      // With a search budget: the worker searches first, told the number of files; the walk's stamps go to it
      // only once its search found no match.
      const sent: string[] = [];
      const runWorker: RipgrepGrepOptions["runWorker"] = (input, context, signal) => {
        const prepass = input[GREP_PREPASS] as GrepPrepass | undefined;
        sent.push(
          prepass === undefined ? "usual" : `budget ${prepass.budgetMs > 0} check ${"check" in prepass}`,
        );
        return grepHere(input, context, signal);
      };
      await using setup = await openRipgrep(root, {
        prepassBudgetMs: 1e-9,
        smallTreeFiles: 0,
        stampMarginMs: 1_100,
        runWorker,
      });
      setup.grep.walkedAhead(report, root);
      deepStrictEqual(await checkedRun(setup, { pattern: "no such text" }), {
        engine: "ripgrep",
        recent: true,
      });
      deepStrictEqual(sent, ["budget true check false", "budget false check true"]);
    }
    // A tree that changed since the walk ahead: a result without matches comes from a walk of now.
    await Deno.writeTextFile(join(root, "b/e.txt"), "other\n");
    {
      await using setup = await openRipgrep(root, {
        prepassBudgetMs: 1e-9,
        smallTreeFiles: 0,
        stampMarginMs: 1_100,
      });
      setup.grep.walkedAhead(report, root);
      deepStrictEqual(await checkedRun(setup, { pattern: "no such text" }), {
        engine: "ripgrep",
        recent: false,
      });
    }
    {
      await using setup = await open();
      setup.grep.walkedAhead(report, root);
      deepStrictEqual(await checkedRun(setup, { pattern: "no such text" }), {
        engine: "ripgrep",
        recent: false,
      });
    }
  },
});

Deno.test({
  name: "Grep through ripgrep gives one turn's parallel calls one worker call at a time, walks included",
  ignore: missing,
  async fn() {
    await using workspace = await createTempWorkspace();
    await using state = await createTempWorkspace();
    await writeTree(workspace.root, { "a.txt": "match a\n", "b/c.txt": "match c\n", "b/d.txt": "other\n" });
    // Worker calls in flight at once: each would hold a worker of its own (measured: a second read-only worker
    // took a turn of four parallel Greps over 200 MB from ~123 to ~145 MB).
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    await using setup = await openRipgrep(workspace.root, {
      prepassBudgetMs: 1e-9,
      smallTreeFiles: 0,
      // A walk kept by an earlier process is looked for first (none is): the call without a budget waits for
      // that while the other's budgeted search runs.
      keeper: new WalkStore(join(state.root, "walks")),
      runWorker: async (input, context, signal) => {
        const prepass = input[GREP_PREPASS] as GrepPrepass | undefined;
        sent.push(prepass === undefined ? "usual" : `budget ${prepass.budgetMs > 0} walk ${prepass.walk}`);
        most = Math.max(most, ++inFlight);
        try {
          // A search that takes its whole budget, as on a large tree.
          if (prepass !== undefined && prepass.budgetMs > 0) {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          return await grepHere(input, context, signal);
        } finally {
          inFlight--;
        }
      },
    });
    const results = await Promise.all([
      // More lines than a budgeted search may look for: ripgrep at once, and a walk in the worker.
      checkedRun(setup, { pattern: "match", head_limit: 100_000 }),
      checkedRun(setup, { pattern: "no such text" }),
    ]);
    deepStrictEqual(results.map((result) => result.engine), ["ripgrep", "ripgrep"]);
    equal(most, 1, sent.join(", "));
    // The budgeted search first (the other call looked for a kept walk meanwhile), then the one walk, which
    // the call whose search found no match joins.
    deepStrictEqual(sent, ["budget true walk false", "budget false walk true"]);
  },
});
