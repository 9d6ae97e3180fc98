/**
 * bubblewrap takes at most 9,000 arguments, counted over its command line and any `--args` file alike: a
 * repository that plants thousands of protected entries (`.vscode` in every folder, nested `.git`s), each a
 * mount or two, must not make every Bash call fail. Past the limit, the deepest folders that hold many of
 * them are bound read-only whole instead (bubblewrap.ts `fitArgumentLimit`), so every protected entry stays
 * under a read-only mount while the rest of the workspace stays writable.
 */
import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { fitMounts } from "../../src/sandbox/_argument_limit.ts";
import { ShellHost } from "../../src/tools/_shell_host.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exitCodeOf, openSandbox, outputOf, runIn, SECRET } from "./_sandbox.ts";

/** A ShellHost closed with `await using`. */
function keptHost(): ShellHost & AsyncDisposable {
  const host = new ShellHost();
  return Object.assign(host, { [Symbol.asyncDispose]: () => host.close() });
}

/** Plants `count` folders `planted/N/.vscode` and a few ordinary ones beside them. */
async function plant(root: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    await Deno.mkdir(join(root, `planted/${index}/.vscode`), { recursive: true });
  }
  await Deno.mkdir(join(root, "src/.vscode"), { recursive: true });
  await Deno.writeTextFile(join(root, "src/.vscode/settings.json"), "{}\n");
}

/** What commands can and cannot do in a workspace planted with `plant`. */
async function checkCalls(
  run: (command: string) => Promise<{ code: number; output: string }>,
): Promise<void> {
  const first = await run("echo ok");
  equal(first.output, "ok", `the shell works: ${first.output}`);
  equal((await run("echo x > written.txt && cat written.txt")).output, "x", "the workspace stays writable");
  equal((await run("echo x > src/main.ts && echo ok")).output, "ok", "a folder beside stays writable");
  for (
    const command of [
      "echo '{}' > planted/7/.vscode/tasks.json",
      "echo '{}' > src/.vscode/tasks.json",
      "mv planted/7 planted/seven",
      "mv planted gone",
    ]
  ) {
    notEqual((await run(command)).code, 0, `${command} must fail`);
  }
}

for (const kept of [false, true]) {
  Deno.test(
    `Bash works in a workspace with 3,000 nested .vscode folders, which stay read-only (${
      kept ? "kept sandbox" : "a sandbox per call"
    })`,
    async () => {
      await using workspace = await createTempWorkspace();
      await plant(workspace.root, 3_000);
      await using sandbox = await openSandbox(workspace.root, "workspace-write");
      equal(sandbox.unavailable, null, `${sandbox.unavailable}`);
      await using host = keptHost();
      const notes: string[] = [];
      await checkCalls(async (command) => {
        const run = await runIn(sandbox, command, kept ? { runner: host } : {});
        notes.push(...run.notes);
        return { code: exitCodeOf(run.result), output: outputOf(run.result) };
      });
      ok(
        notes.some((note) => note.includes(`"${join(workspace.root, "planted")}"`)),
        `a note names the folder made read-only whole: ${notes.join("\n")}`,
      );
      equal(notes.filter((note) => note.includes("read-only to commands as a whole")).length, 1, "said once");
      if (kept) {
        const lines = await bubblewrapCommandLines(workspace.root);
        equal(lines.length, 1, "the kept sandbox's bubblewrap runs");
        ok(lines[0]!.length < 9_000, `${lines[0]!.length} arguments`);
        ok(!lines[0]!.join(" ").includes(SECRET), "no secret on the command line");
      }
    },
  );
}

/** The command lines (arguments) of the bubblewrap processes that bind `root`. */
async function bubblewrapCommandLines(root: string): Promise<string[][]> {
  const lines: string[][] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const text = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    const line = text.split("\0");
    if (line[0]?.endsWith("/bwrap") && line.includes(root)) lines.push(line);
  }
  return lines;
}

