/**
 * What a call made of a path that was to stay missing is set aside, not deleted: the user may have made it
 * on the host while the command ran. Moved as it is (a symlink never followed), across file systems copied,
 * and removed only where it cannot be kept.
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { KEEP_DAYS, KEEP_LIMITS, removeTree, setAside } from "../../src/sandbox/_set_aside.ts";
import { madeEntry } from "../../src/sandbox/_made_entries.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exists } from "../_fakes/exists.ts";

Deno.test("setAside moves an entry into its own folder, at its path in the workspace", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const planned = join(workspace.root, ".aws", "credentials");
  await Deno.mkdir(join(workspace.root, ".aws"));
  await Deno.writeTextFile(planned, "[default]\nkey = the user's\n", { mode: 0o600 });
  const folder = join(state.root, "set-aside");
  const first = await setAside(madeEntry(planned, [workspace.root])!, {
    folder,
    roots: [workspace.root],
    recursive: false,
  });
  if (first.kind !== "moved") throw new Error(JSON.stringify(first));
  ok(first.to.startsWith(`${folder}/`) && first.to.endsWith("/.aws/credentials"), first.to);
  equal(await Deno.readTextFile(first.to), "[default]\nkey = the user's\n");
  equal((await Deno.stat(first.to)).mode! & 0o777, 0o600);
  equal(await exists(planned), false);
  equal((await Deno.stat(folder)).mode! & 0o777, 0o700, "the folder is private");
  // The same path made again goes to a folder of its own: the first is kept.
  await Deno.writeTextFile(planned, "second\n");
  const second = await setAside(madeEntry(planned, [workspace.root])!, {
    folder,
    roots: [workspace.root],
    recursive: false,
  });
  if (second.kind !== "moved") throw new Error(JSON.stringify(second));
  ok(second.to !== first.to);
  equal(await Deno.readTextFile(first.to), "[default]\nkey = the user's\n");
  equal(await Deno.readTextFile(second.to), "second\n");
});

Deno.test("setAside removes entries set aside more than KEEP_DAYS ago, and only those", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const folder = join(state.root, "set-aside");
  const old = new Date(Date.now() - (KEEP_DAYS + 1) * 24 * 60 * 60 * 1000);
  const recent = new Date(Date.now() - (KEEP_DAYS - 1) * 24 * 60 * 60 * 1000);
  const name = (date: Date) => `${date.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-0a1b2c3d`;
  for (const date of [old, recent]) await Deno.mkdir(join(folder, name(date), ".git"), { recursive: true });
  await Deno.writeTextFile(join(folder, "notes.txt"), "not one of ours\n");
  const planned = join(workspace.root, ".mcp.json");
  await Deno.writeTextFile(planned, "{}");
  const outcome = await setAside(madeEntry(planned, [workspace.root])!, {
    folder,
    roots: [workspace.root],
    recursive: false,
  });
  if (outcome.kind !== "moved") throw new Error(JSON.stringify(outcome));
  const names = (await Array.fromAsync(Deno.readDir(folder))).map((entry) => entry.name).sort();
  const made = outcome.to.slice(folder.length + 1).split("/")[0]!;
  deepStrictEqual(names, [made, name(recent), "notes.txt"].sort());
});

Deno.test("A session sets aside thousands of entries in linear time, into a folder that holds thousands", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const folder = join(state.root, "set-aside");
  // What earlier sessions set aside within KEEP_DAYS: kept, and listed when old ones are looked for.
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  for (let index = 0; index < 3_000; index++) {
    await Deno.mkdir(join(folder, `${stamp}-${index}`), { recursive: true });
  }
  const paths: string[] = [];
  for (let index = 0; index < 3_000; index++) {
    const path = join(workspace.root, `d${index}`, ".vscode");
    await Deno.mkdir(path, { recursive: true });
    paths.push(path);
  }
  // One budget for the session, as ShellSandbox keeps. Looking for old entries before each move made the end
  // of a session that made 3,000 entries take 28 seconds: time for a user to press Ctrl-C twice, which ends
  // mewcode at once and leaves the rest in the workspace, for the user's editor to run.
  const budget = { bytes: 256 * 1024 * 1024 };
  const started = performance.now();
  for (const path of paths) {
    const outcome = await setAside(madeEntry(path, [workspace.root])!, {
      folder,
      roots: [workspace.root],
      recursive: true,
      budget,
    });
    equal(outcome.kind, "moved", JSON.stringify(outcome));
  }
  const seconds = (performance.now() - started) / 1000;
  ok(seconds < 10, `3,000 entries took ${seconds.toFixed(1)} s`);
  equal((await Array.fromAsync(Deno.readDir(folder))).length, 6_000);
});

Deno.test("setAside without a folder removes the entry, as before", async () => {
  await using workspace = await createTempWorkspace();
  const planned = join(workspace.root, ".mcp.json");
  await Deno.writeTextFile(planned, "{}");
  const outcome = await setAside(madeEntry(planned, [workspace.root])!, {
    folder: null,
    roots: [workspace.root],
    recursive: false,
  });
  equal(outcome.kind, "removed");
  equal(await exists(planned), false);
});

Deno.test("setAside copies across file systems: files with their mode, symlinks as symlinks, never followed", async () => {
  // /dev/shm is a tmpfs: a rename from there to the temporary folder fails with EXDEV.
  const shm = await Deno.realPath(await Deno.makeTempDir({ dir: "/dev/shm", prefix: "mewcode-xdev-" }));
  await using state = await createTempWorkspace("mewcode-state-");
  await using outside = await createTempWorkspace("mewcode-outside-");
  try {
    ok(
      (await Deno.stat(shm)).dev !== (await Deno.stat(state.root)).dev,
      "the two must be file systems apart",
    );
    await Deno.writeTextFile(join(outside.root, "secret"), "outside\n");
    const planned = join(shm, ".husky");
    await Deno.mkdir(join(planned, "_"), { recursive: true });
    await Deno.writeTextFile(join(planned, "pre-commit"), "npm test\n", { mode: 0o755 });
    await Deno.writeTextFile(join(planned, "_", "h"), "helper\n");
    await Deno.symlink(join(outside.root, "secret"), join(planned, "link"));
    const folder = join(state.root, "set-aside");
    const outcome = await setAside(madeEntry(planned, [shm])!, { folder, roots: [shm], recursive: true });
    if (outcome.kind !== "moved") throw new Error(JSON.stringify(outcome));
    ok(outcome.to.endsWith("/.husky"), outcome.to);
    equal(await Deno.readTextFile(join(outcome.to, "pre-commit")), "npm test\n");
    equal((await Deno.stat(join(outcome.to, "pre-commit"))).mode! & 0o777, 0o755);
    equal(await Deno.readTextFile(join(outcome.to, "_", "h")), "helper\n");
    equal(await Deno.readLink(join(outcome.to, "link")), join(outside.root, "secret"));
    equal(await exists(planned), false);
    equal(await Deno.readTextFile(join(outside.root, "secret")), "outside\n", "the link's target stays");
  } finally {
    await Deno.remove(shm, { recursive: true });
  }
});

Deno.test("setAside removes what is too large to keep, and says why", async () => {
  const shm = await Deno.realPath(await Deno.makeTempDir({ dir: "/dev/shm", prefix: "mewcode-xdev-" }));
  await using state = await createTempWorkspace("mewcode-state-");
  try {
    const planned = join(shm, "go", "bin");
    await Deno.mkdir(planned, { recursive: true });
    for (let index = 0; index <= KEEP_LIMITS.entries; index++) {
      await Deno.writeTextFile(join(planned, `tool${index}`), "");
    }
    const folder = join(state.root, "set-aside");
    const outcome = await setAside(madeEntry(planned, [shm])!, { folder, roots: [shm], recursive: true });
    deepStrictEqual(outcome, {
      kind: "removed",
      why: `it holds more than ${KEEP_LIMITS.entries} entries or ${KEEP_LIMITS.bytes} bytes`,
    });
    equal(await exists(planned), false);
    const kept = await Array.fromAsync(Deno.readDir(folder)).catch(() => []);
    deepStrictEqual(kept, [], "nothing is kept");
  } finally {
    await Deno.remove(shm, { recursive: true });
  }
});

Deno.test("setAside keeps no more than the session's budget", async () => {
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const folder = join(state.root, "set-aside");
  const budget = { bytes: 10 };
  const first = join(workspace.root, ".mcp.json");
  const second = join(workspace.root, ".devcontainer.json");
  await Deno.writeTextFile(first, "123456");
  await Deno.writeTextFile(second, "123456");
  const options = { folder, roots: [workspace.root], recursive: false, budget };
  equal((await setAside(madeEntry(first, [workspace.root])!, options)).kind, "moved");
  equal(budget.bytes, 4);
  const outcome = await setAside(madeEntry(second, [workspace.root])!, options);
  equal(outcome.kind, "removed");
  ok(
    outcome.kind === "removed" && outcome.why.startsWith("this session has set aside"),
    JSON.stringify(outcome),
  );
  equal(await exists(second), false);
});

Deno.test("setAside moves and removes nothing through a folder swapped for a symlink after it was found", async () => {
  // Another session's command swaps go for a link to a folder outside between the look-up and the move.
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-victim-");
  await using state = await createTempWorkspace("mewcode-state-");
  await Deno.mkdir(join(workspace.root, "go", "bin"), { recursive: true });
  await Deno.mkdir(join(outside.root, "bin"));
  await Deno.writeTextFile(join(outside.root, "bin", "important"), "the user's\n");
  const entry = madeEntry(join(workspace.root, "go", "bin"), [workspace.root])!;
  await Deno.rename(join(workspace.root, "go"), join(workspace.root, "go.real"));
  await Deno.symlink(outside.root, join(workspace.root, "go"));
  for (const folder of [join(state.root, "set-aside"), null]) {
    const outcome = await setAside(entry, { folder, roots: [workspace.root], recursive: true });
    equal(outcome.kind, "failed", JSON.stringify(outcome));
    equal(await Deno.readTextFile(join(outside.root, "bin", "important")), "the user's\n");
  }
});

Deno.test("setAside and removeTree handle a tree 30,000 folders deep without overflowing a stack", async () => {
  // Made in a process of its own, one level at a time (a path that long cannot be named whole); the removal
  // recursing once per level aborted the whole process.
  await using workspace = await createTempWorkspace();
  await using state = await createTempWorkspace("mewcode-state-");
  const planned = join(workspace.root, ".devcontainer.json");
  const script = `Deno.mkdirSync(${JSON.stringify(planned)}); Deno.chdir(${JSON.stringify(planned)}); ` +
    "for (let i = 0; i < 30000; i++) { Deno.mkdirSync('d'); Deno.chdir('d'); }";
  const made = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "piped" }).output();
  equal(made.code, 0, new TextDecoder().decode(made.stderr));
  const module = new URL("../../src/sandbox/_set_aside.ts", import.meta.url).href;
  const entries = new URL("../../src/sandbox/_made_entries.ts", import.meta.url).href;
  const run = `const { setAside } = await import(${JSON.stringify(module)}); ` +
    `const { madeEntry } = await import(${JSON.stringify(entries)}); ` +
    `const outcome = await setAside(madeEntry(${JSON.stringify(planned)}, [${
      JSON.stringify(workspace.root)
    }]), ` +
    `{ folder: ${JSON.stringify(join(state.root, "set-aside"))}, roots: [${
      JSON.stringify(workspace.root)
    }], ` +
    "recursive: true }); console.log(JSON.stringify(outcome));";
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", run],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  equal(output.code, 0, new TextDecoder().decode(output.stderr).slice(0, 2000));
  const outcome = JSON.parse(new TextDecoder().decode(output.stdout));
  equal(outcome.kind, "removed", JSON.stringify(outcome));
  equal(await exists(planned), false);
});

Deno.test("removeTree removes files, symlinks (not what they lead to) and nested folders, with rm or without", async (t) => {
  for (const rm of [undefined, null]) {
    await t.step(rm === null ? "the flat walk" : "the system's rm", async () => {
      await using workspace = await createTempWorkspace();
      await using outside = await createTempWorkspace("mewcode-outside-");
      await Deno.writeTextFile(join(outside.root, "keep"), "x");
      const tree = join(workspace.root, "tree");
      await Deno.mkdir(join(tree, "a", "b", "c"), { recursive: true });
      await Deno.writeTextFile(join(tree, "a", "b", "c", "f"), "x");
      await Deno.writeTextFile(join(tree, "a", "g"), "x");
      await Deno.symlink(outside.root, join(tree, "a", "b", "link"));
      await removeTree(tree, rm === null ? { rm: null } : {});
      equal(await exists(tree), false);
      equal(await Deno.readTextFile(join(outside.root, "keep")), "x");
    });
  }
});
