/**
 * Folders added to the workspace (`--add-dir`): which folders a runtime accepts, and the file tools run as in
 * production (pipeline, WorkerExecutor, one worker per permission profile, safePath in the tool) reading and
 * writing an added folder E exactly like the root, while a third folder F stays out of reach: by Deno's own
 * refusal (the worker's grant) and by the tools' real-path checks (symlinks and hard links into F).
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  AdditionalDirectoryError,
  checkAdditionalRoots,
  resolveAdditionalDirectories,
} from "../../src/execution/additional_roots.ts";
import type { RuntimeOptions, ToolRuntime } from "../../src/execution/runtime.ts";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { probeReadOnlyTool, probeWriterTool, SANDBOX_PROBE_WORKER_URL } from "../_fakes/sandbox_probes.ts";
import { createTempWorkspace, type TempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";
import { exists } from "../_fakes/exists.ts";

/** A workspace, a folder added to it (E) and a third folder (F) with a secret; links from E lead into F. */
interface Scene extends AsyncDisposable {
  root: string;
  added: string;
  third: string;
}

async function createScene(): Promise<Scene> {
  const folders: TempWorkspace[] = [];
  for (const prefix of ["mewcode-ws-", "mewcode-added-", "mewcode-third-"]) {
    folders.push(await createTempWorkspace(prefix));
  }
  const [root, added, third] = folders.map((folder) => folder.root) as [string, string, string];
  await Deno.writeTextFile(join(third, "secret.txt"), "top secret\n");
  await Deno.writeTextFile(join(third, "shared.txt"), "shared original\n");
  await Deno.writeTextFile(join(added, "inside.txt"), "inside the added folder\n");
  await Deno.mkdir(join(added, "src"));
  await Deno.writeTextFile(join(added, "src", "lib.ts"), "export const needle = 1;\n");
  await Deno.symlink(join(third, "secret.txt"), join(added, "secret-link"));
  await Deno.symlink(third, join(added, "third-dir"));
  await Deno.link(join(third, "shared.txt"), join(added, "hard"));
  await Deno.mkdir(join(added, ".git", "hooks"), { recursive: true });
  return {
    root,
    added,
    third,
    [Symbol.asyncDispose]: async () => {
      for (const folder of folders) await folder.cleanup();
    },
  };
}

function runtimeFor(scene: Scene, overrides: Partial<RuntimeOptions> = {}): Promise<ToolRuntime> {
  return testRuntime(scene.root, { additionalRoots: [scene.added], ...overrides });
}

async function call(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({ id: `add_dir_${crypto.randomUUID()}`, name, input }, {
    signal: new AbortController().signal,
  });
  return result;
}

