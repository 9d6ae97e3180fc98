import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { runSandboxedCommand } from "../../src/sandbox/sandboxed_command.ts";
import { bashTool } from "../../src/tools/bash.ts";
import type { ShellPlan } from "../../src/tools/tool.ts";
import { createTempWorkspace, toolContext } from "../_fakes/tool_context.ts";
import { hostDirectory, openSandbox } from "./_sandbox.ts";

/** The fixes that would not help against a command line or environment too long, and weaken the sandbox. */
const WRONG_FIXES = ["apt-get install bubblewrap", "sysctl", "apparmor", "danger-full-access"];

function assertTooLongMessage(message: string): void {
  assert(message.includes("Argument list too long"), message);
  assert(message.includes("the command line or environment is too long"), message);
  assert(message.includes('a long value in the "env" of a settings file'), message);
  for (const fix of WRONG_FIXES) assert(!message.includes(fix), `${JSON.stringify(fix)} in ${message}`);
}

Deno.test("a settings env too long to start bubblewrap names the cause, not bubblewrap, sysctls or no sandbox", async () => {
  await using workspace = await createTempWorkspace();
  // Never run: Linux refuses the start before the program matters.
  await using host = await hostDirectory("mewcode-fake-bwrap-");
  const fake = `${host.path}/bwrap`;
  await Deno.writeTextFile(fake, "#!/bin/sh\nexit 1\n");
  await Deno.chmod(fake, 0o755);
  for (const mode of ["read-only", "workspace-write"] as const) {
    await using sandbox = await openSandbox(workspace.root, mode, {
      helpers: { bwrap: fake, bash: "/usr/bin/bash", sh: "/usr/bin/sh", git: null, rg: null, cat: null },
      extraEnv: { BIG: "x".repeat(200_000) },
    });
    const message = sandbox.unavailable;
    assert(message !== null);
    assert(message.startsWith(`Cannot run Bash in the "${mode}" sandbox: cannot start bubblewrap`), message);
    assertTooLongMessage(message);
    const result = await bashTool.execute(toolContext(workspace.root, { shell: sandbox.plan }), {
      command: "true",
    });
    assertEquals(result.isError, true);
    assertTooLongMessage(String(result.content));
  }
});

Deno.test("a sandboxed command whose input is too long to start says so, with no sandbox advice", async () => {
  const plan: ShellPlan = {
    mode: "workspace-write",
    network: false,
    wrapper: [],
    shell: "/bin/sh",
    env: { PATH: "/usr/bin:/bin" },
    prologue: [],
    seccomp: null,
    unavailable: null,
  };
  // The input travels in the shell's script, one argument.
  const result = await runSandboxedCommand(plan, {
    command: "cat >/dev/null",
    stdin: "x".repeat(200_000),
    timeoutMs: 10_000,
  });
  assertEquals(result.status, "failed");
  assert(result.status === "failed");
  assertTooLongMessage(result.message);
});
