/**
 * Packs, the multi-pack index and the commit graph a session wrote are checked by git at its end: a pack
 * index that names a tracked file's blob at other content makes the user's next `git checkout -- file` write
 * that content while `git status` shows nothing (git looks in packs before loose objects). The first test
 * shows, with the user's own git, that the forged pack is real; ordinary git work must report nothing.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import { checkObjectFiles, type WrittenObjectFile } from "../../src/sandbox/git_packs.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk } from "./_git_fixture.ts";
import { exitCodeOf, outputOf } from "./_sandbox.ts";

const ENV = { PATH: "/usr/bin:/bin", HOME: "/nonexistent" };

async function bash(runtime: ToolRuntime, command: string): Promise<string> {
  const { result } = await runtime.pipeline.run({
    id: `packs_${crypto.randomUUID()}`,
    name: "Bash",
    input: { command, timeout: 20_000 },
  }, { signal: new AbortController().signal });
  equal(exitCodeOf(result), 0, result.content);
  return outputOf(result);
}

/** A repository with `app.py` committed; returns its blob's name. */
async function repositoryWithApp(root: string): Promise<string> {
  await createRepository(root);
  await Deno.writeTextFile(join(root, "app.py"), 'print("hello")\n');
  await gitOk(root, "add", "app.py");
  await gitOk(root, "commit", "-q", "-m", "app");
  return (await gitOk(root, "rev-parse", "HEAD:app.py")).trim();
}

/**
 * Rewrites a one-object pack index so that it names `target` (hex) instead: version 2 is a header, the
 * fan-out table, the names, their CRCs and offsets, the pack's checksum and its own.
 */
async function forgeIndex(index: Uint8Array, target: string): Promise<Uint8Array> {
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength);
  equal(view.getUint32(8 + 255 * 4), 1, "a pack of one object");
  const name = Uint8Array.from(target.match(/../g)!.map((pair) => parseInt(pair, 16)));
  const body = index.slice(0, index.length - 20);
  const bodyView = new DataView(body.buffer);
  for (let byte = 0; byte < 256; byte++) bodyView.setUint32(8 + byte * 4, byte < name[0]! ? 0 : 1);
  body.set(name, 8 + 256 * 4);
  const checksum = new Uint8Array(await crypto.subtle.digest("SHA-1", body));
  const forged = new Uint8Array(index.length);
  forged.set(body);
  forged.set(checksum, body.length);
  return forged;
}

Deno.test("the end of the session reports a pack index written in the sandbox that names other content", async () => {
  await using workspace = await createTempWorkspace("mewcode-packs-");
  const root = workspace.root;
  const app = await repositoryWithApp(root);
  await using runtime = await testRuntime(root, { env: ENV });
  // The command packs the payload (an ordinary pack); renaming its object is a few bytes of the index,
  // written here as a command's python would.
  const pack = (await bash(
    runtime,
    `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
evil=$(printf 'print("evil")\\n' | git hash-object -w --stdin)
echo "$evil" | git pack-objects -q .git/objects/pack/forge`,
  )).trim();
  const packs = join(root, ".git/objects/pack");
  const index = await Deno.readFile(join(packs, `forge-${pack}.idx`));
  await Deno.writeFile(join(packs, `pack-${pack}.idx`), await forgeIndex(index, app));
  await Deno.rename(join(packs, `forge-${pack}.pack`), join(packs, `pack-${pack}.pack`));
  await Deno.remove(join(packs, `forge-${pack}.idx`));
  const lines = await runtime.finish();
  // The forged pack is real: the user's git shows nothing, and discarding a change writes the payload.
  equal(await gitOk(root, "status", "--porcelain"), "");
  await Deno.writeTextFile(join(root, "app.py"), "local change\n");
  await gitOk(root, "checkout", "--", "app.py");
  equal(await Deno.readTextFile(join(root, "app.py")), 'print("evil")\n');
  equal(lines.length, 1, lines.join("\n"));
  ok(
    lines[0]!.startsWith(
      `.git/objects/pack/pack-${pack}.idx (a pack index, written during the session) does not match the objects: git says "`,
    ),
    lines[0],
  );
  match(lines[0]!, /run git fsck, and move it out of the repository if it confirms$/);
});

