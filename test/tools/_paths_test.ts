import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { posix } from "node:path";
import {
  isWithinRoot,
  relativeToRoot,
  safePath,
  type SafePathResult,
  validatePathInput,
} from "../../src/tools/_paths.ts";
import { assertIncludes, createTempWorkspace } from "../_fakes/tool_context.ts";

function expectOk(result: SafePathResult): Extract<SafePathResult, { ok: true }> {
  if (!result.ok) throw new Error(`Expected an accepted path, got ${result.reason}: ${result.message}`);
  return result;
}

function expectRejected(result: SafePathResult, reason: string): string {
  if (result.ok) throw new Error(`Expected "${reason}", got the accepted path ${result.path}`);
  assertEquals(result.reason, reason, result.message);
  return result.message;
}

Deno.test("validatePathInput accepts an absolute path and rejects relative, empty and NUL paths without I/O", () => {
  assertEquals(validatePathInput("/ws/src/a.ts", "/ws"), null);
  const relative = validatePathInput("src/a.ts", "/ws");
  assertEquals(relative?.reason, "not-absolute");
  assertIncludes(relative!.message, '"/ws/src/a.ts"');
  assertEquals(validatePathInput("./src/a.ts", "/ws")?.message.includes('"/ws/src/a.ts"'), true);
  assertEquals(validatePathInput("", "/ws")?.reason, "not-absolute");
  assertEquals(validatePathInput("/ws/a\0b", "/ws")?.reason, "nul-byte");
});

Deno.test("isWithinRoot compares whole path components, so a sibling with the root as prefix is outside", () => {
  assert(isWithinRoot("/ws", "/ws"));
  assert(isWithinRoot("/ws", "/ws/a/b"));
  assert(!isWithinRoot("/ws", "/ws-evil"));
  assert(!isWithinRoot("/ws", "/ws-evil/a"));
  assert(!isWithinRoot("/ws", "/w"));
  assert(isWithinRoot("/", "/anything"));
  assertEquals(relativeToRoot("/ws", "/ws"), ".");
  assertEquals(relativeToRoot("/ws", "/ws/a/b.ts"), "a/b.ts");
});

Deno.test("safePath returns the canonical path of an existing file, directory and the root itself", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.mkdir(`${root}/src`);
  await Deno.writeTextFile(`${root}/src/a.ts`, "x");
  const file = expectOk(await safePath(root, `${root}/src/a.ts`));
  assertEquals(file.path, `${root}/src/a.ts`);
  assert(file.exists);
  assert(file.info?.isFile);
  assertEquals(file.relative, "src/a.ts");
  const directory = expectOk(await safePath(root, `${root}/src/`));
  assertEquals(directory.path, `${root}/src`);
  assert(directory.info?.isDirectory);
  const itself = expectOk(await safePath(root, root));
  assertEquals(itself.path, root);
  assertEquals(itself.relative, ".");
});

Deno.test("safePath resolves .. inside the workspace and rejects .. that leaves it", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.mkdir(`${root}/a`);
  assertEquals(expectOk(await safePath(root, `${root}/a/../b.txt`)).path, `${root}/b.txt`);
  expectRejected(await safePath(root, `${root}/../outside.txt`), "outside-workspace");
  expectRejected(await safePath(root, `${root}/a/../../x`), "outside-workspace");
});

Deno.test("safePath rejects absolute paths outside the root, like /etc/passwd", async () => {
  await using workspace = await createTempWorkspace();
  const message = expectRejected(await safePath(workspace.root, "/etc/passwd"), "outside-workspace");
  assertIncludes(message, "outside the workspace");
  expectRejected(await safePath(workspace.root, "/"), "outside-workspace");
});

Deno.test("safePath rejects a relative path with the absolute path it probably meant", async () => {
  await using workspace = await createTempWorkspace();
  const message = expectRejected(await safePath(workspace.root, "src/a.ts"), "not-absolute");
  assertIncludes(message, `"${workspace.root}/src/a.ts"`);
});

Deno.test("safePath rejects a path containing a NUL byte", async () => {
  await using workspace = await createTempWorkspace();
  expectRejected(await safePath(workspace.root, `${workspace.root}/a\0.txt`), "nul-byte");
});

