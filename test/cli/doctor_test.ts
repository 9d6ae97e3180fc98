import { equal, match } from "node:assert/strict";
import { runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

/** A directory holding only the programs the launcher needs, so that bubblewrap is not on PATH. */
async function pathWithoutBubblewrap(directory: string): Promise<string> {
  await Deno.mkdir(directory);
  for (const name of ["bash", "sh", "dirname", "readlink", "head", "cut"]) {
    for (const candidate of [`/usr/bin/${name}`, `/bin/${name}`]) {
      try {
        await Deno.stat(candidate);
      } catch {
        continue;
      }
      await Deno.symlink(candidate, `${directory}/${name}`);
      break;
    }
  }
  return directory;
}

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
  match(run.stdout, /^ {2}shell: ok: spawning "bwrap" is allowed$/m);
  match(run.stdout, /^Everything works\.$/m);
});

Deno.test("mewcode doctor --sandbox danger-full-access checks that the shell's worker may spawn the shell", async () => {
  await using workspace = await createTempWorkspace();
  const run = await runMewcode(["doctor", "--sandbox", "danger-full-access"], { cwd: workspace.root });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /danger-full-access was chosen explicitly/);
  match(run.stdout, /^ {2}shell: ok: spawning "\/[^"]*\/(bash|sh)" is allowed$/m);
  match(run.stdout, /^Everything works\.$/m);
});

Deno.test("mewcode doctor exits 1 and says how to install bubblewrap when it is missing", async () => {
  await using workspace = await createTempWorkspace();
  await using tools = await createTempWorkspace("mewcode-doctor-path-");
  const path = await pathWithoutBubblewrap(`${tools.root}/bin`);
  const run = await runMewcode(["doctor"], {
    cwd: workspace.root,
    env: { PATH: path, MEWCODE_DENO: Deno.execPath() },
  });
  equal(run.code, 1, run.stdout + run.stderr);
  match(run.stdout, /preflight: FAILED: .*bubblewrap \("bwrap"\) is not installed/);
  match(run.stdout, /^1 problem to fix:$/m);
  match(run.stdout, /^ {2}- .*install bubblewrap \(apt-get install bubblewrap\)/m);
  match(run.stdout, /danger-full-access explicitly/);
  match(run.stdout, /^ {2}read-only: ok: .*refused by Deno \(NotCapable\)$/m);
});

Deno.test("mewcode doctor --read-only does not count a missing shell sandbox as a problem", async () => {
  await using workspace = await createTempWorkspace();
  await using tools = await createTempWorkspace("mewcode-doctor-path-");
  const path = await pathWithoutBubblewrap(`${tools.root}/bin`);
  const run = await runMewcode(["doctor", "--read-only"], {
    cwd: workspace.root,
    env: { PATH: path, MEWCODE_DENO: Deno.execPath() },
  });
  equal(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /--read-only offers no Bash/);
  equal(/^ {2}(writer|shell): (ok|FAILED):/m.test(run.stdout), false, run.stdout);
  match(run.stdout, /^Everything works\.$/m);
});
