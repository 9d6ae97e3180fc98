/**
 * Loose objects whose content does not hash to their name (a file copied over a tracked file's blob): the
 * checker against objects git wrote (SHA-1 and SHA-256), its time filter (by change time, which a command
 * cannot set back) and its budget, and the scan's findings.
 */
import { deepStrictEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { checkLooseObjects, type LooseObjectBudget } from "../../src/sandbox/git_loose_objects.ts";
import { type GitScan, scanGitMetadata } from "../../src/sandbox/git_scan.ts";
import { diffGitFindings } from "../../src/sandbox/git_scan_diff.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository, gitOk, shellOk } from "./_git_fixture.ts";

const messages = (before: GitScan, after: GitScan): string[] =>
  diffGitFindings(before, after).changes.map((change) => change.message);

function objectPath(root: string, name: string): string {
  return join(root, ".git/objects", name.slice(0, 2), name.slice(2));
}

/** Copies the loose object `from` over the loose object `to`, as a shell command could. */
async function swapObject(root: string, from: string, to: string): Promise<void> {
  await Deno.chmod(objectPath(root, to), 0o644);
  await Deno.copyFile(objectPath(root, from), objectPath(root, to));
}

async function hashObject(root: string, content: string): Promise<string> {
  return (await shellOk(root, `printf '%s' '${content}' | git hash-object -w --stdin`)).trim();
}

function budget(limits: Partial<LooseObjectBudget> = {}): LooseObjectBudget {
  return { listed: 1_000, objects: 1_000, bytes: 1 << 20, deadline: performance.now() + 60_000, ...limits };
}

for (const format of ["sha1", "sha256"] as const) {
  Deno.test(`checkLooseObjects finds an object whose content does not hash to its ${format} name`, async () => {
    await using workspace = await createTempWorkspace();
    const root = workspace.root;
    await gitOk(root, "init", "-q", `--object-format=${format}`);
    const since = Date.now();
    const good = await hashObject(root, "echo build");
    const evil = await hashObject(root, "echo evil");
    equal(good.length, format === "sha1" ? 40 : 64);
    const objects = join(root, ".git/objects");
    deepStrictEqual(await checkLooseObjects(objects, { since, format, budget: budget() }), {
      mismatched: [],
      checked: 2,
      complete: true,
    });
    await swapObject(root, evil, good);
    deepStrictEqual(await checkLooseObjects(objects, { since, format, budget: budget() }), {
      mismatched: [{ path: objectPath(root, good), name: good, actual: evil, problem: "" }],
      checked: 2,
      complete: true,
    });
  });
}

Deno.test("checkLooseObjects hashes large objects, and stops at one beyond its byte budget", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await gitOk(root, "init", "-q");
  const since = Date.now();
  // 20 MiB of zeros (a small file that inflates to many chunks), 300 KiB of noise (a large file).
  await Deno.writeFile(join(root, "zeros"), new Uint8Array(20 << 20));
  const noiseBytes = new Uint8Array(300 << 10);
  for (let offset = 0; offset < noiseBytes.length; offset += 65_536) {
    crypto.getRandomValues(noiseBytes.subarray(offset, offset + 65_536));
  }
  await Deno.writeFile(join(root, "noise"), noiseBytes);
  const zeros = (await gitOk(root, "hash-object", "-w", "zeros")).trim();
  const noise = (await gitOk(root, "hash-object", "-w", "noise")).trim();
  const objects = join(root, ".git/objects");
  const large = () => ({ since, format: "sha1" as const, budget: budget({ bytes: 64 << 20 }) });
  deepStrictEqual(await checkLooseObjects(objects, large()), { mismatched: [], checked: 2, complete: true });
  await swapObject(root, noise, zeros);
  deepStrictEqual((await checkLooseObjects(objects, large())).mismatched, [
    { path: objectPath(root, zeros), name: zeros, actual: noise, problem: "" },
  ]);
  const check = await checkLooseObjects(objects, {
    since,
    format: "sha1",
    budget: budget({ bytes: 1 << 20 }),
  });
  equal(check.complete, false);
});

