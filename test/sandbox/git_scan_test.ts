import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { type GitScan, scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { diffGitFindings } from "../../src/sandbox/git_scan_diff.ts";
import { GitWatch } from "../../src/sandbox/git_watch.ts";
import { userGitConfig } from "../../src/sandbox/_user_git_config.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk, shellOk } from "./_git_fixture.ts";

async function writeFile(path: string, content: string, mode = 0o644): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, content);
  await Deno.chmod(path, mode);
}

/** `kind path name` of every finding, for readable assertions. */
const summary = (scan: GitScan): string[] =>
  scan.findings.map((finding) => `${finding.kind} ${finding.path} ${finding.name}`.trim());

Deno.test("scanGitMetadata finds repositories, hooks, command config and pointers at any depth", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const root = workspace.root;
  await createRepository(root);
  await gitOk(root, "config", "core.fsmonitor", "watch");
  await gitOk(root, "config", "include.path", "../team.gitconfig");
  await writeFile(join(root, "team.gitconfig"), "[alias]\n\tst = status\n\tx = !sh -c y\n");
  await writeFile(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\n", 0o755);
  await writeFile(join(root, ".git/hooks/post-commit"), "#!/bin/sh\n", 0o644);
  await writeFile(join(root, ".git/hooks/pre-push.sample"), "#!/bin/sh\n", 0o755);
  await createRepository(join(root, "node_modules/pkg"));
  await gitOk(join(root, "node_modules/pkg"), "config", "core.pager", "less");
  await createRepository(join(root, "store/x"));
  await writeFile(join(root, "store/x/.git/hooks/post-checkout"), "#!/bin/sh\n", 0o755);
  await writeFile(join(root, "a/b/c/.git"), "gitdir: ../../../store/x/.git\n");
  await createRepository(join(outside.root, "elsewhere"));
  await Deno.symlink(join(outside.root, "elsewhere"), join(root, "link"));
  const scan = await scanGitMetadata(root);
  equal(scan.complete, true);
  // Breadth first: shallower entries first, each level in name order.
  deepStrictEqual(scan.dotGits.map((path) => path.slice(root.length + 1)), [
    ".git",
    "node_modules/pkg/.git",
    "store/x/.git",
    "a/b/c/.git",
  ]);
  deepStrictEqual(summary(scan), [
    "repository .git",
    "config .git/config core.fsmonitor",
    "config .git/config include.path",
    "config team.gitconfig alias.x",
    "hook .git/hooks/pre-commit pre-commit",
    "repository node_modules/pkg/.git",
    "config node_modules/pkg/.git/config core.pager",
    "repository store/x/.git",
    "hook store/x/.git/hooks/post-checkout post-checkout",
    "pointer a/b/c/.git",
  ]);
  const pointer = scan.findings.find((finding) => finding.kind === "pointer")!;
  equal(pointer.value, "store/x/.git");
  equal(pointer.worktree, "a/b/c");
});

Deno.test("scanGitMetadata reads submodule and linked worktree git directories", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const root = workspace.root;
  await createRepository(root);
  await createRepository(join(outside.root, "upstream"));
  await gitOk(root, "submodule", "add", "-q", join(outside.root, "upstream"), "libs/sub");
  await gitOk(root, "worktree", "add", "-q", "wt");
  await gitOk(root, "config", "--file", ".git/modules/libs/sub/config", "core.sshCommand", "ssh -x");
  const scan = await scanGitMetadata(root);
  deepStrictEqual(summary(scan), [
    "repository .git",
    "repository libs/sub/.git",
    "config .git/modules/libs/sub/config core.worktree",
    "config .git/modules/libs/sub/config core.sshcommand",
    "repository wt/.git",
    "pointer .git/worktrees/wt/commondir",
    "pointer .git/worktrees/wt/gitdir",
    "pointer wt/.git",
    "pointer libs/sub/.git",
  ]);
  const ssh = scan.findings.find((finding) => finding.name === "core.sshcommand")!;
  equal(ssh.gitDir, ".git/modules/libs/sub");
  equal(ssh.worktree, "libs/sub");
});

