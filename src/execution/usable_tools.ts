/**
 * Which tools a session's permissions can ever let run, so the pool prewarms workers only for those
 * profiles: each worker is a V8 isolate of several megabytes and its start competes with the first model
 * request for the CPU. Plan mode never runs a writer or the shell; `-p` without an approver never runs what
 * would need one; a tool denied by a rule without a specifier never runs at all.
 *
 * This only decides what is started early: a call of any tool still gets a worker on demand, so an answer
 * that is wrong here costs a cold start, never a permission.
 *
 * @module
 */
import { accessOf, MODE_TABLE, type PermissionMode } from "../permissions/modes.ts";
import type { RuleSyntax } from "../permissions/rules.ts";
import type { ToolInfo } from "../tools/tool.ts";

/** What decides whether a tool can run, as far as prewarming cares. */
export interface UsableToolsOptions {
  mode: PermissionMode;
  rules: readonly (RuleSyntax & { action: "allow" | "deny" | "ask" })[];
  /** Someone can answer "ask" (a person, or an approval command); without one "ask" is a denial. */
  canAsk: boolean;
  /** PreToolUse hooks may allow calls the rules and the mode would not. */
  hooksMayDecide: boolean;
}

/** The tools among `tools` that some call could be allowed to run under these permissions. */
export function usableTools<T extends ToolInfo>(tools: readonly T[], options: UsableToolsOptions): T[] {
  return tools.filter((tool) => mayRun(tool, options));
}

function mayRun(tool: ToolInfo, options: UsableToolsOptions): boolean {
  const access = accessOf(tool);
  const named = options.rules.filter((rule) => rule.tool === tool.name);
  // A deny rule without a specifier refuses every call of the tool, before hooks, rules or the mode.
  if (named.some((rule) => rule.action === "deny" && rule.specifier === undefined)) return false;
  if (access === "read") return true;
  // Plan mode refuses every call that is not read-only, whatever the rules and hooks say.
  if (options.mode === "plan") return false;
  if (options.hooksMayDecide) return true;
  if (named.some((rule) => rule.action === "allow")) return true;
  if (options.canAsk && named.some((rule) => rule.action === "ask")) return true;
  const byMode = MODE_TABLE[options.mode][access];
  return byMode === "allow" || (byMode === "ask" && options.canAsk);
}
