/**
 * The sandbox kept across Bash calls (src/tools/_shell_host.ts, src/sandbox/kept_sandbox.ts): as fast as a
 * fork, and still every call as isolated from the last as a sandbox of its own would make it. Each test
 * runs real bubblewrap through a ShellHost, as a tool worker does, in a workspace under /tmp.
 */
import { deepStrictEqual, equal, match, notEqual, ok, rejects } from "node:assert/strict";
import { ShellHost } from "../../src/tools/_shell_host.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exitCodeOf, openSandbox, outputOf, runIn, SANDBOX_ID } from "./_sandbox.ts";
import { processesWith } from "../_fakes/processes.ts";
import { exists } from "../_fakes/exists.ts";

/** A ShellHost closed with `await using`. */
function keptHost(): ShellHost & AsyncDisposable {
  const host = new ShellHost();
  return Object.assign(host, { [Symbol.asyncDispose]: () => host.close() });
}

/** How long ago the sandbox's process 1 started, in milliseconds (/proc/uptime counts hundredths). */
const SANDBOX_AGE_MS = "hz=$(getconf CLK_TCK); up=$(cut -d' ' -f1 /proc/uptime); " +
  "echo $(( (${up/./} * hz / 100 - $(cut -d' ' -f22 /proc/1/stat)) * 1000 / hz ))";

async function git(root: string, ...args: string[]): Promise<void> {
  const output = await new Deno.Command("git", {
    args: ["-C", root, ...args],
    stdout: "null",
    stderr: "piped",
  })
    .output();
  ok(output.success, new TextDecoder().decode(output.stderr));
}

Deno.test("Calls run in one kept sandbox, each in a fresh shell: nothing of the shell's state carries over", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const first = await runIn(
    sandbox,
    `${SANDBOX_ID}; cd /; export LEAK=1; leak=2; f() { :; }; umask 077; set -o noclobber; trap 'echo trap' EXIT; echo "$0"`,
    { runner: host },
  );
  equal(first.result.metadata.keptSandbox, true);
  const [id, shell] = outputOf(first.result).split("\n");
  match(shell ?? "", /^\/\S*bash$/, "$0 is the shell's path, as for bash -c");
  const second = await runIn(
    sandbox,
    `${SANDBOX_ID}; echo "pwd=$PWD LEAK=\${LEAK-} leak=\${leak-} umask=$(umask)"; declare -F | wc -l; ` +
      `set -o | grep noclobber; trap -p; compgen -v | grep -c mewcode`,
    { runner: host },
  );
  const lines = outputOf(second.result).split("\n");
  equal(lines[0], id, "the same sandbox ran both calls");
  equal(lines[1], `pwd=${workspace.root} LEAK= leak= umask=0022`);
  equal(lines[2], "0", "no shell function carried over");
  match(lines[3] ?? "", /noclobber\s+off/);
  equal(lines[4], "0", "no variable of the supervisor is visible");
});

Deno.test("Background, setsid and nohup processes of a call are killed when it ends", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const marker = `kept_${crypto.randomUUID().replaceAll("-", "")}`;
  const { result } = await runIn(
    sandbox,
    `${marker}() { sleep 300; }; ${marker} & setsid bash -c '${marker}() { sleep 300; }; ${marker}' & ` +
      `nohup bash -c '${marker}() { sleep 300; }; ${marker}' >/dev/null 2>&1 & (${marker} &); echo started`,
    { runner: host },
  );
  equal(outputOf(result), "started");
  equal(await processesWith(marker), 0, "nothing of the call runs once it has returned");
  const next = await runIn(sandbox, "ls /proc | grep -c '^[0-9]'", { runner: host });
  // The supervisor, the subshell, ls and grep.
  equal(outputOf(next.result), "4");
});

