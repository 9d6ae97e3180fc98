/**
 * The kept sandbox's private folder (`mewcode-shell-…` in the temporary folder: a 1.2 MB copy of the shell,
 * the seccomp program and a lock file) is removed when its session ends; a mewcode process killed with
 * SIGKILL cannot, and the next session removes what it left: a folder whose lock no process holds, and
 * nothing else. A live session's folder stays, whatever the process that looks.
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { prepareKeptSandboxFiles, removeKeptSandboxFiles } from "../../src/sandbox/kept_sandbox.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { processesWith } from "../_fakes/processes.ts";

async function names(directory: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(directory))).map((entry) => entry.name).sort();
}

async function waitFor(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!await condition()) {
    ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The environment of a run against `server`, with its own home and temporary folder. */
type RunEnv = (server: { env(): Record<string, string> }) => Record<string, string>;

/** A fresh `sleep` argument to find a run's command by. */
function sleepMarker(): string {
  return `700.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** A `mewcode -p` run in `cwd` kept waiting in a Bash call (`sleep MARKER`), until the test ends it. */
async function waitingRun(cwd: string, env: RunEnv, sleep: string) {
  const server = await startFakeAnthropic([
    turn().toolUse("Bash", { command: `sleep ${sleep}` }),
    turn().text("Done.").stop("end_turn"),
  ]);
  const child = new Deno.Command(LAUNCHER, {
    args: ["-p", "wait", "--permission-mode", "bypassPermissions"],
    cwd,
    env: env(server),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor("the sleep started", async () => (await processesWith(sleep)) > 0);
  return { server, child };
}

/** Kills a waiting run with SIGKILL, and waits until its command is gone too. */
async function killRun(run: Awaited<ReturnType<typeof waitingRun>>, sleep: string): Promise<void> {
  run.child.kill("SIGKILL");
  await run.child.status;
  await run.server.close();
  // bubblewrap dies with its parent, and the command with it.
  await waitFor("the killed run's command ended", async () => (await processesWith(sleep)) === 0);
}

/** A whole `mewcode -p` run in `cwd` that makes one Bash call, which must succeed. */
async function bashRun(cwd: string, env: RunEnv): Promise<void> {
  await using server = await startFakeAnthropic([
    turn().toolUse("Bash", { command: "true" }),
    turn().text("Done.").stop("end_turn"),
  ]);
  const run = await new Deno.Command(LAUNCHER, {
    args: ["-p", "go", "--permission-mode", "bypassPermissions"],
    cwd,
    env: env(server),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(run.code, 0, new TextDecoder().decode(run.stderr));
}

Deno.test("a new session removes the private folders whose lock no process holds, and nothing else", async () => {
  await using temporary = await createTempWorkspace("mewcode-left-folders-");
  const dir = temporary.root;
  const folder = async (name: string, files: Record<string, string>, mode = 0o700): Promise<void> => {
    await Deno.mkdir(join(dir, name));
    for (const [file, content] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name, file), content);
    }
    await Deno.chmod(join(dir, name), mode);
  };
  const all = { "owner.lock": "", "seccomp.bpf": "bpf", shell: "elf" };
  await folder("mewcode-shell-left01", all);
  await folder("mewcode-shell-left02", all);
  // Kept: one whose lock is held, an older version's (no lock file), one holding something else, another
  // mode, one whose shell is a link, one not named as ours.
  await folder("mewcode-shell-live01", all);
  await folder("mewcode-shell-old001", { "seccomp.bpf": "bpf", shell: "elf" });
  await folder("mewcode-shell-mine01", { ...all, "notes.txt": "mine" });
  await folder("mewcode-shell-open01", all, 0o755);
  await folder("mewcode-shell-link01", { "owner.lock": "", "seccomp.bpf": "bpf" });
  await Deno.symlink("/etc/passwd", join(dir, "mewcode-shell-link01", "shell"));
  await folder("other-left01", all);
  using held = await Deno.open(join(dir, "mewcode-shell-live01", "owner.lock"), { write: true });
  ok(await held.tryLock(true));
  const files = await prepareKeptSandboxFiles({
    shell: "/bin/sh",
    seccomp: new Uint8Array([1]),
    directory: dir,
  });
  ok(files !== null);
  const own = files.directory.slice(dir.length + 1);
  try {
    deepStrictEqual(await names(files.directory), ["owner.lock", "seccomp.bpf", "shell"]);
    deepStrictEqual(
      await names(dir),
      [
        "mewcode-shell-link01",
        "mewcode-shell-live01",
        "mewcode-shell-mine01",
        "mewcode-shell-old001",
        "mewcode-shell-open01",
        "other-left01",
        own,
      ].sort(),
    );
    // A session that starts while this one runs leaves its folder alone (its lock is held).
    const next = await prepareKeptSandboxFiles({
      shell: "/bin/sh",
      seccomp: new Uint8Array([1]),
      directory: dir,
    });
    ok(next !== null);
    ok((await names(dir)).includes(own), "a live session's folder was removed");
    await removeKeptSandboxFiles(next);
  } finally {
    await removeKeptSandboxFiles(files);
  }
  ok(!(await names(dir)).includes(own), "the session removed its own folder");
});

Deno.test("a left folder's placeholders go only while empty folders made since they were recorded", async () => {
  await using temporary = await createTempWorkspace("mewcode-left-folders-");
  await using workspace = await createTempWorkspace("mewcode-left-ws-");
  const at = (name: string) => join(workspace.root, name);
  const since = Date.now();
  for (const name of ["made", "filled", "older", "target", "torn", "relative"]) await Deno.mkdir(at(name));
  await Deno.writeTextFile(join(at("filled"), "notes.txt"), "the user's");
  // There before the session decided to make a placeholder there: someone else's.
  const old = new Date(since - 60_000);
  await Deno.utime(at("older"), old, old);
  await Deno.symlink(at("target"), at("link"));
  const record = [
    ...["made", "filled", "older", "link", "missing"].map((name) =>
      JSON.stringify({ path: at(name), since })
    ),
    JSON.stringify({ path: "relative", since }),
    "not json",
    "",
  ].join("\n") + JSON.stringify({ path: at("torn"), since });
  const left = join(temporary.root, "mewcode-shell-left01");
  await Deno.mkdir(left);
  for (const [file, content] of Object.entries({ "owner.lock": "", "seccomp.bpf": "b", shell: "e" })) {
    await Deno.writeTextFile(join(left, file), content);
  }
  await Deno.writeTextFile(join(left, "placeholders"), record);
  await Deno.chmod(left, 0o700);
  const files = await prepareKeptSandboxFiles({
    shell: "/bin/sh",
    seccomp: new Uint8Array([1]),
    directory: temporary.root,
  });
  ok(files !== null);
  await removeKeptSandboxFiles(files);
  deepStrictEqual(await names(temporary.root), []);
  deepStrictEqual(
    await names(workspace.root),
    ["filled", "link", "older", "relative", "target", "torn"],
    "only the empty folder made since its record went",
  );
});

Deno.test("e2e: a run removes the folder of a mewcode -p killed with SIGKILL, not a running one's", async () => {
  await using workspace = await createTempWorkspace("mewcode-left-ws-");
  await using home = await createTempWorkspace("mewcode-left-home-");
  await using temporary = await createTempWorkspace("mewcode-left-tmp-");
  const env: RunEnv = (server) => ({ ...server.env(), MEWCODE_HOME: home.root, TMPDIR: temporary.root });
  const live = await waitingRun(workspace.root, env, sleepMarker());
  try {
    const liveFolder = await names(temporary.root);
    equal(liveFolder.length, 1, `the running session's folder: ${liveFolder}`);
    const killedSleep = sleepMarker();
    await killRun(await waitingRun(workspace.root, env, killedSleep), killedSleep);
    equal((await names(temporary.root)).length, 2, "the killed run left its folder");
    await bashRun(workspace.root, env);
    deepStrictEqual(
      await names(temporary.root),
      liveFolder,
      "the next run removed the killed run's folder and its own, and left the running session's",
    );
  } finally {
    live.child.kill("SIGTERM");
    await live.child.status;
    await live.server.close();
  }
  deepStrictEqual(await names(temporary.root), [], "the running session removed its folder when it ended");
});

