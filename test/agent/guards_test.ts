import { deepStrictEqual, equal, match, ok, throws } from "node:assert/strict";
import { canonicalJson, limitResultSize, RepeatGuard } from "../../src/agent/guards.ts";
import { textResult } from "../../src/tools/tool.ts";

Deno.test("RepeatGuard refuses the third identical call in a row and every one after it", () => {
  const guard = new RepeatGuard(3);
  equal(guard.check("Grep", { pattern: "x", path: "/w" }), null);
  equal(guard.check("Grep", { path: "/w", pattern: "x" }), null, "key order does not matter");
  const third = guard.check("Grep", { pattern: "x", path: "/w" });
  ok(third);
  equal(third.result.isError, true);
  deepStrictEqual(third.outcome, { status: "cancelled", gate: "guard" });
  match(third.result.content, /3rd identical Grep call in a row/);
  match(guard.check("Grep", { pattern: "x", path: "/w" })?.result.content ?? "", /4th identical/);
});

Deno.test("RepeatGuard resets the streak on a different call, a different tool or reset()", () => {
  const guard = new RepeatGuard(3);
  guard.check("Grep", { pattern: "x" });
  guard.check("Grep", { pattern: "x" });
  equal(guard.check("Grep", { pattern: "y" }), null);
  equal(guard.check("Grep", { pattern: "x" }), null);
  guard.check("Grep", { pattern: "x" });
  guard.reset();
  equal(guard.check("Grep", { pattern: "x" }), null);
  equal(guard.check("Glob", { pattern: "x" }), null);
  throws(() => new RepeatGuard(1), RangeError);
});

Deno.test("canonicalJson sorts keys at every level", () => {
  equal(
    canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 3 } }),
    '{"a":{"c":3,"d":[2,{"y":2,"z":1}]},"b":1}',
  );
});

Deno.test("limitResultSize keeps short results and exempt tools unchanged", async () => {
  const short = textResult("short");
  equal(
    await limitResultSize(short, { toolName: "Grep", callId: "c", maxChars: 10, exempt: [], dir: null }),
    short,
  );
  const long = textResult("x".repeat(100));
  equal(
    await limitResultSize(long, {
      toolName: "ReadFile",
      callId: "c",
      maxChars: 10,
      exempt: ["ReadFile"],
      dir: null,
    }),
    long,
  );
});

Deno.test("limitResultSize saves a long result and returns a head-and-tail preview with the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const content = `START${"m".repeat(50_000)}END`;
    const result = await limitResultSize({ content, isError: true, metadata: { exitCode: 2 } }, {
      toolName: "Bash",
      callId: "toolu/../x",
      maxChars: 30_000,
      exempt: [],
      dir,
    });
    const path = `${dir}/tool-results/toolu____x.txt`;
    equal(await Deno.readTextFile(path), content);
    ok(result.content.startsWith("START"));
    ok(result.content.includes("END\n"));
    ok(result.content.includes(path));
    match(result.content, /output was 50008 characters, above the 30000-character limit/);
    equal(result.isError, true);
    deepStrictEqual(result.metadata, {
      exitCode: 2,
      truncated: true,
      originalChars: 50_008,
      savedPath: path,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("limitResultSize without a folder still cuts the result and says it was not saved", async () => {
  const result = await limitResultSize(textResult("y".repeat(40_000)), {
    toolName: "Grep",
    callId: "c",
    maxChars: 30_000,
    exempt: [],
    dir: null,
  });
  ok(result.content.length < 10_000);
  match(result.content, /could not be saved/);
});
