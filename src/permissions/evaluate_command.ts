/**
 * Decides a Bash call from its commands and redirections (shell_commands.ts):
 *
 *   1. a command line that cannot be parsed: a deny rule on its text, else ask (dontAsk, plan: deny)
 *   2. any simple command (in any form: wrappers looked through) matching a deny rule → deny the whole line;
 *      so does a redirection writing a path a WriteFile or EditFile deny rule covers
 *   3. plan mode → deny
 *   4. an ask rule on any command, or a redirection into a protected path or matching an ask rule → ask;
 *      so does a command whose program is known only when it runs (`$x -f y`, `{rm,-f,x}`, `eval "$c"`)
 *      while any deny or ask rule names a Bash command: no such rule can be checked against it
 *   5. every command allowed by a rule (or bypassPermissions), and every write allowed (a WriteFile or
 *      EditFile rule, acceptEdits or bypassPermissions inside the workspace) → allow
 *   6. otherwise the mode: default and acceptEdits ask, dontAsk denies
 *
 * @module
 */
import type { Access, RedirectAccess } from "./access.ts";
import type { PermissionDecision } from "./decision.ts";
import { allowedToolsFlag, modeFlag, pathRule, suggestCommandRule } from "./hints.ts";
import { modeDecision } from "./modes.ts";
import { mayMatchAfter } from "./command_pattern.ts";
import { type CompiledRule, decidedByRule, matchesForm } from "./rule_match.ts";
import type { CommandForm, SimpleCommand } from "./shell_commands.ts";
import {
  type Evaluation,
  type EvaluationContext,
  findPathRule,
  findRule,
  namingRules,
  protectedForms,
  protectionReason,
  restrictedPaths,
  rootOf,
  ruleDecision,
  showPath,
  type Trace,
  withoutAsking,
} from "./_evaluation.ts";

/** A Bash call. */
export type CommandAccess = Extract<Access, { kind: "command" }>;

/** How one redirection's write stands. */
type WriteVerdict =
  | { kind: "allowed"; by: CompiledRule | null; shown: string }
  | { kind: "ask"; decision: PermissionDecision }
  | { kind: "unallowed"; shown: string; rule: string | null; inWorkspace: boolean };

const REDIRECT = { kind: "redirect" } as const;
const COMMAND = { kind: "command" } as const;

/** Decides a Bash call, with the steps that led to the decision. */
export function evaluateCommand(access: CommandAccess, context: EvaluationContext): Evaluation {
  const trace: Trace = [];
  return { decision: decideCommand(access, context, trace), trace };
}

