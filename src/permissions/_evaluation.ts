/**
 * What the evaluators of file and command calls share: the context, rule lookup in precedence order,
 * locations, protected paths and the shape of rule-made decisions.
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { assertNever } from "../common/errors.ts";
import type { ProtectedPath } from "../tools/tool.ts";
import type { PermissionDecision, PermissionGrants } from "./decision.ts";
import type { PermissionMode } from "./modes.ts";
import type { PatternBases } from "./path_pattern.ts";
import { namesProtection, protectionAt } from "./protection.ts";
import { entriesIn } from "../tools/protected_paths.ts";
import { isWithin, type ResolvedPath } from "./real_paths.ts";
import {
  type CompiledRule,
  decidedByRule,
  matchesAnyPath,
  ruleApplies,
  type RuleTarget,
} from "./rule_match.ts";
import type { RuleAction } from "./rules.ts";
import { shellArgument } from "./hints.ts";

/** Everything a decision depends on besides the call. Paths are real. */
export interface EvaluationContext {
  mode: PermissionMode;
  rules: readonly CompiledRule[];
  workspace: string;
  additionalDirectories: readonly string[];
  home: string;
  protectedPaths: readonly ProtectedPath[];
}

/** The steps that led to a decision, for `mewcode permissions test`. */
export type Trace = string[];

/** A decision and the steps that led to it. */
export interface Evaluation {
  decision: PermissionDecision;
  trace: Trace;
}

/** The bases of relative rule patterns. */
export function patternBases(context: EvaluationContext): PatternBases {
  return { workspace: context.workspace, home: context.home };
}

/** What to look for among the rules: an action, what it must speak about, and a test of the rule. */
export interface RuleQuery {
  action: RuleAction;
  target: RuleTarget;
  test: (rule: CompiledRule) => boolean;
}

/** The first rule of an action that speaks about the target and passes `test` (layers keep their order). */
export function findRule(
  context: EvaluationContext,
  { action, target, test }: RuleQuery,
): CompiledRule | null {
  for (const rule of context.rules) {
    if (rule.rule.action === action && ruleApplies(rule, { action, target }) && test(rule)) return rule;
  }
  return null;
}

/** The first rule of an action that speaks about the target and matches one of the paths. */
export function findPathRule(
  context: EvaluationContext,
  { action, target, paths }: Omit<RuleQuery, "test"> & { paths: readonly string[] },
): CompiledRule | null {
  const bases = patternBases(context);
  return findRule(context, { action, target, test: (rule) => matchesAnyPath(rule, paths, bases) });
}

/** The paths deny and ask rules are checked against: as named and as real. Allow rules see only the real one. */
export function restrictedPaths(path: ResolvedPath): string[] {
  return path.real === null || path.real === path.named ? [path.named] : [path.named, path.real];
}

/** The folder a path lies in: the workspace, an additional directory, or null when outside all of them. */
export function rootOf(path: string, context: EvaluationContext): string | null {
  if (isWithin(context.workspace, path)) return context.workspace;
  return context.additionalDirectories.find((folder) => isWithin(folder, path)) ?? null;
}

/** A path for messages: relative to the workspace inside it, else absolute. */
export function showPath(path: string, context: EvaluationContext): string {
  if (path === context.workspace) return ".";
  return isWithin(context.workspace, path) ? posix.relative(context.workspace, path) : path;
}

/** The decision a rule makes (its action); `subject` says what it decided about ("Bash \"rm -rf /\""). */
export function ruleDecision(rule: CompiledRule, subject: string): PermissionDecision {
  const decidedBy = decidedByRule(rule);
  const behavior = rule.rule.action;
  const named = `the ${behavior} rule ${rule.text} from ${rule.origin}`;
  switch (behavior) {
    case "allow":
      return { behavior, reason: `${subject} is allowed by ${named}`, decidedBy };
    case "deny":
      return { behavior, reason: `${subject} is denied by ${named}`, decidedBy, hint: removalHint(rule) };
    case "ask":
      return {
        behavior,
        reason: `${subject} needs the user's approval: it matches ${named}`,
        decidedBy,
        hint: `approve it when asked, or ${removalHint(rule)}`,
      };
    default:
      return assertNever(behavior);
  }
}

/** In dontAsk mode an "ask" is a denial: nobody is asked. */
export function withoutAsking(mode: PermissionMode, decision: PermissionDecision): PermissionDecision {
  if (mode !== "dontAsk" || decision.behavior !== "ask") return decision;
  const denial: PermissionDecision = {
    behavior: "deny",
    reason: `${decision.reason}, and dontAsk mode denies without asking`,
    decidedBy: decision.decidedBy,
  };
  return {
    ...denial,
    ...(decision.hint === undefined ? {} : { hint: decision.hint }),
    ...(decision.rules === undefined ? {} : { rules: decision.rules }),
  };
}

/** A protected path a write reaches: the folder it is relative to, and how it is named there. */
export interface ProtectedForm {
  root: string;
  relative: string;
  absolute: string;
  entry: ProtectedPath;
}

/** The protected paths a write reaches, as it is named and as it really is (both are checked, as writers do). */
export function protectedForms(path: ResolvedPath, context: EvaluationContext): ProtectedForm[] {
  const forms: ProtectedForm[] = [];
  for (const absolute of restrictedPaths(path)) {
    const root = rootOf(absolute, context);
    if (root === null) continue;
    const relative = posix.relative(root, absolute);
    const entry = protectionAt(relative, entriesIn(root, context.protectedPaths));
    if (entry !== null) forms.push({ root, relative, absolute, entry });
  }
  return forms;
}

/** The allow rules that name each protected form explicitly, or null when one is not named by any. */
export function namingRules(
  forms: readonly ProtectedForm[],
  { context, target }: { context: EvaluationContext; target: RuleTarget },
): CompiledRule[] | null {
  const bases = patternBases(context);
  const rules: CompiledRule[] = [];
  for (const form of forms) {
    const rule = findRule(context, {
      action: "allow",
      target,
      test: (candidate) =>
        candidate.matcher.kind === "path" && matchesAnyPath(candidate, [form.absolute], bases) &&
        namesProtection(candidate.matcher.pattern, form.entry, { root: form.root, bases }),
    });
    if (rule === null) return null;
    rules.push(rule);
  }
  return rules;
}

/** What allowing these protected forms lets the writer do: the workspace-relative paths. */
export function protectedGrants(
  forms: readonly ProtectedForm[],
  context: EvaluationContext,
): PermissionGrants {
  const paths = forms.filter((form) => form.root === context.workspace).map((form) => form.relative);
  return { protectedPaths: [...new Set(paths)] };
}

/** Why a protected path is protected, as a clause ("it is git metadata …, which the user's own git runs …"). */
export function protectionReason(entry: ProtectedPath): string {
  return entry.reason.split(";")[0]!;
}

function removalHint(rule: CompiledRule): string {
  if (rule.rule.source.layer === "cli") return `drop ${rule.origin} ${shellArgument(rule.text)}`;
  return `remove ${rule.text} from ${rule.origin}`;
}