Deno.test("safePath rejects a sibling directory whose name has the root as a prefix", async () => {
  await using workspace = await createTempWorkspace();
  await using sibling = {
    path: `${workspace.root}-evil`,
    [Symbol.asyncDispose]: () => removeQuietly(`${workspace.root}-evil`),
  };
  await Deno.mkdir(sibling.path);
  await Deno.writeTextFile(`${sibling.path}/file.txt`, "x");
  expectRejected(await safePath(workspace.root, `${sibling.path}/file.txt`), "outside-workspace");
  expectRejected(await safePath(workspace.root, `${sibling.path}/new.txt`), "outside-workspace");
  expectRejected(await safePath(workspace.root, sibling.path), "outside-workspace");
});

Deno.test("safePath rejects file and directory symlinks that lead outside, existing or not", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const { root } = workspace;
  await Deno.writeTextFile(`${outside.root}/secret.txt`, "secret");
  await Deno.symlink(`${outside.root}/secret.txt`, `${root}/file-link`);
  await Deno.symlink(outside.root, `${root}/dir-link`);
  await Deno.symlink("/etc/passwd", `${root}/passwd`);
  const message = expectRejected(await safePath(root, `${root}/file-link`), "outside-workspace");
  assertIncludes(message, `resolves to "${outside.root}/secret.txt"`);
  expectRejected(await safePath(root, `${root}/passwd`), "outside-workspace");
  expectRejected(await safePath(root, `${root}/dir-link`), "outside-workspace");
  expectRejected(await safePath(root, `${root}/dir-link/secret.txt`), "outside-workspace");
  expectRejected(await safePath(root, `${root}/dir-link/new.txt`), "outside-workspace");
  expectRejected(await safePath(root, `${root}/dir-link/a/b/new.txt`), "outside-workspace");
});

Deno.test("safePath rejects a dangling symlink, whether its target is inside or outside", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.symlink("/nonexistent-mewcode/target.txt", `${root}/dangling-out`);
  await Deno.symlink(`${root}/missing.txt`, `${root}/dangling-in`);
  assertIncludes(
    expectRejected(await safePath(root, `${root}/dangling-out`), "dangling-symlink"),
    "/nonexistent-mewcode/target.txt",
  );
  expectRejected(await safePath(root, `${root}/dangling-in`), "dangling-symlink");
  expectRejected(await safePath(root, `${root}/dangling-out/child.txt`), "dangling-symlink");
});

Deno.test("safePath rejects a symlink loop and paths below it", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.symlink(`${root}/loop-b`, `${root}/loop-a`);
  await Deno.symlink(`${root}/loop-a`, `${root}/loop-b`);
  expectRejected(await safePath(root, `${root}/loop-a`), "symlink-loop");
  expectRejected(await safePath(root, `${root}/loop-a/x.txt`), "symlink-loop");
});

Deno.test("safePath follows a symlink that stays inside and returns the target's canonical path", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.mkdir(`${root}/real`);
  await Deno.writeTextFile(`${root}/real/a.txt`, "x");
  await Deno.symlink(`${root}/real`, `${root}/alias`);
  await Deno.symlink("real/a.txt", `${root}/a-link`);
  assertEquals(expectOk(await safePath(root, `${root}/alias/a.txt`)).path, `${root}/real/a.txt`);
  assertEquals(expectOk(await safePath(root, `${root}/a-link`)).path, `${root}/real/a.txt`);
  const created = expectOk(await safePath(root, `${root}/alias/new/deeper.txt`));
  assertEquals(created.path, `${root}/real/new/deeper.txt`);
  assertEquals(created.exists, false);
});

Deno.test("safePath resolves a missing path through its deepest existing ancestor", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  const missing = expectOk(await safePath(root, `${root}/a/b/c.txt`));
  assertEquals(missing, {
    ok: true,
    path: `${root}/a/b/c.txt`,
    exists: false,
    info: null,
    relative: "a/b/c.txt",
    named: `${root}/a/b/c.txt`,
    namedRelative: "a/b/c.txt",
    roots: [root],
  });
  expectRejected(await safePath(root, `${root}/a/b/c.txt`, { mustExist: true }), "not-found");
});

Deno.test("safePath maps a path under a root alias to the same path under the real root", async () => {
  await using workspace = await createTempWorkspace();
  await using links = await createTempWorkspace("mewcode-links-");
  const { root } = workspace;
  const alias = `${links.root}/link-to-ws`;
  await Deno.symlink(root, alias);
  await Deno.writeTextFile(`${root}/a.txt`, "x");
  expectRejected(await safePath(root, `${alias}/a.txt`), "outside-workspace");
  const options = { aliases: [alias] };
  const file = expectOk(await safePath(root, `${alias}/a.txt`, options));
  assertEquals([file.path, file.relative, file.exists], [`${root}/a.txt`, "a.txt", true]);
  const created = expectOk(await safePath(root, `${alias}/new/b.txt`, options));
  assertEquals([created.path, created.exists], [`${root}/new/b.txt`, false]);
  assertEquals(expectOk(await safePath(root, alias, options)).path, root);
  const unnormalised = { aliases: [`${links.root}/./link-to-ws/`] };
  assertEquals(expectOk(await safePath(root, `${alias}/a.txt`, unnormalised)).path, `${root}/a.txt`);
  assertEquals(expectOk(await safePath(root, `${root}/a.txt`, options)).path, `${root}/a.txt`);
});

