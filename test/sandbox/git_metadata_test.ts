import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  diffGitFindings,
  type GitProtection,
  planGitProtection,
  removePlaceholders,
  revertAppeared,
  scanGitMetadata,
  userGitConfig,
} from "../../src/sandbox/git_metadata.ts";
import { createTempWorkspace, type TempWorkspace } from "../_fakes/tool_context.ts";
import { bubblewrapWorks, createRepository, exists, git, gitOk, runSandboxed } from "./_git_fixture.ts";

const canSandbox = await bubblewrapWorks();

/** Paths of a plan relative to the root, for readable assertions. */
function relativePlan(
  root: string,
  protection: GitProtection,
): Omit<GitProtection, "notes" | "hooksFolders" | "hookTasks" | "hookFiles"> {
  const strip = (paths: string[]): string[] => paths.map((path) => path.slice(root.length + 1));
  return {
    readOnly: strip(protection.readOnly),
    keepInPlace: strip(protection.keepInPlace),
    placeholders: strip(protection.placeholders),
    mustNotAppear: strip(protection.mustNotAppear),
  };
}

/** A repository at the root with a submodule `sub` (from a repository outside) and a linked worktree `wt`. */
async function createRepositoryWithSubmoduleAndWorktree(root: string, outside: string): Promise<void> {
  await createRepository(root);
  await createRepository(join(outside, "upstream"));
  await gitOk(root, "submodule", "add", "-q", join(outside, "upstream"), "sub");
  await gitOk(root, "commit", "-q", "-m", "add sub");
  await gitOk(root, "worktree", "add", "-q", "wt");
}

Deno.test("planGitProtection pins config, hooks and pointers of the repository, its submodules and worktrees", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await createRepositoryWithSubmoduleAndWorktree(workspace.root, outside.root);
  const plan = relativePlan(workspace.root, await planGitProtection(workspace.root));
  deepStrictEqual(plan.keepInPlace, [
    ".git",
    "sub",
    "wt",
    ".git/modules",
    ".git/objects",
    ".git/worktrees",
    ".git/modules/sub",
    ".git/objects/info",
    ".git/worktrees/wt",
    ".git/modules/sub/objects",
    ".git/modules/sub/objects/info",
  ]);
  deepStrictEqual(plan.readOnly, [
    ".git/config",
    ".git/hooks",
    ".git/info",
    "sub/.git",
    "wt/.git",
    ".git/modules/sub/config",
    ".git/modules/sub/hooks",
    ".git/modules/sub/info",
    ".git/worktrees/wt/commondir",
    ".git/worktrees/wt/gitdir",
  ]);
  deepStrictEqual(plan.placeholders, []);
  deepStrictEqual(plan.mustNotAppear, [
    ".git/commondir",
    ".git/config.worktree",
    ".git/modules/sub/commondir",
    ".git/modules/sub/config.worktree",
    ".git/objects/info/alternates",
    ".git/worktrees/wt/config.worktree",
    ".git/modules/sub/objects/info/alternates",
  ]);
});

Deno.test("planGitProtection lists missing hooks and info folders as placeholders, and removePlaceholders removes only empty folders", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  await Deno.remove(join(workspace.root, ".git/hooks"), { recursive: true });
  await Deno.remove(join(workspace.root, ".git/info"), { recursive: true });
  const protection = await planGitProtection(workspace.root);
  deepStrictEqual(relativePlan(workspace.root, protection).placeholders, [".git/hooks", ".git/info"]);
  await Deno.mkdir(join(workspace.root, ".git/hooks"));
  await Deno.mkdir(join(workspace.root, ".git/info"));
  await Deno.writeTextFile(join(workspace.root, ".git/info/exclude"), "kept\n");
  // A placeholder whose folder became a symlink (to a folder outside with an empty one of that name).
  await using outside = await createTempWorkspace("mewcode-outside-");
  await Deno.mkdir(join(outside.root, "config"));
  await Deno.symlink(outside.root, join(workspace.root, "linked"));
  const placeholders = [
    ...protection.placeholders,
    join(workspace.root, "README"),
    join(workspace.root, "linked/config"),
  ];
  await removePlaceholders(placeholders, [workspace.root]);
  equal(await exists(join(workspace.root, ".git/hooks")), false);
  equal(await Deno.readTextFile(join(workspace.root, ".git/info/exclude")), "kept\n");
  equal(await exists(join(workspace.root, "README")), true);
  equal(await exists(join(outside.root, "config")), true, "removed through a symlink");
});

