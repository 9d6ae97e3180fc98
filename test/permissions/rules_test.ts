import { deepStrictEqual, equal, match } from "node:assert/strict";
import { describeOrigin, formatRule, parseRule, type RuleSyntax } from "../../src/permissions/rules.ts";
import { loadShellParser } from "../../src/permissions/shell_parser.ts";

// The permission modules load the shell parser when a caller first needs it; these tests call the
// parsing functions directly.
await loadShellParser();

Deno.test("parseRule reads Tool and Tool(specifier)", async (t) => {
  const cases: [string, RuleSyntax][] = [
    ["Bash", { tool: "Bash" }],
    ["  Glob  ", { tool: "Glob" }],
    ["Bash(npm test *)", { tool: "Bash", specifier: "npm test *" }],
    ["Bash(npm test:*)", { tool: "Bash", specifier: "npm test:*" }],
    ['Bash(echo "(not a paren problem")', { tool: "Bash", specifier: 'echo "(not a paren problem"' }],
    ["ReadFile(./.env)", { tool: "ReadFile", specifier: "./.env" }],
    ["EditFile(src/**)", { tool: "EditFile", specifier: "src/**" }],
    ["WriteFile(//tmp/out/**)", { tool: "WriteFile", specifier: "//tmp/out/**" }],
    ["ReadFile(~/.gitconfig)", { tool: "ReadFile", specifier: "~/.gitconfig" }],
    ["Grep(docs/**)", { tool: "Grep", specifier: "docs/**" }],
    ["ReadFile(a(b).txt)", { tool: "ReadFile", specifier: "a(b).txt" }],
  ];
  for (const [text, expected] of cases) {
    await t.step(text, () => {
      const parsed = parseRule(text);
      if (!parsed.ok) throw new Error(parsed.error);
      deepStrictEqual(parsed.value, expected);
      deepStrictEqual(parsed.warnings, []);
      equal(formatRule(parsed.value), text.trim());
    });
  }
});

Deno.test("parseRule explains bad syntax and how to fix it", async (t) => {
  const cases: [string, RegExp][] = [
    ["", /it is empty: write a tool name such as "Bash"/],
    ["Bash(npm test", /"\(" is never closed: end the rule with "\)"/],
    ["Bash)", /"\)" without "\("/],
    ["Bash(npm test) extra", /" extra" follows the closing "\)"/],
    ["Bash()", /the parentheses are empty: write Bash alone to match every call/],
    ["Bash (ls)", /remove the space between "Bash" and "\("/],
    ["(ls)", /no tool name before "\("/],
    ["Bash-x(ls)", /"Bash-x" is not a tool name/],
    ["ReadFile(a(b.txt)", /unbalanced parentheses: a "\(" inside is never closed/],
    ["ReadFile(a)b)", /"b\)" follows|unbalanced/],
    ["Bash(ls\u0001)", /control character U\+0001/],
    ["Bash(npm test && rm -rf /)", /one simple command/],
    ["Bash(npm test > out.txt)", /cannot contain a redirection/],
    ["EditFile(../secrets/**)", /cannot contain "\.\."/],
    ["EditFile(!src/**)", /negated patterns are not supported/],
    ["ReadFile(~bob/.ssh/id_rsa)", /only "~\/" is supported/],
    ["Glob({1..1000})", /invalid pattern/],
  ];
  for (const [text, expected] of cases) {
    await t.step(JSON.stringify(text), () => {
      const parsed = parseRule(text);
      equal(parsed.ok, false);
      if (!parsed.ok) {
        match(parsed.error, /^Cannot use rule "/);
        match(parsed.error, expected);
      }
    });
  }
});

Deno.test("parseRule warns about rules that can never match", async (t) => {
  const cases: [string, RegExp][] = [
    [
      "Bsh(ls)",
      /can never match: no tool is named "Bsh" \(tools: ReadFile, Glob, Grep, EditFile, WriteFile, Bash\)/,
    ],
    ["bash(ls)", /did you mean Bash\?/],
    ["Read(./.env)", /did you mean ReadFile\?/],
    ["Edit", /did you mean EditFile\?/],
  ];
  for (const [text, expected] of cases) {
    await t.step(text, () => {
      const parsed = parseRule(text);
      if (!parsed.ok) throw new Error(parsed.error);
      equal(parsed.warnings.length, 1);
      match(parsed.warnings[0]!, expected);
    });
  }
  await t.step("a known tool that takes no specifier", () => {
    const parsed = parseRule("Probe(x)", { knownTools: ["Probe"] });
    if (!parsed.ok) throw new Error(parsed.error);
    match(parsed.warnings[0]!, /Probe takes no specifier; write Probe alone/);
  });
  await t.step("a tool this session does not offer", () => {
    const parsed = parseRule("Bash(ls)", { knownTools: ["ReadFile", "Glob", "Grep"] });
    if (!parsed.ok) throw new Error(parsed.error);
    match(parsed.warnings[0]!, /no tool is named "Bash"/);
  });
});

Deno.test("describeOrigin names the flag or the settings file a rule comes from", async (t) => {
  const cases: [Parameters<typeof describeOrigin>[0], string][] = [
    [{ action: "allow", source: { layer: "cli" } }, "--allowedTools"],
    [{ action: "deny", source: { layer: "cli" } }, "--disallowedTools"],
    [{ action: "ask", source: { layer: "cli" } }, "the command line"],
    [
      { action: "deny", source: { layer: "user", path: "/h/.mewcode/settings.json" } },
      "user settings (/h/.mewcode/settings.json)",
    ],
    [{ action: "allow", source: { layer: "project" } }, "project settings"],
    [
      { action: "allow", source: { layer: "local", path: "/w/.mewcode/settings.local.json" } },
      "local settings (/w/.mewcode/settings.local.json)",
    ],
    [{ action: "allow", source: { layer: "session" } }, "this session's approvals"],
  ];
  for (const [rule, expected] of cases) {
    await t.step(expected, () => equal(describeOrigin(rule), expected));
  }
});
