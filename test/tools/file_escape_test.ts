/**
 * Escape attempts through every file tool: each must fail with a clear error and leave no trace on disk,
 * both when the tool runs in this process and inside a worker with the tool's Deno permission profile.
 */
import { deepStrictEqual as assertEquals, equal, ok as assert } from "node:assert/strict";
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { editFileTool } from "../../src/tools/edit_file.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import type { ToolCallContext, ToolResult } from "../../src/tools/tool.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import {
  assertExcludes,
  assertIncludes,
  callContext,
  createTempWorkspace,
  FILE_TOOL_MODULES,
  startToolWorker,
  type TempWorkspace,
  workerPermissions,
} from "../_fakes/tool_context.ts";

const SECRET = "top secret\n";

type Operation = "read" | "overwrite" | "edit" | "create" | "edit-create";

/** Runs one operation of a file tool; `where` decides between a direct call and a restricted worker. */
type Runner = (operation: Operation, path: string, context: ToolCallContext) => Promise<ToolResult>;

function inputFor(operation: Operation, path: string): { tool: "read" | "write" | "edit"; input: unknown } {
  switch (operation) {
    case "read":
      return { tool: "read", input: { path } };
    case "overwrite":
    case "create":
      return { tool: "write", input: { path, content: "pwned\n" } };
    case "edit":
      return { tool: "edit", input: { path, old_string: "top secret", new_string: "pwned" } };
    case "edit-create":
      return { tool: "edit", input: { path, old_string: "", new_string: "pwned\n" } };
  }
}

const directRunner: Runner = (operation, path, context) => {
  const { tool, input } = inputFor(operation, path);
  const full = { ...context, signal: new AbortController().signal };
  if (tool === "read") return readFileTool.execute(full, input as never);
  if (tool === "write") return writeFileTool.execute(full, input as never);
  return editFileTool.execute(full, input as never);
};

function workerRunner(root: string): Runner & Disposable {
  const reader = startToolWorker(FILE_TOOL_MODULES, workerPermissions(root, "read"));
  const writer = startToolWorker(FILE_TOOL_MODULES, workerPermissions(root, "read-write"));
  const run = (operation: Operation, path: string, context: ToolCallContext): Promise<ToolResult> => {
    const { tool, input } = inputFor(operation, path);
    if (tool === "read") return reader.execute("readFileTool", context, input);
    return writer.execute(tool === "write" ? "writeFileTool" : "editFileTool", context, input);
  };
  return Object.assign(run, {
    [Symbol.dispose]() {
      reader.close();
      writer.close();
    },
  });
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Everything under a directory (not following links): path → kind, content hash, inode, link target. */
async function snapshot(directory: string): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  async function walk(path: string): Promise<void> {
    const info = await Deno.lstat(path);
    if (info.isSymlink) state[path] = `link -> ${await Deno.readLink(path)}`;
    else if (info.isDirectory) {
      state[path] = "dir";
      for await (const entry of Deno.readDir(path)) await walk(posix.join(path, entry.name));
    } else state[path] = `file ${sha256(await Deno.readFile(path))} ino ${info.ino} mode ${info.mode}`;
  }
  await walk(directory);
  return state;
}

interface Scene extends AsyncDisposable {
  root: string;
  outside: string;
  sibling: string;
  /** mewcode's state folder inside the root, which the tools must treat as outside. */
  state: string;
  /** A symlink to the root outside it, the way a user may name the workspace. */
  alias: string;
  /** Records that claim every relevant file was read, so the read-before-write rule is not what stops a write. */
  records: Record<string, string>;
  /** The context of a call in this scene: the records, the state folder excluded, the alias known. */
  context(overrides?: Partial<ToolCallContext>): ToolCallContext;
  disk(): Promise<Record<string, string>>;
}

