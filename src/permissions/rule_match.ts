/**
 * Which rules speak about a call, and whether they match it.
 *
 * A rule names a tool. Restrictions reach further than permissions: a deny or ask rule with a path also
 * covers the other tools that access files the same way (`ReadFile(.env)` covers Glob and Grep searching
 * there; `EditFile(secrets/**)` covers WriteFile and Bash redirections writing there), while an allow rule
 * allows only the tool it names (and, for a Bash redirection, a WriteFile or EditFile rule with a path).
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { DecidedBy } from "./decision.ts";
import {
  type CommandPattern,
  compileCommandPattern,
  matchesCommand,
  matchesWithAnyArguments,
  matchesWithSomeArguments,
} from "./command_pattern.ts";
import { compilePathPattern, matchesPath, type PathPattern, type PatternBases } from "./path_pattern.ts";
import { describeOrigin, formatRule, type Rule, type RuleAction, SPECIFIER_KINDS } from "./rules.ts";
import type { CommandForm } from "./shell_commands.ts";

/** What a compiled rule matches. */
export type RuleMatcher =
  | { kind: "every-call" }
  | { kind: "command"; pattern: CommandPattern }
  | { kind: "path"; pattern: PathPattern }
  | { kind: "never" };

/** A rule ready to match, with its text and origin for explanations. */
export interface CompiledRule {
  rule: Rule;
  /** As users write it: "Bash(npm test *)". */
  text: string;
  /** Where it was written: "--allowedTools", "user settings (…)". */
  origin: string;
  matcher: RuleMatcher;
}

/** What is being checked against the rules. */
export type RuleTarget =
  | { kind: "read"; tool: string }
  | { kind: "write"; tool: string }
  | { kind: "redirect" }
  | { kind: "command" }
  | { kind: "call"; tool: string };

const WRITERS: ReadonlySet<string> = new Set(["WriteFile", "EditFile"]);

/** Compiles a rule; throws a TypeError for a specifier `parseRule` would have refused. */
export function compileRule(rule: Rule): CompiledRule {
  const text = formatRule(rule);
  const base = { rule, text, origin: describeOrigin(rule) };
  if (rule.specifier === undefined) return { ...base, matcher: { kind: "every-call" } };
  const kind = SPECIFIER_KINDS[rule.tool];
  if (kind === undefined) return { ...base, matcher: { kind: "never" } };
  if (kind === "command") {
    const compiled = compileCommandPattern(rule.specifier);
    if (!compiled.ok) throw new TypeError(`Cannot use rule "${text}": ${compiled.error}`);
    return { ...base, matcher: { kind: "command", pattern: compiled.value } };
  }
  const compiled = compilePathPattern(rule.specifier);
  if (!compiled.ok) throw new TypeError(`Cannot use rule "${text}": ${compiled.error}`);
  return { ...base, matcher: { kind: "path", pattern: compiled.value } };
}

/** The `decidedBy` of a decision a rule made. */
export function decidedByRule(rule: CompiledRule): DecidedBy {
  return { kind: "rule", rule: rule.text, source: rule.origin };
}

/** Whether a rule speaks about a target at all (before looking at paths or commands). */
export function ruleApplies(
  rule: CompiledRule,
  { action, target }: { action: RuleAction; target: RuleTarget },
): boolean {
  const { tool, specifier } = rule.rule;
  const restricts = action !== "allow" && specifier !== undefined;
  switch (target.kind) {
    case "read":
      return tool === target.tool || (restricts && tool === "ReadFile");
    case "write":
      return tool === target.tool || (restricts && WRITERS.has(tool));
    case "redirect":
      return WRITERS.has(tool) && specifier !== undefined;
    case "command":
      return tool === "Bash";
    case "call":
      return tool === target.tool;
    default:
      return assertNever(target);
  }
}

/** Whether a rule matches any of these absolute paths (a rule without a specifier matches every path). */
export function matchesAnyPath(rule: CompiledRule, paths: readonly string[], bases: PatternBases): boolean {
  switch (rule.matcher.kind) {
    case "every-call":
      return true;
    case "path": {
      const { pattern } = rule.matcher;
      return paths.some((path) => matchesPath(pattern, path, bases));
    }
    case "command":
    case "never":
      return false;
    default:
      return assertNever(rule.matcher);
  }
}

/**
 * Whether a rule matches one form of a simple command. An allow rule must match a form that may be allowed,
 * and whatever arguments xargs adds; a deny or ask rule matches if it could with some of them.
 */
export function matchesForm(
  rule: CompiledRule,
  form: CommandForm,
  { action }: { action: RuleAction },
): boolean {
  switch (rule.matcher.kind) {
    case "every-call":
      return true;
    case "command": {
      const { pattern } = rule.matcher;
      if (action !== "allow") {
        return form.appendsArguments
          ? matchesWithSomeArguments(pattern, form.text)
          : matchesCommand(pattern, form.text);
      }
      if (!form.allowable) return false;
      return form.appendsArguments
        ? matchesWithAnyArguments(pattern, form.text)
        : matchesCommand(pattern, form.text);
    }
    case "path":
    case "never":
      return false;
    default:
      return assertNever(rule.matcher);
  }
}
