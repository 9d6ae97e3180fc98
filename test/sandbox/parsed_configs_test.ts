/**
 * The plan of each shell call keeps the git config files it parsed while they are unchanged: a config
 * changed on the host between two calls, even to the same size with its modification time put back, is read
 * again by the next plan.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { planGitProtection } from "../../src/sandbox/git_metadata.ts";
import { ParsedConfigs } from "../../src/sandbox/_git_layout.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository } from "./_git_fixture.ts";

/**
 * Deno gives change times in whole seconds: a config must have changed more than that before a read for its
 * parse to be kept (the default waits 3 s; shortened here to keep the test short, but no shorter than that).
 */
const SETTLED_MS = 1_100;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A repository whose config was just given `core.hooksPath = hooksPath`, a `ParsedConfigs` that keeps what
 * settled for SETTLED_MS, the config's text before the change and its modification time after it.
 */
async function hooksPathScene(hooksPath: string) {
  const workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const config = join(root, ".git", "config");
  const original = await Deno.readTextFile(config);
  await Deno.writeTextFile(config, `${original}[core]\n\thooksPath = ${hooksPath}\n`);
  return {
    root,
    config,
    parsedConfigs: new ParsedConfigs({ settledMs: SETTLED_MS }),
    original,
    modified: (await Deno.stat(config)).mtime!,
    [Symbol.asyncDispose]: () => workspace.cleanup(),
  };
}

Deno.test("planGitProtection reads a kept config again once it changed, even to the same size and mtime", async () => {
  await using scene = await hooksPathScene("tools/hooks-a");
  const { root, config, parsedConfigs, original, modified } = scene;
  await pause(SETTLED_MS + 200);
  const first = await planGitProtection(root, { parsedConfigs });
  ok(first.hooksFolders.includes(join(root, "tools", "hooks-a")), JSON.stringify(first.hooksFolders));
  // Kept now; a command could not write it (bound read-only), but the user may, in the same second even.
  await Deno.writeTextFile(config, `${original}[core]\n\thooksPath = tools/hooks-b\n`);
  await Deno.utime(config, modified, modified);
  equal((await Deno.stat(config)).size, original.length + "[core]\n\thooksPath = tools/hooks-a\n".length);
  const sameSize = await planGitProtection(root, { parsedConfigs });
  ok(sameSize.hooksFolders.includes(join(root, "tools", "hooks-b")), JSON.stringify(sameSize.hooksFolders));
  equal(sameSize.hooksFolders.includes(join(root, "tools", "hooks-a")), false);
});

Deno.test("ParsedConfigs keeps nothing read within its settling time of the file's last change", async () => {
  await using scene = await hooksPathScene("tools/hooks-c");
  const { root, config, parsedConfigs, original, modified } = scene;
  const first = await planGitProtection(root, { parsedConfigs });
  ok(first.hooksFolders.includes(join(root, "tools", "hooks-c")), JSON.stringify(first.hooksFolders));
  // Within the same second, the change time (whole seconds) and, put back, the modification time stay.
  await Deno.writeTextFile(config, `${original}[core]\n\thooksPath = tools/hooks-d\n`);
  await Deno.utime(config, modified, modified);
  const changed = await planGitProtection(root, { parsedConfigs });
  ok(changed.hooksFolders.includes(join(root, "tools", "hooks-d")), JSON.stringify(changed.hooksFolders));
});
