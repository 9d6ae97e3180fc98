/**
 * Folders added to the workspace (`--add-dir`) in the shell sandbox, through the whole runtime (pipeline,
 * Bash's worker, real bubblewrap): an added folder E is bound like the workspace (writable in
 * workspace-write, read-only in read-only mode) with the same read-only git metadata and `.mewcode`, and
 * scanned at the end of the session; a third folder F in /tmp stays invisible, since the sandbox's /tmp is
 * its own.
 */
import { equal, match, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import type { RuntimeOptions, ToolRuntime } from "../../src/execution/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace, type TempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, runSandboxed } from "./_git_fixture.ts";
import { exists, exitCodeOf, outputOf } from "./_sandbox.ts";

/** A workspace, an added folder E (a git repository) and a third folder F, all in the host's /tmp. */
interface Scene extends AsyncDisposable {
  root: string;
  added: string;
  third: string;
}

async function createScene(): Promise<Scene> {
  const folders: TempWorkspace[] = [];
  for (const prefix of ["mewcode-ws-", "mewcode-added-", "mewcode-third-"]) {
    folders.push(await createTempWorkspace(prefix));
  }
  const [root, added, third] = folders.map((folder) => folder.root) as [string, string, string];
  ok(added.startsWith("/tmp/") && third.startsWith("/tmp/"), "the scene lies in the host's /tmp");
  await createRepository(added);
  await Deno.mkdir(join(added, ".mewcode"));
  await Deno.writeTextFile(join(added, "notes.txt"), "added notes\n");
  await Deno.writeTextFile(join(third, "secret.txt"), "top secret\n");
  return {
    root,
    added,
    third,
    [Symbol.asyncDispose]: async () => {
      for (const folder of folders) await folder.cleanup();
    },
  };
}

function runtimeFor(scene: Scene, overrides: Partial<RuntimeOptions> = {}): Promise<ToolRuntime> {
  return testRuntime(scene.root, {
    additionalRoots: [scene.added],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/root" },
    ...overrides,
  });
}

async function bash(runtime: ToolRuntime, command: string): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({
    id: `add_dir_${crypto.randomUUID()}`,
    name: "Bash",
    input: {
      command,
      timeout: 20_000,
    },
  }, { signal: new AbortController().signal });
  return result;
}

Deno.test("without --add-dir, Bash cannot see a folder in /tmp at all, so binding it is what lets it in", async () => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene, { additionalRoots: [] });
  const result = await bash(runtime, `cat ${scene.added}/notes.txt`);
  notEqual(exitCodeOf(result), 0, result.content);
  match(outputOf(result), /No such file or directory/);
});

Deno.test("Bash reads and writes an added folder in workspace-write, and never sees a third folder", async () => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene);
  const { root, added, third } = scene;
  const read = await bash(runtime, `cat ${added}/notes.txt && pwd`);
  equal(exitCodeOf(read), 0, read.content);
  equal(outputOf(read), `added notes\n${root}`);
  const write = await bash(runtime, `echo x > ${added}/new.txt`);
  equal(exitCodeOf(write), 0, write.content);
  equal(await Deno.readTextFile(join(added, "new.txt")), "x\n");
  const secret = await bash(runtime, `cat ${third}/secret.txt`);
  notEqual(exitCodeOf(secret), 0, secret.content);
  equal(outputOf(secret).includes("top secret"), false);
  const planted = await bash(runtime, `mkdir -p ${third} && echo x > ${third}/planted.txt`);
  equal(exitCodeOf(planted), 0, planted.content); // the sandbox's own /tmp: nothing reaches the host
  equal(await exists(join(third, "planted.txt")), false);
});

Deno.test("the read-only sandbox binds an added folder read-only", async () => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene, { sandbox: "read-only" });
  const read = await bash(runtime, `cat ${scene.added}/notes.txt`);
  equal(exitCodeOf(read), 0, read.content);
  equal(outputOf(read), "added notes");
  const write = await bash(runtime, `echo x > ${scene.added}/new.txt`);
  notEqual(exitCodeOf(write), 0, write.content);
  match(outputOf(write), /Read-only file system/);
  equal(await exists(join(scene.added, "new.txt")), false);
});

/** Writes Bash must not make in an added folder: planting a hook, a command in the config, mewcode settings. */
function plantingCommands(added: string): string[] {
  return [
    `printf '#!/bin/sh\\necho pwned\\n' > ${added}/.git/hooks/pre-commit`,
    `printf '[core]\\n\\tfsmonitor = echo pwned\\n' >> ${added}/.git/config`,
    `echo '{}' > ${added}/.mewcode/settings.json`,
    `mv ${added}/.git/hooks ${added}/.git/hooks-moved`,
  ];
}

