import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { workspacePathCompleter } from "../../../src/cli/interactive/path_completion.ts";

/** A workspace with files, a hidden file, odd names, and links inside and outside, in a temporary folder. */
async function workspace(): Promise<{ root: string; outside: string } & AsyncDisposable> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-paths-" }));
  const root = join(base, "root");
  const outside = join(base, "outside");
  await Deno.mkdir(join(root, "src", "lib"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "");
  for (
    const file of ["src/main.ts", "src/mod.ts", "README.md", ".env", "with space.txt", "line\nbreak.txt"]
  ) {
    await Deno.writeTextFile(join(root, file), "");
  }
  await Deno.symlink(join(root, "src", "lib"), join(root, "linked"));
  await Deno.symlink(outside, join(root, "escape"));
  return { root, outside, [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }) };
}

Deno.test("workspacePathCompleter lists matching paths sorted, folders with a slash", async () => {
  await using space = await workspace();
  const completer = workspacePathCompleter(space.root);
  deepEqual(await completer.candidates(""), ["README.md", "escape/", "linked/", "src/"]);
  deepEqual(await completer.candidates("src/"), ["src/lib/", "src/main.ts", "src/mod.ts"]);
  deepEqual(await completer.candidates("src/m"), ["src/main.ts", "src/mod.ts"]);
  deepEqual(await completer.candidates("src/x"), []);
  deepEqual(await completer.candidates("nowhere/"), []);
});

Deno.test("workspacePathCompleter lists hidden files only for a leading dot", async () => {
  await using space = await workspace();
  deepEqual(await workspacePathCompleter(space.root).candidates("."), [".env"]);
});

Deno.test("workspacePathCompleter leaves out names a token cannot hold", async () => {
  await using space = await workspace();
  const completer = workspacePathCompleter(space.root);
  deepEqual(await completer.candidates("w"), []);
  deepEqual(await completer.candidates("l"), ["linked/"]);
});

Deno.test("workspacePathCompleter lists and confirms nothing outside the workspace", async (t) => {
  await using space = await workspace();
  const completer = workspacePathCompleter(space.root);
  const outsidePaths = ["../", "../outside/", "/", `${space.outside}/`, "src/../../outside/", "escape/"];
  for (const partial of outsidePaths) {
    await t.step(
      `candidates of "${partial}"`,
      async () => deepEqual(await completer.candidates(partial), []),
    );
  }
  for (
    const path of ["../outside/secret.txt", `${space.outside}/secret.txt`, "escape/secret.txt", "escape"]
  ) {
    await t.step(`exists("${path}")`, async () => equal(await completer.exists(path), false));
  }
});

Deno.test("workspacePathCompleter follows links that stay inside the workspace", async () => {
  await using space = await workspace();
  const completer = workspacePathCompleter(space.root);
  deepEqual(await completer.candidates("linked/"), []);
  equal(await completer.exists("linked"), true);
  equal(await completer.exists("src/main.ts"), true);
  equal(await completer.exists("src/"), true);
  equal(await completer.exists("src/none.ts"), false);
});

Deno.test("workspacePathCompleter returns at most maxCandidates paths", async () => {
  await using space = await workspace();
  deepEqual(await workspacePathCompleter(space.root, { maxCandidates: 2 }).candidates(""), [
    "README.md",
    "escape/",
  ]);
});
