/**
 * A ReadFile deny rule covers the searches too: with `ReadFile(.env)` denied, Grep of the workspace (every
 * output mode) and Glob neither show `.env`'s contents nor list it, nor a `.env` deeper down, nor a symlink
 * that leads to it, through the pipeline and the real workers, with ripgrep searching the contents and
 * without; and they say how many files the rule left out. An ask rule leaves its files out the same way: a
 * search must not show what a direct read would show only once the user said yes.
 */
import { equal, match, ok } from "node:assert/strict";
import { createPolicy } from "../../src/permissions/policy.ts";
import { parseRule, type Rule } from "../../src/permissions/rules.ts";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function call(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({ id: `deny_${crypto.randomUUID()}`, name, input }, {
    signal: new AbortController().signal,
  });
  return result;
}

/** The result's lines without its notices (which name the rule, ".env" included). */
function listed(result: ToolResult): string {
  return result.content.split("\n").filter((line) => !line.startsWith("(")).join("\n");
}

function denyRule(text: string, action: "deny" | "ask" = "deny"): Rule {
  const parsed = parseRule(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return { ...parsed.value, action, source: { layer: "cli" } };
}

/** The tester's layout, and a file the searches may show. */
async function createLayout(root: string): Promise<void> {
  await Deno.writeTextFile(`${root}/.env`, "SECRET=hunter2\n");
  await Deno.symlink(".env", `${root}/notenv`);
  await Deno.mkdir(`${root}/src`);
  await Deno.symlink("../.env", `${root}/src/envlink`);
  await Deno.writeTextFile(`${root}/src/app.ts`, 'const name = "SECRET"; // read from the environment\n');
  await Deno.mkdir(`${root}/sub`);
  await Deno.writeTextFile(`${root}/sub/.env`, "SECRET=hunter3\n");
}

const ENGINES = [
  { engine: "the worker", ripgrep: false },
  { engine: "ripgrep", ripgrep: { prepassBudgetMs: 0 } },
] as const;

for (const { engine, ripgrep } of ENGINES) {
  Deno.test(`a ReadFile deny rule keeps the files it covers out of Grep and Glob (${engine})`, async () => {
    await using workspace = await createTempWorkspace("mewcode-read-deny-");
    const root = workspace.root;
    await createLayout(root);
    const policy = createPolicy({
      mode: "default",
      rules: [denyRule("ReadFile(.env)")],
      root,
      home: root,
      protectedPaths: PROTECTED_PATHS,
    });
    await using runtime = await testRuntime(root, { policy, ripgrep });

    for (const path of [".env", "notenv", "src/envlink", "sub/.env"]) {
      const read = await call(runtime, "ReadFile", { path: `${root}/${path}` });
      equal(read.isError, true, `ReadFile ${path}: ${read.content}`);
    }
    for (const output_mode of ["content", "files_with_matches", "count"] as const) {
      // Twice: the second call may use the first one's walk.
      for (const round of [1, 2]) {
        const grep = await call(runtime, "Grep", { pattern: "SECRET", output_mode });
        const what = `Grep ${output_mode} (${round}): ${grep.content}`;
        equal(grep.isError, false, what);
        ok(!grep.content.includes("hunter"), what);
        for (const path of [".env", "notenv", "envlink"]) ok(!listed(grep).includes(path), what);
        match(grep.content, /src\/app\.ts/, what);
        // ripgrep answers though it searched the left-out files: it follows no symlink, and its report of
        // `.env` and `sub/.env` is set aside unread (later calls leave a tree this small to the worker).
        if (output_mode === "content" && round === 1) {
          equal(grep.metadata.engine, ripgrep === false ? "typescript" : "ripgrep", what);
        }
        match(
          grep.content,
          /4 files were left out: the deny rule ReadFile\(\.env\) from --disallowedTools/,
          what,
        );
      }
    }
    const inSub = await call(runtime, "Grep", { pattern: "SECRET", path: `${root}/sub` });
    ok(!inSub.content.includes("hunter"), inSub.content);
    match(inSub.content, /No matches found/, inSub.content);
    match(inSub.content, /1 file was left out/, inSub.content);

    const glob = await call(runtime, "Glob", { pattern: "**/*env*" });
    equal(glob.isError, false, glob.content);
    for (const path of [".env", "notenv", "envlink"]) ok(!listed(glob).includes(path), glob.content);
    match(glob.content, /4 files were left out: the deny rule ReadFile\(\.env\)/, glob.content);
    const all = await call(runtime, "Glob", { pattern: "**/*" });
    match(all.content, /src\/app\.ts/, all.content);
    ok(!listed(all).includes("env"), all.content);
  });
}

Deno.test("Grep and Glob still show .env without a deny rule (the layout's control)", async () => {
  await using workspace = await createTempWorkspace("mewcode-read-deny-");
  await createLayout(workspace.root);
  await using runtime = await testRuntime(workspace.root, { ripgrep: false });
  const grep = await call(runtime, "Grep", { pattern: "SECRET" });
  match(grep.content, /\.env:1: SECRET=hunter2/, grep.content);
  match(grep.content, /notenv:1:/, grep.content);
  const glob = await call(runtime, "Glob", { pattern: "**/*env*" });
  match(glob.content, /src\/envlink/, glob.content);
});

Deno.test("a deny rule for a folder keeps its files out of a search of the workspace", async () => {
  await using workspace = await createTempWorkspace("mewcode-read-deny-");
  const root = workspace.root;
  await Deno.mkdir(`${root}/secrets/deep`, { recursive: true });
  await Deno.writeTextFile(`${root}/secrets/deep/key.txt`, "TOKEN=abc\n");
  await Deno.writeTextFile(`${root}/notes.txt`, "TOKEN is documented\n");
  await Deno.symlink("secrets", `${root}/linked`);
  const policy = createPolicy({
    mode: "default",
    rules: [denyRule("ReadFile(secrets/**)")],
    root,
    home: root,
    protectedPaths: PROTECTED_PATHS,
  });
  await using runtime = await testRuntime(root, { policy, ripgrep: false });
  const grep = await call(runtime, "Grep", { pattern: "TOKEN" });
  ok(!grep.content.includes("abc"), grep.content);
  match(grep.content, /notes\.txt/, grep.content);
  const glob = await call(runtime, "Glob", { pattern: "**/*.txt" });
  ok(!glob.content.includes("key.txt"), glob.content);
});

for (const { engine, ripgrep } of ENGINES) {
  Deno.test(`a ReadFile ask rule keeps the files it covers out of Grep and Glob, beside a deny rule (${engine})`, async () => {
    await using workspace = await createTempWorkspace("mewcode-read-ask-");
    const root = workspace.root;
    await createLayout(root);
    const policy = createPolicy({
      mode: "bypassPermissions",
      rules: [denyRule("ReadFile(.env)", "ask"), denyRule("ReadFile(sub/**)")],
      root,
      home: root,
      protectedPaths: PROTECTED_PATHS,
    });
    await using runtime = await testRuntime(root, { policy, ripgrep });
    const grep = await call(runtime, "Grep", { pattern: "SECRET" });
    equal(grep.isError, false, grep.content);
    ok(!grep.content.includes("hunter"), grep.content);
    for (const path of [".env", "notenv", "envlink"]) ok(!listed(grep).includes(path), grep.content);
    match(grep.content, /src\/app\.ts/, grep.content);
    match(
      grep.content,
      new RegExp(
        "4 files were left out: the deny rule ReadFile\\(sub/\\*\\*\\) from --disallowedTools denies " +
          "reading some of them; the ask rule ReadFile\\(\\.env\\) from the command line asks the user " +
          "before others are read",
      ),
      grep.content,
    );
    const glob = await call(runtime, "Glob", { pattern: "*env*" });
    equal(glob.isError, false, glob.content);
    match(glob.content, /^No files found/, glob.content);
    match(
      glob.content,
      /2 files were left out: the ask rule ReadFile\(\.env\) .* asks the user before they are read/,
    );
  });
}