Deno.test("planGitProtection pins a .git file whose git directory is outside the workspace, and nothing outside", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await createRepository(outside.root);
  await gitOk(outside.root, "worktree", "add", "-q", join(workspace.root, "tree"));
  const root = join(workspace.root, "tree");
  const protection = await planGitProtection(root);
  deepStrictEqual(protection, {
    readOnly: [join(root, ".git")],
    keepInPlace: [],
    placeholders: [],
    mustNotAppear: [],
    notes: [],
    hooksFolders: [],
    hookTasks: [],
    hookFiles: [],
  });
});

Deno.test("planGitProtection follows a symlinked config to a target inside the workspace and skips one outside", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await createRepository(workspace.root);
  const config = join(workspace.root, ".git/config");
  await Deno.rename(config, join(workspace.root, "shared.gitconfig"));
  await Deno.symlink("../shared.gitconfig", config);
  await Deno.rename(join(workspace.root, ".git/hooks"), join(outside.root, "hooks"));
  await Deno.symlink(join(outside.root, "hooks"), join(workspace.root, ".git/hooks"));
  const protection = await planGitProtection(workspace.root);
  const plan = relativePlan(workspace.root, protection);
  deepStrictEqual(plan.readOnly, ["shared.gitconfig", ".git/info"]);
  ok(!protection.readOnly.some((path) => path.startsWith(outside.root)));
  equal(protection.notes.length, 2);
});

Deno.test("planGitProtection pins included config files inside the workspace, present or not", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  await gitOk(workspace.root, "config", "include.path", "../team.gitconfig");
  await gitOk(workspace.root, "config", "includeIf.onbranch:main.path", "../missing.gitconfig");
  await Deno.writeTextFile(join(workspace.root, "team.gitconfig"), "[include]\n\tpath = nested.gitconfig\n");
  const plan = relativePlan(workspace.root, await planGitProtection(workspace.root));
  ok(plan.readOnly.includes("team.gitconfig"));
  ok(plan.mustNotAppear.includes("missing.gitconfig"));
  ok(plan.mustNotAppear.includes("nested.gitconfig"));
});

Deno.test("planGitProtection protects the hooks folder of the user's global core.hooksPath, and all of .husky for husky's", async () => {
  await using workspace = await createTempWorkspace();
  await using home = await createTempWorkspace("mewcode-home-");
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(home.root, "hooks.gitconfig"), "[core]\n\thooksPath = .githooks\n");
  await Deno.writeTextFile(join(home.root, ".gitconfig"), "[include]\n\tpath = ~/hooks.gitconfig\n");
  const user = userGitConfig({ HOME: home.root, GIT_CONFIG_NOSYSTEM: "1" });
  const global = await planGitProtection(root, { user });
  deepStrictEqual(relativePlan(root, global).placeholders.filter((path) => !path.startsWith(".git/")), [
    ".githooks",
  ]);
  deepStrictEqual(global.hooksFolders, [join(root, ".githooks")]);
  deepStrictEqual((await planGitProtection(root)).hooksFolders, []);
  await gitOk(root, "config", "core.hooksPath", ".husky/_");
  await Deno.mkdir(join(root, ".husky/_"), { recursive: true });
  await Deno.writeTextFile(join(root, ".husky/pre-commit"), "npm test\n");
  const husky = await planGitProtection(root, { user });
  ok(relativePlan(root, husky).readOnly.includes(".husky"));
  deepStrictEqual(husky.hooksFolders, [join(root, ".husky")]);
});

Deno.test("planGitProtection protects nested repositories it is given, and an empty plan without a repository", async () => {
  await using workspace = await createTempWorkspace();
  deepStrictEqual(relativePlan(workspace.root, await planGitProtection(workspace.root)), {
    readOnly: [],
    keepInPlace: [],
    placeholders: [],
    mustNotAppear: [],
  });
  await createRepository(join(workspace.root, "vendor/lib"));
  const plan = relativePlan(
    workspace.root,
    await planGitProtection(workspace.root, { nestedDotGits: [join(workspace.root, "vendor/lib/.git")] }),
  );
  deepStrictEqual(plan.keepInPlace, [
    "vendor",
    "vendor/lib",
    "vendor/lib/.git",
    "vendor/lib/.git/objects",
    "vendor/lib/.git/objects/info",
  ]);
  ok(plan.readOnly.includes("vendor/lib/.git/config"));
  const missing = await planGitProtection(join(workspace.root, "does-not-exist"));
  equal(missing.readOnly.length, 0);
  equal(missing.notes.length, 1);
});

