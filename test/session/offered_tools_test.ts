import { deepStrictEqual } from "node:assert/strict";
import type { ToolSource } from "../../src/execution/tool_source.ts";
import type { Rule, RuleAction } from "../../src/permissions/rules.ts";
import { wholeToolDenials, withoutHiddenTools } from "../../src/session/offered_tools.ts";
import { BUILTIN_TOOL_INFO } from "../../src/tools/catalog.ts";
import { createRegistry } from "../../src/tools/registry.ts";

/** A rule as parseRule makes it: `Tool` or `Tool(specifier)`. */
function rule(text: string, action: RuleAction, layer: Rule["source"]["layer"] = "cli"): Rule {
  const [, tool = "", specifier] = /^(\w+)(?:\((.*)\))?$/.exec(text) ?? [];
  return { tool, ...(specifier === undefined ? {} : { specifier }), action, source: { layer } };
}

Deno.test("wholeToolDenials names the tools a deny rule without a specifier names, from any layer", async (t) => {
  const cases: [string, Rule[], string[]][] = [
    ["a bare deny from the command line", [rule("Bash", "deny")], ["Bash"]],
    ["a bare deny from settings", [rule("WriteFile", "deny", "project")], ["WriteFile"]],
    ["a deny with a specifier", [rule("Bash(git push *)", "deny")], []],
    ["a bare ask or allow", [rule("Bash", "ask"), rule("EditFile", "allow")], []],
    ["several", [rule("Bash", "deny"), rule("ReadFile(./.env)", "deny"), rule("Grep", "deny", "user")], [
      "Bash",
      "Grep",
    ]],
  ];
  for (const [name, rules, expected] of cases) {
    await t.step(name, () => deepStrictEqual([...wholeToolDenials(rules)].sort(), expected.sort()));
  }
});

Deno.test("withoutHiddenTools offers none of the hidden tools, read again at each request, and passes calls on", () => {
  const registry = createRegistry(BUILTIN_TOOL_INFO, { allowWrite: true, allowBash: true });
  const loaded: string[] = [];
  const source: ToolSource = {
    registry,
    expect: (name) => loaded.push(`expect ${name ?? "response"}`),
    load: () => Promise.reject(new Error("not in this test")),
  };
  let rules = [rule("Bash", "deny"), rule("EditFile(src/**)", "deny")];
  const offered = withoutHiddenTools(source, () => wholeToolDenials(rules));
  const names = () => offered.registry.toolSpecs().map((spec) => spec.name);
  deepStrictEqual(names(), ["ReadFile", "Glob", "Grep", "EditFile", "WriteFile"]);
  // A call the model makes anyway still reaches the pipeline, whose policy denies it by the rule.
  deepStrictEqual(offered.registry.get("Bash")?.name, "Bash");
  offered.expect("Bash");
  deepStrictEqual(loaded, ["expect Bash"]);
  // A rule removed during the session (/permissions) offers the tool again from the next request.
  rules = [rule("EditFile(src/**)", "deny")];
  deepStrictEqual(names(), ["ReadFile", "Glob", "Grep", "EditFile", "WriteFile", "Bash"]);
});