Deno.test("e2e: the placeholders a run killed with SIGKILL left in its workspace go with its folder", async () => {
  await using workspace = await createTempWorkspace("mewcode-left-ws-");
  await using other = await createTempWorkspace("mewcode-left-other-");
  await using home = await createTempWorkspace("mewcode-left-home-");
  await using temporary = await createTempWorkspace("mewcode-left-tmp-");
  const env: RunEnv = (server) => ({ ...server.env(), MEWCODE_HOME: home.root, TMPDIR: temporary.root });
  // The user's own empty .idea, there before any session: never mewcode's to remove.
  await Deno.mkdir(join(workspace.root, ".idea"));
  const sleep = sleepMarker();
  await killRun(await waitingRun(workspace.root, env, sleep), sleep);
  // A placeholder for each protected folder a top level may not gain (and the user's .idea).
  const placeholders = PROTECTED_PATHS.filter((entry) => entry.folder === true && !entry.path.includes("/"))
    .map((entry) => entry.path);
  deepStrictEqual(
    await names(workspace.root),
    [...new Set([...placeholders, ".idea"])].sort(),
    "the placeholders were left",
  );
  // The user puts something in one of them since: it is theirs now.
  await Deno.writeTextFile(join(workspace.root, ".vscode", "settings.json"), "{}\n");
  // The next run, in another workspace, with the same temporary folder.
  await bashRun(other.root, env);
  deepStrictEqual(await names(temporary.root), [], "the killed run's folder went");
  deepStrictEqual(await names(workspace.root), [".idea", ".vscode"], "the empty placeholder it made went");
  deepStrictEqual(await names(join(workspace.root, ".vscode")), ["settings.json"]);
  deepStrictEqual(await names(other.root), [], "the next run removed its own placeholders");
});

