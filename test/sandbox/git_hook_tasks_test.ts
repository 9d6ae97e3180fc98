/**
 * A task runner's file a git hook runs (`npm test` in husky's `.husky/pre-commit` reads `package.json`) stays
 * writable, since every dependency change writes it; a session that changed one says so at its end, with
 * the hook and the command, because the user's next commit runs what it says. The first test shows with the
 * user's own git that the commit runs it.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk } from "./_git_fixture.ts";
import { exists, openSandbox, outputOf, runIn } from "./_sandbox.ts";

/** A repository with husky's layout whose pre-commit hook runs `npm test`, or `hook` when given. */
async function huskyRepository(root: string, hook = "npm test\n"): Promise<void> {
  await createRepository(root);
  await Deno.writeTextFile(join(root, "package.json"), '{"scripts": {"test": "echo tests pass"}}\n');
  await Deno.mkdir(join(root, ".husky/_"), { recursive: true });
  await Deno.writeTextFile(
    join(root, ".husky/_/pre-commit"),
    '#!/bin/sh\nsh -e "$(dirname "$0")/../pre-commit"\n',
    {
      mode: 0o755,
    },
  );
  await Deno.writeTextFile(join(root, ".husky/pre-commit"), hook);
  await gitOk(root, "config", "core.hooksPath", ".husky/_");
}

Deno.test("The end of the session names a package.json changed in the sandbox that a git hook runs", async () => {
  await using workspace = await createTempWorkspace();
  await using marker = await createTempWorkspace("mewcode-marker-");
  const root = workspace.root;
  await huskyRepository(root);
  await using sandbox = await openSandbox(root, "workspace-write");
  const payload = `{"scripts": {"test": "echo tests pass && touch ${marker.root}/ran"}}`;
  const { result } = await runIn(sandbox, `echo '${payload}' > package.json && echo ok`);
  equal(outputOf(result), "ok", "package.json stays writable");
  const lines = await sandbox.endOfSession();
  deepStrictEqual(lines, [
    "package.json changed during the session, and `npm test` in .husky/pre-commit, which your git runs as a " +
    "hook, reads it: your next git commit runs what it says now, outside any sandbox; look at git diff -- " +
    "package.json before you commit",
  ]);
  // What the line warns of: the user's commit runs the new script.
  await gitOk(root, "commit", "-q", "--allow-empty", "-m", "next");
  equal(await exists(join(marker.root, "ran")), true);
});

Deno.test("The end of the session says nothing of a package.json no hook runs, or one left as it was", async () => {
  for (const hook of ["sh scripts/check.sh\n", "npm test\n"]) {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    await huskyRepository(root, hook);
    await using sandbox = await openSandbox(root, "workspace-write");
    const edit = hook.startsWith("npm") ? "touch package.json" : "echo '{}' > package.json";
    await runIn(sandbox, `${edit} && echo 'export {}' > main.js`);
    deepStrictEqual(await sandbox.endOfSession(), [], hook);
  }
});

Deno.test("The end of the session names a runner's config that appeared, which changes what a hook's yarn runs", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await huskyRepository(root, "yarn lint-staged\n");
  await using sandbox = await openSandbox(root, "workspace-write");
  await runIn(sandbox, "echo 'yarnPath: ./.yarn/evil.cjs' > .yarnrc.yml");
  const lines = await sandbox.endOfSession();
  equal(lines.length, 1, lines.join("\n"));
  equal(
    lines[0]!.startsWith(
      ".yarnrc.yml appeared during the session, and `yarn lint-staged` in .husky/pre-commit",
    ),
    true,
  );
});
