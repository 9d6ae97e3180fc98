/**
 * The rewrite that makes V8 compile the load path's functions with their file (scripts/bundle_eager.ts): the
 * module behaves as before, the functions are compiled with it (V8's own log says so), and what it must not
 * touch it leaves alone.
 */
import { deepStrictEqual, equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { compileEagerly, compileFunctionsEagerly, EagerCompileError } from "../../scripts/bundle_eager.ts";
import { explainRun, runProgram } from "../_fakes/run_cli.ts";

/** A module in the shapes esbuild writes, using what a hoisted declaration allows before its line. */
const MODULE = [
  `const early=first(2);`,
  `function first(n){return n<=0?0:n+first(n-1)}`,
  `async function later(){return await Promise.resolve(LIMIT)}`,
  `function*counter(){yield 1;yield 2}`,
  `async function*stream(){yield"a";yield"b"}`,
  `function args(){return arguments.length}`,
  `const LIMIT=7;`,
  `const text="function fake(){return 1}";`,
  `function outer(){function inner(){return "inner"}return inner()}`,
  `{function inBlock(){return "block"}globalThis.block=inBlock()}`,
  `var named=function(){return "expression"};`,
  `Object.defineProperty(first,"name",{value:"firstKept"});`,
  `console.log(JSON.stringify([early,await later(),[...counter()],await Array.fromAsync(stream()),args(1,2,3),`,
  `text,outer(),globalThis.block,named(),first.name]));`,
  `export{first as f,later};`,
].join("");

Deno.test("eager compile: top-level function declarations become parenthesized functions at the head", () => {
  const { text, moved } = compileFunctionsEagerly("x.js", MODULE);
  equal(moved, 6);
  ok(text.startsWith("var first=(function first(n){"), text.slice(0, 80));
  for (
    const head of [
      "var later=(async function later(){",
      "var counter=(function*counter(){",
      "var stream=(async function*stream(){",
      "var args=(function args(){",
      "var outer=(function outer(){function inner(){",
    ]
  ) ok(text.includes(head), head);
  // Left where and as they were: a string that reads like a function, a function in a block, an expression.
  ok(text.includes(`const text="function fake(){return 1}";`));
  ok(text.includes(`{function inBlock(){return "block"}globalThis.block=inBlock()}`));
  ok(text.includes(`var named=function(){return "expression"};`));
  equal(compileFunctionsEagerly("y.js", "const a=1;export{a};").text, "const a=1;export{a};");
});

Deno.test("eager compile: the rewritten module runs as the original did, hoisting included", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-bundle-eager-" });
  try {
    const outputs: string[] = [];
    for (
      const [name, text] of [["original.js", MODULE], [
        "eager.js",
        compileFunctionsEagerly("x.js", MODULE).text,
      ]]
    ) {
      await Deno.writeTextFile(join(dir, name!), text!);
      const result = await runProgram(Deno.execPath(), ["run", "--no-config", "--quiet", join(dir, name!)]);
      equal(result.code, 0, explainRun(result));
      outputs.push(result.stdout.trim());
    }
    equal(outputs[0], outputs[1]);
    deepStrictEqual(JSON.parse(outputs[1]!), [
      3,
      7,
      [1, 2],
      ["a", "b"],
      3,
      "function fake(){return 1}",
      "inner",
      "block",
      "expression",
      "firstKept",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("eager compile: V8 compiles the moved functions with the module, not when they are first called", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-bundle-eager-" });
  try {
    const source = "function work(n){let s=0;for(let i=0;i<n;i++)s+=i;return s}" +
      "async function later(){return work(3)}console.log(work(4)+await later());";
    // The functions V8 compiled lazily (on their first call), by V8's own log of its compilations.
    const lazilyCompiled = async (name: string, text: string) => {
      const path = join(dir, name);
      const log = join(dir, `${name}.log`);
      await Deno.writeTextFile(path, text);
      const result = await runProgram(Deno.execPath(), [
        "run",
        "--no-config",
        "--quiet",
        `--v8-flags=--log-function-events,--logfile=${log},--no-logfile-per-isolate`,
        path,
      ]);
      equal(result.code, 0, explainRun(result));
      equal(result.stdout.trim(), "9");
      const lines = (await Deno.readTextFile(log)).split("\n");
      const script = lines.map((line) => line.split(",")).find((fields) =>
        fields[0] === "script-details" && fields[2] === `file://${path}`
      )?.[1];
      ok(script !== undefined, `the log names ${path}`);
      return [
        ...new Set(
          lines.map((line) => line.split(","))
            .filter((fields) =>
              fields[0] === "function" && fields[1] === "parse-function" && fields[2] === script
            )
            .map((fields) => fields.slice(7).join(",")),
        ),
      ].sort();
    };
    deepStrictEqual(await lazilyCompiled("original.js", source), ["later", "work"]);
    deepStrictEqual(await lazilyCompiled("eager.js", compileFunctionsEagerly("x.js", source).text), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("eager compile: a file that does not parse fails the build, naming it; files are rewritten in place", async () => {
  throws(() => compileFunctionsEagerly("broken.js", "function ("), (error: unknown) => {
    ok(error instanceof EagerCompileError);
    match(error.message, /^broken\.js: cannot parse it: /);
    return true;
  });
  const dir = await Deno.makeTempDir({ prefix: "mewcode-bundle-eager-" });
  try {
    await Deno.writeTextFile(join(dir, "a.js"), "f();function f(){}");
    await Deno.writeTextFile(join(dir, "b.js"), "const b=1;");
    equal(await compileEagerly(dir, ["a.js", "b.js"]), 1);
    equal(await Deno.readTextFile(join(dir, "a.js")), "var f=(function f(){});f();");
    equal(await Deno.readTextFile(join(dir, "b.js")), "const b=1;");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
