/**
 * The git metadata scan against what a sandboxed shell can plant with file writes alone: a folder laid out
 * as a git directory (no `.git`), `exec` lines in the todo list of a rebase, a merge strategy of a rebase
 * that is a program in the workspace, and a repository in a folder whose name is not UTF-8 (which Deno cannot
 * open). Each test first shows, with the user's own git, that the plant runs its command.
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { type GitScan, scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { diffGitFindings } from "../../src/sandbox/git_scan_diff.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, exists, git, gitOk, shellOk } from "./_git_fixture.ts";

async function writeFile(path: string, content: string, mode = 0o644): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, content);
  await Deno.chmod(path, mode);
}

/** The sentences the session would print for what changed between the two scans. */
const messages = (before: GitScan, after: GitScan): string[] =>
  diffGitFindings(before, after).changes.map((change) => `${change.status}: ${change.message}`);

/** Writes the files of a git directory (HEAD, objects, refs, config) into `path`, as a shell could. */
async function plantGitDirectory(path: string, config: string): Promise<void> {
  await writeFile(join(path, "HEAD"), "ref: refs/heads/main\n");
  await writeFile(join(path, "objects/info/packs"), "");
  await writeFile(join(path, "refs/heads/.keep"), "");
  await writeFile(join(path, "config"), config);
}

Deno.test("scanGitMetadata reports a subfolder laid out as a git directory, and still walks into it", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const before = await scanGitMetadata(root);
  const marker = join(root, "PWNED");
  await plantGitDirectory(
    join(root, "docs"),
    `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n` +
      `\tfsmonitor = touch '${marker}'; false\n`,
  );
  await writeFile(join(root, "docs/hooks/post-checkout"), "#!/bin/sh\n", 0o755);
  // Below the planted folder: still found.
  await writeFile(join(root, "docs/guide/.git"), "gitdir: ../../elsewhere\n");
  // The same names, but a HEAD git does not accept: not a git directory.
  await writeFile(join(root, "notes/HEAD"), "hello\n");
  await writeFile(join(root, "notes/objects/x"), "");
  await writeFile(join(root, "notes/refs/x"), "");
  const after = await scanGitMetadata(root);
  equal(after.complete, true);
  deepStrictEqual(after.gitDirectories, [join(root, "docs")]);
  deepStrictEqual(after.dotGits, [join(root, ".git"), join(root, "docs/guide/.git")]);
  deepStrictEqual(messages(before, after), [
    "new: docs is laid out as a git directory, which git takes for a repository (its hooks and config run " +
    "when you use git in docs)",
    'new: docs/config sets core.worktree = ".." (git uses another working tree for this repository)',
    // Git's config reads "; false" as a comment, as the scan does.
    `new: docs/config sets core.fsmonitor = "touch '${marker}'" (runs when you use git in docs)`,
    "new: docs/hooks/post-checkout is a new hook (runs when you use git in docs)",
    'new: docs/guide/.git points to "elsewhere" (git uses the repository there when you use git in ' +
    "docs/guide)",
  ]);
  // The plant is real: the user's git in that folder runs the command.
  await git(join(root, "docs"), "status");
  ok(await exists(marker), "git status in docs ran core.fsmonitor");
});

Deno.test("scanGitMetadata reports a workspace root with no .git laid out as a git directory", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await writeFile(join(root, "src/main.ts"), "console.log(1);\n");
  const before = await scanGitMetadata(root);
  deepStrictEqual(before.findings, []);
  await plantGitDirectory(root, "[core]\n\tbare = true\n[alias]\n\tst = !touch PWNED\n");
  await writeFile(join(root, "hooks/pre-commit"), "#!/bin/sh\n", 0o755);
  const after = await scanGitMetadata(root);
  deepStrictEqual(after.gitDirectories, [root]);
  deepStrictEqual(after.dotGits, []);
  deepStrictEqual(messages(before, after), [
    "new: The workspace folder is laid out as a git directory, which git takes for a repository (its hooks " +
    "and config run when you use git in the workspace)",
    'new: config sets alias.st = "!touch PWNED" (runs when you use git in the workspace)',
    "new: hooks/pre-commit is a new hook (runs when you use git in the workspace)",
  ]);
  await git(root, "st");
  ok(await exists(join(root, "PWNED")), "git st in the workspace ran the alias");
});

