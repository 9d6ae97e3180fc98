/**
 * The file tools refuse the git metadata the shell sandbox protects, wherever the repository's layout puts
 * it: the files a config includes, the git directory a `.git` file points to (a bare repository with linked
 * worktrees), husky's hook scripts, and the folder a `core.hooksPath` of the user's global config names.
 * Each case runs WriteFile and EditFile through the pipeline and the real workers, every call allowed (as in
 * bypassPermissions), then the user's own git outside any sandbox: no payload runs.
 */
import { equal, match } from "node:assert/strict";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exists } from "../_fakes/exists.ts";

async function call(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({ id: `layout_${crypto.randomUUID()}`, name, input }, {
    signal: new AbortController().signal,
  });
  return result;
}

/** Runs the user's git on the host with `home` as the home folder (its `.gitconfig` applies). */
async function userGit(cwd: string, home: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", {
    args,
    cwd,
    clearEnv: true,
    stdin: "null",
    env: {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      LANG: "C",
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  }).output();
  const text = new TextDecoder();
  if (output.code !== 0) {
    throw new Error(`git ${args.join(" ")} failed in "${cwd}": ${text.decode(output.stderr)}`);
  }
  return text.decode(output.stdout);
}

/** A temp folder for the user's home and the payload's marker, removed when disposed. */
async function userFolders(): Promise<{ home: string; marker: string } & AsyncDisposable> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-layout-home-" }));
  const markers = await Deno.makeTempDir({ prefix: "mewcode-layout-marker-" });
  return {
    home,
    marker: `${markers}/ran`,
    [Symbol.asyncDispose]: async () => {
      await Deno.remove(home, { recursive: true }).catch(() => undefined);
      await Deno.remove(markers, { recursive: true }).catch(() => undefined);
    },
  };
}

function assertRefused(result: ToolResult, pattern: RegExp): void {
  equal(result.isError, true, result.content);
  match(result.content, pattern);
}

Deno.test("WriteFile refuses the file a repository's config includes, existing or not", async () => {
  await using workspace = await createTempWorkspace("mewcode-layout-include-");
  await using user = await userFolders();
  const root = workspace.root;
  await userGit(root, user.home, "init", "-q", "-b", "main");
  await userGit(root, user.home, "config", "include.path", "../.gitconfig.local");
  await userGit(root, user.home, "config", "include.path", "../.gitconfig.shared", "--add");
  await Deno.writeTextFile(`${root}/.gitconfig.shared`, "[user]\n\tname = t\n");
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: user.home } });
  const payload = `[core]\n\tfsmonitor = "touch ${user.marker}; false"\n`;
  const created = await call(runtime, "WriteFile", { path: `${root}/.gitconfig.local`, content: payload });
  assertRefused(created, /git metadata/);
  await call(runtime, "ReadFile", { path: `${root}/.gitconfig.shared` });
  const edited = await call(runtime, "EditFile", {
    path: `${root}/.gitconfig.shared`,
    old_string: "[user]",
    new_string: `${payload}[user]`,
  });
  assertRefused(edited, /git metadata/);
  await runtime.close();
  equal(await exists(`${root}/.gitconfig.local`), false);
  await userGit(root, user.home, "status");
  equal(await exists(user.marker), false, "a planted core.fsmonitor ran");
});

Deno.test("WriteFile and EditFile refuse the bare repository a .git file points to, and its worktrees' files", async () => {
  await using workspace = await createTempWorkspace("mewcode-layout-bare-");
  await using user = await userFolders();
  const root = workspace.root;
  const seed = `${root}/seed`;
  await Deno.mkdir(seed);
  await userGit(seed, user.home, "init", "-q", "-b", "main");
  await Deno.writeTextFile(`${seed}/a.txt`, "one\n");
  await userGit(seed, user.home, "add", "a.txt");
  await userGit(seed, user.home, "commit", "-q", "-m", "first");
  await userGit(root, user.home, "clone", "-q", "--bare", "seed", ".bare");
  await Deno.remove(seed, { recursive: true });
  await Deno.writeTextFile(`${root}/.git`, "gitdir: ./.bare\n");
  await userGit(root, user.home, "worktree", "add", "-q", "main");
  const hook = "#!/bin/sh\nexit 0\n";
  await Deno.writeTextFile(`${root}/.bare/hooks/pre-commit`, hook, { mode: 0o755 });
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: user.home } });
  const payload = `touch ${user.marker}`;
  assertRefused(
    await call(runtime, "WriteFile", {
      path: `${root}/.bare/hooks/post-checkout`,
      content: `#!/bin/sh\n${payload}\n`,
    }),
    /git metadata/,
  );
  await call(runtime, "ReadFile", { path: `${root}/.bare/hooks/pre-commit` });
  assertRefused(
    await call(runtime, "WriteFile", {
      path: `${root}/.bare/hooks/pre-commit`,
      content: `#!/bin/sh\n${payload}\n`,
    }),
    /git metadata/,
  );
  await call(runtime, "ReadFile", { path: `${root}/.bare/config` });
  assertRefused(
    await call(runtime, "EditFile", {
      path: `${root}/.bare/config`,
      old_string: "[core]",
      new_string: `[core]\n\tfsmonitor = "${payload}; false"`,
    }),
    /git metadata/,
  );
  assertRefused(
    await call(runtime, "WriteFile", {
      path: `${root}/.bare/worktrees/main/config.worktree`,
      content: `[core]\n\tfsmonitor = "${payload}; false"\n`,
    }),
    /git metadata/,
  );
  assertRefused(
    await call(runtime, "WriteFile", { path: `${root}/.bare/info/attributes`, content: "* filter=x\n" }),
    /git metadata/,
  );
  await runtime.close();
  equal(await Deno.readTextFile(`${root}/.bare/hooks/pre-commit`), hook);
  await userGit(`${root}/main`, user.home, "status");
  await Deno.writeTextFile(`${root}/main/a.txt`, "two\n");
  await userGit(`${root}/main`, user.home, "commit", "-q", "-am", "second");
  equal(await exists(user.marker), false, "a planted hook or core.fsmonitor ran");
});

