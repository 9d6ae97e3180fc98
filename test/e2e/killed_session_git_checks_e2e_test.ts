/**
 * End to end: a mewcode killed with SIGKILL mid-session never runs its end checks of the git metadata. The
 * next session in the workspace compares with the killed session's first scan, kept in mewcode's state
 * folder, and reports what changed since (here an index entry marked skip-worktree, which git status hides).
 */
import { equal, match, ok } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { processesWith } from "../_fakes/processes.ts";
import { waitFor } from "../_fakes/wait_for.ts";
import { userGit } from "../_fakes/user_git.ts";

/** The records of first scans kept in mewcode's state folder, with their modes. */
async function keptRecords(home: string): Promise<{ path: string; mode: number }[]> {
  const found: { path: string; mode: number }[] = [];
  const walk = async (folder: string): Promise<void> => {
    for await (const entry of Deno.readDir(folder)) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.name.startsWith("unchecked-git-")) {
        found.push({ path, mode: (await Deno.lstat(path)).mode! });
      }
    }
  };
  await walk(home);
  return found;
}

Deno.test("A session after one killed mid-session reports the git metadata changes the killed one never checked", async () => {
  await using workspace = await E2eWorkspace.create();
  await userGit(workspace.root, "init", "-q", "-b", "main");
  await workspace.write("a.txt", "one\n");
  await userGit(workspace.root, "add", "a.txt");
  await userGit(workspace.root, "commit", "-q", "-m", "first");
  const marker = `30.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await using server = await startFakeAnthropic([
    turn().toolUse("Bash", { command: "git update-index --skip-worktree a.txt" }).stop("tool_use"),
    turn().toolUse("Bash", { command: `sleep ${marker}` }).stop("tool_use"),
    turn().toolUse("Bash", { command: "true" }).stop("tool_use"),
    turn().text("Hello.").stop("end_turn"),
  ]);
  const child = workspace.spawn(server, ["-p", "mark it", "--permission-mode", "bypassPermissions"]);
  await waitFor("the slow Bash call never started", async () => (await processesWith(marker)) > 0);
  match(await userGit(workspace.root, "ls-files", "-v"), /^S a\.txt$/m, "the first call marked a.txt");
  Deno.kill(child.pid, "SIGKILL");
  equal((await child.status).signal, "SIGKILL");
  await waitFor("the sandbox outlived its mewcode", async () => (await processesWith(marker)) === 0);
  const kept = await keptRecords(workspace.home);
  equal(kept.length, 1, JSON.stringify(kept));
  equal(kept[0]!.mode & 0o777, 0o600);

  const next = await workspace.run(server, ["--permission-mode", "bypassPermissions"], "go on");
  equal(next.code, 0, next.stderr);
  equal(next.stdout, "Hello.\n");
  ok(/earlier session/i.test(next.stderr), next.stderr);
  ok(next.stderr.includes('marks "a.txt" skip-worktree'), next.stderr);

  // Reported once: the session after that one finds nothing left to check.
  await using quiet = await startFakeAnthropic([
    turn().toolUse("Bash", { command: "true" }).stop("tool_use"),
    turn().text("Bye.").stop("end_turn"),
  ]);
  const last = await workspace.run(quiet, ["--permission-mode", "bypassPermissions"], "again");
  equal(last.code, 0, last.stderr);
  ok(!last.stderr.includes("skip-worktree"), last.stderr);
  equal((await keptRecords(workspace.home)).length, 0, "sessions that ended remove their records");
});