Deno.test("ordinary git gc, commit-graph and multi-pack-index in the sandbox are checked and report nothing", async () => {
  await using workspace = await createTempWorkspace("mewcode-packs-");
  const root = workspace.root;
  await repositoryWithApp(root);
  await using runtime = await testRuntime(root, { env: ENV });
  await bash(
    runtime,
    `export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
for i in 1 2 3; do echo $i >> f; git add f; git commit -qm c$i; done
git gc -q 2>/dev/null; git commit-graph write --reachable; git multi-pack-index write
ls .git/objects/pack | grep -c '\\.idx$'; ls .git/objects/info/commit-graph .git/objects/pack/multi-pack-index`,
  );
  deepStrictEqual(await runtime.finish(), []);
});

Deno.test("the end of the session reports a commit graph written in the sandbox that git cannot verify", async () => {
  await using workspace = await createTempWorkspace("mewcode-packs-");
  const root = workspace.root;
  await repositoryWithApp(root);
  await using runtime = await testRuntime(root, { env: ENV });
  await bash(
    runtime,
    "GIT_CONFIG_GLOBAL=/dev/null git commit-graph write --reachable && ls .git/objects/info/commit-graph",
  );
  // One byte of a commit's entry changed: a tree or parent other than the commit holds.
  const graph = join(root, ".git/objects/info/commit-graph");
  await Deno.chmod(graph, 0o644);
  const bytes = await Deno.readFile(graph);
  bytes[bytes.length - 30] = bytes[bytes.length - 30]! ^ 0xff;
  await Deno.writeFile(graph, bytes);
  const lines = await runtime.finish();
  equal(lines.length, 1, lines.join("\n"));
  ok(
    lines[0]!.startsWith(".git/objects/info/commit-graph (the commit graph, written during the session)"),
    lines[0],
  );
});

Deno.test("checkObjectFiles says what it did not check: over the budget, or where the sandbox cannot run", async () => {
  const folder = { gitDir: "/w/.git", objects: "/w/.git/objects" };
  // The large one first: within the budget alone, it must not keep the small one from being checked.
  const files: WrittenObjectFile[] = [
    { kind: "pack", folder, path: "/w/.git/objects/pack/pack-b.idx", bytes: 1000 * 1024 },
    { kind: "pack", folder, path: "/w/.git/objects/pack/pack-a.idx", bytes: 100 * 1024 },
  ];
  const scripts: string[] = [];
  const over = await checkObjectFiles(files, {
    git: "/usr/bin/git",
    root: "/w",
    maxBytes: 1024 * 1024,
    run: (command) => {
      scripts.push(command);
      return Promise.resolve({
        status: "exited",
        code: 0,
        stdout: "mewcode-check 0 ok\n",
        stderr: "",
        durationMs: 1,
        started: true,
      });
    },
  });
  deepStrictEqual(over, [
    "1 of the packs or commit graphs written during the session were not checked (more than 1 MiB: " +
    ".git/objects/pack/pack-b.idx): run git fsck before you check out files in this repository",
  ]);
  equal(scripts.length, 1);
  ok(scripts[0]!.includes("GIT_DIR='/w/.git' '/usr/bin/git'"), scripts[0]);
  ok(scripts[0]!.includes("pack-a.idx"), scripts[0]);
  ok(!scripts[0]!.includes("pack-b"), "what is over the budget is not run");
  const failed = await checkObjectFiles(files.slice(1), {
    git: "/usr/bin/git",
    root: "/w",
    run: () =>
      Promise.resolve({ status: "failed", message: "bubblewrap is not available to sandbox the command" }),
  });
  deepStrictEqual(failed, [
    "The packs and commit graph written during the session could not be checked (bubblewrap is not available " +
    "to sandbox the command): run git fsck before you check out files in this repository",
  ]);
});
