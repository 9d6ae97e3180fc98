/**
 * Explanations for people: `explainDecision` for `mewcode permissions test 'Bash(git push origin main)'`
 * (what would happen to a call, and why), `describeRules` for `mewcode permissions` (the effective rules,
 * by action, with where each was written).
 *
 * @module
 */
import { posix } from "node:path";
import { assertNever } from "../common/errors.ts";
import type { AnyTool } from "../tools/tool.ts";
import type { DecidedBy, PermissionDecision } from "./decision.ts";
import type { RulePolicy } from "./policy.ts";
import {
  describeOrigin,
  formatRule,
  parseRuleSyntax,
  type Result,
  type Rule,
  type RuleAction,
  type RuleSyntax,
} from "./rules.ts";

/** A call to explain: written like a rule ("Bash(git push origin main)", "ReadFile(src/a.ts)"), or a tool and its input. */
export type PermissionQuery = { text: string } | { tool: string; input: unknown };

/** Finds a tool by name (the session's registry). */
export interface ToolLookup {
  get(name: string): AnyTool | undefined;
}

/** What `explainDecision` needs. */
export interface ExplainOptions {
  policy: RulePolicy;
  tools: ToolLookup;
  /** Real path of the workspace: relative paths in a query start there. */
  root: string;
  /** The user's home folder: "~/" in a query. */
  home: string;
}

/** The lines that explain what the policy decides for a call; an error when the query names no usable call. */
export async function explainDecision(
  query: PermissionQuery,
  options: ExplainOptions,
): Promise<Result<string[]>> {
  const call = "text" in query ? callFromText(query.text, options) : { ok: true as const, value: query };
  if (!call.ok) return call;
  const tool = options.tools.get(call.value.tool);
  if (tool === undefined) return unknownTool(call.value.tool);
  const evaluation = await options.policy.evaluate({ tool, input: call.value.input, callId: "explain" });
  const { decision } = evaluation;
  const lines = [`${tool.name} ${JSON.stringify(call.value.input)}`, `  mode: ${options.policy.mode}`];
  for (const step of evaluation.trace) lines.push(`  ${step}`);
  lines.push(`Decision: ${describeBehavior(decision)}`);
  if (decision.reason !== undefined) lines.push(`Why: ${decision.reason}`);
  if (decision.decidedBy !== undefined) lines.push(`Decided by: ${describeDecider(decision.decidedBy)}`);
  if (decision.behavior !== "allow" && decision.hint !== undefined) {
    lines.push(`To allow it: ${decision.hint}`);
  }
  const grants = decision.behavior === "deny" ? undefined : decision.grants;
  if (grants !== undefined && grants.protectedPaths.length > 0) {
    const paths = grants.protectedPaths.map((path) => `"${path}"`).join(", ");
    lines.push(`${decision.behavior === "ask" ? "Once approved, may" : "May"} write the protected ${paths}`);
  }
  return { ok: true, value: lines };
}

/** The effective rules grouped by action (in the order they are checked), each with where it was written. */
export function describeRules(rules: readonly Rule[]): string[] {
  const width = Math.max(0, ...rules.map((rule) => formatRule(rule).length));
  const lines: string[] = [];
  for (const action of ORDER) {
    lines.push(`${HEADINGS[action]}:`);
    const group = rules.filter((rule) => rule.action === action);
    if (group.length === 0) lines.push("  (none)");
    for (const rule of group) lines.push(`  ${formatRule(rule).padEnd(width)}  ${describeOrigin(rule)}`);
  }
  return lines;
}

const ORDER: readonly RuleAction[] = ["deny", "ask", "allow"];
const HEADINGS: Readonly<Record<RuleAction, string>> = {
  deny: "Deny (checked first)",
  ask: "Ask (then)",
  allow: "Allow (last; anything else follows the permission mode)",
};

// A call written like a rule: the specifier is the command (Bash) or the path (file tools).
function callFromText(text: string, options: ExplainOptions): Result<{ tool: string; input: unknown }> {
  const syntax = parseRuleSyntax(text);
  if (!syntax.ok) return syntax;
  if (options.tools.get(syntax.value.tool) === undefined) return unknownTool(syntax.value.tool);
  const input = inputFor(syntax.value, options);
  if (input === null) {
    return {
      ok: false,
      error:
        `Cannot explain "${text}": say what the call does, e.g. ${syntax.value.tool}(…), or give its JSON input`,
    };
  }
  return { ok: true, value: { tool: syntax.value.tool, input } };
}

function inputFor({ tool, specifier }: RuleSyntax, options: ExplainOptions): Record<string, unknown> | null {
  const path = specifier === undefined ? undefined : concretePath(specifier, options);
  switch (tool) {
    case "Bash":
      return specifier === undefined ? null : { command: specifier };
    case "ReadFile":
      return path === undefined ? null : { path };
    case "WriteFile":
      return path === undefined ? null : { path, content: "" };
    case "EditFile":
      return path === undefined ? null : { path, old_string: "", new_string: "" };
    case "Glob":
      return path === undefined ? { pattern: "**" } : { pattern: "**", path };
    case "Grep":
      return path === undefined ? { pattern: "." } : { pattern: ".", path };
    default:
      return specifier === undefined ? {} : null;
  }
}

// A path in a query names one file: "~/x", "/abs" or "//abs", or relative to the workspace.
function concretePath(specifier: string, options: ExplainOptions): string {
  if (specifier === "~" || specifier.startsWith("~/")) return posix.join(options.home, specifier.slice(1));
  if (specifier.startsWith("/")) return posix.resolve(specifier);
  return posix.join(options.root, specifier);
}

function unknownTool(name: string): { ok: false; error: string } {
  return { ok: false, error: `Cannot explain "${name}": no such tool is enabled in this session` };
}

function describeBehavior(decision: PermissionDecision): string {
  switch (decision.behavior) {
    case "allow":
      return "allow";
    case "deny":
      return "deny";
    case "ask":
      return "ask (the user is asked; with no one to ask, as in -p, it is denied)";
    default:
      return assertNever(decision);
  }
}

function describeDecider(decidedBy: DecidedBy): string {
  switch (decidedBy.kind) {
    case "mode":
      return `the permission mode ${decidedBy.mode}`;
    case "rule":
      return `the rule ${decidedBy.rule} from ${decidedBy.source}`;
    case "hook":
      return `the ${decidedBy.hook} hook`;
    case "user":
      return "the user";
    case "approval-command":
      return `the approval command ${JSON.stringify(decidedBy.command)}, which gave no answer`;
    default:
      return assertNever(decidedBy);
  }
}
