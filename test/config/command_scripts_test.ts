import { deepStrictEqual } from "node:assert/strict";
import { commandScriptProtections } from "../../src/config/command_scripts.ts";
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
