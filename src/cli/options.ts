/**
 * Every command-line option, once: the parser, `--help` and (later) shell completions are generated from
 * this table, so they cannot disagree.
 *
 * @module
 */

import { PROVIDER_KINDS } from "../llm/provider_choice.ts";
import { PERMISSION_MODES } from "../permissions/modes.ts";

/** How an option is shown in `--help`. */
export type OptionGroup = "run" | "session" | "permissions" | "workspace" | "output";

/** One option. */
export interface OptionSpec {
  /** The long name without dashes ("output-format"). */
  name: string;
  /** A one-letter alias without the dash ("p"). */
  short?: string;
  /** Other long spellings accepted ("allowed-tools" for "allowedTools"). */
  aliases?: readonly string[];
  /** A boolean flag, or an option that takes a value. */
  type: "boolean" | "string";
  /** May be given more than once (values accumulate). */
  multiple?: boolean;
  /**
   * The value may be left out: the next word is taken as the value only when this says it is one (`-r` alone
   * opens the session picker; `-r 3f2a9c1e` resumes that session). A left-out value is "".
   */
  optionalValue?: (word: string) => boolean;
  /**
   * More values may follow as words of their own, while this says they are ones: `--allowedTools
   * "Bash(npm test *)" "EditFile(src/**)"` gives two rules, as `--help` shows (taken as the prompt, the
   * second rule was silently dropped, and a deny rule with it).
   */
  continuedBy?: (word: string) => boolean;
  /** The value's placeholder in `--help` ("FORMAT"). */
  value?: string;
  /** The allowed values, for validation, help and completion. */
  choices?: readonly string[];
  group: OptionGroup;
  description: string;
}

/**
 * The built-in tools' names, as rules name them (src/permissions/rules.ts has them too; a test keeps the two
 * equal: importing the rules here would load their parser for `--version`).
 */
export const RULE_TOOL_NAMES: readonly string[] = [
  "ReadFile",
  "Glob",
  "Grep",
  "EditFile",
  "WriteFile",
  "Bash",
];

/** Whether a word is a permission rule (`Bash`, `Bash(npm test *)`) rather than a word of the prompt. */
export function isRuleWord(word: string): boolean {
  const open = word.indexOf("(");
  const name = open === -1 ? word : word.slice(0, open);
  return RULE_TOOL_NAMES.includes(name) && (open === -1 || word.endsWith(")"));
}

/** The output formats of one-shot mode. */
export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
/** One of OUTPUT_FORMATS. */
export type OutputFormat = typeof OUTPUT_FORMATS[number];

/** The model used when neither `--model` nor a settings file names one. */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
/** The response token limit used when `--max-tokens` is not given. */
export const DEFAULT_MAX_TOKENS = 16_000;

/** The model providers (`--provider`): the kinds provider_choice.ts builds. */
export const PROVIDERS = PROVIDER_KINDS;

/** The shell sandbox modes. */
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;

