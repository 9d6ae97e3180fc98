/**
 * Permission rules as users write them: `Tool` or `Tool(specifier)`, each with an action and the place it
 * was written. `Bash` takes a command pattern (command_pattern.ts); ReadFile, WriteFile, EditFile, Glob and
 * Grep take a path pattern (path_pattern.ts); any other tool is named alone.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { compileCommandPattern } from "./command_pattern.ts";
import { compilePathPattern } from "./path_pattern.ts";

/** A value, or why there is none (a message that completes the caller's "Cannot …: "). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** What a rule does to the calls it matches. */
export const RULE_ACTIONS = ["allow", "deny", "ask"] as const;
/** One of RULE_ACTIONS. */
export type RuleAction = typeof RULE_ACTIONS[number];

/** Where rules come from, in the settings layers' order. */
export const RULE_LAYERS = ["cli", "local", "project", "user", "session"] as const;
/** One of RULE_LAYERS. */
export type RuleLayer = typeof RULE_LAYERS[number];

/** Where a rule was written: a settings layer, and the file when there is one. */
export interface RuleSource {
  layer: RuleLayer;
  path?: string;
}

/** What a rule's text says: the tool, and what of its calls (none: every call). */
export interface RuleSyntax {
  tool: string;
  specifier?: string;
}

/** A permission rule: data, compiled by the policy. Build it with `parseRule`. */
export interface Rule extends RuleSyntax {
  action: RuleAction;
  source: RuleSource;
}

/** A parsed rule, with warnings the caller reports (a rule that can never match is legal but useless). */
export type ParsedRule = { ok: true; value: RuleSyntax; warnings: string[] } | { ok: false; error: string };

/** How each built-in tool reads a rule's specifier. */
export const SPECIFIER_KINDS: Readonly<Record<string, "command" | "path">> = {
  ReadFile: "path",
  Glob: "path",
  Grep: "path",
  EditFile: "path",
  WriteFile: "path",
  Bash: "command",
};

/** The built-in tools' names. */
export const BUILTIN_TOOL_NAMES: readonly string[] = Object.keys(SPECIFIER_KINDS);

/** Options of `parseRule`. */
export interface ParseRuleOptions {
  /** Tool names that exist (default the built-in tools): a rule naming another tool can never match. */
  knownTools?: readonly string[];
}

// What Claude Code users type, mapped to the tool they mean.
const OTHER_NAMES: Readonly<Record<string, string>> = {
  read: "ReadFile",
  write: "WriteFile",
  edit: "EditFile",
  multiedit: "EditFile",
  ls: "Glob",
};

/** Parses `Tool` or `Tool(specifier)`. Errors say what is wrong and how to write it instead. */
export function parseRule(text: string, options: ParseRuleOptions = {}): ParsedRule {
  const syntax = parseRuleSyntax(text);
  if (!syntax.ok) return syntax;
  const { tool, specifier } = syntax.value;
  const known = options.knownTools ?? BUILTIN_TOOL_NAMES;
  if (specifier === undefined) {
    return { ok: true, value: syntax.value, warnings: unknownTool(text, tool, known) };
  }
  const kind = SPECIFIER_KINDS[tool];
  if (kind === undefined) {
    const warnings = known.includes(tool)
      ? [`Rule "${text}" can never match: ${tool} takes no specifier; write ${tool} alone`]
      : unknownTool(text, tool, known);
    return { ok: true, value: syntax.value, warnings };
  }
  const compiled = kind === "command" ? compileCommandPattern(specifier) : compilePathPattern(specifier);
  if (!compiled.ok) return { ok: false, error: `Cannot use rule "${text}": ${compiled.error}` };
  return { ok: true, value: syntax.value, warnings: unknownTool(text, tool, known) };
}

/**
 * Splits `Tool(specifier)` without reading the specifier: the shape every rule shares, also used for calls
 * written like rules (`mewcode permissions test 'Bash(git push origin main)'`).
 */