/** Writes the state files of an interactive rebase in progress into `.git/rebase-merge`, as a shell could. */
async function plantRebase(root: string, todo: string): Promise<void> {
  const head = (await gitOk(root, "rev-parse", "HEAD")).trim();
  const state = join(root, ".git/rebase-merge");
  await writeFile(join(state, "head-name"), "refs/heads/main\n");
  await writeFile(join(state, "onto"), `${head}\n`);
  await writeFile(join(state, "orig-head"), `${head}\n`);
  await writeFile(join(state, "interactive"), "");
  await writeFile(join(state, "done"), "");
  await writeFile(join(state, "msgnum"), "0\n");
  await writeFile(join(state, "end"), "0\n");
  await writeFile(join(state, "git-rebase-todo"), todo);
}

Deno.test("scanGitMetadata reports the exec lines a session adds to a rebase todo list, quoted for the terminal", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await plantRebase(root, "exec touch EARLIER\n");
  const before = await scanGitMetadata(root);
  await plantRebase(
    root,
    "# exec touch COMMENT\nexec touch EARLIER\n  x\ttouch PWNED\u001b[2J\r\nexec touch EARLIER\nexec\n",
  );
  await writeFile(join(root, ".git/sequencer/todo"), "pick 0123456 one\nexec touch SEQUENCE\n");
  const after = await scanGitMetadata(root);
  deepStrictEqual(messages(before, after), [
    'new: .git/rebase-merge/git-rebase-todo has an exec line: "touch PWNED\\u001b[2J" (git runs it when ' +
    "you continue the rebase in the workspace, e.g. with git rebase --continue)",
    'new: .git/rebase-merge/git-rebase-todo has an exec line: "touch EARLIER" (git runs it when you ' +
    "continue the rebase in the workspace, e.g. with git rebase --continue)",
    'new: .git/sequencer/todo has an exec line, which git never writes there: "touch SEQUENCE" (git ' +
    "refuses to continue a cherry-pick or revert with it; check the file by hand)",
  ]);
  // The plant is real: the user's git shows a rebase in progress and continuing it runs the lines.
  await Deno.remove(join(root, ".git/sequencer"), { recursive: true });
  await plantRebase(root, "x touch PWNED\n");
  ok((await gitOk(root, "status")).includes("while rebasing branch 'main'"));
  await git(root, "rebase", "--continue");
  ok(await exists(join(root, "PWNED")), "git rebase --continue ran the exec line");
});

Deno.test("scanGitMetadata reports no todo list without exec lines, and a linked worktree's with one", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await gitOk(root, "worktree", "add", "-q", "wt");
  const before = await scanGitMetadata(root);
  const head = (await gitOk(root, "rev-parse", "--short", "HEAD")).trim();
  await plantRebase(
    root,
    `pick ${head} exec x\n# exec touch PWNED\nexecute touch PWNED\nEXEC touch PWNED\nxtouch PWNED\nbreak\n`,
  );
  await writeFile(join(root, ".git/sequencer/todo"), `pick ${head} init\n`);
  await writeFile(join(root, ".git/worktrees/wt/rebase-merge/git-rebase-todo"), "exec make\n");
  const after = await scanGitMetadata(root);
  deepStrictEqual(messages(before, after), [
    'new: .git/worktrees/wt/rebase-merge/git-rebase-todo has an exec line: "make" (git runs it when you ' +
    "continue the rebase in wt, e.g. with git rebase --continue)",
  ]);
});

