/**
 * Decides a file tool's call (ReadFile, WriteFile, EditFile, Glob, Grep) on its real path:
 *
 *   1. a deny rule matching the path as named or as real         → deny
 *   2. a write in plan mode                                        → deny
 *   3. outside the workspace and the additional directories       → deny (the tools cannot reach it)
 *   4. an ask rule                                                  → ask (dontAsk: deny)
 *   5. a write to a protected path: allowed only by an allow rule naming it, else ask, in every mode
 *   6. an allow rule matching the real path                        → allow
 *   7. reads → allow; writes → the mode (default: ask, acceptEdits and bypassPermissions: allow, …)
 *
 * @module
 */
import { posix } from "../common/path.ts";
import type { Access } from "./access.ts";
import type { PermissionDecision } from "./decision.ts";
import { addDirFlag, allowedToolsFlag, folderRule, modeFlag, offersAddDir, pathRule } from "./hints.ts";
import { modeDecision } from "./modes.ts";
import { compileRule, decidedByRule, ruleApplies, type RuleTarget } from "./rule_match.ts";
import type { Rule } from "./rules.ts";
import type { DeniedReadRule } from "../tools/tool.ts";
import {
  type Evaluation,
  type EvaluationContext,
  findPathRule,
  namingRules,
  protectedForms,
  protectedGrants,
  protectionReason,
  restrictedPaths,
  rootOf,
  ruleDecision,
  showPath,
  type Trace,
  withoutAsking,
} from "./_evaluation.ts";

/** A read or a write by a file tool. */
export type FileAccess = Extract<Access, { kind: "read" | "write" }>;

/** Decides a file tool's call, with the steps that led to the decision. */
export function evaluateFile(access: FileAccess, context: EvaluationContext): Evaluation {
  const trace: Trace = [];
  return { decision: decideFile(access, context, trace), trace };
}

function decideFile(
  access: FileAccess,
  context: EvaluationContext,
  trace: Trace,
): PermissionDecision {
  const { tool, path } = access;
  const { mode } = context;
  const writing = access.kind === "write";
  const target: RuleTarget = writing ? { kind: "write", tool } : { kind: "read", tool };
  const location = path.real ?? path.named;
  const subject = `${tool} "${showPath(location, context)}"`;
  if (path.real === null) trace.push(`"${path.named}" has no real path: allow rules cannot match it`);
  else if (path.real !== path.named) trace.push(`"${path.named}" really is "${path.real}"`);

  const denied = findPathRule(context, { action: "deny", target: target, paths: restrictedPaths(path) });
  if (denied !== null) return ruleDecision(denied, subject);
  if (writing && mode === "plan") {
    return modeDecision(mode, { access: "edit", what: `${tool} changes files` });
  }

  const root = rootOf(location, context);
  if (root === null) return outside(access, location, context);
  trace.push(
    root === context.workspace ? `${subject} is inside the workspace` : `${subject} is inside "${root}"`,
  );

  const asked = findPathRule(context, { action: "ask", target: target, paths: restrictedPaths(path) });
  if (asked !== null) return withoutAsking(mode, ruleDecision(asked, subject));

  if (writing) {
    const forms = protectedForms(path, context);
    if (forms.length > 0) {
      const grants = protectedGrants(forms, context);
      const naming = namingRules(forms, { context, target: target });
      trace.push(`"${forms[0]!.relative}" is a protected path`);
      if (naming !== null) {
        const rule = naming[0]!;
        return {
          behavior: "allow",
          reason: `${subject} is a protected path that the allow rule ${rule.text} from ${rule.origin} ` +
            "names explicitly",
          decidedBy: decidedByRule(rule),
          grants,
        };
      }
      return withoutAsking(mode, {
        behavior: "ask",
        reason: `${subject} would change a protected path: ${protectionReason(forms[0]!.entry)}`,
        decidedBy: { kind: "mode", mode },
        hint: allowedToolsFlag([pathRule(tool, forms[0]!.absolute, { workspace: context.workspace })]),
        rules: [pathRule(tool, forms[0]!.absolute, { workspace: context.workspace })],
        grants,
      });
    }
  }

  const allowed = path.real === null
    ? null
    : findPathRule(context, { action: "allow", target: target, paths: [path.real] });
  if (allowed !== null) return ruleDecision(allowed, subject);
  if (!writing) {
    const where = root === context.workspace ? "the workspace" : `the additional directory "${root}"`;
    return { behavior: "allow", reason: `${tool} reads inside ${where}`, decidedBy: { kind: "mode", mode } };
  }
  const decision = modeDecision(mode, {
    access: "edit",
    what: `${tool} changes "${showPath(location, context)}"`,
  });
  if (decision.behavior === "allow") return decision;
  const rule = folderRule(tool, location, { workspace: context.workspace });
  return { ...decision, hint: `${modeFlag("acceptEdits")} or ${allowedToolsFlag([rule])}`, rules: [rule] };
}

function outside(access: FileAccess, location: string, context: EvaluationContext): PermissionDecision {
  const where = context.additionalDirectories.length === 0
    ? `the workspace "${context.workspace}"`
    : `the workspace "${context.workspace}" and the additional directories (${
      context.additionalDirectories.map((folder) => `"${folder}"`).join(", ")
    })`;
  const verb = access.kind === "write" ? "writes" : "reads";
  const folder = access.tool === "Glob" || access.tool === "Grep" ? location : posix.dirname(location);
  return {
    behavior: "deny",
    reason: `"${location}" is outside ${where}: ${access.tool} ${verb} only inside them`,
    decidedBy: { kind: "mode", mode: context.mode },
    ...(offersAddDir(folder, context.home) ? { hint: addDirFlag(folder) } : {}),
  };
}

/**
 * The deny and ask rules a search tool (Glob, Grep) applies to each file it would list or search, as the
 * structured-cloneable `ToolCallContext.deniedReads` carries them: those that would deny `tool` called on
 * that one file by its path, or ask first (`ReadFile(.env)` and `Grep(secrets/**)` for Grep). Steps 1 and 3
 * of `decideFile` check only the search's own path, and a search of the workspace would otherwise read the
 * files below it that a direct read of each is denied, or shows the user first. Deny rules come first, as
 * the policy checks them first. Rules without a path decide the whole call there already.
 */
export function searchDenials(rules: readonly Rule[], tool: string): DeniedReadRule[] {
  const denials: DeniedReadRule[] = [];
  for (const action of ["deny", "ask"] as const) {
    for (const rule of rules) {
      if (rule.action !== action || rule.specifier === undefined) continue;
      const compiled = compileRule(rule);
      if (compiled.matcher.kind !== "path") continue;
      if (!ruleApplies(compiled, { action, target: { kind: "read", tool } })) continue;
      denials.push({
        rule: compiled.text,
        origin: compiled.origin,
        specifier: rule.specifier,
        ...(action === "ask" ? { asks: true } : {}),
      });
    }
  }
  return denials;
}