Deno.test("checkAdditionalRoots refuses a folder the tools must not be given, naming it and why", async (t) => {
  await using scene = await createScene();
  const state = join(scene.added, "state");
  await Deno.mkdir(state);
  await Deno.writeTextFile(join(scene.root, "file.txt"), "");
  await Deno.symlink(scene.added, join(scene.root, "link-to-added"));
  const cases: { label: string; folder: string; reason: RegExp }[] = [
    { label: "the file system's root", folder: "/", reason: /root of the file system/ },
    { label: "a relative path", folder: "relative/dir", reason: /not an absolute path/ },
    { label: "a missing folder", folder: join(scene.root, "missing"), reason: /no such directory/ },
    { label: "a file", folder: join(scene.root, "file.txt"), reason: /not a directory/ },
    {
      label: "a name that is not the real path",
      folder: join(scene.root, "link-to-added"),
      reason: new RegExp(`resolves to "${scene.added}"`),
    },
    { label: "a folder inside mewcode's state", folder: state, reason: /inside mewcode's state folder/ },
    {
      label: "a folder around mewcode's state",
      folder: scene.added,
      reason: /contains mewcode's state folder/,
    },
  ];
  for (const { label, folder, reason } of cases) {
    await t.step(label, async () => {
      await rejects(checkAdditionalRoots([folder], { root: scene.root, excludedPaths: [state] }), (error) => {
        ok(error instanceof AdditionalDirectoryError, String(error));
        ok(error.message.startsWith(`Cannot add the directory "${folder}": `), error.message);
        match(error.message, reason);
        return true;
      });
    });
  }
});

Deno.test("checkAdditionalRoots keeps each real directory once and drops the workspace root", async () => {
  await using scene = await createScene();
  const folders = [scene.added, scene.root, scene.added, scene.third];
  deepEqual(await checkAdditionalRoots(folders, { root: scene.root, excludedPaths: [] }), [
    scene.added,
    scene.third,
  ]);
});

Deno.test("resolveAdditionalDirectories resolves names against the workspace to real paths", async () => {
  await using scene = await createScene();
  await Deno.symlink(scene.added, join(scene.root, "link"));
  deepEqual(await resolveAdditionalDirectories(["link", scene.third], scene.root), [
    scene.added,
    scene.third,
  ]);
  await rejects(
    resolveAdditionalDirectories(["missing"], scene.root),
    new AdditionalDirectoryError('Cannot add the directory "missing": no such directory'),
  );
  await rejects(
    resolveAdditionalDirectories([join(scene.added, "inside.txt")], scene.root),
    /Cannot add the directory ".*inside.txt": it is not a directory/,
  );
});

Deno.test("createToolRuntime refuses an added folder that contains mewcode's state folder", async () => {
  await using scene = await createScene();
  await rejects(
    runtimeFor(scene, { excludedPaths: [join(scene.added, ".mewcode-home")] }),
    (error) =>
      error instanceof AdditionalDirectoryError && /contains mewcode's state folder/.test(error.message),
  );
});

Deno.test("a tool worker's own grant covers an added folder and nothing outside it", async (t) => {
  await using scene = await createScene();
  await using executor = new WorkerExecutor({ workerUrl: SANDBOX_PROBE_WORKER_URL });
  // The probes use Deno's APIs directly: what they may do is the worker's grant alone, no check of ours.
  const attempt = async (
    tool: typeof probeReadOnlyTool,
    input: { attempt: "read-outside" | "write-outside"; path: string },
    additionalRoots: readonly string[] = [scene.added],
  ): Promise<unknown> => {
    const { result } = await executor.execute({
      tool,
      input,
      context: {
        root: scene.root,
        additionalRoots,
        timeoutMs: 20_000,
        fileRecords: {},
        strictLinks: false,
        shell: TEST_SHELL_PLAN,
      },
    }, { signal: new AbortController().signal });
    equal(result.isError, false, result.content);
    return result.metadata.outcome;
  };
  const inside = join(scene.added, "inside.txt");
  await t.step("without the added folder, Deno refuses it: the grant is what lets the tools in", async () => {
    equal(await attempt(probeReadOnlyTool, { attempt: "read-outside", path: inside }, []), "NotCapable");
  });
  await t.step(
    "a read-only worker reads the added folder, not the third one, and writes neither",
    async () => {
      equal(await attempt(probeReadOnlyTool, { attempt: "read-outside", path: inside }), "ok");
      const secret = join(scene.third, "secret.txt");
      equal(await attempt(probeReadOnlyTool, { attempt: "read-outside", path: secret }), "NotCapable");
      const written = join(scene.added, "by-reader.txt");
      equal(await attempt(probeReadOnlyTool, { attempt: "write-outside", path: written }), "NotCapable");
      equal(await exists(written), false);
    },
  );
  await t.step("a writer's worker writes the added folder and not the third one", async () => {
    const written = join(scene.added, "by-writer.txt");
    equal(await attempt(probeWriterTool, { attempt: "write-outside", path: written }), "ok");
    equal(await Deno.readTextFile(written), "probe");
    const outside = join(scene.third, "by-writer.txt");
    equal(await attempt(probeWriterTool, { attempt: "write-outside", path: outside }), "NotCapable");
    equal(await exists(outside), false);
  });
  await t.step(
    "the grant alone follows a symlink in the added folder out of it: the tools must check",
    async () => {
      const link = join(scene.added, "secret-link");
      equal(await attempt(probeReadOnlyTool, { attempt: "read-outside", path: link }), "ok");
    },
  );
});

Deno.test("the file tools read, search and write an added folder through real workers", async (t) => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene);
  const { added } = scene;
  await t.step("ReadFile", async () => {
    const result = await call(runtime, "ReadFile", { path: join(added, "inside.txt") });
    equal(result.isError, false, result.content);
    match(result.content, /1\tinside the added folder/);
  });
  await t.step("Glob", async () => {
    const result = await call(runtime, "Glob", { pattern: "**/*.ts", path: added });
    equal(result.isError, false, result.content);
    equal(result.content.split("\n")[0], "src/lib.ts");
  });
  await t.step("Glob below the added folder applies its .gitignore, as below the root", async () => {
    await Deno.writeTextFile(join(added, ".gitignore"), "*.log\n");
    await Deno.writeTextFile(join(added, "src", "debug.log"), "noise\n");
    const result = await call(runtime, "Glob", { pattern: "*", path: join(added, "src") });
    equal(result.isError, false, result.content);
    equal(result.content.split("\n")[0], "lib.ts");
    match(result.content, /1 file was ignored by \.gitignore/);
  });
  await t.step("Grep", async () => {
    const result = await call(runtime, "Grep", { pattern: "needle", path: added });
    equal(result.isError, false, result.content);
    equal(result.content.split("\n")[0], "src/lib.ts:1: export const needle = 1;");
  });
  await t.step("WriteFile creates a file and its folders", async () => {
    const path = join(added, "new", "deeper", "made.txt");
    const result = await call(runtime, "WriteFile", { path, content: "made\n" });
    equal(result.isError, false, result.content);
    equal(await Deno.readTextFile(path), "made\n");
  });
  await t.step("EditFile edits a file it read", async () => {
    const path = join(added, "src", "lib.ts");
    equal((await call(runtime, "ReadFile", { path })).isError, false);
    const result = await call(runtime, "EditFile", { path, old_string: "= 1", new_string: "= 2" });
    equal(result.isError, false, result.content);
    equal(await Deno.readTextFile(path), "export const needle = 2;\n");
  });
});