Deno.test("scanGitMetadata reports a rebase whose merge strategy is a program, not git's own", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(root, "README"), "second\n");
  await gitOk(root, "commit", "-q", "-am", "second");
  const before = await scanGitMetadata(root);
  const marker = join(root, "PWNED");
  // A commit that needs a real merge to pick, a rebase in progress picking it, and the strategy's program.
  await writeFile(join(root, "git-merge-x/payload"), `#!/bin/sh\ntouch '${marker}'\nexit 2\n`, 0o755);
  await shellOk(
    root,
    `base=$(git rev-parse HEAD~1)
blob=$(echo other | git hash-object -w --stdin)
tree=$( (git ls-tree "$base"; printf '100644 blob %s\\tother\\n' "$blob") | git mktree)
commit=$(git commit-tree -p "$base" -m wip "$tree")
state=.git/rebase-merge
mkdir -p "$state"
echo refs/heads/main > "$state/head-name"
git rev-parse HEAD > "$state/onto"
git rev-parse HEAD > "$state/orig-head"
: > "$state/interactive"
echo 1 > "$state/msgnum"
echo 1 > "$state/end"
: > "$state/done"
echo "pick $commit wip" > "$state/git-rebase-todo"
echo x/payload > "$state/strategy"`,
  );
  const after = await scanGitMetadata(root);
  deepStrictEqual(messages(before, after), [
    'new: .git/rebase-merge/strategy names the merge strategy "x/payload", which is not git\'s own: git runs ' +
    "it as the program git-merge-x/payload when you continue the rebase or cherry-pick in the workspace " +
    "(git rebase --continue); abort it instead (git rebase --abort)",
  ]);
  // What the user's git does with it.
  await git(root, "rebase", "--continue");
  ok(await exists(marker), "git ran the strategy's program");
});

Deno.test("scanGitMetadata reports a cherry-pick's sequencer options naming a strategy that is not git's", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const before = await scanGitMetadata(root);
  await writeFile(join(root, ".git/sequencer/opts"), "[options]\n\tstrategy = ort\n\tstrategy = ../../x\n");
  const after = await scanGitMetadata(root);
  deepStrictEqual(messages(before, after), [
    'new: .git/sequencer/opts names the merge strategy "../../x", which is not git\'s own: git runs it as the ' +
    "program git-merge-../../x when you continue the rebase or cherry-pick in the workspace (git rebase " +
    "--continue); abort it instead (git rebase --abort)",
  ]);
});

Deno.test("scanGitMetadata reports a folder it cannot list, such as one whose name is not UTF-8", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const before = await scanGitMetadata(root);
  const marker = join(root, "..", `${root.split("/").at(-1)}-PWNED`);
  // A repository in a folder named by the byte 0xFF, added to the index as a gitlink: the user's git status
  // looks into it and runs its fsmonitor.
  await shellOk(
    root,
    `name=$(printf '\\377')
mkdir "$name"
cd "$name"
git init -q .
git commit -q --allow-empty -m x
git config core.fsmonitor "touch '${marker}'; false"
cd ..
git add "$name"`,
  );
  try {
    const after = await scanGitMetadata(root);
    deepStrictEqual(after.unlisted, [join(root, "\uFFFD")]);
    deepStrictEqual(messages(before, after), [
      "new: \uFFFD cannot be listed (its name is not valid UTF-8, or it may not be read), so mewcode cannot " +
      "tell whether it holds a git repository your git would use: look inside it (ls -b) before you run git " +
      "in the workspace",
    ]);
    await git(root, "status");
    ok(await exists(marker), "the user's git status ran the hidden repository's fsmonitor");
    // A folder whose name really is U+FFFD, beside it: the scan lists that one in its place, and still
    // reports both.
    await shellOk(root, `mkdir "$(printf '\\357\\277\\275')"`);
    const beside = await scanGitMetadata(root);
    deepStrictEqual(beside.unlisted, [join(root, "\uFFFD"), join(root, "\uFFFD")]);
    ok(messages(before, beside).some((line) => line.startsWith("new: \uFFFD cannot be listed")));
  } finally {
    await Deno.remove(marker).catch(() => undefined);
  }
});