Deno.test("revertAppeared removes what appeared without following symlinks, and reports it", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await createRepository(workspace.root);
  const protection = await planGitProtection(workspace.root);
  const [commonDir, configWorktree] = protection.mustNotAppear;
  equal(commonDir, join(workspace.root, ".git/commondir"));
  equal(configWorktree, join(workspace.root, ".git/config.worktree"));
  deepStrictEqual(await revertAppeared(protection.mustNotAppear, [workspace.root]), []);
  const target = join(outside.root, "precious");
  await Deno.writeTextFile(target, "keep me\n");
  await Deno.symlink(target, commonDir!);
  await Deno.mkdir(join(configWorktree!, "deep"), { recursive: true });
  await Deno.writeTextFile(join(configWorktree!, "deep/file"), "x");
  const appeared = await revertAppeared(protection.mustNotAppear, [workspace.root]);
  deepStrictEqual(appeared.map(({ path, type, outcome }) => ({ path, type, kind: outcome.kind })), [
    { path: commonDir, type: "symlink", kind: "removed" },
    { path: configWorktree, type: "directory", kind: "removed" },
  ]);
  ok(
    appeared[0]!.message.startsWith(
      `"${commonDir}" (a symlink), which appeared during the command, was removed (the session keeps no state`,
    ),
    appeared[0]!.message,
  );
  equal(await Deno.readTextFile(target), "keep me\n");
  equal(await exists(commonDir!), false);
  equal(await exists(configWorktree!), false);
});

Deno.test("revertAppeared sets aside what appeared, symlinks as themselves, folders whole", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await using state = await createTempWorkspace("mewcode-state-");
  await createRepository(workspace.root);
  const protection = await planGitProtection(workspace.root);
  const [commonDir, configWorktree] = protection.mustNotAppear;
  const target = join(outside.root, "precious");
  await Deno.writeTextFile(target, "keep me\n");
  await Deno.symlink(target, commonDir!);
  await Deno.mkdir(join(configWorktree!, "deep"), { recursive: true });
  await Deno.writeTextFile(join(configWorktree!, "deep/file"), "the user's\n");
  const folder = join(state.root, "set-aside");
  const appeared = await revertAppeared(protection.mustNotAppear, [workspace.root], folder);
  const moved = appeared.map(({ outcome }) => outcome.kind === "moved" ? outcome.to : outcome.kind);
  equal(moved.length, 2);
  ok(moved[0]!.startsWith(`${folder}/`) && moved[0]!.endsWith("/.git/commondir"), moved[0]);
  ok(moved[1]!.startsWith(`${folder}/`) && moved[1]!.endsWith("/.git/config.worktree"), moved[1]);
  equal(await Deno.readLink(moved[0]!), target, "the symlink was moved as itself");
  equal(await Deno.readTextFile(join(moved[1]!, "deep/file")), "the user's\n");
  equal(await Deno.readTextFile(target), "keep me\n");
  equal(await exists(commonDir!), false);
  equal(await exists(configWorktree!), false);
  ok(appeared[0]!.message.includes(`, was moved to "${moved[0]}": `), appeared[0]!.message);
});

/** One way a model could plant a command for the user's git, run inside the sandbox. */
interface Attack {
  name: string;
  /** Host state before the call (not the model's doing): a repository and whatever the attack needs. */
  setup(root: string, outside: string): Promise<void>;
  /** Bash run inside the sandbox, in the workspace; `$P` holds the payload command. */
  script: string;
  /** Folders (relative to the root) where the user then runs `git status` and `git commit`. */
  userFolders: string[];
  /** Nested `.git` entries (relative to the root) the plan is told about, as a session's first scan would. */
  nestedDotGits?: string[];
  /** Checks after a protected run, beyond "the payload did not run". */
  verify?(root: string, appeared: string[]): Promise<void>;
}

const PLANT_CONFIG = `printf '[core]\\n\\tfsmonitor = "%s"\\n' "$P"`;
const PLANT_HOOK = `printf '#!/bin/sh\\n%s\\n' "$P"`;

