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
    // Neither a file in the workspace nor one that exists: nothing to protect.
    "/usr/bin/env true; jq -r .tool_input.path; sh missing.sh; cat /etc/hostname; sh $SCRIPT",
  ]);
  deepStrictEqual(protections.map((entry) => [entry.path, entry.anyDepth]), [
    ["scripts/hook.sh", false],
    ["scripts/check.js", false],
    ["scripts/approve.sh", false],
    ["scripts/Fmt.sh", false],
  ]);
});