function decideCommand(
  access: CommandAccess,
  context: EvaluationContext,
  trace: Trace,
): PermissionDecision {
  const { analysis, command } = access;
  const { mode } = context;
  const subject = `Bash "${command}"`;
  if (!analysis.ok) {
    trace.push(`the command cannot be parsed: ${analysis.error}`);
    const raw: CommandForm = { text: command.trim(), words: [], allowable: false, appendsArguments: false };
    const denied = findRule(context, {
      action: "deny",
      target: COMMAND,
      test: (rule) => matchesForm(rule, raw, { action: "deny" }),
    });
    if (denied !== null) return ruleDecision(denied, subject);
    if (mode === "plan") return planDenial();
    return withoutAsking(mode, {
      behavior: "ask",
      reason: `${subject} cannot be checked against the permission rules (${analysis.error}), so it needs ` +
        "the user's approval",
      decidedBy: { kind: "mode", mode },
    });
  }
  for (const simple of analysis.commands) {
    const forms = simple.forms.slice(1).map((form) => `"${form.text}"`);
    trace.push(`runs "${simple.text}"${forms.length === 0 ? "" : `, checked also as ${forms.join(", ")}`}`);
  }
  for (const write of access.writes) {
    trace.push(
      `writes ${
        write.path === null
          ? `a file known only when it runs (${write.write.text})`
          : `"${showPath(write.path.real ?? write.path.named, context)}"`
      }`,
    );
  }

  for (const simple of analysis.commands) {
    const denied = commandRule(context, "deny", simple);
    if (denied !== null) return ruleDecision(denied, `${subject} runs "${simple.text}", which`);
  }
  for (const write of access.writes) {
    if (write.path === null) continue;
    const denied = findPathRule(context, {
      action: "deny",
      target: REDIRECT,
      paths: restrictedPaths(write.path),
    });
    if (denied !== null) {
      return ruleDecision(denied, `${subject} writes "${write.write.text}", which`);
    }
  }
  if (mode === "plan") return planDenial();

  for (const simple of analysis.commands) {
    const asked = commandRule(context, "ask", simple);
    if (asked !== null) {
      return withoutAsking(mode, ruleDecision(asked, `${subject} runs "${simple.text}"`));
    }
  }
  const unchecked = uncheckedCommand(analysis.commands, context);
  if (unchecked !== null) {
    const { simple, rule, why } = unchecked;
    return withoutAsking(mode, {
      behavior: "ask",
      reason: `${subject} runs "${simple.text}", and ${why}, so the ${rule.rule.action} rule ` +
        `${rule.text} from ${rule.origin} cannot be checked against it; it needs the user's approval`,
      decidedBy: decidedByRule(rule),
    });
  }
  const verdicts = access.writes.map((write) => writeVerdict(write, subject, context));
  for (const verdict of verdicts) if (verdict.kind === "ask") return withoutAsking(mode, verdict.decision);

  const allowedBy: { simple: SimpleCommand; rule: CompiledRule }[] = [];
  const missing: SimpleCommand[] = [];
  for (const simple of analysis.commands) {
    const rule = commandRule(context, "allow", simple);
    if (rule === null) missing.push(simple);
    else allowedBy.push({ simple, rule });
  }
  const unallowed = verdicts.flatMap((verdict) => verdict.kind === "unallowed" ? [verdict] : []);
  if (analysis.commands.length > 0 && missing.length === 0 && unallowed.length === 0) {
    const first = allowedBy[0]!.rule;
    const parts = allowedBy.map(({ simple, rule }) => `"${simple.text}" by ${rule.text} from ${rule.origin}`);
    for (const verdict of verdicts) {
      if (verdict.kind !== "allowed") continue;
      const by = verdict.by === null ? `${mode} mode` : `${verdict.by.text} from ${verdict.by.origin}`;
      parts.push(`writing "${verdict.shown}" by ${by}`);
    }
    return {
      behavior: "allow",
      reason: `${subject} is allowed: ${parts.join("; ")}`,
      decidedBy: decidedByRule(first),
    };
  }
  if (mode === "bypassPermissions") return modeDecision(mode, { access: "command", what: subject });

  const decision = modeDecision(mode, {
    access: "command",
    what: describeMissing(command, missing, unallowed),
  });
  if (decision.behavior === "allow") return decision;
  const hint = missingHint(missing, unallowed, context);
  return hint === null ? decision : { ...decision, ...hint };
}

// The first rule of an action that matches any form of a simple command.
function commandRule(
  context: EvaluationContext,
  action: "allow" | "deny" | "ask",
  simple: SimpleCommand,
): CompiledRule | null {
  for (const form of simple.forms) {
    const rule = findRule(context, {
      action,
      target: COMMAND,
      test: (candidate) => matchesForm(candidate, form, { action }),
    });
    if (rule !== null) return rule;
  }
  return null;
}

// A command whose program is computed, when a deny or ask rule names a command, or whose argument is
// computed where a deny or ask rule may match (`git $(echo push)` under `Bash(git push *)`): fail closed.
function uncheckedCommand(
  commands: readonly SimpleCommand[],
  context: EvaluationContext,
): { simple: SimpleCommand; rule: CompiledRule; why: string } | null {
  const computed = commands.find((candidate) => candidate.computed !== undefined);
  for (const action of ["deny", "ask"] as const) {
    if (computed !== undefined) {
      const rule = findRule(context, {
        action,
        target: COMMAND,
        test: (candidate) => candidate.matcher.kind === "command",
      });
      if (rule !== null) return { simple: computed, rule, why: computed.computed! };
    }
    for (const simple of commands) {
      for (const form of simple.forms) {
        const at = form.computedFrom;
        if (at === undefined) continue;
        const head = `${form.words.slice(0, at).join(" ")} `;
        const rule = findRule(context, {
          action,
          target: COMMAND,
          test: (candidate) =>
            candidate.matcher.kind === "command" && mayMatchAfter(candidate.matcher.pattern, head),
        });
        if (rule !== null) {
          return { simple, rule, why: `its argument "${form.words[at]}" is known only when it runs` };
        }
      }
    }
  }
  return null;
}