async function createScene(): Promise<Scene> {
  const workspace: TempWorkspace = await createTempWorkspace();
  const outside: TempWorkspace = await createTempWorkspace("mewcode-outside-");
  const links: TempWorkspace = await createTempWorkspace("mewcode-links-");
  const { root } = workspace;
  const state = `${root}/.mewcode-home`;
  const alias = `${links.root}/link-to-ws`;
  await Deno.mkdir(`${state}/sessions`, { recursive: true });
  await Deno.writeTextFile(`${state}/sessions/other.jsonl`, SECRET);
  await Deno.symlink(state, `${root}/state-link`);
  await Deno.symlink(root, alias);
  await Deno.writeTextFile(`${links.root}/beside.txt`, SECRET);
  const sibling = `${root}-evil`;
  await Deno.mkdir(sibling);
  await Deno.writeTextFile(`${outside.root}/secret.txt`, SECRET);
  await Deno.writeTextFile(`${sibling}/secret.txt`, SECRET);
  await Deno.writeTextFile(`${root}/inside.txt`, "inside\n");
  await Deno.symlink(`${outside.root}/secret.txt`, `${root}/file-link`);
  await Deno.symlink(outside.root, `${root}/dir-link`);
  await Deno.symlink(`${outside.root}/ghost.txt`, `${root}/dangling`);
  await Deno.symlink(`${root}/loop-b`, `${root}/loop-a`);
  await Deno.symlink(`${root}/loop-a`, `${root}/loop-b`);
  const secretHash = sha256(new TextEncoder().encode(SECRET));
  const records: Record<string, string> = {};
  for (
    const path of [
      `${outside.root}/secret.txt`,
      `${sibling}/secret.txt`,
      `${root}/file-link`,
      `${root}/dir-link/secret.txt`,
      `${root}/../${posix.basename(outside.root)}/secret.txt`,
      `${state}/sessions/other.jsonl`,
      `${links.root}/beside.txt`,
      "/etc/passwd",
    ]
  ) records[path] = secretHash;
  return {
    root,
    outside: outside.root,
    sibling,
    state,
    alias,
    records,
    context(overrides = {}) {
      return callContext(root, {
        fileRecords: records,
        excludedPaths: [state],
        rootAliases: [alias],
        ...overrides,
      });
    },
    async disk() {
      return {
        ...await snapshot(root),
        ...await snapshot(outside.root),
        ...await snapshot(links.root),
        ...await snapshot(sibling),
        "/etc/passwd": sha256(await Deno.readFile("/etc/passwd")),
      };
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(sibling, { recursive: true }).catch(() => undefined);
      await links.cleanup();
      await outside.cleanup();
      await workspace.cleanup();
    },
  };
}

interface Attempt {
  name: string;
  path: (scene: Scene) => string;
  operations: Operation[];
  /** Part of the error message that names the cause. */
  expect: string;
  /** Only in a restricted worker: attempts whose in-process failure would damage the machine. */
  workerOnly?: Operation[];
}

