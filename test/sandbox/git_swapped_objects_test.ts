/**
 * What a sandboxed shell can do to the user's git without touching config or hooks: swap the content
 * stored under a tracked file's object name (copy another loose object over it), or point the name to
 * other content with `git replace`. `git status` stays clean, and the next `git checkout -- file` writes
 * the attacker's content. Through the whole runtime (pipeline, Bash's worker, real bubblewrap), the end of
 * the session reports both; the test first shows, with the user's own git, that the swap is real.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, exists, git, gitOk } from "./_git_fixture.ts";
import { exitCodeOf, outputOf } from "./_sandbox.ts";

async function bash(runtime: ToolRuntime, command: string): Promise<string> {
  const { result } = await runtime.pipeline.run({
    id: `swap_${crypto.randomUUID()}`,
    name: "Bash",
    input: { command, timeout: 20_000 },
  }, { signal: new AbortController().signal });
  equal(exitCodeOf(result), 0, result.content);
  return outputOf(result);
}

const SWAP_SCRIPT = `set -e
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
evil=$(printf '#!/bin/sh\\necho evil build\\n' | git hash-object -w --stdin)
build=$(git rev-parse HEAD:build.sh)
chmod u+w .git/objects/\${build:0:2}/\${build:2}
cp .git/objects/\${evil:0:2}/\${evil:2} .git/objects/\${build:0:2}/\${build:2}
make=$(git rev-parse HEAD:Makefile)
payload=$(printf 'all:\\n\\techo evil make\\n' | git hash-object -w --stdin)
git replace "$make" "$payload"
git status --porcelain`;

Deno.test("the end of the session reports a swapped loose object and a replace ref made in the sandbox", async () => {
  await using workspace = await createTempWorkspace("mewcode-swap-");
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(root, "build.sh"), "#!/bin/sh\necho build\n");
  await Deno.writeTextFile(join(root, "Makefile"), "all:\n\techo make\n");
  await gitOk(root, "add", "build.sh", "Makefile");
  await gitOk(root, "commit", "-q", "-m", "build");
  const build = (await gitOk(root, "rev-parse", "HEAD:build.sh")).trim();
  const make = (await gitOk(root, "rev-parse", "HEAD:Makefile")).trim();
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } });
  equal(await bash(runtime, SWAP_SCRIPT), "", "git status in the sandbox shows nothing");
  const lines = await runtime.finish();
  const report = lines.join("\n");
  // The swap is real: the user's git shows nothing, and discarding a change writes the payload.
  equal(await gitOk(root, "status", "--porcelain"), "");
  for (const file of ["build.sh", "Makefile"]) {
    await Deno.writeTextFile(join(root, file), "local change\n");
    await gitOk(root, "checkout", "--", file);
    match(await Deno.readTextFile(join(root, file)), /evil/, `git checkout -- ${file} wrote the payload`);
  }
  equal(lines.length, 2, report);
  ok(
    lines.some((line) =>
      line.startsWith(
        `.git/objects/${build.slice(0, 2)}/${build.slice(2)} holds content that does not hash to its name`,
      )
    ),
    report,
  );
  ok(
    lines.some((line) => line.startsWith(`.git/refs/replace/${make} (a replace ref) makes git use object `)),
    report,
  );
  match(report, new RegExp(`git replace -d ${make}`));
  match(report, /git fsck/);
});

Deno.test("an object store a command names in objects/info/alternates is taken away after the call", async () => {
  await using workspace = await createTempWorkspace("mewcode-alternates-");
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(root, "app.py"), 'print("hello")\n');
  await gitOk(root, "add", "app.py");
  await gitOk(root, "commit", "-q", "-m", "app");
  const app = (await gitOk(root, "rev-parse", "HEAD:app.py")).trim();
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } });
  // The payload, stored under the tracked file's name in a folder of the workspace that the alternates file
  // names; the repository's own copy goes, so git reads the other one.
  const { result } = await runtime.pipeline.run({
    id: "alternates",
    name: "Bash",
    input: {
      command: `set -e
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p vendor/objs
evil=$(printf 'print("evil")\\n' | GIT_OBJECT_DIRECTORY=vendor/objs git hash-object -w --stdin)
mkdir -p vendor/objs/${app.slice(0, 2)}
cp vendor/objs/\${evil:0:2}/\${evil:2} vendor/objs/${app.slice(0, 2)}/${app.slice(2)}
echo "$PWD/vendor/objs" > vendor/alternates
cp vendor/alternates .git/objects/info/alternates
rm -f .git/objects/${app.slice(0, 2)}/${app.slice(2)}
git cat-file -p ${app}`,
      timeout: 20_000,
    },
  }, { signal: new AbortController().signal });
  equal(exitCodeOf(result), 0, result.content);
  equal(outputOf(result), 'print("evil")', "within the call, git reads the other store");
  match(
    result.content,
    /objects\/info\/alternates" \(a file\), which appeared during the command, was (?:moved|removed) .*: the user's git would read objects from the folders it names/,
  );
  equal(await exists(join(root, ".git/objects/info/alternates")), false);
  // The user's git finds no other content under the name (the command removed the object: git says so),
  // so discarding a change cannot write the payload.
  await Deno.writeTextFile(join(root, "app.py"), "local change\n");
  const checkout = await git(root, "checkout", "--", "app.py");
  ok(checkout.code !== 0, checkout.stderr);
  const content = await Deno.readTextFile(join(root, "app.py")).catch(() => "");
  ok(!content.includes("evil"), content);
});