/** Every option mewcode accepts. */
export const OPTIONS: readonly OptionSpec[] = [
  {
    name: "print",
    short: "p",
    type: "boolean",
    group: "run",
    description: "one-shot mode: run the prompt to completion and print the result",
  },
  {
    name: "output-format",
    type: "string",
    value: "FORMAT",
    choices: OUTPUT_FORMATS,
    group: "run",
    description: "text (the answer), json (one result) or stream-json (one event a line); not text: one-shot",
  },
  {
    name: "include-partial-messages",
    type: "boolean",
    group: "run",
    description: "with stream-json: also the text as it streams",
  },
  {
    name: "wait-for-stdin",
    type: "boolean",
    group: "run",
    description: "with a prompt argument: wait for piped standard input however long it takes to start",
  },
  {
    name: "json-schema",
    type: "string",
    value: "SCHEMA|@FILE",
    group: "run",
    description: "the answer must be an object valid against this JSON Schema",
  },
  {
    name: "model",
    type: "string",
    value: "NAME",
    group: "run",
    description: `the model (default: ${DEFAULT_MODEL}); provider/model picks the provider too`,
  },
  {
    name: "provider",
    type: "string",
    value: "NAME",
    choices: PROVIDERS,
    group: "run",
    description: "anthropic (default), openai (any OpenAI-compatible API) or ollama",
  },
  {
    name: "max-tokens",
    type: "string",
    value: "N",
    group: "run",
    description: "response token limit per request",
  },
  {
    name: "max-turns",
    type: "string",
    value: "N",
    group: "run",
    description: "stop after N model requests (exit 53)",
  },
  {
    name: "max-budget-usd",
    type: "string",
    value: "X",
    group: "run",
    description: "stop once the run has cost X US dollars (exit 54)",
  },
  {
    name: "system-prompt",
    type: "string",
    value: "TEXT",
    group: "run",
    description: "replace mewcode's system prompt",
  },
  {
    name: "system-prompt-file",
    type: "string",
    value: "FILE",
    group: "run",
    description: "replace the system prompt with a file's content",
  },
  {
    name: "append-system-prompt",
    type: "string",
    value: "TEXT",
    group: "run",
    description: "add text to the end of the system prompt",
  },
  {
    name: "append-system-prompt-file",
    type: "string",
    value: "FILE",
    group: "run",
    description: "add a file's content to the end of the system prompt",
  },
  {
    name: "continue",
    short: "c",
    type: "boolean",
    group: "session",
    description: "continue the latest session of this workspace",
  },
  {
    name: "resume",
    short: "r",
    type: "string",
    value: "[ID]",
    optionalValue: (word) => /^[A-Za-z0-9_-]+$/.test(word),
    group: "session",
    description: "continue the session with this id (or unique prefix); alone, pick one from a list",
  },
  {
    name: "session-id",
    type: "string",
    value: "UUID",
    group: "session",
    description: "the id of the new session",
  },
  { name: "no-session-persistence", type: "boolean", group: "session", description: "write no transcript" },
  {
    name: "permission-mode",
    type: "string",
    value: "MODE",
    choices: PERMISSION_MODES,
    group: "permissions",
    description: PERMISSION_MODES.join(" | "),
  },
  {
    name: "dangerously-skip-permissions",
    type: "boolean",
    group: "permissions",
    description: "same as --permission-mode bypassPermissions (the sandbox still applies)",
  },
  {
    name: "allowedTools",
    aliases: ["allowed-tools"],
    type: "string",
    multiple: true,
    continuedBy: isRuleWord,
    value: "RULES",
    group: "permissions",
    description: 'allow calls matching these rules, e.g. "Bash(npm test *)" "EditFile(src/**)"',
  },
  {
    name: "disallowedTools",
    aliases: ["disallowed-tools"],
    type: "string",
    multiple: true,
    continuedBy: isRuleWord,
    value: "RULES",
    group: "permissions",
    description: "deny calls matching these rules",
  },
  {
    name: "approval-command",
    type: "string",
    value: "CMD",
    group: "permissions",
    description: "ask this command (JSON on stdin) whenever a call needs approval",
  },
  {
    name: "add-dir",
    type: "string",
    multiple: true,
    value: "DIR",
    group: "permissions",
    description: "another directory the tools may use, by the same rules",
  },
  {
    name: "trust",
    type: "boolean",
    group: "permissions",
    description: "trust this workspace's own settings for this run",
  },
  {
    name: "cd",
    short: "C",
    type: "string",
    value: "DIR",
    group: "workspace",
    description: "workspace root (default: the current directory)",
  },
  {
    name: "read-only",
    type: "boolean",
    group: "workspace",
    description: "offer no WriteFile, EditFile or Bash",
  },
  {
    name: "sandbox",
    type: "string",
    value: "MODE",
    choices: SANDBOX_MODES,
    group: "workspace",
    description: "shell sandbox: read-only | workspace-write (default) | danger-full-access",
  },
  {
    name: "sandbox-network",
    type: "boolean",
    group: "workspace",
    description: "let the sandboxed shell use the network",
  },
  {
    name: "sandbox-max-processes",
    type: "string",
    value: "N",
    group: "workspace",
    description: "processes a shell command may run at once (default 1024)",
  },
  {
    name: "sandbox-max-memory",
    type: "string",
    value: "SIZE",
    group: "workspace",
    description: "memory a shell command may use, e.g. 2G (default: half the RAM, at most 8G)",
  },
  {
    name: "strict-links",
    type: "boolean",
    group: "workspace",
    description: "refuse to read files that have more than one hard link",
  },
  {
    name: "quiet",
    short: "q",
    type: "boolean",
    group: "output",
    description: "no status line on standard error",
  },
  {
    name: "verbose",
    short: "v",
    type: "boolean",
    group: "output",
    description: "every tool call, retry and the usage on standard error",
  },
  {
    name: "json",
    type: "boolean",
    group: "output",
    description: 'with "tools", "sessions" and "permissions": print JSON',
  },
  { name: "revoke", type: "boolean", group: "permissions", description: 'with "trust": withdraw the trust' },
  { name: "help", short: "h", type: "boolean", group: "output", description: "this help" },
  { name: "version", short: "V", type: "boolean", group: "output", description: "the version" },
];