const ATTEMPTS: Attempt[] = [
  {
    name: "/etc/passwd",
    path: () => "/etc/passwd",
    operations: ["read"],
    workerOnly: ["overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a .. path that leaves the workspace",
    path: (scene) => `${scene.root}/../${posix.basename(scene.outside)}/secret.txt`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a .. path that creates a file outside",
    path: (scene) => `${scene.root}/../${posix.basename(scene.outside)}/new.txt`,
    operations: ["create", "edit-create"],
    expect: "outside the workspace",
  },
  {
    name: "a file symlink to an outside file",
    path: (scene) => `${scene.root}/file-link`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a directory symlink to an outside directory",
    path: (scene) => `${scene.root}/dir-link/secret.txt`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a new file through a directory symlink",
    path: (scene) => `${scene.root}/dir-link/new.txt`,
    operations: ["create", "edit-create"],
    expect: "outside the workspace",
  },
  {
    name: "mkdir -p and create through a directory symlink",
    path: (scene) => `${scene.root}/dir-link/a/b/new.txt`,
    operations: ["create", "edit-create"],
    expect: "outside the workspace",
  },
  {
    name: "a dangling symlink to an outside path",
    path: (scene) => `${scene.root}/dangling`,
    operations: ["read", "create", "edit-create"],
    expect: "whose target does not exist",
  },
  {
    name: "a symlink loop",
    path: (scene) => `${scene.root}/loop-a`,
    operations: ["read", "overwrite", "edit", "edit-create"],
    expect: "symlink loop",
  },
  {
    name: "a path below a symlink loop",
    path: (scene) => `${scene.root}/loop-a/new.txt`,
    operations: ["create", "edit-create"],
    expect: "symlink loop",
  },
  {
    name: "a sibling directory with the root as prefix",
    path: (scene) => `${scene.sibling}/secret.txt`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a new file in a sibling directory with the root as prefix",
    path: (scene) => `${scene.sibling}/new.txt`,
    operations: ["create", "edit-create"],
    expect: "outside the workspace",
  },
  {
    name: "mewcode's state folder inside the workspace",
    path: (scene) => `${scene.state}/sessions/other.jsonl`,
    operations: ["read", "overwrite", "edit"],
    expect: "mewcode's state folder",
  },
  {
    name: "a new file in mewcode's state folder",
    path: (scene) => `${scene.state}/sessions/new.jsonl`,
    operations: ["create", "edit-create"],
    expect: "mewcode's state folder",
  },
  {
    name: "a symlink to mewcode's state folder",
    path: (scene) => `${scene.root}/state-link/sessions/other.jsonl`,
    operations: ["read", "overwrite", "edit"],
    expect: "mewcode's state folder",
  },
  {
    name: "mewcode's state folder through a root alias",
    path: (scene) => `${scene.alias}/.mewcode-home/sessions/other.jsonl`,
    operations: ["read", "overwrite", "edit"],
    expect: "mewcode's state folder",
  },
  {
    name: "a .. path that leaves a root alias",
    path: (scene) => `${scene.alias}/../beside.txt`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a directory symlink to outside reached through a root alias",
    path: (scene) => `${scene.alias}/dir-link/secret.txt`,
    operations: ["read", "overwrite", "edit"],
    expect: "outside the workspace",
  },
  {
    name: "a new file through a directory symlink reached through a root alias",
    path: (scene) => `${scene.alias}/dir-link/new.txt`,
    operations: ["create", "edit-create"],
    expect: "outside the workspace",
  },
  {
    name: "a NUL byte",
    path: (scene) => `${scene.root}/inside.txt\0/etc/passwd`,
    operations: ["read", "overwrite", "edit", "create"],
    expect: "NUL byte",
  },
];

async function runAttempts(where: "in-process" | "worker", t: Deno.TestContext): Promise<void> {
  await using scene = await createScene();
  using worker = workerRunner(scene.root);
  const runner: Runner = where === "worker" ? worker : directRunner;
  const before = await scene.disk();
  for (const attempt of ATTEMPTS) {
    const operations = [...attempt.operations, ...(where === "worker" ? attempt.workerOnly ?? [] : [])];
    for (const operation of operations) {
      await t.step(`${operation} via ${attempt.name}`, async () => {
        const path = attempt.path(scene);
        const result = await runner(operation, path, scene.context());
        equal(result.isError, true, result.content);
        assertIncludes(result.content, attempt.expect);
        assertExcludes(result.content, SECRET.trim());
        assert(result.content.startsWith("Cannot "), result.content);
        equal(result.metadata.fileRecord, undefined);
        assertEquals(await scene.disk(), before, "no effect on disk");
      });
    }
  }
}

Deno.test("File tools called directly refuse every escape attempt and leave the disk unchanged", async (t) => {
  await runAttempts("in-process", t);
});

Deno.test("File tools in workers with their Deno permission profile refuse every escape attempt", async (t) => {
  await runAttempts("worker", t);
});

Deno.test("File tools in workers reach a file named through a root alias at its real path", async () => {
  await using scene = await createScene();
  using worker = workerRunner(scene.root);
  const path = `${scene.alias}/inside.txt`;
  const read = await worker("read", path, scene.context());
  equal(read.isError, false, read.content);
  assertIncludes(read.content, "inside");
  const record = read.metadata.fileRecord as { path: string; hash: string };
  equal(record.path, `${scene.root}/inside.txt`);
  const fileRecords = { [record.path]: record.hash };
  const written = await worker("overwrite", path, scene.context({ fileRecords }));
  equal(written.isError, false, written.content);
  assertIncludes(written.content, `"${path}"`);
  equal(await Deno.readTextFile(`${scene.root}/inside.txt`), "pwned\n");
  const created = await worker("edit-create", `${scene.alias}/new/created.txt`, scene.context());
  equal(created.isError, false, created.content);
  equal(await Deno.readTextFile(`${scene.root}/new/created.txt`), "pwned\n");
  assert((await Deno.lstat(scene.alias)).isSymlink, "the alias is still the user's symlink");
});

Deno.test("A hard link to an outside file is never written through, in process or in a worker", async (t) => {
  for (const where of ["in-process", "worker"] as const) {
    await t.step(where, async () => {
      await using scene = await createScene();
      using worker = workerRunner(scene.root);
      const runner: Runner = where === "worker" ? worker : directRunner;
      const outsideFile = `${scene.outside}/linked.txt`;
      await Deno.writeTextFile(outsideFile, SECRET);
      const { ino } = await Deno.stat(outsideFile);
      for (const operation of ["overwrite", "edit"] as const) {
        const inside = `${scene.root}/hard-${operation}.txt`;
        await Deno.link(outsideFile, inside);
        const read = await runner("read", inside, callContext(scene.root));
        equal(read.isError, false, read.content);
        assertIncludes(read.content, "hard links");
        const record = read.metadata.fileRecord as { path: string; hash: string };
        const result = await runner(
          operation,
          inside,
          callContext(scene.root, { fileRecords: { [record.path]: record.hash } }),
        );
        equal(result.isError, false, result.content);
        assertIncludes(result.content, "other links keep the old content");
        equal(await Deno.readTextFile(outsideFile), SECRET);
        equal((await Deno.stat(outsideFile)).ino, ino);
        assertIncludes(await Deno.readTextFile(inside), "pwned");
      }
      equal((await Deno.stat(outsideFile)).nlink, 1);
    });
  }
});

Deno.test("ReadFile refuses a hard-linked file under strictLinks, in a worker", async () => {
  await using scene = await createScene();
  using worker = workerRunner(scene.root);
  await Deno.link(`${scene.outside}/secret.txt`, `${scene.root}/hard.txt`);
  const result = await worker(
    "read",
    `${scene.root}/hard.txt`,
    callContext(scene.root, { strictLinks: true }),
  );
  equal(result.isError, true);
  assertIncludes(result.content, "hard links");
  assertExcludes(result.content, SECRET.trim());
});
