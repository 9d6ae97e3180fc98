import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { WalkStore } from "../../src/execution/walk_store.ts";
import type { GrepWalkReport } from "../../src/tools/_grep_prepass.ts";
import { STAMP_FIELDS } from "../../src/tools/_walk_stamps.ts";
import type { WalkKey } from "../../src/tools/grep_ripgrep.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

function walk(files: string[], stamped = true): GrepWalkReport {
  return {
    start: "/ws",
    base: "/ws",
    files,
    progress: files.flatMap((_, index) => [index, 0]),
    counts: {
      ignoredFiles: 2,
      ignoredDirectories: 1,
      skippedSymlinks: 0,
      changedDirectories: 0,
      ignoreProblems: [],
      unreadable: [],
    },
    ancestorRules: false,
    droppedRules: false,
    excludeRules: false,
    prefilterMismatch: false,
    binaryNames: [0],
    skippedByType: 0,
    ripgrepTrap: null,
    denied: [],
    stamps: stamped
      ? {
        takenAt: 1_000_000,
        paths: ["/ws", "/ws/.gitignore"],
        // The second path was missing: NaN throughout.
        values: Float64Array.from([
          ...[2049, 77, 5_000, 4_000, 0o40755, 0, 0, 4096],
          ...new Array(STAMP_FIELDS).fill(NaN),
        ]),
      }
      : null,
  };
}

function existsSync(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

const KEY: WalkKey = { path: "/ws", glob: null, roots: ["/ws"], excluded: ["/home/u/.mewcode"], denied: "" };

Deno.test("a kept walk comes back as it was saved, its missing paths' stamps included", async () => {
  await using temp = await createTempWorkspace();
  const store = new WalkStore(join(temp.root, "walks"));
  const saved = walk(["a.bin", "src/b.ts"]);
  await store.save(KEY, saved);
  const loaded = await store.load(KEY);
  ok(loaded !== null);
  deepStrictEqual({ ...loaded, stamps: null }, { ...saved, stamps: null });
  deepStrictEqual([...loaded.stamps!.values], [...saved.stamps!.values]);
  deepStrictEqual(loaded.stamps!.paths, saved.stamps!.paths);
  // Another glob, folder or excluded folder is another walk.
  equal(await store.load({ ...KEY, glob: "*.ts" }), null);
  equal(await store.load({ ...KEY, roots: ["/ws", "/other"] }), null);
  equal(await store.load({ ...KEY, excluded: [] }), null);
  equal(await store.load({ ...KEY, denied: '{"home":"/","rules":[]}' }), null);
  // Only the owner may read the walks (they list the workspace's file names).
  const [file] = [...Deno.readDirSync(join(temp.root, "walks"))];
  equal(Deno.statSync(join(temp.root, "walks", file!.name)).mode! & 0o777, 0o600);
  equal(Deno.statSync(join(temp.root, "walks")).mode! & 0o777, 0o700);
});

Deno.test("a walk made under deny rules comes back with what they left out", async () => {
  await using temp = await createTempWorkspace();
  const store = new WalkStore(join(temp.root, "walks"));
  const key = { ...KEY, denied: '{"home":"/home/u","rules":[{"rule":"ReadFile(.env)"}]}' };
  const made = walk(["a.ts"]);
  const saved = {
    ...made,
    counts: {
      ...made.counts,
      deniedFiles: 2,
      denyingRules: ["ReadFile(.env) from the test"],
      askingRules: [],
    },
    denied: [".env", "sub/.env"],
  };
  await store.save(key, saved);
  const loaded = await store.load(key);
  ok(loaded !== null);
  deepStrictEqual({ ...loaded, stamps: null }, { ...saved, stamps: null });
  equal(await store.load(KEY), null);
});

Deno.test("a walk without stamps is not kept; a damaged or foreign file is ignored", async () => {
  await using temp = await createTempWorkspace();
  const directory = join(temp.root, "walks");
  const store = new WalkStore(directory);
  await store.save(KEY, walk(["a.ts"], false));
  equal(await store.load(KEY), null);
  await store.save(KEY, walk(["a.ts"]));
  const [file] = [...Deno.readDirSync(directory)];
  const path = join(directory, file!.name);
  const text = Deno.readTextFileSync(path);
  const damaged = [
    text.slice(0, text.length / 2),
    text.replace('"format":1', '"format":2'),
    text.replace('"progress":[0,0]', '"progress":[0]'),
    text.replace('"binaryNames":[0]', '"binaryNames":[5]'),
    text.replace('"files":["a.ts"]', '"files":[7]'),
    "null",
  ];
  for (const content of damaged) {
    Deno.writeTextFileSync(path, content);
    equal(await store.load(KEY), null, content.slice(0, 80));
  }
  Deno.removeSync(path);
  Deno.symlinkSync("/etc/passwd", path);
  equal(await store.load(KEY), null);
});

Deno.test("the store keeps the most recent walks only", async () => {
  await using temp = await createTempWorkspace();
  const directory = join(temp.root, "walks");
  const store = new WalkStore(directory, { maxWalks: 3 });
  for (let index = 0; index < 5; index++) {
    await store.save({ ...KEY, path: `/ws/dir${index}` }, walk([`f${index}`]));
    // Distinct modification times, oldest first.
    const past = new Date(Date.now() - (10 - index) * 1000);
    for (const entry of Deno.readDirSync(directory)) {
      const path = join(directory, entry.name);
      if (Deno.statSync(path).mtime!.getTime() > Date.now() - 5_000) Deno.utimeSync(path, past, past);
    }
  }
  equal([...Deno.readDirSync(directory)].length, 3);
  // A temporary file left by a process that ended while writing goes once it is old.
  const left = join(directory, ".walk.json.0123abcd.tmp");
  Deno.writeTextFileSync(left, "{");
  const old = new Date(Date.now() - 120_000);
  Deno.utimeSync(left, old, old);
  await store.save({ ...KEY, path: "/ws/dir5" }, walk(["f5"]));
  equal(existsSync(left), false);
  equal(await store.load({ ...KEY, path: "/ws/dir0" }), null);
  equal(await store.load({ ...KEY, path: "/ws/dir1" }), null);
  deepStrictEqual((await store.load({ ...KEY, path: "/ws/dir4" }))?.files, ["f4"]);
});