Deno.test("WriteFile refuses husky's hook scripts when core.hooksPath names .husky/_", async () => {
  await using workspace = await createTempWorkspace("mewcode-layout-husky-");
  await using user = await userFolders();
  const root = workspace.root;
  await userGit(root, user.home, "init", "-q", "-b", "main");
  await userGit(root, user.home, "config", "core.hooksPath", ".husky/_");
  await Deno.mkdir(`${root}/.husky/_`, { recursive: true });
  // As husky v9 lays it out: `_/<hook>` sources `_/h`, which runs the user's `.husky/<hook>`.
  await Deno.writeTextFile(
    `${root}/.husky/_/h`,
    '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ -f "$s" ] || exit 0\nsh -e "$s"\n',
  );
  await Deno.writeTextFile(`${root}/.husky/_/pre-commit`, '#!/bin/sh\n. "$(dirname "$0")/h"\n', {
    mode: 0o755,
  });
  await Deno.writeTextFile(`${root}/a.txt`, "one\n");
  await userGit(root, user.home, "add", "a.txt");
  await userGit(root, user.home, "commit", "-q", "-m", "first");
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: user.home } });
  const written = await call(runtime, "WriteFile", {
    path: `${root}/.husky/pre-commit`,
    content: `touch ${user.marker}\n`,
  });
  assertRefused(written, /hooks/);
  await runtime.close();
  equal(await exists(`${root}/.husky/pre-commit`), false);
  await Deno.writeTextFile(`${root}/a.txt`, "two\n");
  await userGit(root, user.home, "commit", "-q", "-am", "second");
  equal(await exists(user.marker), false, "a planted husky hook ran");
});

Deno.test("WriteFile refuses the folder a core.hooksPath of the user's global config names", async () => {
  await using workspace = await createTempWorkspace("mewcode-layout-global-");
  await using user = await userFolders();
  const root = workspace.root;
  await Deno.writeTextFile(`${user.home}/.gitconfig`, "[core]\n\thooksPath = .githooks\n");
  await userGit(root, user.home, "init", "-q", "-b", "main");
  const hook = "#!/bin/sh\nexit 0\n";
  await Deno.mkdir(`${root}/.githooks`);
  await Deno.writeTextFile(`${root}/.githooks/pre-commit`, hook, { mode: 0o755 });
  await Deno.writeTextFile(`${root}/a.txt`, "one\n");
  await userGit(root, user.home, "add", "a.txt");
  await userGit(root, user.home, "commit", "-q", "-m", "first");
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: user.home } });
  await call(runtime, "ReadFile", { path: `${root}/.githooks/pre-commit` });
  const written = await call(runtime, "WriteFile", {
    path: `${root}/.githooks/pre-commit`,
    content: `#!/bin/sh\ntouch ${user.marker}\n`,
  });
  assertRefused(written, /core\.hooksPath/);
  const created = await call(runtime, "WriteFile", {
    path: `${root}/.githooks/commit-msg`,
    content: "exit 1\n",
  });
  assertRefused(created, /core\.hooksPath/);
  await runtime.close();
  equal(await Deno.readTextFile(`${root}/.githooks/pre-commit`), hook);
  await Deno.writeTextFile(`${root}/a.txt`, "two\n");
  await userGit(root, user.home, "commit", "-q", "-am", "second");
  equal(await exists(user.marker), false, "a planted global hook ran");
});
