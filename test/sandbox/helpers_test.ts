import { equal } from "node:assert/strict";
import { join } from "node:path";
import { resolveHelpers } from "../../src/sandbox/helpers.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { directoryOutsideTemporary } from "../_fakes/outside_temporary.ts";

async function plantProgram(path: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, "#!/bin/sh\ntouch /tmp/planted-helper-ran\n");
  await Deno.chmod(path, 0o755);
}

Deno.test("resolveHelpers never takes a program from the workspace, even first on PATH", async () => {
  await using workspace = await createTempWorkspace();
  const planted = join(workspace.root, "node_modules", ".bin");
  for (const name of ["bwrap", "bash", "git", "rg", "cat"]) await plantProgram(join(planted, name));
  const helpers = await resolveHelpers({
    root: workspace.root,
    path: `${planted}:node_modules/.bin:/usr/bin:/bin`,
  });
  equal(helpers.bwrap, "/usr/bin/bwrap");
  equal(helpers.bash, "/usr/bin/bash");
  equal(helpers.git, "/usr/bin/git");
  // The cat that hands ripgrep's report on in the sandbox is the system's too.
  equal(helpers.cat, "/usr/bin/cat");
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

Deno.test("resolveHelpers skips a PATH entry or program another user could swap through a folder above", async (t) => {
  await using workspace = await createTempWorkspace();
  const open = await directoryOutsideTemporary();
  try {
    const bin = join(open, "inner", "bin");
    await plantProgram(join(bin, "rg"));
    // The program reached through a link from a trusted entry lives in another folder: that one counts too.
    const linked = join(open, "linked");
    await Deno.mkdir(linked);
    await Deno.symlink(join(bin, "rg"), join(linked, "git"));
    const found = () =>
      resolveHelpers({ root: workspace.root, path: `${bin}:${linked}`, systemDirectories: [] });
    await t.step("trusted while only its owner may write the folders above", async () => {
      const helpers = await found();
      equal(helpers.rg, join(bin, "rg"));
      equal(helpers.git, join(linked, "git"));
    });
    await t.step("a world-writable folder above that is not sticky", async () => {
      await Deno.chmod(join(open, "inner"), 0o777);
      const helpers = await found();
      equal(helpers.rg, null);
      equal(helpers.git, null, "the link's target lies under it");
    });
    await t.step("the same folder sticky", async () => {
      await Deno.chmod(join(open, "inner"), 0o1777);
      equal((await found()).rg, join(bin, "rg"));
    });
  } finally {
    await Deno.remove(open, { recursive: true });
  }
});
