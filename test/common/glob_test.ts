import { equal, match, ok } from "node:assert/strict";
import { compileGlob, globBase, MAX_BRACE_RANGE } from "../../src/common/glob.ts";

function matcher(pattern: string, basename = false): (path: string) => boolean {
  const compiled = compileGlob(pattern, { basename });
  if (!compiled.ok) throw new Error(`${pattern}: ${compiled.message}`);
  return compiled.matches;
}

Deno.test("compileGlob matches paths as picomatch did with dot: true", async (t) => {
  // [pattern, [path, expected]...]: what Glob and Grep relied on picomatch for.
  const cases: [string, [string, boolean][]][] = [
    ["*.ts", [["a.ts", true], [".a.ts", true], ["src/a.ts", false], ["a.tsx", false]]],
    ["**/*.ts", [["a.ts", true], ["x/a.ts", true], ["x/y/.a.ts", true], [".x/a.ts", true], ["a.js", false]]],
    ["src/**/*.ts", [["src/a.ts", true], ["src/x/y/a.ts", true], ["lib/a.ts", false], ["srcx/a.ts", false]]],
    ["a/**", [["a", true], ["a/b", true], ["a/b/c", true], ["ab", false]]],
    ["a/**/b", [["a/b", true], ["a/x/b", true], ["a/x/y/b", true], ["ab", false], ["a/xb", false]]],
    ["**", [["a", true], ["a/b", true], [".x", true]]],
    ["a**b", [["ab", true], ["axb", true], ["a/b", false]]],
    ["**.ts", [["a.ts", true], ["x/a.ts", true]]],
    ["*/**", [["ba", false], ["b/a", true]]],
    ["src/*", [["src/a", true], ["src/a/b", false]]],
    ["?", [["a", true], ["/", false], ["ab", false]]],
    ["x[ab]y", [["xay", true], ["xcy", false]]],
    ["x[!a]y", [["xby", true], ["xay", false], ["x/y", false]]],
    ["x[^a]y", [["xby", true], ["x/y", false]]],
    ["[[:alpha:]][[:digit:]]", [["a1", true], ["1a", false]]],
    ["[]a]", [["]", true], ["a", true], ["b", false]]],
    ["*.{ts,tsx}", [["a.ts", true], ["a.tsx", true], ["a.t", false]]],
    ["a{b,c{d,e}}", [["ab", true], ["acd", true], ["ace", true], ["ac", false]]],
    ["a{,b}", [["a", true], ["ab", true]]],
    ["{src,lib}/**/*.ts", [["src/a.ts", true], ["lib/x/a.ts", true], ["test/a.ts", false]]],
    ["file{1..3}.txt", [["file2.txt", true], ["file4.txt", false]]],
    ["{a}", [["{a}", true], ["a", false]]],
    ["\\*", [["*", true], ["a", false]]],
    ["a\\/b", [["a/b", true]]],
    ["[a-", [["[a-", true]]],
    ["(a)|b", [["(a)|b", true], ["a", false]]],
    ["!*.ts", [["a.ts", false], ["a.js", true]]],
    ["./src/*.ts", [["src/a.ts", true]]],
  ];
  for (const [pattern, paths] of cases) {
    await t.step(pattern, () => {
      const matches = matcher(pattern);
      for (const [path, expected] of paths) equal(matches(path), expected, `${pattern} on ${path}`);
    });
  }
});

Deno.test("compileGlob matches only the name for a pattern without a slash when asked (Grep's glob)", () => {
  const byName = matcher("*.ts", true);
  equal(byName("src/deep/a.ts"), true);
  equal(byName("src/a.js"), false);
  const withSlash = matcher("src/*.ts", true);
  equal(withSlash("src/a.ts"), true);
  equal(withSlash("lib/src/a.ts"), false);
});

Deno.test("compileGlob refuses brace ranges that are too large, and long patterns", () => {
  const range = compileGlob(`{1..${MAX_BRACE_RANGE + 1}}`);
  ok(!range.ok);
  match(range.message, /has 257 values \(at most 256\); use "\*" instead/);
  const long = compileGlob("a".repeat(2_000));
  ok(!long.ok);
  match(long.message, /longer than 1000 characters/);
});

Deno.test("compileGlob finishes a pattern with many stars against a long name promptly", () => {
  assertLinearEngine();
  const hostile = matcher("*a*a*a*a*a*a*a*a*a*a*a*a*b");
  const started = performance.now();
  equal(hostile("a".repeat(200)), false);
  equal(hostile(`${"a".repeat(200)}/${"a".repeat(200)}b`), false);
  equal(hostile(`x${"a".repeat(12)}b`), true);
  ok(performance.now() - started < 5_000, "the match did not finish promptly");
});

Deno.test("globBase returns the literal leading directories of a pattern", async (t) => {
  const cases: [string, string][] = [
    ["src/tools/**/*.ts", "src/tools"],
    ["src/a.ts", "src"],
    ["a.ts", ""],
    ["**/*.ts", ""],
    ["src/{a,b}/x", "src"],
    ["a/b\\*c/*", "a"],
    ["!src/*", ""],
    ["src/*/x/*.ts", "src"],
  ];
  for (const [pattern, base] of cases) {
    await t.step(pattern, () => equal(globBase(pattern), base));
  }
});

/** Fails fast (instead of hanging) when V8 runs without the flags mewcode ships with. */
function assertLinearEngine(): void {
  try {
    // deno-lint-ignore no-invalid-regexp -- "l" exists only with --enable-experimental-regexp-engine
    new RegExp("", "l");
  } catch {
    throw new Error("run the tests with the V8 flags of scripts/runtime_flags.txt (deno task test:unit)");
  }
}