Deno.test("checkLooseObjects reads objects changed since the time given, whatever their mtime says", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await gitOk(root, "init", "-q");
  const good = await hashObject(root, "echo build");
  const evil = await hashObject(root, "echo evil");
  await swapObject(root, evil, good);
  const objects = join(root, ".git/objects");
  const later = { since: Date.now() + 60_000, format: "sha1" as const, budget: budget() };
  deepStrictEqual(await checkLooseObjects(objects, later), { mismatched: [], checked: 0, complete: true });
  // An old modification time does not hide the copy: its change time is now.
  await Deno.utime(objectPath(root, good), new Date(2001, 0, 1), new Date(2001, 0, 1));
  const check = await checkLooseObjects(objects, {
    since: Date.now() - 1_000,
    format: "sha1",
    budget: budget(),
  });
  deepStrictEqual(check.mismatched.map((object) => object.name), [good]);
});

Deno.test("checkLooseObjects stops at its budget of objects, bytes or time and says so", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await gitOk(root, "init", "-q");
  const since = Date.now();
  for (const word of ["one", "two", "three"]) await hashObject(root, word);
  const objects = join(root, ".git/objects");
  deepStrictEqual(
    await checkLooseObjects(objects, { since, format: "sha1", budget: budget({ objects: 2 }) }),
    {
      mismatched: [],
      checked: 2,
      complete: false,
    },
  );
  for (const limits of [{ bytes: 30 }, { listed: 1 }, { deadline: performance.now() - 1 }]) {
    const check = await checkLooseObjects(objects, { since, format: "sha1", budget: budget(limits) });
    equal(check.complete, false, JSON.stringify(limits));
  }
});

Deno.test("scanGitMetadata reports swapped and unreadable loose objects written since the first scan", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const readme = (await gitOk(root, "rev-parse", "HEAD:README")).trim();
  const before = await scanGitMetadata(root);
  // What the session may do: commit. No finding.
  await Deno.writeTextFile(join(root, "notes.txt"), "notes\n");
  await gitOk(root, "add", "notes.txt");
  await gitOk(root, "commit", "-q", "-m", "notes");
  const since = { looseObjects: { since: before.startedAt } };
  deepStrictEqual(messages(before, await scanGitMetadata(root, since)), []);
  const evil = await hashObject(root, "evil");
  await swapObject(root, evil, readme);
  const garbage = "ab" + "c".repeat(38);
  await Deno.mkdir(join(root, ".git/objects/ab"), { recursive: true });
  await Deno.writeTextFile(objectPath(root, garbage), "not zlib");
  equal(await gitOk(root, "status", "--porcelain"), "");
  const found = messages(before, await scanGitMetadata(root, since));
  equal(found.length, 2, found.join("\n"));
  equal(
    found[0],
    `.git/objects/ab/${"c".repeat(38)} cannot be read as a loose object (not a zlib stream), yet it was ` +
      "written during the session: check the repository with git fsck in the workspace",
  );
  match(
    found[1]!,
    new RegExp(
      `^\\.git/objects/${readme.slice(0, 2)}/${readme.slice(2)} holds content that does not hash to its ` +
        `name \\(it hashes to ${evil}\\): git status in the workspace does not show it, but git checkout`,
    ),
  );
  // Without the session's start, no object is read.
  deepStrictEqual(messages(before, await scanGitMetadata(root)), []);
});

Deno.test("scanGitMetadata says when it stopped checking loose objects", async () => {
  await using workspace = await createTempWorkspace();
  const root = workspace.root;
  await createRepository(root);
  const before = await scanGitMetadata(root);
  for (const word of ["one", "two", "three"]) await hashObject(root, word);
  const after = await scanGitMetadata(root, { looseObjects: { since: before.startedAt, maxObjects: 2 } });
  deepStrictEqual(messages(before, after), [
    "mewcode stopped checking the loose objects written during the session in .git/objects after 2 " +
    "objects (its limit of objects, bytes or time): the others were not compared with their names; check them " +
    "with git fsck in the workspace",
  ]);
});
