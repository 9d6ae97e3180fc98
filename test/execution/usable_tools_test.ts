import { deepEqual } from "node:assert/strict";
import { usableTools, type UsableToolsOptions } from "../../src/execution/usable_tools.ts";
import { BUILTIN_TOOLS } from "../../src/tools/mod.ts";

function usable(options: Partial<UsableToolsOptions>): string[] {
  return usableTools(BUILTIN_TOOLS, {
    mode: "default",
    rules: [],
    canAsk: false,
    hooksMayDecide: false,
    ...options,
  }).map((tool) => tool.name).sort();
}

const READERS = ["Glob", "Grep", "ReadFile"];
const ALL = ["Bash", "EditFile", "Glob", "Grep", "ReadFile", "WriteFile"];

Deno.test("usableTools keeps only what the permissions can ever let run", async (t) => {
  const cases: { name: string; options: Partial<UsableToolsOptions>; expected: string[] }[] = [
    {
      name: "plan mode: only readers, whatever the rules and hooks",
      expected: READERS,
      options: {
        mode: "plan",
        canAsk: true,
        hooksMayDecide: true,
        rules: [{ tool: "Bash", action: "allow" }, { tool: "WriteFile", action: "allow" }],
      },
    },
    { name: "default mode with no one to ask (-p): only readers", expected: READERS, options: {} },
    { name: "default mode with someone to ask: everything", expected: ALL, options: { canAsk: true } },
    {
      name: "default mode, -p, an allow rule for Bash commands: readers and Bash",
      expected: ["Bash", ...READERS],
      options: { rules: [{ tool: "Bash", specifier: "npm test *", action: "allow" }] },
    },
    {
      name: "acceptEdits, -p: readers and writers, no Bash",
      expected: ["EditFile", "Glob", "Grep", "ReadFile", "WriteFile"],
      options: { mode: "acceptEdits" },
    },
    {
      name: "dontAsk without allow rules: only readers",
      expected: READERS,
      options: {
        mode: "dontAsk",
        canAsk: true,
      },
    },
    {
      name: "bypassPermissions with Bash denied by a rule: everything but Bash",
      expected: ["EditFile", "Glob", "Grep", "ReadFile", "WriteFile"],
      options: { mode: "bypassPermissions", rules: [{ tool: "Bash", action: "deny" }] },
    },
    {
      name: "a deny rule with a specifier leaves the tool usable",
      expected: ALL,
      options: { mode: "bypassPermissions", rules: [{ tool: "Bash", specifier: "rm *", action: "deny" }] },
    },
    {
      name: "hooks that may allow: everything a rule does not deny",
      expected: ["EditFile", "Glob", "Grep", "WriteFile", "Bash"].sort(),
      options: { hooksMayDecide: true, rules: [{ tool: "ReadFile", action: "deny" }] },
    },
  ];
  for (const { name, options, expected } of cases) {
    await t.step(name, () => deepEqual(usable(options), expected));
  }
});
