import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { hostDirectory, openSandbox, outputOf, runIn } from "./_sandbox.ts";

function assertIncludes(actual: string, expected: string): void {
  assert(
    actual.includes(expected),
    `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
}

function preflightLine(report: string[]): string {
  return report.find((line) => line.trim().startsWith("preflight:")) ?? "";
}

/** A bubblewrap that cannot create namespaces, and counts how often it was started. */
async function failingBubblewrap(dir: string): Promise<{ path: string; starts(): Promise<number> }> {
  const path = `${dir}/bwrap`;
  const counter = `${dir}/starts`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho started >> '${counter}'\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n`,
  );
  await Deno.chmod(path, 0o755);
  const starts = async () => {
    try {
      return (await Deno.readTextFile(counter)).split("\n").filter((line) => line !== "").length;
    } catch {
      return 0;
    }
  };
  return { path, starts };
}

Deno.test("a deferred preflight runs before the first shell call, not when the sandbox opens", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { deferPreflight: true });
  assertEquals(sandbox.unavailable, null);
  assertIncludes(preflightLine(sandbox.describe()), "not run yet");
  // A command of mewcode's own that succeeds proves nothing is wrong: the check still waits.
  const status = await sandbox.runCommand("echo fine", { mode: "read-only", timeoutMs: 10_000 });
  assertEquals(status.status === "exited" ? [status.code, status.stdout] : status, [0, "fine\n"]);
  assertIncludes(preflightLine(sandbox.describe()), "not run yet");
  const { result } = await runIn(sandbox, "echo hello");
  assertEquals(outputOf(result), "hello");
  assertEquals(preflightLine(sandbox.describe()).trim(), "preflight: ok");
});

Deno.test("a deferred preflight that fails makes the shell unavailable with the fixes, as at start-up", async () => {
  await using workspace = await createTempWorkspace();
  await using host = await hostDirectory("mewcode-deferred-bwrap-");
  const bwrap = await failingBubblewrap(host.path);
  await using sandbox = await openSandbox(workspace.root, "read-only", {
    deferPreflight: true,
    helpers: { bwrap: bwrap.path, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  assertEquals(await bwrap.starts(), 0);
  assertEquals(sandbox.unavailable, null);
  const call = await sandbox.prepareCall();
  const message = call.plan.unavailable;
  assert(message !== null);
  assertIncludes(message, "setting up uid map: Permission denied");
  assertIncludes(message, "kernel.apparmor_restrict_unprivileged_userns");
  assertEquals(sandbox.unavailable, message);
  assertEquals(preflightLine(sandbox.describe()).trim(), `preflight: FAILED: ${message}`);
  const { result } = await runIn(sandbox, "echo never");
  assertEquals([result.isError, result.content], [true, message]);
  // The check ran once (the kept sandbox, then a sandbox per call: both failed, then a sandbox per call
  // without a user namespace of its own, which bubblewrap run as root does not need); the Bash calls never
  // started bubblewrap.
  assertEquals(await bwrap.starts(), 3);
});

Deno.test("a command of mewcode's own that fails under a deferred preflight reports why the sandbox cannot run", async () => {
  await using workspace = await createTempWorkspace();
  await using host = await hostDirectory("mewcode-deferred-bwrap-");
  const bwrap = await failingBubblewrap(host.path);
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    deferPreflight: true,
    helpers: { bwrap: bwrap.path, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
  });
  const first = await sandbox.runCommand("git status", { mode: "read-only", timeoutMs: 10_000 });
  assertEquals(first.status, "failed");
  assertIncludes(
    first.status === "failed" ? first.message : "",
    "kernel.apparmor_restrict_unprivileged_userns",
  );
  // The command, then the check (the kept sandbox, then a sandbox per call, then one without a user
  // namespace of its own): four starts. Later commands are refused without starting bubblewrap.
  assertEquals(await bwrap.starts(), 4);
  const second = await sandbox.runCommand("git status", { mode: "read-only", timeoutMs: 10_000 });
  assertEquals(second.status, "failed");
  assertEquals(await bwrap.starts(), 4);
});

Deno.test("a command that fails on its own in the sandbox keeps its result, and leaves the workspace alone", async () => {
  await using workspace = await createTempWorkspace();
  // A workspace-write session: its own sandbox has placeholder folders (.vscode, .idea, .mewcode), which
  // the check would create in the workspace (and remove), changing its folder's modification time.
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { deferPreflight: true });
  const hourAgo = new Date(Date.now() - 3_600_000);
  await Deno.utime(workspace.root, hourAgo, hourAgo);
  // ripgrep exits 1 when nothing matches: the command ran in the sandbox, which proves bubblewrap works.
  const result = await sandbox.runCommand("echo nope >&2; exit 1", { mode: "read-only", timeoutMs: 10_000 });
  assertEquals(result.status === "exited" ? [result.code, result.stderr] : result, [1, "nope\n"]);
  assertIncludes(preflightLine(sandbox.describe()), "not run yet");
  assertEquals((await Deno.stat(workspace.root)).mtime?.getTime(), hourAgo.getTime());
  assertEquals([...Deno.readDirSync(workspace.root)], []);
});
