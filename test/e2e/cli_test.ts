import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import { parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";

const elsewhere = await Deno.makeTempDir({ prefix: "mewcode-cli-" });
const workspace = await Deno.realPath(elsewhere);
// Shared by this file's tests, removed when the test process ends.
globalThis.addEventListener("unload", () => Deno.removeSync(elsewhere, { recursive: true }));

Deno.test("mewcode --version works from another directory", async () => {
  const run = await runMewcode(["--version"], { cwd: workspace });
  equal(run.code, 0, run.stderr);
  match(run.stdout, new RegExp(`^mewcode ${denoConfig.version.replaceAll(".", "\\.")} \\(deno 2\\.9\\.6\\)`));
});

Deno.test("mewcode --help documents the commands and exit statuses", async () => {
  const run = await runMewcode(["--help"], { cwd: workspace });
  equal(run.code, 0);
  for (const text of ["mewcode tools", "mewcode tool NAME", "--sandbox MODE", "Exit status"]) {
    ok(run.stdout.includes(text), `help mentions ${text}`);
  }
});

Deno.test("mewcode tools --json prints the API tools array with complete input schemas", async () => {
  const run = await runMewcode(["tools", "--json"], { cwd: workspace });
  equal(run.code, 0, run.stderr);
  const tools = JSON.parse(run.stdout) as Record<string, unknown>[];
  ok(Array.isArray(tools));
  deepStrictEqual(tools.map((tool) => tool.name).sort(), [
    "Bash",
    "EditFile",
    "Glob",
    "Grep",
    "ReadFile",
    "WriteFile",
  ]);
  for (const tool of tools) {
    equal(typeof tool.description, "string");
    ok((tool.description as string).length > 200, `${tool.name} has a real description`);
    const schema = tool.input_schema as Record<string, unknown>;
    equal(schema.type, "object");
    equal(typeof schema.properties, "object");
    ok(Array.isArray(schema.required));
    deepStrictEqual(Object.keys(tool).sort(), ["description", "input_schema", "name"]);
  }
});

Deno.test("mewcode --read-only tools offers only the read-only tools", async () => {
  const run = await runMewcode(["--read-only", "tools", "--json"], { cwd: workspace });
  equal(run.code, 0, run.stderr);
  deepStrictEqual((JSON.parse(run.stdout) as { name: string }[]).map((tool) => tool.name).sort(), [
    "Glob",
    "Grep",
    "ReadFile",
  ]);
});

Deno.test("mewcode tools prints a table with one row per tool", async () => {
  const run = await runMewcode(["tools"], { cwd: workspace });
  equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split("\n");
  match(lines[0]!, /^TOOL\s+CATEGORY\s+ACCESS\s+SUMMARY$/);
  equal(lines.length, 7);
  ok(lines.some((line) => /^Bash\s+shell\s+destructive\s+/.test(line)));
});

Deno.test("mewcode tools leaves out a tool a deny rule names whole, as a session does, and says which rule", async (t) => {
  const home = await Deno.makeTempDir({ prefix: "mewcode-cli-home-" });
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-cli-deny-" }));
  try {
    const env = { MEWCODE_HOME: home };
    const names = (run: { stdout: string }) =>
      (JSON.parse(run.stdout) as { name: string }[]).map((tool) => tool.name).sort();
    await t.step("--disallowedTools Bash: JSON and the table leave Bash out", async () => {
      const json = await runMewcode(["--disallowedTools", "Bash", "tools", "--json"], { cwd: root, env });
      equal(json.code, 0, json.stderr);
      deepStrictEqual(names(json), ["EditFile", "Glob", "Grep", "ReadFile", "WriteFile"]);
      match(json.stderr, /Bash is not offered: a deny rule names it whole \(Bash, --disallowedTools\)/);
      const text = await runMewcode(["--disallowedTools", "Bash", "tools"], { cwd: root, env });
      equal(text.code, 0, text.stderr);
      ok(!/^Bash\s/m.test(text.stdout), text.stdout);
      match(text.stdout, /^Not offered: Bash \(a deny rule names it whole: Bash, --disallowedTools\)$/m);
    });
    await t.step("a rule with a specifier keeps the tool listed", async () => {
      const json = await runMewcode(["--disallowedTools", "Bash(rm *)", "tools", "--json"], {
        cwd: root,
        env,
      });
      equal(json.code, 0, json.stderr);
      ok(names(json).includes("Bash"));
      ok(!json.stderr.includes("not offered"), json.stderr);
    });
    await t.step("a deny rule in the workspace's (untrusted) settings leaves the tool out too", async () => {
      await Deno.mkdir(`${root}/.mewcode`);
      await Deno.writeTextFile(
        `${root}/.mewcode/settings.json`,
        JSON.stringify({ permissions: { deny: ["Bash", "WriteFile"] } }),
      );
      const json = await runMewcode(["tools", "--json"], { cwd: root, env });
      equal(json.code, 0, json.stderr);
      deepStrictEqual(names(json), ["EditFile", "Glob", "Grep", "ReadFile"]);
      const text = await runMewcode(["tools"], { cwd: root, env });
      match(text.stdout, /^Not offered: Bash \(a deny rule names it whole: Bash, project settings/m);
      match(text.stdout, /^Not offered: WriteFile \(/m);
    });
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("mewcode tool with an unknown name exits 1 and lists the available tools", async () => {
  const run = await runMewcode(["tool", "NoSuchTool", "{}"], { cwd: workspace });
  equal(run.code, 1);
  const output = parseToolOutput(run);
  equal(output.is_error, true);
  for (const name of ["ReadFile", "WriteFile", "EditFile", "Bash", "Glob", "Grep"]) {
    ok(output.content.includes(name), `lists ${name}`);
  }
});

Deno.test("mewcode tool with a schema violation exits 1 and names the field and expected type", async (t) => {
  const cases = [
    { input: { path: 42 }, expected: /"path" must be string/ },
    { input: {}, expected: /missing required field "path" \(expected string/ },
    { input: { path: `${workspace}/a`, bogus: true }, expected: /unknown field "bogus"/ },
  ];
  for (const { input, expected } of cases) {
    await t.step(JSON.stringify(input), async () => {
      const run = await runMewcode(["tool", "ReadFile", JSON.stringify(input)], { cwd: workspace });
      equal(run.code, 1, run.stderr);
      const output = parseToolOutput(run);
      equal(output.is_error, true);
      match(output.content, expected);
    });
  }
});

Deno.test("mewcode tool runs a real call and exits 0", async () => {
  await Deno.writeTextFile(`${workspace}/hello.txt`, "hello\nworld\n");
  const run = await runMewcode(["tool", "ReadFile", JSON.stringify({ path: `${workspace}/hello.txt` })], {
    cwd: workspace,
  });
  equal(run.code, 0, run.stderr);
  const output = parseToolOutput(run);
  equal(output.is_error, false);
  match(output.content, /1\thello\n2\tworld/);
});

Deno.test("mewcode exits 2 with the error on stderr for usage errors", async (t) => {
  const cases = [
    { args: ["tool", "ReadFile", "{not json"], expected: /Cannot parse the tool input as JSON/ },
    { args: ["tool", "ReadFile"], expected: /Missing arguments/ },
    { args: ["tols"], expected: /Unknown command "tols"; did you mean "tools"\?/ },
    {
      args: ["-C", "/definitely/not/here", "tools"],
      expected: /Cannot use "\/definitely\/not\/here" as the workspace/,
    },
    // The whole machine: every program and every secret would lie inside the workspace.
    ...["/", "/etc/.."].map((root) => ({
      args: ["-C", root, "tool", "ReadFile", JSON.stringify({ path: "/etc/hostname" })],
      expected: /as the workspace: it is the root of the file system/,
    })),
  ];
  for (const { args, expected } of cases) {
    await t.step(args.join(" "), async () => {
      const run = await runMewcode(args, { cwd: workspace });
      equal(run.code, 2);
      equal(run.stdout, "");
      match(run.stderr, expected);
    });
  }
});

Deno.test("mewcode -C sets the workspace root to the real path of the directory", async () => {
  const inner = `${workspace}/inner`;
  await Deno.mkdir(inner, { recursive: true });
  await Deno.symlink(inner, `${workspace}/alias`);
  await Deno.writeTextFile(`${inner}/x.txt`, "x\n");
  const outside = await runMewcode(
    ["-C", `${workspace}/alias`, "tool", "ReadFile", JSON.stringify({ path: `${workspace}/hello.txt` })],
    { cwd: "/" },
  );
  equal(outside.code, 1, "a file outside the -C root is refused");
  const inside = await runMewcode(
    ["-C", `${workspace}/alias`, "tool", "ReadFile", JSON.stringify({ path: `${inner}/x.txt` })],
    { cwd: "/" },
  );
  equal(inside.code, 0, inside.stdout + inside.stderr);
});