Deno.test("the file tools refuse a third folder and every link from an added folder into it", async (t) => {
  await using scene = await createScene();
  await using runtime = await runtimeFor(scene);
  const { root, added, third } = scene;
  const outsideMessage = `outside the workspace "${root}" and the added folder "${added}"`;
  const refusals: { label: string; tool: string; input: Record<string, unknown> }[] = [
    { label: "ReadFile in the third folder", tool: "ReadFile", input: { path: join(third, "secret.txt") } },
    {
      label: "WriteFile in the third folder",
      tool: "WriteFile",
      input: { path: join(third, "new.txt"), content: "x" },
    },
    {
      label: "ReadFile through a file symlink",
      tool: "ReadFile",
      input: { path: join(added, "secret-link") },
    },
    {
      label: "ReadFile through a directory symlink",
      tool: "ReadFile",
      input: { path: join(added, "third-dir", "secret.txt") },
    },
    {
      label: "WriteFile through a directory symlink",
      tool: "WriteFile",
      input: { path: join(added, "third-dir", "new.txt"), content: "x" },
    },
    { label: "Grep in the third folder", tool: "Grep", input: { pattern: "secret", path: third } },
    {
      label: "Glob through a directory symlink",
      tool: "Glob",
      input: { pattern: "*", path: join(added, "third-dir") },
    },
  ];
  for (const { label, tool, input } of refusals) {
    await t.step(label, async () => {
      const result = await call(runtime, tool, input);
      equal(result.isError, true, result.content);
      ok(result.content.includes(outsideMessage), result.content);
      equal(result.content.includes("top secret"), false);
    });
  }
  await t.step("Glob and Grep over the added folder do not follow links into the third one", async () => {
    const glob = await call(runtime, "Glob", { pattern: "**/*.txt", path: added });
    equal(glob.content.split("\n")[0], "inside.txt");
    equal(glob.content.includes("secret.txt"), false);
    const grep = await call(runtime, "Grep", { pattern: "top secret", path: added });
    match(grep.content, /^No matches found/);
  });
  await t.step(
    "with --strict-links, ReadFile refuses a hard link whose other name is in the third folder",
    async () => {
      await using strict = await runtimeFor(scene, { strictLinks: true });
      const result = await call(strict, "ReadFile", { path: join(added, "hard") });
      equal(result.isError, true, result.content);
      match(result.content, /2 hard links and strict link checking is on/);
    },
  );
  equal(await exists(join(third, "new.txt")), false);
  deepEqual((await Array.fromAsync(Deno.readDir(third))).map((entry) => entry.name).sort(), [
    "secret.txt",
    "shared.txt",
  ]);
});

Deno.test("WriteFile and EditFile refuse the protected paths of an added folder as in the workspace", async (t) => {
  await using scene = await createScene();
  const { added } = scene;
  const targets = [
    join(added, ".git", "hooks", "pre-commit"),
    join(added, ".git", "config"),
    join(added, ".mewcode", "settings.json"),
    join(added, ".vscode", "tasks.json"),
  ];
  await t.step("without protected paths (calls a person typed), the writes go through", async () => {
    await using open = await runtimeFor(scene, { protectedPaths: [], requireRead: false });
    for (const path of targets) {
      const result = await call(open, "WriteFile", { path, content: "#!/bin/sh\necho pwned\n" });
      equal(result.isError, false, result.content);
      await Deno.remove(path);
    }
  });
  await using runtime = await runtimeFor(scene);
  for (const path of targets) {
    await t.step(`WriteFile ${path.slice(added.length + 1)}`, async () => {
      const result = await call(runtime, "WriteFile", { path, content: "#!/bin/sh\necho pwned\n" });
      equal(result.isError, true, result.content);
      equal(result.metadata.reason, "protected", result.content);
      equal(await exists(path), false);
    });
    await t.step(`EditFile ${path.slice(added.length + 1)}`, async () => {
      const result = await call(runtime, "EditFile", { path, old_string: "", new_string: "echo pwned\n" });
      equal(result.isError, true, result.content);
      equal(result.metadata.reason, "protected", result.content);
      equal(await exists(path), false);
    });
  }
  await t.step("a symlink in the workspace into the added folder's hooks is protected too", async () => {
    await Deno.symlink(join(added, ".git", "hooks"), join(scene.root, "hooks"));
    const result = await call(runtime, "WriteFile", {
      path: join(scene.root, "hooks", "post-checkout"),
      content: "x",
    });
    equal(result.metadata.reason, "protected", result.content);
  });
});
