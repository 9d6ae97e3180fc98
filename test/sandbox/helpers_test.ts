import { equal } from "node:assert/strict";
import { join } from "node:path";
import { resolveHelpers } from "../../src/sandbox/helpers.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function plantProgram(path: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, "#!/bin/sh\ntouch /tmp/planted-helper-ran\n");
  await Deno.chmod(path, 0o755);
}

Deno.test("resolveHelpers never takes a program from the workspace, even first on PATH", async () => {
  await using workspace = await createTempWorkspace();
  const planted = join(workspace.root, "node_modules", ".bin");
  for (const name of ["bwrap", "bash", "git", "rg"]) await plantProgram(join(planted, name));
  const helpers = await resolveHelpers({
    root: workspace.root,
    path: `${planted}:node_modules/.bin:/usr/bin:/bin`,
  });
  equal(helpers.bwrap, "/usr/bin/bwrap");
  equal(helpers.bash, "/usr/bin/bash");
  equal(helpers.git, "/usr/bin/git");
});

Deno.test("resolveHelpers prefers the system directories to PATH and skips relative and world-writable entries", async () => {
  await using workspace = await createTempWorkspace();
  await using elsewhere = await createTempWorkspace("mewcode-helpers-path-");
  const userBin = join(elsewhere.root, "bin");
  await plantProgram(join(userBin, "bwrap"));
  await plantProgram(join(userBin, "only-here"));
  // A program only on a trusted PATH entry is found there; a system one wins over PATH.
  const found = await resolveHelpers({
    root: workspace.root,
    path: userBin,
    systemDirectories: ["/usr/bin"],
  });
  equal(found.bwrap, "/usr/bin/bwrap");
  const narrow = await resolveHelpers({ root: workspace.root, path: userBin, systemDirectories: [] });
  // The temp directory lies under /tmp, which anyone can write: never trusted.
  equal(narrow.bwrap, null);
  const relative = await resolveHelpers({ root: workspace.root, path: "bin:.:", systemDirectories: [] });
  equal(relative.bash, null);
});