Deno.test("the planting writes succeed where an added folder is bound without the protection mounts", async () => {
  await using scene = await createScene();
  const { added } = scene;
  const configBefore = await Deno.readTextFile(join(added, ".git", "config"));
  for (const command of plantingCommands(added)) {
    const run = await runSandboxed(added, null, command);
    equal(run.code, 0, run.stderr);
  }
  equal(await exists(join(added, ".git", "hooks-moved", "pre-commit")), true);
  notEqual(await Deno.readTextFile(join(added, ".git", "config")), configBefore);
  equal(await exists(join(added, ".mewcode", "settings.json")), true);
});

Deno.test("Bash cannot change an added folder's git hooks, git config or .mewcode, yet git works there", async (t) => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene);
  const { added } = scene;
  const configBefore = await Deno.readTextFile(join(added, ".git", "config"));
  await t.step("writes next to them in .git go through (the folder itself is writable)", async () => {
    const result = await bash(runtime, `echo described > ${added}/.git/description`);
    equal(exitCodeOf(result), 0, result.content);
    equal(await Deno.readTextFile(join(added, ".git", "description")), "described\n");
  });
  for (const command of plantingCommands(added)) {
    await t.step(command, async () => {
      const result = await bash(runtime, command);
      notEqual(exitCodeOf(result), 0, result.content);
      match(outputOf(result), /Read-only file system|Device or resource busy/);
    });
  }
  equal(await exists(join(added, ".git", "hooks", "pre-commit")), false);
  equal(await Deno.readTextFile(join(added, ".git", "config")), configBefore);
  equal(await exists(join(added, ".mewcode", "settings.json")), false);
  await t.step("git add and commit work in the added folder", async () => {
    const result = await bash(
      runtime,
      `cd ${added} && git add notes.txt && git -c user.name=t -c user.email=t@t commit -q -m notes && git log --format=%s -1`,
    );
    equal(exitCodeOf(result), 0, result.content);
    equal(outputOf(result), "notes");
  });
});

Deno.test("the end-of-session check reports a repository planted in an added folder", async () => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene);
  const result = await bash(runtime, `git init -q ${scene.added}/planted`);
  equal(exitCodeOf(result), 0, result.content);
  const lines = await runtime.finish();
  ok(
    lines.some((line) =>
      line.startsWith(`In the added folder "${scene.added}": planted/.git is a new git repository`)
    ),
    lines.join("\n"),
  );
});

Deno.test("nested in the workspace or around it, an added folder keeps its own protected paths", async (t) => {
  await using outer = await createTempWorkspace("mewcode-outer-");
  const inner = join(outer.root, "sub", "inner");
  for (const folder of [outer.root, inner]) {
    await createRepository(folder);
    await Deno.mkdir(join(folder, ".mewcode"));
  }
  const cases = [
    { label: "an added folder inside the workspace", root: outer.root, added: inner },
    { label: "an added folder around the workspace", root: inner, added: outer.root },
  ];
  for (const { label, root, added } of cases) {
    await t.step(label, async () => {
      await using runtime = await testRuntime(root, { additionalRoots: [added] });
      for (const folder of [outer.root, inner]) {
        const refused = await bash(runtime, `echo '{}' > ${folder}/.mewcode/settings.json`);
        notEqual(exitCodeOf(refused), 0, refused.content);
        const hook = await bash(runtime, `echo pwned > ${folder}/.git/hooks/post-checkout`);
        notEqual(exitCodeOf(hook), 0, hook.content);
        const written = await bash(runtime, `echo ok > ${folder}/written.txt`);
        equal(exitCodeOf(written), 0, written.content);
      }
      for (const folder of [outer.root, inner]) {
        equal(await exists(join(folder, ".mewcode", "settings.json")), false);
        equal(await exists(join(folder, ".git", "hooks", "post-checkout")), false);
      }
    });
  }
});

Deno.test({
  name: "an added folder that contains system secrets (--add-dir /etc) does not show them again",
  ignore: !(await Deno.lstat("/etc/shadow").then((info) => info.size > 0, () => false)),
  async fn() {
    await using workspace = await createTempWorkspace("mewcode-ws-");
    await using runtime = await testRuntime(workspace.root, {
      additionalRoots: ["/etc"],
      sandbox: "read-only",
    });
    const hostname = await bash(runtime, "cat /etc/hostname");
    equal(exitCodeOf(hostname), 0, hostname.content);
    // Bound as /dev/null on a nodev mount: empty or refused, never the host's file.
    const shadow = await bash(runtime, "wc -c < /etc/shadow");
    ok(exitCodeOf(shadow) !== 0 || outputOf(shadow) === "0", shadow.content);
  },
});