Deno.test("A command can neither read the supervisor's pipes nor write a false end of its call", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const { result } = await runIn(
    sandbox,
    [
      `${SANDBOX_ID}`,
      "cat /proc/1/environ >/dev/null 2>&1 && echo environ-read",
      "readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd-read",
      "{ printf '\\001mewcode status 0\\n' > /proc/1/fd/2; } 2>/dev/null && echo status-forged",
      "timeout 1 cat /proc/1/fd/0 >/dev/null 2>&1 && echo input-read",
      "cat /dev/.mewcode-shell >/dev/null 2>&1 && echo supervisor-read",
      "kill -9 1; kill -STOP 1",
      // The command's own shell has let go of the supervisor's pipes: only /dev/null and the output remain.
      '[[ $(readlink /proc/$$/fd/0) == /dev/null && $(readlink /proc/$$/fd/2) == "$(readlink /proc/$$/fd/1)" ]] ' +
      "|| echo pipes-held",
      // Text that looks like the protocol is output like any other.
      "printf 'a\\0\\001mewcode status 7 b\\0'; echo",
      "sleep 0.3; echo still-running; exit 5",
    ].join("\n"),
    { runner: host },
  );
  const lines = outputOf(result).split("\n");
  equal(lines.length, 3, outputOf(result));
  equal(lines[1], "amewcode status 7 b", "control characters are removed, the text kept");
  equal(lines[2], "still-running");
  equal(exitCodeOf(result), 5);
  const next = await runIn(sandbox, SANDBOX_ID, { runner: host });
  equal(outputOf(next.result), lines[0], "process 1 survived the kill and still serves calls");
});

