/**
 * The rule engine: what a call touches, the rules of every layer and the mode → a decision, with the
 * steps that led to it. Pure: paths were resolved before (access.ts). Deny rules are checked first, then
 * ask, then allow, over all layers at once; no match falls to the mode (modes.ts). File calls and Bash
 * calls add locations and protected paths (evaluate_file.ts, evaluate_command.ts).
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { Access } from "./access.ts";
import type { PermissionDecision } from "./decision.ts";
import { evaluateCommand } from "./evaluate_command.ts";
import { evaluateFile } from "./evaluate_file.ts";
import { modeDecision } from "./modes.ts";
import type { CompiledRule } from "./rule_match.ts";
import { allowedToolsFlag } from "./hints.ts";
import {
  type Evaluation,
  type EvaluationContext,
  findRule,
  ruleDecision,
  withoutAsking,
} from "./_evaluation.ts";

export type { Evaluation, EvaluationContext } from "./_evaluation.ts";

/** Decides one call, with the steps that led to the decision. */
export function evaluate(access: Access, context: EvaluationContext): Evaluation {
  switch (access.kind) {
    case "read":
    case "write":
      return evaluateFile(access, context);
    case "command":
      return evaluateCommand(access, context);
    case "call":
      return { decision: evaluateCall(access, context), trace: [] };
    default:
      return assertNever(access);
  }
}

// Any other tool: rules name it alone; otherwise its metadata and the mode decide.
function evaluateCall(
  access: Extract<Access, { kind: "call" }>,
  context: EvaluationContext,
): PermissionDecision {
  const { tool } = access;
  const { mode } = context;
  const target = { kind: "call", tool } as const;
  // A rule with a specifier says something about a command or a path, which this call has not.
  const matches = (rule: CompiledRule) => rule.matcher.kind === "every-call";
  const denied = findRule(context, { action: "deny", target: target, test: matches });
  if (denied !== null) return ruleDecision(denied, tool);
  const what = access.access === "read"
    ? `${tool} only reads`
    : access.access === "command"
    ? `${tool} can run commands that change anything in the workspace`
    : `${tool} changes files in the workspace`;
  if (mode === "plan" && access.access !== "read") return modeDecision(mode, { access: access.access, what });
  const asked = findRule(context, { action: "ask", target: target, test: matches });
  if (asked !== null) return withoutAsking(mode, ruleDecision(asked, tool));
  const allowed = findRule(context, { action: "allow", target: target, test: matches });
  if (allowed !== null) return ruleDecision(allowed, tool);
  const decision = modeDecision(mode, { access: access.access, what });
  return decision.behavior === "allow"
    ? decision
    : { ...decision, hint: allowedToolsFlag([tool]), rules: [tool] };
}