Deno.test("safePath checks real paths after mapping an alias, so an alias never widens what is reachable", async () => {
  await using workspace = await createTempWorkspace();
  await using links = await createTempWorkspace("mewcode-links-");
  await using outside = await createTempWorkspace("mewcode-outside-");
  const { root } = workspace;
  const alias = `${links.root}/link-to-ws`;
  await Deno.symlink(root, alias);
  await Deno.writeTextFile(`${links.root}/beside.txt`, "beside");
  await Deno.writeTextFile(`${outside.root}/secret.txt`, "secret");
  await Deno.symlink(outside.root, `${root}/dir-link`);
  const options = { aliases: [alias] };
  expectRejected(await safePath(root, `${alias}/../beside.txt`, options), "outside-workspace");
  expectRejected(await safePath(root, `${alias}-evil/a.txt`, options), "outside-workspace");
  const message = expectRejected(
    await safePath(root, `${alias}/dir-link/secret.txt`, options),
    "outside-workspace",
  );
  assertIncludes(message, `resolves to "${outside.root}/secret.txt"`);
  expectRejected(await safePath(root, `${alias}/dir-link/new.txt`, options), "outside-workspace");
  // An alias that names another directory only ever leads into the root, never into that directory.
  const other = expectOk(await safePath(root, `${outside.root}/secret.txt`, { aliases: [outside.root] }));
  assertEquals([other.path, other.exists], [`${root}/secret.txt`, false]);
});

Deno.test("safePath shows a path given through an alias as the model gave it", async () => {
  await using workspace = await createTempWorkspace();
  await using links = await createTempWorkspace("mewcode-links-");
  const { root } = workspace;
  const alias = `${links.root}/link-to-ws`;
  await Deno.symlink(root, alias);
  await Deno.symlink("/nonexistent-mewcode/target.txt", `${root}/dangling`);
  await Deno.writeTextFile(`${root}/file.txt`, "x");
  const options = { aliases: [alias] };
  const dangling = expectRejected(await safePath(root, `${alias}/dangling`, options), "dangling-symlink");
  assertIncludes(dangling, `"${alias}/dangling"`);
  const through = expectRejected(await safePath(root, `${alias}/file.txt/x/y`, options), "not-a-directory");
  assertIncludes(through, `"${alias}/file.txt"`);
});

Deno.test("safePath treats an excluded folder inside the root as outside the workspace, also through a symlink", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  const state = `${root}/.mewcode-home`;
  await Deno.mkdir(`${state}/sessions`, { recursive: true });
  await Deno.writeTextFile(`${state}/sessions/a.jsonl`, "{}");
  await Deno.mkdir(`${root}/.mewcode-home-other`);
  await Deno.symlink(state, `${root}/state-link`);
  const options = { excluded: [state] };
  const message = expectRejected(
    await safePath(root, `${state}/sessions/a.jsonl`, options),
    "outside-workspace",
  );
  assertIncludes(message, "mewcode's state folder");
  assertIncludes(message, `"${state}"`);
  expectRejected(await safePath(root, state, options), "outside-workspace");
  expectRejected(await safePath(root, `${state}/new/b.txt`, options), "outside-workspace");
  expectRejected(await safePath(root, `${root}/state-link/sessions/a.jsonl`, options), "outside-workspace");
  expectRejected(await safePath(root, `${root}/state-link`, options), "outside-workspace");
  expectOk(await safePath(root, `${root}/.mewcode-home-other/x.txt`, options));
  expectOk(await safePath(root, `${state}/sessions/a.jsonl`));
});

