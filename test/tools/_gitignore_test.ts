import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import {
  IgnoreRules,
  type IgnoreVerdict,
  MAX_IGNORE_RULES,
  MAX_RULE_LENGTH,
} from "../../src/tools/_gitignore.ts";

/** The verdict for a path relative to the ignore file's directory ("dir/" for a directory). */
function verdict(rules: IgnoreRules, path: string): IgnoreVerdict {
  const isDirectory = path.endsWith("/");
  const bare = isDirectory ? path.slice(0, -1) : path;
  return rules.test(bare.slice(bare.lastIndexOf("/") + 1), bare, isDirectory);
}

Deno.test("IgnoreRules follows gitignore(5)", async (t) => {
  // [rules, [path, verdict]...]; a path ending in "/" is a directory.
  const cases: [string, [string, IgnoreVerdict][]][] = [
    ["*.log", [["a.log", "ignored"], ["x/y/a.log", "ignored"], [".log", "ignored"], ["a.log.txt", null]]],
    ["build", [["build", "ignored"], ["build/", "ignored"], ["x/build/", "ignored"], ["builds", null]]],
    ["dist/", [["dist/", "ignored"], ["x/dist/", "ignored"], ["dist", null]]],
    ["/tmp", [["tmp", "ignored"], ["tmp/", "ignored"], ["x/tmp", null]]],
    ["docs/_build/", [["docs/_build/", "ignored"], ["x/docs/_build/", null], ["docs/_build", null]]],
    ["src/*.gen.ts", [["src/a.gen.ts", "ignored"], ["src/x/a.gen.ts", null], ["a.gen.ts", null]]],
    ["**/foo", [["foo", "ignored"], ["a/b/foo/", "ignored"]]],
    ["**/foo/bar", [["foo/bar", "ignored"], ["a/foo/bar", "ignored"], ["a/foo/baz", null]]],
    ["abc/**", [["abc/x", "ignored"], ["abc/x/y/", "ignored"], ["abc/", null], ["abc", null]]],
    ["a/**/b", [["a/b", "ignored"], ["a/x/b", "ignored"], ["a/x/y/b", "ignored"], ["ab", null]]],
    ["foo**bar", [["fooXbar", "ignored"], ["foo/bar", null]]],
    ["*.log\n!keep.log", [["a.log", "ignored"], ["keep.log", "unignored"]]],
    ["!keep.log\n*.log", [["keep.log", "ignored"]]],
    ["# comment\n\n  \n\\#hash", [["# comment", null], ["#hash", "ignored"]]],
    ["\\!bang", [["!bang", "ignored"]]],
    ["trailing   ", [["trailing", "ignored"], ["trailing   ", null]]],
    ["space\\ ", [["space ", "ignored"], ["space", null]]],
    ["*.TMP", [["x.TMP", "ignored"], ["x.tmp", null]]],
    ["file[0-9].txt", [["file3.txt", "ignored"], ["filex.txt", null]]],
    ["file[!0-9].txt", [["filex.txt", "ignored"], ["file3.txt", null]]],
    ["f?o", [["foo", "ignored"], ["fo", null], ["f/o", null]]],
    ["\\*star", [["*star", "ignored"], ["xstar", null]]],
    ["line\r\nother", [["line", "ignored"], ["other", "ignored"]]],
  ];
  for (const [text, paths] of cases) {
    await t.step(JSON.stringify(text), () => {
      const rules = IgnoreRules.parse(text);
      for (const [path, expected] of paths) equal(verdict(rules, path), expected, `${text} on ${path}`);
    });
  }
});

Deno.test("IgnoreRules lets the last matching rule win across literal, suffix and wildcard rules", () => {
  const rules = IgnoreRules.parse("*.log\n!debug.log\nd*g.log\n!debug.log\n/logs/\n!logs/keep");
  equal(verdict(rules, "a.log"), "ignored");
  equal(verdict(rules, "debug.log"), "unignored");
  equal(verdict(rules, "dxg.log"), "ignored");
  equal(verdict(rules, "logs/"), "ignored");
  equal(verdict(rules, "logs/keep"), "unignored");
});

Deno.test("IgnoreRules says whether a directory or one above it is ignored", () => {
  const rules = IgnoreRules.parse("build/\n!build/keep/");
  equal(rules.ignoresDirectory("build"), true);
  equal(rules.ignoresDirectory("build/keep"), true, "a parent that is ignored cannot be re-included");
  equal(rules.ignoresDirectory("src/lib"), false);
});

Deno.test("IgnoreRules leaves out rules that are too long or too many, and says so", () => {
  const long = IgnoreRules.parse(`${"a".repeat(MAX_RULE_LENGTH + 1)}\nshort`);
  equal(verdict(long, "short"), "ignored");
  deepStrictEqual(long.problems, [`1 rule(s) longer than ${MAX_RULE_LENGTH} characters were skipped`]);
  const many = IgnoreRules.parse(
    Array.from({ length: MAX_IGNORE_RULES + 5 }, (_, index) => `f${index}`).join("\n"),
  );
  equal(verdict(many, "f0"), "ignored");
  equal(verdict(many, `f${MAX_IGNORE_RULES + 1}`), null);
  match(many.problems.join(), /were not applied \(at most 10000 rules\)/);
});

Deno.test("IgnoreRules finishes hostile wildcard rules against long names promptly", () => {
  assertLinearEngine();
  const hostile = Array.from({ length: 50 }, (_, index) => `${"*a".repeat(12 + (index % 5))}*b`).join("\n");
  const rules = IgnoreRules.parse(`${hostile}\n**/${"*a".repeat(12)}*b/**/c`);
  const started = performance.now();
  equal(verdict(rules, "a".repeat(250)), null);
  equal(verdict(rules, `${"a".repeat(200)}/${"a".repeat(200)}/`), null);
  equal(verdict(rules, `x${"a".repeat(20)}b`), "ignored");
  ok(performance.now() - started < 5_000, "the rules did not finish promptly");
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