function writeVerdict(write: RedirectAccess, subject: string, context: EvaluationContext): WriteVerdict {
  const { mode } = context;
  if (write.path === null) {
    if (mode === "bypassPermissions") return { kind: "allowed", by: null, shown: write.write.text };
    return { kind: "unallowed", shown: write.write.text, rule: null, inWorkspace: false };
  }
  const location = write.path.real ?? write.path.named;
  const shown = showPath(location, context);
  const root = rootOf(location, context);
  const asked = findPathRule(context, {
    action: "ask",
    target: REDIRECT,
    paths: restrictedPaths(write.path),
  });
  if (asked !== null) {
    return { kind: "ask", decision: ruleDecision(asked, `${subject} writes "${shown}"`) };
  }
  const forms = protectedForms(write.path, context);
  if (forms.length > 0) {
    const naming = namingRules(forms, { context, target: REDIRECT });
    if (naming !== null) return { kind: "allowed", by: naming[0]!, shown };
    return {
      kind: "ask",
      decision: {
        behavior: "ask",
        reason: `${subject} writes a protected path, "${forms[0]!.relative}": ${
          protectionReason(forms[0]!.entry)
        }`,
        decidedBy: { kind: "mode", mode },
        ...allowing([pathRule("WriteFile", forms[0]!.absolute, { workspace: context.workspace })]),
      },
    };
  }
  const allowed = write.path.real === null
    ? null
    : findPathRule(context, { action: "allow", target: REDIRECT, paths: [write.path.real] });
  if (allowed !== null) return { kind: "allowed", by: allowed, shown };
  const modeAllows = mode === "bypassPermissions" || (mode === "acceptEdits" && root !== null);
  if (modeAllows) return { kind: "allowed", by: null, shown };
  return {
    kind: "unallowed",
    shown,
    rule: pathRule("WriteFile", location, { workspace: context.workspace }),
    inWorkspace: root !== null,
  };
}

function describeMissing(
  command: string,
  missing: readonly SimpleCommand[],
  unallowed: readonly Extract<WriteVerdict, { kind: "unallowed" }>[],
): string {
  const refused = missing.filter((simple) => simple.unallowable !== undefined);
  if (refused.length > 0) {
    const reasons = refused.map((simple) => `"${simple.text}": ${simple.unallowable}`);
    return `Bash "${command}" cannot be allowed by a rule (${reasons.join("; ")})`;
  }
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`runs ${missing.map((simple) => `"${simple.text}"`).join(", ")}`);
  if (unallowed.length > 0) {
    parts.push(`writes ${unallowed.map((verdict) => `"${verdict.shown}"`).join(", ")} through a redirection`);
  }
  if (parts.length === 0) return `Bash "${command}" runs no command a rule allows`;
  const count = missing.length + unallowed.length;
  return `Bash ${parts.join(" and ")} (no rule allows ${count === 1 ? "it" : "them"})`;
}

/** The hint naming these allow rules, and the rules themselves. */
function allowing(rules: string[]): { hint: string; rules: string[] } {
  return { hint: allowedToolsFlag(rules), rules };
}

function missingHint(
  missing: readonly SimpleCommand[],
  unallowed: readonly Extract<WriteVerdict, { kind: "unallowed" }>[],
  context: EvaluationContext,
): { hint: string; rules: string[] } | null {
  const rules: string[] = [];
  for (const simple of missing) {
    const rule = suggestCommandRule(simple.forms);
    if (rule === null) return null;
    rules.push(rule);
  }
  for (const verdict of unallowed) {
    if (verdict.rule === null) return null;
    rules.push(verdict.rule);
  }
  if (rules.length === 0) return null;
  const unique = [...new Set(rules)];
  const flag = allowedToolsFlag(unique);
  const editsOnly = missing.length === 0 && unallowed.every((verdict) => verdict.inWorkspace);
  const hint = editsOnly && context.mode !== "acceptEdits" ? `${modeFlag("acceptEdits")} or ${flag}` : flag;
  return { hint, rules: unique };
}

function planDenial(): PermissionDecision {
  return modeDecision("plan", {
    access: "command",
    what: "Bash can run commands that change anything in the workspace",
  });
}
