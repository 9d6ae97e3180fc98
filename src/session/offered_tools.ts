/**
 * What the model is offered: every enabled tool but those a deny rule names whole (`Bash` in
 * `--disallowedTools`, or `"deny": ["Bash"]` in any settings file), as Claude Code does. Offering a tool
 * whose every call is denied only has the model try it and be refused; a rule with a specifier
 * (`Bash(git push *)`) leaves its tool offered and decides call by call. A call the model makes to a removed
 * tool anyway still reaches the pipeline, whose policy denies it by that rule.
 *
 * @module
 */
import type { ToolSource } from "../execution/tool_source.ts";
import type { Rule } from "../permissions/rules.ts";

/** The tools a deny rule without a specifier names, from the rules in force now (flags and settings). */
export function wholeToolDenials(rules: readonly Rule[]): ReadonlySet<string> {
  return new Set(
    rules.filter((rule) => rule.action === "deny" && rule.specifier === undefined).map((rule) => rule.tool),
  );
}

/**
 * A tool source that offers the model none of the tools `hidden()` names, read at each request (rules
 * added or removed during the session count from the next one). Loading and calls go to `source`.
 */
export function withoutHiddenTools(source: ToolSource, hidden: () => ReadonlySet<string>): ToolSource {
  return {
    registry: {
      toolSpecs: () => {
        const names = hidden();
        const specs = source.registry.toolSpecs();
        return names.size === 0 ? specs : specs.filter((spec) => !names.has(spec.name));
      },
      get: (name) => source.registry.get(name),
    },
    expect: (name) => source.expect(name),
    load: () => source.load(),
  };
}