Deno.test("Bash works when 3,000 .vscode folders lie right in the workspace: the workspace is read-only whole", async () => {
  await using workspace = await createTempWorkspace();
  for (let index = 0; index < 3_000; index++) {
    await Deno.mkdir(join(workspace.root, `p${index}/.vscode`), { recursive: true });
  }
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const first = await runIn(sandbox, "echo ok");
  equal(outputOf(first.result), "ok", first.result.content);
  ok(first.notes.some((note) => note.includes(`"${workspace.root}"`)), first.notes.join("\n"));
  for (const command of ["echo '{}' > p7/.vscode/tasks.json", "mv p7 p8x", "echo x > new.txt"]) {
    notEqual(exitCodeOf((await runIn(sandbox, command)).result), 0, `${command} must fail`);
  }
});

Deno.test("Bash works when protected entries have paths long enough to exceed Linux's limit on arguments", async () => {
  await using workspace = await createTempWorkspace();
  // 14 folders of 250 characters: each entry's mount and pin take some 14 kB, 200 of them more than 2 MiB.
  const deep = join(workspace.root, ...Array.from({ length: 14 }, (_, index) => `${index}`.padEnd(250, "d")));
  for (let index = 0; index < 200; index++) {
    await Deno.mkdir(join(deep, `n${index}/.vscode`), { recursive: true });
  }
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const first = await runIn(sandbox, "echo ok");
  equal(outputOf(first.result), "ok", first.result.content);
  equal(outputOf((await runIn(sandbox, "echo x > beside.txt && cat beside.txt")).result), "x");
  notEqual(exitCodeOf((await runIn(sandbox, `echo '{}' > '${deep}/n3/.vscode/tasks.json'`)).result), 0);
});

Deno.test("fitMounts binds the deepest folders holding the most mounts whole, only as many as it takes", () => {
  const root = "/ws";
  const many = Array.from({ length: 40 }, (_, index) => `/ws/a/many/${index}/.vscode`);
  const few = ["/ws/b/x/.vscode", "/ws/b/y/.vscode"];
  const mounts = {
    keepInPlace: ["/ws/.git"],
    readOnly: [...few, ...many].sort(),
    placeholders: ["/ws/.idea"],
  };
  const within = fitMounts(mounts, {
    roots: [root],
    excess: { arguments: 0, bytes: 0 },
    isFolder: () => true,
  });
  deepStrictEqual(within.readOnlyWhole, []);
  deepStrictEqual(within.readOnly, mounts.readOnly);
  const fitted = fitMounts(mounts, {
    roots: [root],
    excess: { arguments: 10, bytes: 0 },
    isFolder: () => true,
  });
  // /ws/a/many saves the most (40 mounts and their 40 pins); /ws/b is left alone, and so is the top level.
  deepStrictEqual(fitted.readOnlyWhole, ["/ws/a/many"]);
  deepStrictEqual(fitted.readOnly, ["/ws/a/many", ...few]);
  deepStrictEqual(fitted.keepInPlace, ["/ws/.git"]);
  deepStrictEqual(fitted.placeholders, ["/ws/.idea"]);
  // A folder that is not a real folder now is never bound.
  const notFolder = fitMounts(mounts, {
    roots: [root],
    excess: { arguments: 10, bytes: 0 },
    isFolder: (path) => path !== "/ws/a/many",
  });
  deepStrictEqual(notFolder.readOnlyWhole, ["/ws/a"]);
  // Nothing below the root is enough: the root, whole.
  const all = fitMounts(mounts, {
    roots: [root],
    excess: { arguments: 500, bytes: 0 },
    isFolder: () => true,
  });
  deepStrictEqual(all.readOnlyWhole, [root]);
  deepStrictEqual(all, { keepInPlace: [], readOnly: [root], placeholders: [], readOnlyWhole: [root] });
});