Deno.test("e2e: a command cannot reach the private folder when the temporary folder lies in the workspace", async () => {
  // TMPDIR=~/tmp with the workspace the home, say: mewcode writes its record of placeholders there after
  // calls, from its own process on the host, and starts each kept sandbox with the seccomp program there.
  await using workspace = await createTempWorkspace("mewcode-left-ws-");
  await using home = await createTempWorkspace("mewcode-left-home-");
  await using outside = await createTempWorkspace("mewcode-victim-");
  const temporary = join(workspace.root, "tmp");
  await Deno.mkdir(temporary);
  const victim = join(outside.root, "victim.txt");
  await Deno.writeTextFile(victim, "the user's file\n");
  await using server = await startFakeAnthropic([
    turn().toolUse("Bash", {
      command: `ls -A tmp/mewcode-shell-*; for folder in tmp/mewcode-shell-*; do ` +
        `ln -sf '${victim}' "$folder/placeholders"; printf x > "$folder/seccomp.bpf"; done`,
    }),
    turn().toolUse("Bash", { command: "true" }),
    turn().text("Done.").stop("end_turn"),
  ]);
  const run = await new Deno.Command(LAUNCHER, {
    args: ["-p", "go", "--permission-mode", "bypassPermissions"],
    cwd: workspace.root,
    env: { ...server.env(), MEWCODE_HOME: home.root, TMPDIR: temporary },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(run.code, 0, new TextDecoder().decode(run.stderr));
  equal(await Deno.readTextFile(victim), "the user's file\n", "mewcode wrote through the command's symlink");
  const told = JSON.stringify(server.requests[1]?.body);
  ok(told.includes("<output></output>"), `the command saw the private folder's files: ${told}`);
  deepStrictEqual(await names(temporary), [], "the session removed its folder");
});
