/**
 * The probe that spares the plan of each shell call its lookups of missing protected names gives the answer
 * an lstat gives, and looks each path up where a listing could mislead.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { EntryProbe } from "../../src/sandbox/_entry_probe.ts";
import { lstatSyncOrNull } from "../../src/common/fs.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

/** What an lstat says of a path, for comparing: its kind, or null when missing. */
function kindOf(info: Deno.FileInfo | null): string | null {
  if (info === null) return null;
  return info.isSymlink ? "symlink" : info.isDirectory ? "directory" : info.isFile ? "file" : "other";
}

Deno.test("EntryProbe answers as lstat does for present, missing, nested and outside paths", async () => {
  await using workspace = await createTempWorkspace();
  await using other = await createTempWorkspace();
  const root = workspace.root;
  await Deno.mkdir(join(root, ".vscode"));
  await Deno.writeTextFile(join(root, ".vscode", "tasks.json"), "{}");
  await Deno.writeTextFile(join(root, ".mcp.json"), "{}");
  await Deno.writeTextFile(join(root, "README.md"), "read me\n");
  await Deno.symlink(other.root, join(root, ".idea"));
  await Deno.writeTextFile(join(other.root, "workspace.xml"), "<x/>");
  const paths = [
    ".vscode",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".mcp.json",
    ".idea",
    ".idea/workspace.xml",
    ".claude",
    ".claude/settings.json",
    "README.md/below",
    "mise/config.toml",
    "./.mcp.json",
    "../outside",
  ].map((path) => `${root}/${path}`);
  const probe = new EntryProbe([root]);
  for (const path of [...paths, join(other.root, "workspace.xml"), join(other.root, "missing")]) {
    equal(kindOf(probe.lstat(path)), kindOf(lstatSyncOrNull(path)), path);
  }
});

Deno.test("EntryProbe answers as of its listing: a probe made after an entry appeared sees it", async () => {
  await using workspace = await createTempWorkspace();
  const path = join(workspace.root, ".envrc");
  const before = new EntryProbe([workspace.root]);
  equal(before.mayExist(path), false);
  await Deno.writeTextFile(path, "export A=1\n");
  equal(new EntryProbe([workspace.root]).mayExist(path), true);
});

Deno.test("EntryProbe looks each path up when a listing could mislead", async (t) => {
  await t.step("a name that is not ASCII, which a case-insensitive file system may match", async () => {
    await using workspace = await createTempWorkspace();
    await Deno.mkdir(join(workspace.root, ".\u212Airo"));
    equal(new EntryProbe([workspace.root]).mayExist(join(workspace.root, ".kiro")), true);
  });
  await t.step("a root too large to list for the lookups it saves", async () => {
    await using workspace = await createTempWorkspace();
    for (let index = 0; index < 2_000; index++) {
      await Deno.writeTextFile(join(workspace.root, `file-with-a-long-name-${index}.txt`), "");
    }
    equal(new EntryProbe([workspace.root]).mayExist(join(workspace.root, ".mcp.json")), true);
  });
  await t.step("a root that is a symlink", async () => {
    await using workspace = await createTempWorkspace();
    const link = `${workspace.root}-link`;
    await Deno.symlink(workspace.root, link);
    try {
      equal(new EntryProbe([link]).mayExist(join(link, ".mcp.json")), true);
    } finally {
      await Deno.remove(link);
    }
  });
  await t.step("ASCII names differing in case only are taken to match", async () => {
    await using workspace = await createTempWorkspace();
    await Deno.mkdir(join(workspace.root, ".VSCode"));
    const probe = new EntryProbe([workspace.root]);
    deepStrictEqual(
      [".vscode", ".VSCODE", ".idea"].map((name) => probe.mayExist(join(workspace.root, name, "x"))),
      [true, true, false],
    );
  });
});
