/**
 * Escape attempts through the real file tools, run as in production: through the pipeline and the
 * WorkerExecutor, each tool in a worker with the permissions derived from its metadata, and `safePath`
 * inside the tool. Every attempt must fail with a clear error and leave the disk as it was.
 */
import { deepEqual, equal, match, notEqual } from "node:assert/strict";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

interface Layout {
  root: string;
  outside: string;
  sibling: string;
}

/** Files outside the workspace, and links from inside it that lead there. */
async function createLayout(root: string, outside: string): Promise<Layout> {
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret\n");
  await Deno.writeTextFile(`${outside}/shared.txt`, "shared original\n");
  await Deno.writeTextFile(`${outside}/shared2.txt`, "shared2 original\n");
  await Deno.mkdir(`${outside}/dir`);
  await Deno.writeTextFile(`${outside}/dir/inside.txt`, "outside dir file\n");
  await Deno.symlink(`${outside}/secret.txt`, `${root}/file-link`);
  await Deno.symlink(`${outside}/dir`, `${root}/dir-link`);
  await Deno.symlink(`${outside}/missing.txt`, `${root}/dangling`);
  await Deno.symlink(`${root}/loop-b`, `${root}/loop-a`);
  await Deno.symlink(`${root}/loop-a`, `${root}/loop-b`);
  await Deno.link(`${outside}/shared.txt`, `${root}/hard`);
  await Deno.link(`${outside}/shared2.txt`, `${root}/hard2`);
  const sibling = `${root}-evil`;
  await Deno.mkdir(sibling);
  await Deno.writeTextFile(`${sibling}/x.txt`, "sibling\n");
  return { root, outside, sibling };
}

/** Every entry under `path` (not following links) with its kind, link target or content, and mode. */
async function snapshot(path: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  async function visit(directory: string): Promise<void> {
    for await (const entry of Deno.readDir(directory)) {
      const full = `${directory}/${entry.name}`;
      const info = await Deno.lstat(full);
      if (info.isSymlink) entries[full] = `link -> ${await Deno.readLink(full)}`;
      else if (info.isDirectory) {
        entries[full] = `dir ${info.mode}`;
        await visit(full);
      } else entries[full] = `file ${info.mode} ${info.nlink} ${await Deno.readTextFile(full)}`;
    }
  }
  await visit(path);
  return entries;
}

function sessionFor(root: string): Promise<ToolRuntime> {
  return testRuntime(root);
}

async function call(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({ id: `escape_${crypto.randomUUID()}`, name, input }, {
    signal: new AbortController().signal,
  });
  return result;
}