Deno.test("What a call leaves in /tmp, /var/tmp, /dev/shm or the home folder is gone for the next call", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/keep.txt`, "workspace content\n");
  await git(workspace.root, "init", "-q");
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const untouched = await runIn(sandbox, SANDBOX_ID, { runner: host });
  const same = await runIn(sandbox, SANDBOX_ID, { runner: host });
  equal(outputOf(same.result), outputOf(untouched.result), "a call that leaves nothing keeps the sandbox");
  const leave = await runIn(
    sandbox,
    'echo x > /tmp/left && echo x > /var/tmp/left && echo x > /dev/shm/left && echo x > "$HOME/.left" && ' +
      "touch /dev/left 2>/dev/null || echo dev-read-only",
    { runner: host },
  );
  equal(outputOf(leave.result), "dev-read-only");
  const after = await runIn(
    sandbox,
    `${SANDBOX_ID}; ls -A /tmp /var/tmp /dev/shm "$HOME" | grep -c left`,
    { runner: host },
  );
  const [id, left] = outputOf(after.result).split("\n");
  notEqual(id, outputOf(untouched.result), "a new sandbox");
  equal(left, "0");
  // The workspace lies under /tmp on the host, bound into the sandbox's /tmp: nothing of it was touched.
  equal(await Deno.readTextFile(`${workspace.root}/keep.txt`), "workspace content\n");
  ok(await exists(`${workspace.root}/.git/HEAD`));
  ok(await exists(`${workspace.root}/.git/objects`));
});

/**
 * Python opening the POSIX message queue "/mewcode-left" with `flags`: prints "opened" or the error. The
 * system's python3: a version manager's shim on PATH (pyenv's) may need a folder the sandbox hides.
 */
function openQueue(flags: string): string {
  const script = "import ctypes, os\n" +
    "libc = ctypes.CDLL(None, use_errno=True)\n" +
    "libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]\n" +
    `queue = libc.mq_open(b"/mewcode-left", ${flags}, 0o600, None)\n` +
    'print("opened" if queue >= 0 else os.strerror(ctypes.get_errno()))\n';
  return `PATH=/usr/local/bin:/usr/bin:/bin python3 -c '${script}'`;
}

Deno.test("System V IPC objects and POSIX message queues a call leaves end the kept sandbox with them", async (t) => {
  const sysV = (call: string) =>
    `perl -e 'use IPC::SysV qw(IPC_PRIVATE S_IRWXU); defined(${call}) or die "$!"; print "opened\\n"'`;
  for (
    const [name, command] of [
      ["a shared memory segment", sysV("shmget(IPC_PRIVATE, 1 << 20, S_IRWXU)")],
      ["a message queue", sysV("msgget(IPC_PRIVATE, S_IRWXU)")],
      ["a semaphore set", sysV("semget(IPC_PRIVATE, 1, S_IRWXU)")],
      ["a POSIX message queue", openQueue("os.O_CREAT | os.O_RDWR")],
    ] as const
  ) {
    await t.step(name, async () => {
      await using workspace = await createTempWorkspace();
      await using sandbox = await openSandbox(workspace.root, "workspace-write");
      await using host = keptHost();
      const before = outputOf((await runIn(sandbox, SANDBOX_ID, { runner: host })).result);
      // Objects that outlive the processes that made them: without the check, the next call's sandbox held
      // them, and a call could prepare state for the next.
      const made = await runIn(sandbox, command, { runner: host });
      equal(outputOf(made.result), "opened");
      const after = await runIn(
        sandbox,
        `${SANDBOX_ID}; tail -q -n +2 /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | ` +
          `grep -c '^ *[0-9]'; ${openQueue("os.O_RDONLY")}`,
        { runner: host },
      );
      const [id, left, queue] = outputOf(after.result).split("\n");
      notEqual(id, before, "a new sandbox");
      equal(left, "0");
      equal(queue, "No such file or directory");
    });
  }
});

Deno.test("Through the session's runtime, a semaphore set and a POSIX message queue one Bash call made are gone in the next", async () => {
  await using workspace = await createTempWorkspace();
  const runtime = await testRuntime(workspace.root);
  const outputs: string[] = [];
  try {
    const commands = [
      `${SANDBOX_ID}; ipcmk -S 1 >/dev/null && ${openQueue("os.O_CREAT | os.O_RDWR")}`,
      `${SANDBOX_ID}; tail -n +2 /proc/sysvipc/sem | grep -c '^ *[0-9]'; ${openQueue("os.O_RDONLY")}`,
    ];
    for (const [index, command] of commands.entries()) {
      const { result } = await runtime.pipeline.run(
        { id: `ipc_${index}`, name: "Bash", input: { command } },
        { signal: new AbortController().signal },
      );
      equal(result.isError, false, result.content);
      equal(result.metadata.keptSandbox, true);
      outputs.push(outputOf(result));
    }
  } finally {
    await runtime.close();
  }
  const [made, after] = outputs.map((output) => output.split("\n"));
  equal(made?.[1], "opened");
  notEqual(after?.[0], made?.[0], "a new sandbox");
  deepStrictEqual(after?.slice(1), ["0", "No such file or directory"]);
});

Deno.test("A protected folder deleted or moved on the host between calls is protected again", async (t) => {
  for (
    const [name, change] of [
      ["deleted and made again", async (root: string) => {
        await Deno.remove(`${root}/.git/hooks`, { recursive: true });
        await Deno.mkdir(`${root}/.git/hooks`);
      }],
      ["moved away and replaced", async (root: string) => {
        await Deno.rename(`${root}/.git`, `${root}/.git-old`);
        await Deno.mkdir(`${root}/.git/hooks`, { recursive: true });
        await Deno.copyFile(`${root}/.git-old/HEAD`, `${root}/.git/HEAD`);
        await Deno.copyFile(`${root}/.git-old/config`, `${root}/.git/config`);
        await Deno.mkdir(`${root}/.git/objects`);
      }],
    ] as const
  ) {
    await t.step(name, async () => {
      await using workspace = await createTempWorkspace();
      await git(workspace.root, "init", "-q");
      await using sandbox = await openSandbox(workspace.root, "workspace-write");
      await using host = keptHost();
      const before = await runIn(sandbox, "echo x > .git/hooks/pre-commit || echo refused", { runner: host });
      match(outputOf(before.result), /Read-only file system[\s\S]*refused/);
      await change(workspace.root);
      const { result } = await runIn(sandbox, "echo x > .git/hooks/pre-commit || echo refused", {
        runner: host,
      });
      match(outputOf(result), /refused/);
      equal(await exists(`${workspace.root}/.git/hooks/pre-commit`), false);
    });
  }
});

Deno.test("Placeholders stay while the kept sandbox lives, follow the user's own folder, and go at close", async () => {
  await using workspace = await createTempWorkspace();
  const sandbox = await openSandbox(workspace.root, "workspace-write");
  const host = new ShellHost();
  try {
    const first = await runIn(sandbox, `${SANDBOX_ID}; mkdir -p .vscode/x 2>&1 | grep -c Read-only`, {
      runner: host,
    });
    const [id, refused] = outputOf(first.result).split("\n");
    equal(refused, "1");
    ok(await exists(`${workspace.root}/.vscode`), "the placeholder stays for the next call");
    const second = await runIn(sandbox, SANDBOX_ID, { runner: host });
    equal(outputOf(second.result), id, "an empty placeholder of ours does not change the plan");
    // The user makes the folder theirs: the next call sees it, read-only.
    await Deno.writeTextFile(`${workspace.root}/.vscode/settings.json`, "{}\n");
    const third = await runIn(
      sandbox,
      "cat .vscode/settings.json; echo y > .vscode/settings.json || echo refused",
      {
        runner: host,
      },
    );
    match(outputOf(third.result), /^\{\}\n[\s\S]*Read-only file system[\s\S]*refused$/);
  } finally {
    await host.close();
    await sandbox.close();
  }
  for (const name of [".mewcode", ".idea"]) {
    equal(await exists(`${workspace.root}/${name}`), false, `${name} removed at close`);
  }
  equal(
    await Deno.readTextFile(`${workspace.root}/.vscode/settings.json`),
    "{}\n",
    "the user's folder stays",
  );
});

Deno.test("A timeout or a cancellation ends the kept sandbox with everything in it; the next call gets a new one", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const marker = `kept_${crypto.randomUUID().replaceAll("-", "")}`;
  const id = outputOf((await runIn(sandbox, SANDBOX_ID, { runner: host })).result);
  const slow = await runIn(sandbox, `echo begun; ${marker}() { sleep 300; }; ${marker}`, {
    runner: host,
    timeout: 500,
  });
  equal(slow.result.metadata.process, "timed-out");
  match(slow.result.content, /begun/);
  equal(await processesWith(marker), 0);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const cancelled = await runIn(sandbox, `${marker}() { sleep 300; }; ${marker}`, {
    runner: host,
    signal: controller.signal,
  });
  equal(cancelled.result.metadata.process, "cancelled");
  equal(await processesWith(marker), 0);
  const after = await runIn(sandbox, SANDBOX_ID, { runner: host });
  notEqual(outputOf(after.result), id);
});

Deno.test("A call whose time runs out while its sandbox starts leaves no process of it behind", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  // The workspace's path is in every bubblewrap command line of this test, and in no other.
  const stuck = () => processesWith(workspace.root);
  try {
    // Killed between its clone and the go-ahead it gives its child, bubblewrap leaves the child waiting for
    // it forever, outside any sandbox yet: a model asking for 10 to 25 ms left one every ten calls.
    for (let index = 0; index < 60; index++) {
      const call = (async () => {
        await using host = keptHost();
        return await runIn(sandbox, `echo ${index}`, { runner: host, timeout: 5 + (index % 25) });
      })();
      // The stuck child holds the sandbox's pipes, and closing the host waited for them for ever.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = new Promise<"hung">((resolve) => timer = setTimeout(() => resolve("hung"), 15_000));
      const outcome = await Promise.race([call, hung]);
      clearTimeout(timer);
      if (outcome === "hung") {
        throw new Error(`call ${index} never returned; ${await stuck()} processes stuck`);
      }
      const { result } = outcome;
      ok(result.metadata.process === "timed-out" || outputOf(result) === String(index), result.content);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    equal(await stuck(), 0);
  } finally {
    // Left by a failure, they would stay until the machine restarts.
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const commandLine = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
      if (commandLine.includes(workspace.root)) {
        try {
          Deno.kill(Number(entry.name), "SIGKILL");
        } catch {
          // Gone.
        }
      }
    }
  }
});

Deno.test("The kept sandbox reports exit codes, syntax errors and both streams in order, like bash -c", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const mixed = await runIn(sandbox, "echo one; echo two >&2; echo three; exit 42", { runner: host });
  deepStrictEqual([outputOf(mixed.result), exitCodeOf(mixed.result)], ["one\ntwo\nthree", 42]);
  const syntax = await runIn(sandbox, "echo before; if then", { runner: host });
  match(outputOf(syntax.result), /syntax error/);
  equal(exitCodeOf(syntax.result), 2);
  const signalled = await runIn(sandbox, "kill -TERM $BASHPID", { runner: host });
  equal(exitCodeOf(signalled.result), 143);
  // $$ is the command's own shell, as for bash -c: a script that ends itself this way ends.
  const itself = await runIn(sandbox, "kill -TERM $$; echo not-reached", { runner: host });
  deepStrictEqual([outputOf(itself.result), exitCodeOf(itself.result)], ["", 143]);
  const nul = await runIn(sandbox, "echo a\0b", { runner: host });
  equal(nul.result.isError, true);
  match(nul.result.content, /NUL character/);
});

Deno.test("Through the session's runtime, Bash's worker keeps one sandbox, started by sh, until the runtime closes", async () => {
  await using workspace = await createTempWorkspace();
  const runtime = await testRuntime(workspace.root);
  const ids: string[] = [];
  let marker = "";
  try {
    for (let index = 0; index < 3; index++) {
      const { result } = await runtime.pipeline.run(
        { id: `kept_${index}`, name: "Bash", input: { command: `${SANDBOX_ID}; echo $PPID` } },
        { signal: new AbortController().signal },
      );
      equal(result.isError, false, result.content);
      equal(result.metadata.keptSandbox, true);
      ids.push(outputOf(result).split("\n")[0] ?? "");
    }
    ok(await exists(`${workspace.root}/.vscode`), "the kept sandbox's placeholder is there between calls");
    const { result } = await runtime.pipeline.run(
      { id: "kept_ps", name: "Bash", input: { command: "cat /proc/1/cmdline | tr '\\0' ' '" } },
      { signal: new AbortController().signal },
    );
    marker = outputOf(result);
  } finally {
    await runtime.close();
  }
  equal(new Set(ids).size, 1, `one sandbox served every call: ${ids.join(", ")}`);
  match(marker, /^\/dev\/\.mewcode-shell -c /);
  equal(await exists(`${workspace.root}/.vscode`), false, "placeholders are removed when the runtime closes");
});

Deno.test("A runtime that cannot start leaves neither the kept sandbox's files nor its cgroups behind", async () => {
  await using workspace = await createTempWorkspace();
  await using temporary = await createTempWorkspace("mewcode-kept-files-");
  await rejects(
    testRuntime(workspace.root, { executor: "no-such-executor" as "worker", keptFilesIn: temporary.root }),
  );
  deepStrictEqual(await Array.fromAsync(Deno.readDir(temporary.root)), []);
});

Deno.test("Descriptors that mewcode's parent left open do not reach a sandboxed command", async (t) => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const target = `${outside.root}/target`;
  await Deno.writeTextFile(target, "");
  for (const mode of ["workspace-write", "read-only", "danger-full-access"]) {
    await t.step(mode, async () => {
      const input = JSON.stringify({
        command: "echo leaked >&7; echo leaked >&12; ls /proc/self/fd | wc -l",
      });
      // A parent that opens descriptors without close-on-exec (an editor, a CI runner) and starts mewcode.
      const output = await new Deno.Command("bash", {
        args: [
          "-c",
          `exec 7>>"$1" 12>>"$1"; exec "$2" tool Bash "$3" --sandbox "$4"`,
          "bash",
          target,
          LAUNCHER,
          input,
          mode,
        ],
        cwd: workspace.root,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(output.stdout);
      equal(output.code, 0, stdout + new TextDecoder().decode(output.stderr));
      match(stdout, /7: Bad file descriptor/);
      match(stdout, /12: Bad file descriptor/);
      equal(await Deno.readTextFile(target), "", "nothing was written through an inherited descriptor");
    });
  }
});

Deno.test({
  name:
    "Where the kept sandbox cannot start (its files on a noexec mount), each call gets a sandbox of its own",
  // Mounting the noexec folder needs root, as this suite runs in CI and containers.
  ignore: Deno.uid() !== 0,
  async fn() {
    await using workspace = await createTempWorkspace();
    await using mountPoint = await createTempWorkspace("mewcode-noexec-");
    const mounted = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "noexec", "tmpfs", mountPoint.root],
    })
      .output();
    ok(mounted.success, new TextDecoder().decode(mounted.stderr));
    try {
      for (const deferPreflight of [false, true]) {
        await using sandbox = await openSandbox(workspace.root, "workspace-write", {
          deferPreflight,
          keptFilesIn: mountPoint.root,
        });
        await using host = keptHost();
        const { result } = await runIn(sandbox, "echo works", { runner: host });
        equal(outputOf(result), "works");
        equal(result.metadata.keptSandbox, false);
        equal(sandbox.plan.persistent, undefined);
        ok(sandbox.caveats.some((line) => /the sandbox kept across calls cannot start here/.test(line)));
      }
    } finally {
      await new Deno.Command("umount", { args: [mountPoint.root] }).output();
    }
  },
});

Deno.test("A sandbox that a call ended is replaced at once: the next call finds the new one started", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const first = await runIn(sandbox, `${SANDBOX_ID}; echo x > /tmp/left`, { runner: host });
  // The model's next turn takes a while; the replacement starts meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 600));
  const { result } = await runIn(sandbox, `${SANDBOX_ID}; ${SANDBOX_AGE_MS}`, { runner: host });
  const [id, ageMs] = outputOf(result).split("\n");
  notEqual(id, outputOf(first.result), "a new sandbox");
  ok(Number(ageMs) >= 300, `the sandbox was started ${ageMs} ms before the call, not by it`);
  equal(result.metadata.keptSandbox, true);
});

Deno.test("A sandbox that ended before its call's outcome was read is replaced at once too", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  await using host = keptHost();
  const started = `${workspace.root}/started`;
  // The first call on this sandbox; while it runs, this thread is kept busy until the sandbox has ended
  // (as a loaded worker would be), so the call's end and the sandbox's exit are read together.
  const call = runIn(sandbox, `touch started; sleep 0.2; ${SANDBOX_ID}; echo x > /tmp/left`, {
    runner: host,
  });
  while (!(await Deno.stat(started).then(() => true, () => false))) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const until = performance.now() + 800;
  while (performance.now() < until) {
    // Busy: nothing of the sandbox is read meanwhile.
  }
  const first = await call;
  await new Promise((resolve) => setTimeout(resolve, 600));
  const { result } = await runIn(sandbox, `${SANDBOX_ID}; ${SANDBOX_AGE_MS}`, { runner: host });
  const [id, ageMs] = outputOf(result).split("\n");
  notEqual(id, outputOf(first.result), "a new sandbox");
  ok(Number(ageMs) >= 300, `the sandbox was started ${ageMs} ms before the call, not by it`);
});