/** The commands, for help, suggestions and completion. */
export const COMMANDS: readonly { name: string; usage: string; description: string }[] = [
  {
    name: "-p",
    usage: '-p "PROMPT" [options]',
    description: "run one prompt to completion and print the result",
  },
  {
    name: "|",
    usage: '-p "PROMPT" < FILE',
    description: 'standard input becomes context: git diff | mewcode -p "review"',
  },
  {
    name: "tools",
    usage: "tools [--json]",
    description: 'list the tools a session offers (--json: the exact API "tools" array)',
  },
  {
    name: "tool",
    usage: "tool NAME 'JSON'",
    description: "run one tool call through the whole pipeline, print the result as JSON",
  },
  {
    name: "sessions",
    usage: "sessions [--json]",
    description: "list this workspace's sessions (id, date, first prompt, turns, cost)",
  },
  {
    name: "permissions",
    usage: "permissions [--json]",
    description: "list the effective permission rules and where each comes from",
  },
  {
    name: "permissions test",
    usage: "permissions test 'RULE' | TOOL 'JSON'",
    description: "show the decision for a call and what decided it",
  },
  {
    name: "trust",
    usage: "trust [--revoke]",
    description: "show what this workspace's settings would enable and trust them (or withdraw trust)",
  },
  {
    name: "completions",
    usage: "completions bash|zsh|fish",
    description: "print the shell completion script",
  },
  {
    name: "doctor",
    usage: "doctor",
    description: "check Deno, the sandbox and what it enforces, the workspace",
  },
  { name: "help", usage: "help", description: "this help" },
  { name: "version", usage: "version", description: "the version" },
];

const GROUP_TITLES: Readonly<Record<OptionGroup, string>> = {
  run: "Running a prompt",
  session: "Sessions",
  permissions: "Permissions",
  workspace: "Workspace and sandbox",
  output: "Output",
};

/** The option's spelling in help: "-p, --print" or "    --model NAME". */
export function optionLabel(option: OptionSpec): string {
  const long = `--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`;
  return option.short === undefined ? `    ${long}` : `-${option.short}, ${long}`;
}

/** The options section of `--help`, grouped. */
export function describeOptions(): string {
  const width = Math.max(...OPTIONS.map((option) => optionLabel(option).length)) + 2;
  const sections: string[] = [];
  for (const group of Object.keys(GROUP_TITLES) as OptionGroup[]) {
    const lines = OPTIONS.filter((option) => option.group === group)
      .map((option) => `  ${optionLabel(option).padEnd(width)}${option.description}`);
    sections.push(`${GROUP_TITLES[group]}:\n${lines.join("\n")}`);
  }
  return sections.join("\n\n");
}
