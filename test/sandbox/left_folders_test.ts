/**
 * The kept sandbox's private folder (`mewcode-shell-<pid>-…` in the temporary folder: a 1.2 MB copy of the
 * shell and the seccomp program) is removed when its session ends; a mewcode process killed with SIGKILL
 * cannot, and the next session removes what it left, and nothing else.
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { prepareKeptSandboxFiles, removeKeptSandboxFiles } from "../../src/sandbox/kept_sandbox.ts";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { processesWith } from "../_fakes/processes.ts";

/** A process id that no process has now (one that just ended). */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

async function names(directory: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(directory))).map((entry) => entry.name).sort();
}

Deno.test("a new session removes the private folders of mewcode processes that are gone, and nothing else", async () => {
  await using temporary = await createTempWorkspace("mewcode-left-folders-");
  const dir = temporary.root;
  const gone = await deadPid();
  const folder = async (name: string, files: Record<string, string>, mode = 0o700): Promise<void> => {
    await Deno.mkdir(join(dir, name));
    for (const [file, content] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name, file), content);
    }
    await Deno.chmod(join(dir, name), mode);
  };
  const both = { "seccomp.bpf": "bpf", shell: "elf" };
  await folder(`mewcode-shell-${gone}-0a1b2c`, both);
  await folder(`mewcode-shell-${gone}-3d4e5f`, { "seccomp.bpf": "bpf" });
  // Kept: a live process's (pid 1), one holding something else, another mode, an old name without a pid.
  await folder("mewcode-shell-1-777777", both);
  await folder(`mewcode-shell-${gone}-888888`, { ...both, "notes.txt": "mine" });
  await folder(`mewcode-shell-${gone}-999999`, both, 0o755);
  await folder("mewcode-shell-abcdef0123", both);
  await folder(`mewcode-shell-${gone}-aaaaaa`, {});
  await Deno.symlink("/etc/passwd", join(dir, `mewcode-shell-${gone}-aaaaaa`, "shell")).catch(() =>
    undefined
  );
  const files = await prepareKeptSandboxFiles({
    shell: "/bin/sh",
    seccomp: new Uint8Array([1]),
    directory: dir,
  });
  ok(files !== null);
  const own = files.directory.slice(dir.length + 1);
  ok(own.startsWith(`mewcode-shell-${Deno.pid}-`), own);
  deepStrictEqual(
    await names(dir),
    [
      "mewcode-shell-1-777777",
      `mewcode-shell-${gone}-888888`,
      `mewcode-shell-${gone}-999999`,
      `mewcode-shell-${gone}-aaaaaa`,
      "mewcode-shell-abcdef0123",
      own,
    ].sort(),
  );
  await removeKeptSandboxFiles(files);
});

Deno.test("e2e: the folder a mewcode -p killed with SIGKILL left is removed by the next run", async () => {
  await using workspace = await createTempWorkspace("mewcode-left-ws-");
  await using home = await createTempWorkspace("mewcode-left-home-");
  await using temporary = await createTempWorkspace("mewcode-left-tmp-");
  const marker = `700.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const env = (server: { env(): Record<string, string> }) => ({
    ...server.env(),
    MEWCODE_HOME: home.root,
    TMPDIR: temporary.root,
  });
  {
    await using server = await startFakeAnthropic([turn().toolUse("Bash", { command: `sleep ${marker}` })]);
    const child = new Deno.Command(LAUNCHER, {
      args: ["-p", "wait", "--permission-mode", "bypassPermissions"],
      cwd: workspace.root,
      env: env(server),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const deadline = Date.now() + 60_000;
    while ((await processesWith(marker)) === 0) {
      ok(Date.now() < deadline, "the sleep never started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGKILL");
    await child.status;
    // bubblewrap dies with its parent, and the command with it.
    const killed = Date.now();
    while ((await processesWith(marker)) > 0) {
      ok(Date.now() - killed < 5_000, "the command outlived the killed mewcode by 5 s");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const left = await names(temporary.root);
  equal(left.length, 1, `the killed run left its folder: ${left}`);
  {
    await using server = await startFakeAnthropic([
      turn().toolUse("Bash", { command: "true" }),
      turn().text("Done.").stop("end_turn"),
    ]);
    const run = await new Deno.Command(LAUNCHER, {
      args: ["-p", "go", "--permission-mode", "bypassPermissions"],
      cwd: workspace.root,
      env: env(server),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(run.code, 0, new TextDecoder().decode(run.stderr));
  }
  deepStrictEqual(await names(temporary.root), [], "the next run removed it, and its own");
});