const plainRepository = (root: string): Promise<void> => createRepository(root);
const withSubmoduleAndWorktree = (root: string, outside: string): Promise<void> =>
  createRepositoryWithSubmoduleAndWorktree(root, outside);
/** A copy of the root's git directory at `planted/` with the payload as its fsmonitor. */
const PLANT_REPOSITORY = `cp -r .git planted && git config --file planted/config core.fsmonitor "$P"`;
/** A copy of the submodule's git directory at `planted/` (without its core.worktree) with the payload. */
const PLANT_SUBMODULE =
  `cp -r .git/modules/sub planted && git config --file planted/config --unset core.worktree &&
  git config --file planted/config core.fsmonitor "$P"`;

const ATTACKS: Attack[] = [
  {
    name: "a nested repository's config edited, when the plan is given the scan's .git entries",
    setup: async (root) => {
      await createRepository(root);
      await createRepository(join(root, "vendor/lib"));
    },
    script: `git -C vendor/lib config core.fsmonitor "$P"
      mv vendor vendor-away && mkdir -p vendor && cp -r vendor-away/lib vendor/lib &&
      git config --file vendor/lib/.git/config core.fsmonitor "$P"`,
    userFolders: ["vendor/lib"],
    nestedDotGits: ["vendor/lib/.git"],
  },
  {
    name: "core.fsmonitor written to .git/config (git config, append, replace, unlink and create)",
    setup: plainRepository,
    script: `
      git config core.fsmonitor "$P"
      ${PLANT_CONFIG} >> .git/config
      cp .git/config /tmp/c && ${PLANT_CONFIG} >> /tmp/c && mv -f /tmp/c .git/config
      rm -f .git/config; ${PLANT_CONFIG} > .git/config`,
    userFolders: ["."],
  },
  {
    name: "core.hooksPath pointed at hooks in the workspace",
    setup: plainRepository,
    script: `
      mkdir -p evil && ${PLANT_HOOK} > evil/pre-commit && chmod +x evil/pre-commit
      git config core.hooksPath "$PWD/evil"`,
    userFolders: ["."],
  },
  {
    name: "a pre-commit hook created when .git/hooks did not exist",
    setup: async (root) => {
      await createRepository(root);
      await Deno.remove(join(root, ".git/hooks"), { recursive: true });
    },
    script: `mkdir -p .git/hooks; ${PLANT_HOOK} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
    userFolders: ["."],
    verify: async (root) => equal(await exists(join(root, ".git/hooks")), false),
  },
  {
    name: "the hooks folder moved away and replaced",
    setup: plainRepository,
    script: `mv .git/hooks .git/hooks-away && mkdir .git/hooks && ${PLANT_HOOK} > .git/hooks/pre-commit &&
      chmod +x .git/hooks/pre-commit`,
    userFolders: ["."],
  },
  {
    name: ".git/commondir pointed at a planted git directory",
    setup: plainRepository,
    script: `${PLANT_REPOSITORY} && printf '%s\\n' "$PWD/planted" > .git/commondir`,
    userFolders: ["."],
    verify: async (root, appeared) => {
      deepStrictEqual(appeared, [join(root, ".git/commondir")]);
      equal(await exists(join(root, ".git/commondir")), false);
    },
  },
  {
    name: ".git moved away and replaced by a planted one",
    setup: plainRepository,
    script: `cp -r .git .git-new && git config --file .git-new/config core.fsmonitor "$P" &&
      mv .git .git-away && mv .git-new .git`,
    userFolders: ["."],
  },
  {
    name: "a submodule's config edited",
    setup: withSubmoduleAndWorktree,
    script: `git -C sub config core.fsmonitor "$P"; ${PLANT_CONFIG} >> .git/modules/sub/config`,
    userFolders: [".", "sub"],
  },
  {
    name: "a submodule's git directory moved away and replaced",
    setup: withSubmoduleAndWorktree,
    script: `mv .git/modules/sub .git/modules/sub-away && cp -r .git/modules/sub-away .git/modules/sub &&
      git config --file .git/modules/sub/config core.fsmonitor "$P"`,
    userFolders: [".", "sub"],
  },
  {
    name: "the modules folder moved away and replaced",
    setup: withSubmoduleAndWorktree,
    script: `mv .git/modules .git/modules-away && cp -r .git/modules-away .git/modules &&
      git config --file .git/modules/sub/config core.fsmonitor "$P"`,
    userFolders: [".", "sub"],
  },
  {
    name: "a submodule's .git file pointed at a planted git directory",
    setup: withSubmoduleAndWorktree,
    script: `${PLANT_SUBMODULE} && printf 'gitdir: %s\\n' "$PWD/planted" > sub/.git`,
    userFolders: [".", "sub"],
  },
  {
    name: "a submodule's folder moved away and replaced by one with a planted .git file",
    setup: withSubmoduleAndWorktree,
    script: `${PLANT_SUBMODULE} && mv sub sub-away && mkdir sub &&
      printf 'gitdir: %s\\n' "$PWD/planted" > sub/.git`,
    userFolders: [".", "sub"],
  },
  {
    name: "a linked worktree's .git file pointed at a planted git directory",
    setup: withSubmoduleAndWorktree,
    script: `${PLANT_REPOSITORY} && printf 'gitdir: %s\\n' "$PWD/planted" > wt/.git`,
    userFolders: ["wt"],
  },
  {
    name: "a linked worktree's folder moved away and replaced by one with a planted .git file",
    setup: withSubmoduleAndWorktree,
    script:
      `${PLANT_REPOSITORY} && mv wt wt-away && mkdir wt && printf 'gitdir: %s\\n' "$PWD/planted" > wt/.git`,
    userFolders: ["wt"],
  },
  {
    name: "a linked worktree's commondir pointed at a planted git directory",
    setup: withSubmoduleAndWorktree,
    script: `${PLANT_REPOSITORY} && printf '%s\\n' "$PWD/planted" > .git/worktrees/wt/commondir`,
    userFolders: ["wt"],
  },
];

/** Runs the user's own git (outside any sandbox) the way they would after the session. */
async function useGitAsTheUser(root: string, folders: string[]): Promise<void> {
  for (const folder of folders) {
    await git(join(root, folder), "status");
    await git(join(root, folder), "commit", "-q", "--allow-empty", "-m", "user");
  }
}

interface AttackRun {
  payloadRan: boolean;
  appeared: string[];
  workspace: TempWorkspace;
}

async function runAttack(attack: Attack, protect: boolean): Promise<AttackRun> {
  const workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await attack.setup(workspace.root, outside.root);
  const marker = join(outside.root, "payload-ran");
  const nestedDotGits = (attack.nestedDotGits ?? []).map((path) => join(workspace.root, path));
  const protection = protect ? await planGitProtection(workspace.root, { nestedDotGits }) : null;
  const result = await runSandboxed(
    workspace.root,
    protection,
    `echo started; P='touch ${marker}; :'\n${attack.script}`,
  );
  equal(result.stdout, "started\n", `the sandbox did not run the script: ${result.stderr}`);
  const appeared = protection === null ? [] : await cleanUp(protection, workspace.root);
  await useGitAsTheUser(workspace.root, attack.userFolders);
  return { payloadRan: await exists(marker), appeared, workspace };
}

async function cleanUp(protection: GitProtection, root: string): Promise<string[]> {
  await removePlaceholders(protection.placeholders, [root]);
  return (await revertAppeared(protection.mustNotAppear, [root])).map((entry) => entry.path);
}

Deno.test({
  name:
    "Git metadata attacks from the sandbox run the payload in the user's git without the plan, never with it",
  ignore: !canSandbox,
  async fn(t) {
    for (const attack of ATTACKS) {
      await t.step(`${attack.name}: works without the plan`, async () => {
        const result = await runAttack(attack, false);
        await using _ = result.workspace;
        equal(result.payloadRan, true);
      });
      await t.step(`${attack.name}: stopped by the plan`, async () => {
        const result = await runAttack(attack, true);
        await using _ = result.workspace;
        equal(result.payloadRan, false);
        await attack.verify?.(result.workspace.root, result.appeared);
      });
    }
  },
});

Deno.test({
  name: "Ordinary git work inside the sandbox keeps working with the plan and leaves nothing behind",
  ignore: !canSandbox,
  async fn() {
    await using workspace = await createTempWorkspace();
    await using outside = await createTempWorkspace("mewcode-outside-");
    const root = workspace.root;
    await createRepositoryWithSubmoduleAndWorktree(root, outside.root);
    await Deno.remove(join(root, ".git/hooks"), { recursive: true });
    const configBefore = await Deno.readTextFile(join(root, ".git/config"));
    const protection = await planGitProtection(root);
    const result = await runSandboxed(
      root,
      protection,
      `set -e
      echo a > a.txt && git add a.txt && git commit -q -m a
      git branch feature && git checkout -q feature && echo b > b.txt && git add b.txt && git commit -q -m b
      git checkout -q main && git merge -q --no-edit feature
      echo c >> a.txt && git stash -q && git stash pop -q && git commit -q -am c
      git tag v1 && git tag -a v2 -m v2
      git -C sub checkout -q -b work && echo s > sub/s.txt && git -C sub add s.txt
      git -C sub commit -q -m s
      git add sub && git commit -q -m "bump sub"
      echo w > wt/w.txt && git -C wt add w.txt && git -C wt commit -q -m w
      git worktree add -q wt2 && git -C wt2 commit -q --allow-empty -m wt2
      git gc -q
      git status --porcelain`,
    );
    equal(result.code, 0, result.stderr);
    equal(await cleanUp(protection, root).then((appeared) => appeared.length), 0);
    equal(await exists(join(root, ".git/hooks")), false);
    equal(await Deno.readTextFile(join(root, ".git/config")), configBefore);
    deepStrictEqual((await gitOk(root, "tag")).split("\n").filter(Boolean), ["v1", "v2"]);
    equal((await gitOk(root, "log", "--format=%s", "-3")).trim(), "bump sub\nc\nb");
    equal((await gitOk(join(root, "wt"), "log", "--format=%s", "-1")).trim(), "w");
  },
});

Deno.test({
  name: "A repository planted in a subfolder is not stopped by the plan but reported by the scan",
  ignore: !canSandbox,
  async fn() {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    await createRepository(root);
    const before = await scanGitMetadata(root);
    const protection = await planGitProtection(root, { nestedDotGits: before.dotGits });
    const result = await runSandboxed(
      root,
      protection,
      `set -e
      P='touch /tmp/ran; :'
      git init -q nested && git -C nested config core.fsmonitor "$P"
      ${PLANT_HOOK} > nested/.git/hooks/pre-commit && chmod +x nested/.git/hooks/pre-commit
      git -C nested commit -q --allow-empty -m n && git add nested
      mkdir other && cp -r nested/.git planted && printf 'gitdir: ../planted\\n' > other/.git`,
    );
    equal(result.code, 0, result.stderr);
    equal((await cleanUp(protection, root)).length, 0);
    const diff = diffGitFindings(before, await scanGitMetadata(root));
    equal(diff.notice, null);
    deepStrictEqual(diff.changes.map((change) => change.message), [
      "nested/.git is a new git repository (its hooks and config run when you use git in nested)",
      'nested/.git/config sets core.fsmonitor = "touch /tmp/ran; :" (runs when you use git in nested)',
      "nested/.git/hooks/pre-commit is a new hook (runs when you use git in nested)",
      "other/.git is a new git repository (its hooks and config run when you use git in other)",
      'planted/config sets core.fsmonitor = "touch /tmp/ran; :" (runs when you use git in other)',
      "planted/hooks/pre-commit is a new hook (runs when you use git in other)",
      'other/.git points to "planted" (git uses the repository there when you use git in other)',
    ]);
  },
});

Deno.test("planGitProtection plans a file below a missing folder as one that must not appear, below real folders only", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  await Deno.remove(join(workspace.root, ".git/objects/info"), { recursive: true });
  await Deno.writeTextFile(
    join(workspace.root, ".git/config"),
    "[include]\n\tpath = ../conf/extra/git.conf\n",
    {
      append: true,
    },
  );
  const plan = relativePlan(workspace.root, await planGitProtection(workspace.root));
  ok(plan.mustNotAppear.includes(".git/objects/info/alternates"), plan.mustNotAppear.join(", "));
  ok(plan.mustNotAppear.includes("conf/extra/git.conf"), plan.mustNotAppear.join(", "));
  ok(plan.keepInPlace.includes(".git/objects"), plan.keepInPlace.join(", "));
  // A dangling symlink on the way is the user's: planned below it, it would be taken for one a call made.
  await Deno.symlink("nowhere", join(workspace.root, "conf"));
  const linked = relativePlan(workspace.root, await planGitProtection(workspace.root));
  ok(!linked.mustNotAppear.some((path) => path.startsWith("conf")), linked.mustNotAppear.join(", "));
});