Deno.test("escape attempts through the file tools fail with a clear error and change nothing on disk", async (t) => {
  await using workspace = await createTempWorkspace("mewcode-escape-ws-");
  await using outsideDir = await createTempWorkspace("mewcode-escape-outside-");
  const layout = await createLayout(workspace.root, outsideDir.root);
  await using runtime = await sessionFor(layout.root);
  const { root, outside, sibling } = layout;
  const outsideBefore = await snapshot(outside);
  const siblingBefore = await snapshot(sibling);
  const rootBefore = await snapshot(root);
  const outsideName = outside.split("/").pop();
  const cases: { name: string; tool: string; input: Record<string, unknown>; message: RegExp }[] = [];
  const paths: { label: string; path: string; message: RegExp }[] = [
    { label: "/etc/passwd", path: "/etc/passwd", message: /outside the workspace/ },
    { label: "..", path: `${root}/../${outsideName}/secret.txt`, message: /outside the workspace/ },
    { label: "a file symlink to outside", path: `${root}/file-link`, message: /outside the workspace/ },
    {
      label: "a directory symlink to outside",
      path: `${root}/dir-link/inside.txt`,
      message: /outside the workspace/,
    },
    {
      label: "a dangling symlink to outside",
      path: `${root}/dangling`,
      message: /outside the workspace|dangling|symlink/,
    },
    { label: "a symlink loop", path: `${root}/loop-a`, message: /loop/ },
    {
      label: "a sibling with the root as prefix",
      path: `${sibling}/x.txt`,
      message: /outside the workspace/,
    },
    { label: "a NUL byte", path: `${root}/a\u0000b.txt`, message: /NUL byte/ },
  ];
  for (const { label, path, message } of paths) {
    cases.push({ name: `ReadFile ${label}`, tool: "ReadFile", input: { path }, message });
    cases.push({
      name: `WriteFile over ${label}`,
      tool: "WriteFile",
      input: { path, content: "pwned\n" },
      message,
    });
    cases.push({
      name: `EditFile ${label}`,
      tool: "EditFile",
      input: { path, old_string: "secret", new_string: "pwned" },
      message,
    });
  }
  cases.push(
    {
      name: "WriteFile creating a file through a directory symlink",
      tool: "WriteFile",
      input: { path: `${root}/dir-link/new.txt`, content: "pwned\n" },
      message: /outside the workspace/,
    },
    {
      name: "WriteFile creating directories and a file through a directory symlink (mkdir -p)",
      tool: "WriteFile",
      input: { path: `${root}/dir-link/sub/deeper/new.txt`, content: "pwned\n" },
      message: /outside the workspace/,
    },
    {
      name: "EditFile creating a file through a directory symlink",
      tool: "EditFile",
      input: { path: `${root}/dir-link/created.txt`, old_string: "", new_string: "pwned\n" },
      message: /outside the workspace/,
    },
    {
      name: "EditFile creating a file through a dangling symlink",
      tool: "EditFile",
      input: { path: `${root}/dangling`, old_string: "", new_string: "pwned\n" },
      message: /outside the workspace|dangling|symlink/,
    },
    {
      name: "Glob in a directory symlink to outside",
      tool: "Glob",
      input: { pattern: "**/*", path: `${root}/dir-link` },
      message: /outside the workspace/,
    },
    {
      name: "Grep in a directory outside",
      tool: "Grep",
      input: { pattern: "secret", path: outside },
      message: /outside the workspace/,
    },
  );
  for (const attempt of cases) {
    await t.step(attempt.name, async () => {
      const result = await call(runtime, attempt.tool, attempt.input);
      equal(result.isError, true, result.content);
      match(result.content, attempt.message);
      notEqual(result.content.includes("secret\n"), true);
    });
  }
  await t.step("Grep over the workspace does not follow links out of it", async () => {
    const result = await call(runtime, "Grep", { pattern: "secret|outside dir file|sibling" });
    equal(result.isError, false, result.content);
    match(result.content, /^No matches found/);
  });
  deepEqual(await snapshot(outside), outsideBefore);
  deepEqual(await snapshot(sibling), siblingBefore);
  deepEqual(await snapshot(root), rootBefore);
  await Deno.remove(sibling, { recursive: true });
});

Deno.test("a hard link to an outside file is never written through", async (t) => {
  await using workspace = await createTempWorkspace("mewcode-escape-ws-");
  await using outsideDir = await createTempWorkspace("mewcode-escape-outside-");
  const { root, outside, sibling } = await createLayout(workspace.root, outsideDir.root);
  await Deno.remove(sibling, { recursive: true });
  await using runtime = await sessionFor(root);
  await t.step("ReadFile reads it with a note about the other links", async () => {
    const result = await call(runtime, "ReadFile", { path: `${root}/hard` });
    equal(result.isError, false, result.content);
    match(result.content, /hard links/);
  });
  await t.step("WriteFile replaces the link in the workspace, not the shared file", async () => {
    const result = await call(runtime, "WriteFile", { path: `${root}/hard`, content: "replaced\n" });
    equal(result.isError, false, result.content);
    equal(await Deno.readTextFile(`${root}/hard`), "replaced\n");
    equal((await Deno.lstat(`${root}/hard`)).nlink, 1);
  });
  await t.step("EditFile replaces the link in the workspace, not the shared file", async () => {
    const read = await call(runtime, "ReadFile", { path: `${root}/hard2` });
    equal(read.isError, false, read.content);
    const result = await call(runtime, "EditFile", {
      path: `${root}/hard2`,
      old_string: "original",
      new_string: "edited",
    });
    equal(result.isError, false, result.content);
    equal(await Deno.readTextFile(`${root}/hard2`), "shared2 edited\n");
  });
  equal(await Deno.readTextFile(`${outside}/shared.txt`), "shared original\n");
  equal(await Deno.readTextFile(`${outside}/shared2.txt`), "shared2 original\n");
  equal((await Deno.lstat(`${outside}/shared.txt`)).nlink, 1);
  equal((await Deno.lstat(`${outside}/shared2.txt`)).nlink, 1);
});