Deno.test("diffGitFindings reports nothing for an unchanged workspace, and new or changed entries with a sentence", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await gitOk(root, "config", "core.pager", "less");
  await writeFile(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\n", 0o755);
  const before = await scanGitMetadata(root);
  deepStrictEqual(diffGitFindings(before, await scanGitMetadata(root)), { changes: [], notice: null });
  await gitOk(root, "config", "core.pager", "less -R\u001b[2J");
  // An invisible character would make "cat" and "c\u200bat" look alike.
  await gitOk(root, "config", "filter.x.clean", "c\u200bat");
  await writeFile(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n", 0o755);
  const diff = diffGitFindings(before, await scanGitMetadata(root));
  deepStrictEqual(diff.changes.map((change) => `${change.status}: ${change.message}`), [
    'changed: .git/config changes core.pager to "less -R\\u001b[2J" (runs when you use git in the workspace)',
    'new: .git/config sets filter.x.clean = "c\\u200bat" (runs when you use git in the workspace)',
    "changed: .git/hooks/pre-commit was changed (a hook that runs when you use git in the workspace)",
  ]);
});

Deno.test("scanGitMetadata stops at its entry limit or deadline and the diff says so", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  for (let index = 0; index < 20; index++) await writeFile(join(root, `d${index}/f`), "");
  const full = await scanGitMetadata(root);
  const limited = await scanGitMetadata(root, { maxEntries: 5 });
  equal(limited.complete, false);
  equal(limited.entries, 5);
  let clock = 0;
  const late = await scanGitMetadata(root, { timeoutMs: 1_500, now: () => (clock += 1_000) });
  equal(late.complete, false);
  ok(diffGitFindings(full, limited).notice!.startsWith("The git metadata scan stopped after 5 entries"));
  ok(diffGitFindings(late, full).notice!.startsWith("The first git metadata scan was incomplete"));
});

Deno.test("scanGitMetadata walks a 20,000-file workspace quickly enough to run after each shell call", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  for (let directory = 0; directory < 2_000; directory++) {
    const path = join(root, `p${directory % 20}`, `q${Math.floor(directory / 20) % 10}`, `r${directory}`);
    await Deno.mkdir(path, { recursive: true });
    for (let file = 0; file < 10; file++) Deno.writeTextFileSync(join(path, `f${file}.ts`), "x");
  }
  await createRepository(join(root, "p3/q4/r123/nested"));
  const times: number[] = [];
  let scan: GitScan | null = null;
  for (let run = 0; run < 5; run++) {
    scan = await scanGitMetadata(root);
    times.push(scan.elapsedMs);
  }
  times.sort((a, b) => a - b);
  console.log(
    `scan of ${scan!.entries} entries: median ${times[2]!.toFixed(1)} ms, max ${times[4]!.toFixed(1)} ms`,
  );
  equal(scan!.complete, true);
  ok(scan!.entries > 22_000);
  deepStrictEqual(scan!.dotGits.map((path) => path.slice(root.length + 1)), [
    ".git",
    "p3/q4/r123/nested/.git",
  ]);
  ok(times[2]! < 1_000, `median scan took ${times[2]} ms`);
});

/**
 * A workspace repository and a home folder outside it whose `.gitconfig` sets `core.hooksPath` to
 * `shared-hooks` in the workspace, as a user who keeps one hooks folder for every repository would.
 */
async function globalHooksPathFixture(root: string, home: string): Promise<string> {
  await createRepository(root);
  const hooks = join(root, "shared-hooks");
  await Deno.mkdir(hooks);
  await writeFile(join(home, ".gitconfig"), `[core]\n\thooksPath = ${hooks}\n`);
  return hooks;
}

Deno.test("diffGitFindings reports a hook written into the folder the user's global core.hooksPath names", async () => {
  await using workspace = await createTempWorkspace();
  await using home = await createTempWorkspace("mewcode-home-");
  const root = workspace.root;
  const hooks = await globalHooksPathFixture(root, home.root);
  const user = userGitConfig({ HOME: home.root, GIT_CONFIG_NOSYSTEM: "1" });
  const before = await scanGitMetadata(root, { user });
  await writeFile(join(hooks, "pre-commit"), "#!/bin/sh\ntouch ran\n", 0o755);
  const after = await scanGitMetadata(root, { user });
  deepStrictEqual(
    diffGitFindings(before, after).changes.map((change) => `${change.status}: ${change.message}`),
    [
      "new: shared-hooks/pre-commit is a new hook (runs when you use git in the workspace)",
    ],
  );
  // The user's git, with that home, runs it.
  await shellOk(
    root,
    `HOME='${home.root}' GIT_CONFIG_GLOBAL='${home.root}/.gitconfig' git commit -q --allow-empty -m x`,
  );
  ok(await Deno.stat(join(root, "ran")).then(() => true, () => false), "the user's git did not run the hook");
});

Deno.test("GitWatch reads hooks where the session's environment says the user's git looks for them", async () => {
  await using workspace = await createTempWorkspace();
  await using home = await createTempWorkspace("mewcode-home-");
  const root = workspace.root;
  const hooks = await globalHooksPathFixture(root, home.root);
  const watch = await GitWatch.start([root], userGitConfig({ HOME: home.root, GIT_CONFIG_NOSYSTEM: "1" }));
  await writeFile(join(hooks, "post-checkout"), "#!/bin/sh\n", 0o755);
  deepStrictEqual(await watch.changes(root), [
    "shared-hooks/post-checkout is a new hook (runs when you use git in the workspace)",
  ]);
});
