import { equal, match } from "node:assert/strict";
import {
  compileCommandPattern,
  matchesCommand,
  matchesWithAnyArguments,
  matchesWithSomeArguments,
} from "../../src/permissions/command_pattern.ts";
import { loadShellParser } from "../../src/permissions/shell_parser.ts";

// The permission modules load the shell parser when a caller first needs it; these tests call the
// parsing functions directly.
await loadShellParser();

function pattern(specifier: string) {
  const compiled = compileCommandPattern(specifier);
  if (!compiled.ok) throw new Error(compiled.error);
  return compiled.value;
}

Deno.test("Bash rule patterns match commands as Claude Code users expect", async (t) => {
  const cases: [string, string, boolean][] = [
    // exact
    ["npm test", "npm test", true],
    ["npm test", "npm test --watch", false],
    ["npm test", "npm tests", false],
    // " *": the command with or without more arguments, at a word boundary
    ["npm test *", "npm test", true],
    ["npm test *", "npm test --watch", true],
    ["npm test *", "npm test -- --grep 'a b'", true],
    ["npm test *", "npm tests", false],
    ["npm test *", "npm", false],
    ["ls *", "ls -la", true],
    ["ls *", "lsof", false],
    ["ls*", "lsof", true],
    // the legacy ":*" is " *"
    ["npm test:*", "npm test", true],
    ["npm test:*", "npm test --watch", true],
    ["npm test:*", "npm tests", false],
    // "*" crosses "/" and spaces, anywhere in the pattern
    ["cat *", "cat src/a/b.ts", true],
    ["git * main", "git push origin main", true],
    ["git * main", "git push origin main --force", false],
    ["* --version", "node --version", true],
    ["rm -rf /tmp/*", "rm -rf /tmp/build/cache", true],
    ["rm -rf /tmp/*", "rm -rf /etc", false],
    ["*", "anything at all", true],
    // quoting means the same in rules and commands; a quoted "*" is a literal star
    ['git commit -m "fix it"', "git commit -m fix it", true],
    ["git commit -m 'fix it'", "git commit -m fix it", true],
    ['echo "*"', "echo *", true],
    ['echo "*"', "echo x", false],
    ["npm  test", "npm test", true],
  ];
  for (const [rule, command, expected] of cases) {
    await t.step(`Bash(${rule}) ${expected ? "matches" : "does not match"} ${command}`, () => {
      equal(matchesCommand(pattern(rule), command), expected);
    });
  }
});

Deno.test("Bash rule patterns against xargs: allow needs every extra argument covered, deny any", async (t) => {
  const cases: [string, string, boolean, boolean][] = [
    // rule, command run by xargs, allows, denies
    ["rm *", "rm", true, true],
    ["rm -f *", "rm -f", true, true],
    ["rm -f", "rm -f", false, true],
    ["rm -rf /", "rm -rf", false, true],
    ["rm *.txt", "rm", false, true],
    ["git push", "rm", false, false],
  ];
  for (const [rule, command, allows, denies] of cases) {
    await t.step(`Bash(${rule}) and xargs ${command}`, () => {
      equal(matchesWithAnyArguments(pattern(rule), command), allows);
      equal(matchesWithSomeArguments(pattern(rule), command), denies);
    });
  }
});

Deno.test("compileCommandPattern refuses what one rule cannot mean", async (t) => {
  const cases: [string, RegExp][] = [
    ["npm test && npm run lint", /one simple command.*Bash\(npm test\) and Bash\(npm run lint\)/],
    ["npm test; rm -rf /", /one simple command/],
    ["cat a | grep b", /one simple command/],
    ["npm test &", /one simple command/],
    ["(npm test)", /one simple command/],
    ["npm test > out.txt", /redirection: allow the written file with a WriteFile rule/],
    ["echo 'open", /cannot be parsed: unterminated single quote/],
    ["A=1", /names no command/],
  ];
  for (const [specifier, expected] of cases) {
    await t.step(specifier, () => {
      const compiled = compileCommandPattern(specifier);
      equal(compiled.ok, false);
      if (!compiled.ok) match(compiled.error, expected);
    });
  }
});

Deno.test("matchesCommand stays fast on a long command against a pattern of many wildcards", () => {
  // A backtracking regex (.*a.*a…c.*b) would try every split of the a's.
  const command = `echo ${"a".repeat(200_000)}b`;
  const start = performance.now();
  equal(matchesCommand(pattern("echo *a*a*a*a*a*a*a*a*a*c*b"), command), false);
  equal(matchesCommand(pattern("echo *a*a*a*a*a*a*a*a*a*b"), command), true);
  equal(performance.now() - start < 500, true);
});
