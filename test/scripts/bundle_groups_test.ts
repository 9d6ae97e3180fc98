/**
 * The load-path grouping of the bundle (scripts/bundle_groups.ts): the import forms it reads and refuses, and
 * a real code-split build by `deno bundle` grouped and run: same behaviour, one instance of each module,
 * fewer files, a worker's chunks left alone.
 */
import { deepStrictEqual, equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { hideChunkImports, SPLIT_BUNDLE_FLAGS } from "../../scripts/bundle.ts";
import { BundleGroupError, groupLoadPath, rewriteStaticImports } from "../../scripts/bundle_groups.ts";
import { explainRun, runProgram } from "../_fakes/run_cli.ts";

Deno.test("bundle groups: both forms of static import are read, at the head or further on, and rewritten", () => {
  const text = `import{a as b,c}from"./chunk-A.js";import"./chunk-B.js";const x=b(c);` +
    `import{d as e}from"./chunk-C.js";var y=import(new URL("./lazy-D.js",import.meta.url).href);`;
  const { text: rewritten, imports } = rewriteStaticImports(
    "x.js",
    text,
    (found) =>
      found.file === "chunk-C.js" ? found : {
        file: "group.js",
        bindings: found.bindings?.map(({ imported, local }) => ({ imported: `_${imported}`, local })) ?? null,
      },
  );
  deepStrictEqual(imports, [
    { file: "chunk-A.js", bindings: [{ imported: "a", local: "b" }, { imported: "c", local: "c" }] },
    { file: "chunk-B.js", bindings: null },
    { file: "chunk-C.js", bindings: [{ imported: "d", local: "e" }] },
  ]);
  equal(
    rewritten,
    `import{_a as b,_c as c}from"./group.js";import"./group.js";const x=b(c);` +
      `import{d as e}from"./chunk-C.js";var y=import(new URL("./lazy-D.js",import.meta.url).href);`,
  );
});

Deno.test("bundle groups: an import in a form the grouping cannot rewrite fails it", () => {
  for (
    const text of [
      `import x from"./chunk-A.js";`,
      `import*as n from"./chunk-A.js";`,
      `export*from"./chunk-A.js";`,
      `export{a}from"./chunk-A.js";`,
      // Further on in a file, after imports it can read.
      `import{a as b}from"./chunk-A.js";x();import x,{y}from"./chunk-C.js";`,
    ]
  ) {
    throws(() => rewriteStaticImports("x.js", text), BundleGroupError, text);
  }
  throws(
    () => rewriteStaticImports("x.js", `import{a-b}from"./chunk-A.js";`),
    /cannot read the import binding/,
  );
});

Deno.test("bundle groups: a code-split build grouped along its load path runs as before, from fewer files", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-bundle-groups-" }));
  try {
    const source = join(dir, "source");
    await Deno.mkdir(source);
    // main imports `state` (a class and a counter: one instance of each module or the output changes), then
    // `first` and `second` in turn, as mewcode's one-shot run imports its steps; `later` is imported lazily
    // off the path; the worker shares a module with `first`.
    const files: Record<string, string> = {
      "state.ts": `export class Thing { constructor(readonly label: string) {} }
let count = 0;
export function bump(): number { return ++count; }
export const made: string[] = [];
made.push("state");`,
      "util_one.ts": `import { bump, made } from "./state.ts";
made.push("util_one");
export function one(): number { return bump() * 10; }`,
      "util_two.ts": `import { Thing } from "./state.ts";
export function two(label: string): Thing { return new Thing(label); }`,
      "util_three.ts": `import { bump } from "./state.ts";
export function three(): number { return bump() + 100; }`,
      "worker_shared.ts": `export function shared(): string { return "shared"; }`,
      "first.ts": `import { one } from "./util_one.ts";
import { two } from "./util_two.ts";
import { shared } from "./worker_shared.ts";
export function runFirst() { return { one: one(), thing: two("first"), shared: shared() }; }`,
      "second.ts": `import { two } from "./util_two.ts";
import { three } from "./util_three.ts";
import { one } from "./util_one.ts";
export function runSecond() { return { three: three(), one: one(), thing: two("second") }; }`,
      "later.ts": `import { three } from "./util_three.ts";
import { two } from "./util_two.ts";
export function runLater() { return { three: three(), thing: two("later") }; }`,
      "worker.ts": `import { shared } from "./worker_shared.ts";
import { made } from "./state.ts";
(self as unknown as Worker).postMessage(shared() + "+" + made.join(","));`,
      "main.ts": `import { bump, made, Thing } from "./state.ts";
const { runFirst } = await import("./first.ts");
const { runSecond } = await import("./second.ts");
const first = runFirst();
const second = runSecond();
const { runLater } = await import("./later.ts");
const later = runLater();
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const fromWorker = await new Promise((resolve) => { worker.onmessage = (event) => resolve(event.data); });
worker.terminate();
console.log(JSON.stringify({
  first: [first.one, first.thing instanceof Thing, first.thing.label, first.shared],
  second: [second.three, second.one, second.thing instanceof Thing],
  later: [later.three, later.thing instanceof Thing],
  count: bump(),
  made,
  fromWorker,
}));`,
    };
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(source, name), text);
    const out = join(dir, "out");
    // Split as scripts/bundle.ts splits mewcode.
    const bundled = await runProgram(Deno.execPath(), [
      "bundle",
      "--quiet",
      "--no-config",
      ...SPLIT_BUNDLE_FLAGS,
      "--outdir",
      out,
      join(source, "main.ts"),
      join(source, "worker.ts"),
    ], { cwd: source });
    equal(bundled.code, 0, explainRun(bundled));
    const names = new Set<string>();
    for await (const entry of Deno.readDir(out)) names.add(entry.name);
    for (const name of names) {
      await Deno.writeTextFile(
        join(out, name),
        hideChunkImports(await Deno.readTextFile(join(out, name)), names),
      );
    }
    const run = () =>
      runProgram(Deno.execPath(), [
        "run",
        "--no-config",
        "--allow-read",
        "--log-level=debug",
        join(out, "main.js"),
      ], {
        cwd: dir,
      });
    const before = await run();
    equal(before.code, 0, explainRun(before));
    const expected = {
      first: [10, true, "first", "shared"],
      second: [102, 30, true],
      later: [104, true],
      count: 5,
      made: ["state", "util_one"],
      fromWorker: "shared+state",
    };
    deepStrictEqual(JSON.parse(before.stdout), expected);
    const chunksBefore = [...names].filter((name) => name.startsWith("chunk-"));
    const loadedBefore = loadedFiles(before.stderr);

    const groups = await groupLoadPath(out, { steps: ["main", "first", "second"], workers: ["worker.js"] });
    const after = await run();
    equal(after.code, 0, explainRun(after));
    deepStrictEqual(JSON.parse(after.stdout), expected);
    const namesAfter = [...Deno.readDirSync(out)].map((entry) => entry.name);
    // The worker's own chunk (shared with `first`) stays, and the worker still loads it.
    const workerChunks = rewriteStaticImports("worker.js", await Deno.readTextFile(join(out, "worker.js")))
      .imports.map((found) => found.file).filter((file) => file.startsWith("chunk-"));
    ok(workerChunks.length > 0, "the build shares a chunk between the worker and the main program");
    for (const chunk of workerChunks) {
      ok(namesAfter.includes(chunk), `${chunk} (the worker's) is kept`);
      ok(!groups.some((group) => group.chunks.includes(chunk)), `${chunk} is grouped`);
    }
    for (const group of groups) {
      ok(namesAfter.includes(group.file), group.file);
      for (const chunk of group.chunks) ok(!namesAfter.includes(chunk), `${chunk} is merged and removed`);
    }
    ok(groups.length > 0, "something was grouped");
    const loadedAfter = loadedFiles(after.stderr);
    ok(
      loadedAfter.length < loadedBefore.length,
      `loaded ${loadedAfter.length} files (${loadedAfter.join(" ")}), before ${loadedBefore.length} ` +
        `(${loadedBefore.join(" ")}; ${chunksBefore.length} chunks)`,
    );
    for (const file of loadedAfter) ok(namesAfter.includes(file), `loaded ${file}, which exists`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bundle groups: a step that names no bundle file fails the grouping, and changes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-bundle-groups-" });
  try {
    await Deno.writeTextFile(join(dir, "main.js"), `import{a as b}from"./chunk-A.js";console.log(b);`);
    await Deno.writeTextFile(join(dir, "chunk-A.js"), `var a=1;export{a};`);
    await Deno.writeTextFile(join(dir, "print_mode-ABC.js"), `export const x=1;`);
    await Deno.writeTextFile(join(dir, "print_mode-DEF.js"), `export const x=2;`);
    for (const step of ["absent", "print_mode"]) {
      const error = await groupLoadPath(dir, { steps: ["main", step], workers: [] }).catch((error) => error);
      ok(error instanceof BundleGroupError, String(error));
      match(error.message, new RegExp(`"${step}" names (no|more than one) bundle file`));
    }
    equal(await Deno.readTextFile(join(dir, "main.js")), `import{a as b}from"./chunk-A.js";console.log(b);`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The bundle files the main program loaded, from Deno's debug log (the worker's entry left out: whether its
 * line is logged before the run ends varies).
 */
function loadedFiles(stderr: string): string[] {
  const files = [...stderr.matchAll(/ES module: file:\/\/\S*\/([^/\s,]+\.js),? \[/g)].map((found) =>
    found[1]!
  );
  return [...new Set(files)].filter((file) => file !== "worker.js");
}