Deno.test("safePath rejects a path that goes through a regular file", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/file.txt`, "x");
  expectRejected(await safePath(workspace.root, `${workspace.root}/file.txt/child`), "not-a-directory");
});

Deno.test("safePath in a worker that may only read the root accepts the root and treats NotCapable as outside", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const { root } = workspace;
  await Deno.writeTextFile(`${root}/a.txt`, "x");
  await Deno.symlink(outside.root, `${root}/dir-link`);
  const source = `import { safePath } from ${
    JSON.stringify(new URL("../../src/tools/_paths.ts", import.meta.url).href)
  };
self.onmessage = async (event) => {
  const results = [];
  for (const path of event.data.paths) {
    const result = await safePath(event.data.root, path);
    results.push(result.ok ? { ok: true, path: result.path, exists: result.exists } : { ok: false, reason: result.reason });
  }
  self.postMessage(results);
};`;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, {
    type: "module",
    deno: {
      permissions: {
        read: [root],
        write: false,
        net: false,
        env: false,
        run: false,
        ffi: false,
        import: false,
        sys: false,
      },
    },
  });
  try {
    const paths = [
      root,
      `${root}/a.txt`,
      `${root}/new/b.txt`,
      "/etc/hostname",
      `${outside.root}/x`,
      `${root}/dir-link/x`,
    ];
    const results = await new Promise<unknown[]>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
      worker.postMessage({ root, paths });
    });
    assertEquals(results, [
      { ok: true, path: root, exists: true },
      { ok: true, path: `${root}/a.txt`, exists: true },
      { ok: true, path: `${root}/new/b.txt`, exists: false },
      { ok: false, reason: "outside-workspace" },
      { ok: false, reason: "outside-workspace" },
      { ok: false, reason: "outside-workspace" },
    ]);
  } finally {
    worker.terminate();
    URL.revokeObjectURL(url);
  }
});

async function removeQuietly(path: string): Promise<void> {
  await Deno.remove(path, { recursive: true }).catch(() => undefined);
}

Deno.test("safePath accepts a path whose real path lies in an added folder, as in the root", async () => {
  await using workspace = await createTempWorkspace();
  await using added = await createTempWorkspace("mewcode-added-");
  const { root } = workspace;
  await Deno.mkdir(`${added.root}/src`);
  await Deno.writeTextFile(`${added.root}/src/a.ts`, "x");
  await Deno.symlink(`${added.root}/src`, `${root}/to-added`);
  expectRejected(await safePath(root, `${added.root}/src/a.ts`), "outside-workspace");
  const options = { additionalRoots: [added.root] };
  const file = expectOk(await safePath(root, `${added.root}/src/a.ts`, options));
  assertEquals([file.path, file.relative, file.exists], [`${added.root}/src/a.ts`, "src/a.ts", true]);
  assertEquals(file.roots, [root, added.root]);
  const created = expectOk(await safePath(root, `${added.root}/new/b.ts`, options));
  assertEquals([created.path, created.exists, created.relative], [
    `${added.root}/new/b.ts`,
    false,
    "new/b.ts",
  ]);
  // A symlink from the root into an added folder leads inside: accepted, shown where it really is.
  const linked = expectOk(await safePath(root, `${root}/to-added/a.ts`, options));
  assertEquals([linked.path, linked.relative, linked.namedRelative], [
    `${added.root}/src/a.ts`,
    "src/a.ts",
    "to-added/a.ts",
  ]);
});

Deno.test("safePath refuses links, .. and siblings out of an added folder, naming the added folders", async (t) => {
  await using workspace = await createTempWorkspace();
  await using added = await createTempWorkspace("mewcode-added-");
  await using outside = await createTempWorkspace("mewcode-outside-");
  const { root } = workspace;
  await Deno.writeTextFile(`${outside.root}/secret`, "secret");
  await Deno.symlink(`${outside.root}/secret`, `${added.root}/file-link`);
  await Deno.symlink(outside.root, `${added.root}/dir-link`);
  await Deno.mkdir(`${added.root}-evil`);
  try {
    const options = { additionalRoots: [added.root] };
    const cases: [string, string][] = [
      ["a file symlink to outside", `${added.root}/file-link`],
      ["a directory symlink to outside", `${added.root}/dir-link/secret`],
      ["a new file through a directory symlink", `${added.root}/dir-link/new.txt`],
      ["..", `${added.root}/../${posix.basename(outside.root)}/secret`],
      ["a sibling with the added folder as prefix", `${added.root}-evil/x`],
      ["the third folder itself", `${outside.root}/secret`],
    ];
    for (const [label, path] of cases) {
      await t.step(label, async () => {
        const message = expectRejected(await safePath(root, path, options), "outside-workspace");
        assertIncludes(message, `outside the workspace "${root}" and the added folder "${added.root}"`);
      });
    }
  } finally {
    await Deno.remove(`${added.root}-evil`, { recursive: true });
  }
});
