import { equal, match, ok } from "node:assert/strict";
import { parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function tool(root: string, name: string, input: unknown, flags: string[] = []) {
  const run = await runMewcode([...flags, "tool", name, JSON.stringify(input)], { cwd: root });
  return { code: run.code, stderr: run.stderr, ...parseToolOutput(run) };
}

Deno.test("mewcode tool exercises all six tools from the command line", async (t) => {
  await using workspace = await createTempWorkspace("mewcode-tools-cli-");
  const root = workspace.root;
  const file = `${root}/src/greet.ts`;

  await t.step("WriteFile creates a file and its parent directories", async () => {
    const result = await tool(root, "WriteFile", {
      path: file,
      content: "export const greeting = 'hello';\n",
    });
    equal(result.code, 0, result.content + result.stderr);
    match(result.content, /^Created /);
    equal(await Deno.readTextFile(file), "export const greeting = 'hello';\n");
  });

  await t.step("ReadFile prints numbered lines", async () => {
    const result = await tool(root, "ReadFile", { path: file });
    equal(result.code, 0, result.content);
    equal(result.content.split("\n")[0], "1\texport const greeting = 'hello';");
  });

  await t.step("EditFile edits a file the user names directly", async () => {
    const result = await tool(root, "EditFile", {
      path: file,
      old_string: "'hello'",
      new_string: "'$& world'",
    });
    equal(result.code, 0, result.content);
    equal(await Deno.readTextFile(file), "export const greeting = '$& world';\n");
  });

  await t.step("Glob finds the file relative to the workspace", async () => {
    const result = await tool(root, "Glob", { pattern: "**/*.ts" });
    equal(result.code, 0, result.content);
    ok(result.content.split("\n").includes("src/greet.ts"), result.content);
  });

  await t.step("Grep finds the edited line", async () => {
    const result = await tool(root, "Grep", { pattern: "greeting = '\\$&" });
    equal(result.code, 0, result.content);
    match(result.content, /src\/greet\.ts:1: export const greeting/);
  });

  await t.step("Bash runs in the workspace and a failing command is not a tool error", async () => {
    const result = await tool(root, "Bash", { command: "cat src/greet.ts; pwd; exit 3" });
    equal(result.code, 0, result.content + result.stderr);
    equal(result.is_error, false);
    ok(result.content.includes(`\n${root}`), result.content);
    match(result.content, /<exit_code>3<\/exit_code>/);
  });

  await t.step("Bash under --sandbox read-only cannot write the workspace", async () => {
    const result = await tool(root, "Bash", { command: "touch ok-file" }, ["--sandbox", "read-only"]);
    match(result.content, /Read-only file system/);
    match(result.content, /<exit_code>1<\/exit_code>/);
    await Deno.stat(`${root}/ok-file`).then(() => ok(false, "the file must not exist"), () => undefined);
  });
});

Deno.test("mewcode tool Grep survives a catastrophically backtracking pattern", async () => {
  await using workspace = await createTempWorkspace("mewcode-redos-");
  await Deno.writeTextFile(`${workspace.root}/input.txt`, `${"a".repeat(48)}!\n`);
  // Without V8's linear-time fallback this never finishes: the process is killed after 30 s and fails.
  const run = await runMewcode(["tool", "Grep", JSON.stringify({ pattern: "(a+)+$" })], {
    cwd: workspace.root,
    signal: AbortSignal.timeout(30_000),
  });
  equal(run.code, 0, run.stderr);
  match(parseToolOutput(run).content, /^No matches found/);
});

Deno.test("mewcode tool Glob and Grep say which directories they could not read or enter", async () => {
  await using workspace = await createTempWorkspace("mewcode-tools-cli-");
  const root = workspace.root;
  await Deno.mkdir(`${root}/src`);
  await Deno.writeTextFile(`${root}/src/found.ts`, "needle\n");
  // Folders nested past the longest path the system opens (4,096 bytes): no program can list the deepest
  // by its path, root included, as a folder without read permission is for its user. bash changes into a
  // relative folder past that length (dash does not).
  const long = "l".repeat(60);
  const made = await new Deno.Command("bash", {
    args: [
      "-c",
      `cd "$1" && for i in $(seq 75); do mkdir ${long} && cd ${long} || exit 1; done && echo needle > lost.ts`,
      "sh",
      root,
    ],
  }).output();
  ok(made.success, new TextDecoder().decode(made.stderr));
  // And a hostile repository's folder 2,000 levels deep: each walk took a minute of system time (a real
  // path of every folder listed costs time quadratic in its depth).
  await Deno.mkdir(`${root}/deep/${Array(2_000).fill("d").join("/")}`, { recursive: true });
  await Deno.writeTextFile(`${root}/deep/${Array(2_000).fill("d").join("/")}/deep.ts`, "needle\n");
  const tooLong = new RegExp(`${long}/${long}/.*${long} \\(the path is too long\\)`);
  const tooDeep = /deep\/d\/d\/.*\/d \(more than 128 levels deep\)/;
  const glob = await tool(root, "Glob", { pattern: "**/*.ts" });
  equal(glob.code, 0, glob.content);
  equal(glob.content.split("\n")[0], "src/found.ts");
  match(glob.content, /Could not read 2 directories, so their files are missing from this result: /);
  match(glob.content, tooLong);
  match(glob.content, tooDeep);
  const grep = await tool(root, "Grep", { pattern: "needle", output_mode: "files_with_matches" });
  equal(grep.content.split("\n")[0], "src/found.ts");
  match(grep.content, tooLong);
  match(grep.content, tooDeep);
  const none = await tool(root, "Grep", { pattern: "absent" });
  match(none.content, /^No matches found/);
  match(none.content, tooDeep);
  await new Deno.Command("rm", { args: ["-rf", `${root}/deep`, `${root}/${long}`] }).output();
});

Deno.test("mewcode tool Glob and Grep show a hostile file name as one quoted path, which ReadFile takes back", async () => {
  await using workspace = await createTempWorkspace("mewcode-tools-cli-");
  const root = workspace.root;
  // A folder whose name holds a line break: its file's path reads as two paths, "notes.ts" and
  // "src/admin/bypass.ts", when shown as it is.
  const forged = "notes.ts\nsrc/admin/bypass.ts";
  const escape = "red\x1b[31m.ts";
  await Deno.mkdir(`${root}/notes.ts\nsrc/admin`, { recursive: true });
  await Deno.writeTextFile(`${root}/${forged}`, "needle\n");
  await Deno.writeTextFile(`${root}/${escape}`, "needle\n");
  await Deno.writeTextFile(`${root}/plain.ts`, "needle\n");
  const glob = await tool(root, "Glob", { pattern: "**/*.ts" });
  const lines = glob.content.split("\n").sort();
  equal(lines.length, 3, glob.content);
  equal(
    lines.join("|"),
    ['"notes.ts\\nsrc/admin/bypass.ts"', '"red\\u001b[31m.ts"', "plain.ts"].sort().join("|"),
  );
  ok(!glob.content.includes("\x1b"), "no escape character reaches the model raw");
  const files = await tool(root, "Grep", { pattern: "needle", output_mode: "files_with_matches" });
  equal(files.content.split("\n").length, 3, files.content);
  const content = await tool(root, "Grep", { pattern: "needle" });
  match(content.content, /^"notes\.ts\\nsrc\/admin\/bypass\.ts":1: needle$/m);
  const count = await tool(root, "Grep", { pattern: "needle", output_mode: "count" });
  match(count.content, /^"red\\u001b\[31m\.ts":1$/m);
  // The model decodes the quoted path, as it does any JSON string, and reads the file.
  const read = await tool(root, "ReadFile", {
    path: `${root}/${JSON.parse('"notes.ts\\nsrc/admin/bypass.ts"')}`,
  });
  equal(read.code, 0, read.content);
  equal(read.content, "1\tneedle");
});

Deno.test("mewcode tool Glob says which names are not UTF-8, which it can only show approximately", async () => {
  await using workspace = await createTempWorkspace("mewcode-tools-cli-");
  const root = workspace.root;
  const made = await new Deno.Command("bash", {
    args: ["-c", `touch "$1"/$'bad\\xff.ts' "$1"/good.ts`, "sh", root],
  })
    .output();
  ok(made.success, new TextDecoder().decode(made.stderr));
  const glob = await tool(root, "Glob", { pattern: "*.ts" });
  const [first, second, , notice] = glob.content.split("\n");
  equal(first, "good.ts");
  equal(second, "bad\uFFFD.ts");
  equal(
    notice,
    "(1 path is not valid UTF-8 and shown with U+FFFD (\uFFFD) in place of the bytes that are not: no tool can " +
      "open such a path as shown; use Bash (for example `ls -b`) to reach it.)",
  );
});
