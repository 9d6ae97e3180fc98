/**
 * `--add-dir` end to end, through the shipped launcher: `mewcode tool` reads and writes an added folder with
 * the file tools and the sandboxed shell, a third folder stays out of reach, and `mewcode doctor` lists the
 * added folder.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { type CliRun, parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("mewcode tool --add-dir reaches the added folder and nothing else", async (t) => {
  await using workspace = await createTempWorkspace("mewcode-e2e-ws-");
  await using added = await createTempWorkspace("mewcode-e2e-added-");
  await using third = await createTempWorkspace("mewcode-e2e-third-");
  await using home = await createTempWorkspace("mewcode-e2e-home-");
  await Deno.writeTextFile(join(added.root, "x.txt"), "in the added folder\n");
  await Deno.writeTextFile(join(third.root, "secret.txt"), "top secret\n");
  const env = { MEWCODE_HOME: home.root };
  const tool = async (name: string, input: unknown, flags: string[] = []) => {
    const run = await runMewcode(["tool", name, JSON.stringify(input), ...flags], {
      cwd: workspace.root,
      env,
    });
    return { code: run.code, stderr: run.stderr, ...parseToolOutput(run) };
  };
  const addDir = ["--add-dir", added.root];

  await t.step("without --add-dir, ReadFile in the folder is refused", async () => {
    const result = await tool("ReadFile", { path: join(added.root, "x.txt") });
    equal(result.is_error, true, result.content);
    match(result.content, /outside the workspace/);
  });
  await t.step("with --add-dir, ReadFile reads it", async () => {
    const result = await tool("ReadFile", { path: join(added.root, "x.txt") }, addDir);
    equal(result.code, 0, result.content + result.stderr);
    equal(result.content, "1\tin the added folder");
  });
  await t.step("a relative --add-dir is taken from the current directory", async () => {
    const relative = join("..", added.root.split("/").pop()!);
    const result = await tool("ReadFile", { path: join(added.root, "x.txt") }, ["--add-dir", relative]);
    equal(result.code, 0, result.content + result.stderr);
  });
  await t.step("WriteFile writes in it", async () => {
    const path = join(added.root, "new", "made.txt");
    const result = await tool("WriteFile", { path, content: "made\n" }, addDir);
    equal(result.code, 0, result.content + result.stderr);
    equal(await Deno.readTextFile(path), "made\n");
  });
  await t.step("ReadFile in a third folder is still refused", async () => {
    const result = await tool("ReadFile", { path: join(third.root, "secret.txt") }, addDir);
    equal(result.is_error, true, result.content);
    equal(result.content.includes("top secret"), false);
  });
  await t.step("Bash reads and writes the added folder, and cannot see the third one", async () => {
    const command =
      `cat ${added.root}/x.txt && echo y > ${added.root}/from-bash.txt; cat ${third.root}/secret.txt`;
    const result = await tool("Bash", { command }, addDir);
    equal(result.code, 0, result.content + result.stderr);
    ok(result.content.includes("in the added folder"), result.content);
    equal(result.content.includes("top secret"), false);
    equal(await Deno.readTextFile(join(added.root, "from-bash.txt")), "y\n");
  });
  await t.step("in the read-only sandbox, Bash cannot write the added folder", async () => {
    const command = `echo z > ${added.root}/read-only.txt`;
    const result = await tool("Bash", { command }, [...addDir, "--sandbox", "read-only"]);
    match(result.content, /Read-only file system/);
    equal(await Deno.lstat(join(added.root, "read-only.txt")).then(() => true, () => false), false);
  });
});

Deno.test("mewcode doctor lists the added folders and checks that the workers may read them", async () => {
  await using workspace = await createTempWorkspace("mewcode-e2e-ws-");
  await using added = await createTempWorkspace("mewcode-e2e-added-");
  await using home = await createTempWorkspace("mewcode-e2e-home-");
  const run: CliRun = await runMewcode(["doctor", "--add-dir", added.root], {
    cwd: workspace.root,
    env: { MEWCODE_HOME: home.root },
  });
  ok(
    run.stdout.includes(`added folders (the tools and the shell use them like the workspace): ${added.root}`),
    run.stdout + run.stderr,
  );
  ok(run.stdout.includes(`read-only: ok: reading the added folder "${added.root}" is allowed`), run.stdout);
});
