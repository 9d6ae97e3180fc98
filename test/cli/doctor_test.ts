import { equal, match } from "node:assert/strict";
import { parseCli } from "../../src/cli/args.ts";
import { runDoctor } from "../../src/cli/doctor_command.ts";
import type { HelperPaths } from "../../src/sandbox/helpers.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

/** What runDoctor prints and returns, run in this process with injected helper programs. */
async function doctorWith(
  root: string,
  args: string[],
  helpers: HelperPaths,
): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const code = await runDoctor({
    workspace: { root, aliases: [] },
    options: parseCli(["doctor", ...args]),
    helpers,
    env: Deno.env.toObject(),
    print: (text) => (stdout += text),
  });
  return { code, stdout };
}

const WITHOUT_BUBBLEWRAP: HelperPaths = {
  bwrap: null,
  bash: "/usr/bin/bash",
  sh: "/usr/bin/sh",
  git: null,
  rg: null,
};

Deno.test("mewcode doctor reports Deno, the workspace, the sandbox and enforced worker permissions, and exits 0", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor"], { cwd: workspace.root });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, new RegExp(`^Deno: ${Deno.version.deno.replaceAll(".", "\\.")} `, "m"));
  match(run.stdout, new RegExp(`^Workspace: ${workspace.root}$`, "m"));
  match(run.stdout, /trust: not configured \(every folder is treated as untrusted/);
  match(run.stdout, /backend: bubblewrap/);
  match(run.stdout, /preflight: ok/);
  for (const kind of ["read-only", "writer", "shell"]) {
    match(
      run.stdout,
      new RegExp(`^  ${kind}: ok: .*reading /etc/hostname is refused by Deno \\(NotCapable\\)$`, "m"),
    );
  }
  match(run.stdout, /^ {2}read-only: ok: reading the workspace is allowed$/m);
  match(run.stdout, /^ {2}shell: ok: spawning "\/usr\/bin\/bwrap" is allowed$/m);
  match(run.stdout, /^ {4}bwrap: \/usr\/bin\/bwrap$/m);
  match(run.stdout, /seccomp: socket\(AF_UNIX\) fails with EPERM/);
  match(run.stdout, /home: every home folder is an empty tmpfs/);
  match(run.stdout, /^ {4}processes: /m);
  match(run.stdout, /^ {4}memory: /m);
  match(run.stdout, /^Everything works\.$/m);
});

Deno.test("mewcode doctor --sandbox danger-full-access checks that the shell's worker may spawn the shell", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor", "--sandbox", "danger-full-access"], { cwd: workspace.root });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /backend: bubblewrap \(\/usr\/bin\/bwrap\), PID namespace only/);
  match(run.stdout, /note: danger-full-access: commands can read and write everything your user can/);
  match(run.stdout, /^ {2}shell: ok: spawning "\/usr\/bin\/bwrap" is allowed$/m);
  match(run.stdout, /^Everything works\.$/m);
});

Deno.test("mewcode doctor exits 1 and says how to install bubblewrap when it is missing", async () => {
  await using workspace = await createTempWorkspace();
  const run = await doctorWith(workspace.root, [], WITHOUT_BUBBLEWRAP);
  equal(run.code, 1, run.stdout);
  match(run.stdout, /preflight: FAILED: .*bubblewrap \(bwrap\) was not found in the system directories/);
  match(run.stdout, /^1 problem to fix:$/m);
  match(run.stdout, /^ {2}- .*install bubblewrap \(apt-get install bubblewrap\)/m);
  match(run.stdout, /danger-full-access explicitly/);
  match(run.stdout, /^ {2}read-only: ok: .*refused by Deno \(NotCapable\)$/m);
});

Deno.test("mewcode doctor --read-only does not count a missing shell sandbox as a problem", async () => {
  await using workspace = await createTempWorkspace();
  const run = await doctorWith(workspace.root, ["--read-only"], WITHOUT_BUBBLEWRAP);
  equal(run.code, 0, run.stdout);
  match(run.stdout, /--read-only offers no Bash/);
  equal(/^ {2}(writer|shell): (ok|FAILED):/m.test(run.stdout), false, run.stdout);
  match(run.stdout, /^Everything works\.$/m);
});