export function parseRuleSyntax(text: string): Result<RuleSyntax> {
  const fail = (problem: string): Result<RuleSyntax> => ({
    ok: false,
    error: `Cannot use rule "${text}": ${problem}`,
  });
  const trimmed = text.trim();
  if (trimmed === "") return fail('it is empty: write a tool name such as "Bash" or "Bash(npm test *)"');
  for (const char of trimmed) {
    const code = char.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) {
      return fail(`it contains the control character U+${code.toString(16).padStart(4, "0").toUpperCase()}`);
    }
  }
  const open = trimmed.indexOf("(");
  const close = trimmed.lastIndexOf(")");
  if (open === -1 && close !== -1) return fail('")" without "(": write Tool(specifier)');
  const tool = open === -1 ? trimmed : trimmed.slice(0, open);
  const nameProblem = toolNameProblem(tool);
  if (nameProblem !== null) return fail(nameProblem);
  if (open === -1) return { ok: true, value: { tool } };
  if (close < open) return fail('"(" is never closed: end the rule with ")"');
  if (close !== trimmed.length - 1) {
    return fail(`"${trimmed.slice(close + 1)}" follows the closing ")": remove it or move it inside`);
  }
  const specifier = trimmed.slice(open + 1, close).trim();
  if (specifier === "") {
    return fail(`the parentheses are empty: write ${tool} alone to match every call, or ${tool}(…) for some`);
  }
  const balance = parenthesesProblem(specifier);
  if (balance !== null) return fail(balance);
  return { ok: true, value: { tool, specifier } };
}

/** The rule as users write it: `Bash(npm test *)`, `Glob`. */
export function formatRule(rule: RuleSyntax): string {
  return rule.specifier === undefined ? rule.tool : `${rule.tool}(${rule.specifier})`;
}

/** Where a rule comes from, for people: "--allowedTools", "project settings (/ws/.mewcode/settings.json)". */
export function describeOrigin(rule: Pick<Rule, "action" | "source">): string {
  const { layer, path } = rule.source;
  const where = path === undefined ? "" : ` (${path})`;
  switch (layer) {
    case "cli":
      if (rule.action === "allow") return "--allowedTools";
      return rule.action === "deny" ? "--disallowedTools" : "the command line";
    case "local":
      return `local settings${where}`;
    case "project":
      return `project settings${where}`;
    case "user":
      return `user settings${where}`;
    case "session":
      return `this session's approvals${where}`;
    default:
      return assertNever(layer);
  }
}

function toolNameProblem(tool: string): string | null {
  if (tool === "") return 'it has no tool name before "(": write e.g. Bash(npm test *)';
  if (tool.trimEnd() !== tool) return `remove the space between "${tool.trimEnd()}" and "("`;
  const first = tool.charCodeAt(0);
  const letter = (first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a);
  for (const char of tool) {
    const code = char.charCodeAt(0);
    const valid = (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x30 && code <= 0x39) || code === 0x5f;
    if (!valid || !letter) {
      return `"${tool}" is not a tool name (letters, digits and _, starting with a letter)`;
    }
  }
  return null;
}

// Parentheses inside a specifier must pair up (outside quotes), or the rule was most likely cut short.
function parenthesesProblem(specifier: string): string | null {
  let depth = 0;
  let quote: string | null = null;
  for (let index = 0; index < specifier.length; index++) {
    const char = specifier[index]!;
    if (char === "\\" && quote !== "'") {
      index++;
      continue;
    }
    if (quote !== null) {
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === "(") depth++;
    else if (char === ")" && --depth < 0) return 'unbalanced parentheses: a ")" inside has no "("';
  }
  return depth > 0 ? 'unbalanced parentheses: a "(" inside is never closed' : null;
}

function unknownTool(text: string, tool: string, known: readonly string[]): string[] {
  if (known.includes(tool)) return [];
  const suggestion = known.find((name) => name.toLowerCase() === tool.toLowerCase()) ??
    OTHER_NAMES[tool.toLowerCase()];
  const hint = suggestion === undefined ? ` (tools: ${known.join(", ")})` : ` (did you mean ${suggestion}?)`;
  return [`Rule "${text}" can never match: no tool is named "${tool}"${hint}`];
}
