/**
 * Command-line parsing: argv in, a validated CliOptions or a usage error out. The options come from the
 * table in options.ts, so the parser, `--help` and the README cannot disagree.
 *
 * A word that is not an option is a command (`tools`, `doctor`, …) when it is the first one and names a
 * command, and otherwise part of the prompt: `mewcode -p fix the tests` sends "fix the tests". After `--`
 * every word is part of the prompt, so a prompt may start with "-". `_arg_tokens.ts` splits argv into the
 * options given and the other words; this module makes a command and its options of them.
 *
 * @module
 */
import { parseSize } from "../common/size.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { SandboxMode } from "../tools/tool.ts";
import { EXIT_DESCRIPTIONS } from "./exit_codes.ts";
import { closest, tokenize, UsageError } from "./_arg_tokens.ts";
import {
  COMMANDS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MODEL,
  describeOptions,
  type OutputFormat,
  type PROVIDERS,
  SANDBOX_MODES,
} from "./options.ts";

/** One of PROVIDERS. */
export type Provider = typeof PROVIDERS[number];

export { closest, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, SANDBOX_MODES, UsageError };

/** What the user asked mewcode to do. */
export type CliCommand =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "tools"; json: boolean }
  | { kind: "tool"; name: string; input: string }
  | { kind: "doctor" }
  | { kind: "sessions"; json: boolean }
  | { kind: "permissions"; json: boolean }
  /** `permissions test 'Bash(git push)'` (input null) or `permissions test Bash '{"command":…}'`. */
  | { kind: "permissions-test"; target: string; input: string | null }
  | { kind: "trust"; revoke: boolean }
  | { kind: "completions"; shell: "bash" | "zsh" | "fish" }
  /**
   * Run a prompt. `headless`: `-p`, `--output-format json` or `stream-json`, or no terminal on stdin or
   * stdout, or CI=true — run to completion and
   * print the result; otherwise the interactive session. `prompt` is null when none was given as an
   * argument (then it comes from standard input in headless mode).
   */
  | { kind: "prompt"; prompt: string | null; headless: boolean };

/** How the session's conversation starts. */
export type SessionChoice =
  | { kind: "new"; id: string | null }
  | { kind: "continue" }
  | { kind: "resume"; id: string }
  /** `-r` without an id: pick one from a list (the interactive session). */
  | { kind: "pick" };

/** The system prompt's replacement and addition, as given (files are read when the session opens). */
export interface SystemPromptOptions {
  replace: { text: string } | { file: string } | null;
  append: { text: string } | { file: string } | null;
}

/** Everything argv says, validated. A null field was not given: settings or defaults decide. */
export interface CliOptions {
  command: CliCommand;
  /** The workspace root as given (`-C`), or null for the current directory. */
  cd: string | null;
  readOnly: boolean;
  sandbox: SandboxMode | null;
  /** `--sandbox-network` given (true), or null. */
  sandboxNetwork: boolean | null;
  strictLinks: boolean;
  model: string | null;
  /** `--provider`, or null: settings, the `provider/` prefix of `--model`, or anthropic decide. */
  provider: Provider | null;
  maxTokens: number;
  maxTurns: number | null;
  maxBudgetUsd: number | null;
  permissionMode: PermissionMode | null;
  /** Rules from `--allowedTools` and `--disallowedTools`, one rule per entry. */
  allowedTools: string[];
  disallowedTools: string[];
  approvalCommand: string | null;
  addDirs: string[];
  /** `--trust`: trust the workspace's own settings for this run. */
  trust: boolean;
  outputFormat: OutputFormat;
  includePartialMessages: boolean;
  /** `--wait-for-stdin`: piped standard input is waited for, not left after a second of silence. */
  waitForStdin: boolean;
  /** `--json-schema` as given: the schema's JSON text, or "@FILE". */
  jsonSchema: string | null;
  systemPrompt: SystemPromptOptions;
  session: SessionChoice;
  /** Write a transcript (false with `--no-session-persistence`). */
  persist: boolean;
  quiet: boolean;
  verbose: boolean;
  /** `--sandbox-max-processes`, or null for the default. */
  sandboxMaxProcesses: number | null;
  /** `--sandbox-max-memory` in bytes, or null for the default. */
  sandboxMaxMemory: number | null;
}

/** What parsing needs to know about the process: whether a person is at a terminal. */
export interface CliEnvironment {
  stdinIsTerminal: boolean;
  stdoutIsTerminal: boolean;
  /** The CI variable (CI=true or CI=1 means headless). */
  ci?: string | undefined;
}

/** The text of `mewcode --help`. */
export function helpText(): string {
  const commandWidth = Math.max(...COMMANDS.map((command) => command.usage.length)) + 2;
  const commands = COMMANDS.map((command) =>
    `  mewcode ${command.usage.padEnd(commandWidth)}${command.description}`
  );
  const exits = EXIT_DESCRIPTIONS.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`);
  return `mewcode — a terminal coding agent whose tools run inside a runtime-enforced sandbox

Usage:
${commands.join("\n")}

${describeOptions()}

Environment:
  ANTHROPIC_API_KEY        API key (required to run a prompt)
  ANTHROPIC_BASE_URL       API endpoint (proxies, tests)
  OPENAI_API_KEY           API key of --provider openai (required for it)
  OPENAI_BASE_URL          endpoint of --provider openai or ollama (vLLM, LM Studio, OpenRouter, tests)
  MEWCODE_HOME             state directory: sessions, user settings, trust (default: ~/.mewcode)
  MEWCODE_TRUST_WORKSPACE  1: trust this workspace's own settings (as --trust)
  CI                       true: run headless, as -p

Exit status:
${exits.join("\n")}`;
}

/** Parses argv (without the program name). Throws UsageError for anything malformed. */
export function parseCli(argv: readonly string[], environment: CliEnvironment = TERMINAL): CliOptions {
  const { values, positionals } = tokenize(argv);
  const flag = (name: string): boolean => values.get(name) !== undefined;
  const text = (name: string): string | null => {
    const given = values.get(name);
    return given === undefined ? null : given.at(-1) ?? null;
  };
  const list = (name: string): string[] => values.get(name) ?? [];

  rejectConflicts(flag, [
    ["continue", "resume"],
    ["continue", "session-id"],
    ["resume", "session-id"],
    ["system-prompt", "system-prompt-file"],
    ["append-system-prompt", "append-system-prompt-file"],
    ["quiet", "verbose"],
    ["dangerously-skip-permissions", "permission-mode"],
  ]);
  const cd = text("cd");
  if (cd !== null && cd.trim() === "") throw new UsageError("Invalid -C/--cd: the path is empty");
  const outputFormat = (text("output-format") ?? "text") as OutputFormat;
  if (flag("include-partial-messages") && outputFormat !== "stream-json") {
    throw new UsageError("--include-partial-messages needs --output-format stream-json");
  }
  const command = parseCommand(positionals, flag, environment, outputFormat !== "text");
  requireCommand(flag, command, "json", ["tools", "sessions", "permissions"]);
  requireCommand(flag, command, "revoke", ["trust"]);
  requirePrompt(flag, command);
  const sessionId = text("session-id");
  if (sessionId !== null && !UUID.test(sessionId)) {
    throw new UsageError(
      `Invalid --session-id "${sessionId}": expected a UUID such as ${crypto.randomUUID()}`,
    );
  }
  const resume = text("resume");
  return {
    command,
    cd,
    readOnly: flag("read-only"),
    sandbox: text("sandbox") as SandboxMode | null,
    sandboxNetwork: flag("sandbox-network") ? true : null,
    strictLinks: flag("strict-links"),
    model: nonEmpty("--model", text("model")),
    provider: text("provider") as Provider | null,
    maxTokens: positiveInteger("--max-tokens", text("max-tokens")) ?? DEFAULT_MAX_TOKENS,
    maxTurns: positiveInteger("--max-turns", text("max-turns")),
    maxBudgetUsd: dollars("--max-budget-usd", text("max-budget-usd")),
    permissionMode: flag("dangerously-skip-permissions")
      ? "bypassPermissions"
      : text("permission-mode") as PermissionMode | null,
    allowedTools: list("allowedTools").flatMap((value) => splitRules("--allowedTools", value)),
    disallowedTools: list("disallowedTools").flatMap((value) => splitRules("--disallowedTools", value)),
    approvalCommand: nonEmpty("--approval-command", text("approval-command")),
    addDirs: list("add-dir").map((dir) => nonEmpty("--add-dir", dir) ?? dir),
    trust: flag("trust"),
    outputFormat,
    includePartialMessages: flag("include-partial-messages"),
    waitForStdin: flag("wait-for-stdin"),
    jsonSchema: nonEmpty("--json-schema", text("json-schema")),
    systemPrompt: {
      replace: textOrFile(text("system-prompt"), text("system-prompt-file")),
      append: textOrFile(text("append-system-prompt"), text("append-system-prompt-file")),
    },
    session: flag("continue")
      ? { kind: "continue" }
      : resume === ""
      ? { kind: "pick" }
      : resume !== null
      ? { kind: "resume", id: resume }
      : { kind: "new", id: sessionId },
    persist: !flag("no-session-persistence"),
    quiet: flag("quiet"),
    verbose: flag("verbose"),
    sandboxMaxProcesses: positiveInteger("--sandbox-max-processes", text("sandbox-max-processes")),
    sandboxMaxMemory: sizeOption("--sandbox-max-memory", text("sandbox-max-memory")),
  };
}

const TERMINAL: CliEnvironment = { stdinIsTerminal: true, stdoutIsTerminal: true };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseCommand(
  positionals: string[],
  flag: (name: string) => boolean,
  environment: CliEnvironment,
  machineOutput: boolean,
): CliCommand {
  if (flag("help")) return { kind: "help" };
  if (flag("version")) return { kind: "version" };
  // An output format for programs (json, stream-json) asks for a run to completion, as -p does: in a
  // terminal, the interactive session would have ignored it.
  const headless = flag("print") || machineOutput || !environment.stdinIsTerminal ||
    !environment.stdoutIsTerminal || environment.ci === "true" || environment.ci === "1";
  // With -p every word is the prompt: `mewcode -p tools` asks about tools.
  if (flag("print")) return { kind: "prompt", prompt: joinPrompt(positionals), headless };
  const [name, ...rest] = positionals;
  switch (name) {
    case undefined:
      return { kind: "prompt", prompt: null, headless };
    case "help":
      expectArguments("help", rest, 0);
      return { kind: "help" };
    case "version":
      expectArguments("version", rest, 0);
      return { kind: "version" };
    case "tools":
      expectArguments("tools", rest, 0);
      return { kind: "tools", json: flag("json") };
    case "tool": {
      expectArguments("tool NAME 'JSON-INPUT'", rest, 2);
      const [toolName = "", input = ""] = rest;
      return { kind: "tool", name: toolName, input };
    }
    case "doctor":
      expectArguments("doctor", rest, 0);
      return { kind: "doctor" };
    case "sessions":
      expectArguments("sessions", rest, 0);
      return { kind: "sessions", json: flag("json") };
    case "permissions":
      return parsePermissions(rest, flag);
    case "trust":
      expectArguments("trust [--revoke]", rest, 0);
      return { kind: "trust", revoke: flag("revoke") };
    case "completions": {
      expectArguments("completions bash|zsh|fish", rest, 1);
      const shell = rest[0] ?? "";
      if (shell !== "bash" && shell !== "zsh" && shell !== "fish") {
        throw new UsageError(`Unknown shell "${shell}": use mewcode completions bash, zsh or fish`);
      }
      return { kind: "completions", shell };
    }
    default: {
      // One word close to a command is a typo, not a prompt: `mewcode tols`.
      const close = rest.length === 0 && /^[a-z]+$/.test(name) ? closest(name, COMMAND_WORDS) : null;
      if (close !== null) {
        throw new UsageError(
          `Unknown command "${name}"; did you mean "${close}"? To send it as a prompt: mewcode -p "${name}"`,
        );
      }
      return { kind: "prompt", prompt: joinPrompt(positionals), headless };
    }
  }
}

const COMMAND_WORDS = [
  ...new Set(
    COMMANDS.map((command) => command.name.split(" ")[0] ?? "").filter((word) => /^[a-z]+$/.test(word)),
  ),
];

function parsePermissions(rest: string[], flag: (name: string) => boolean): CliCommand {
  const [sub, ...args] = rest;
  if (sub === undefined) return { kind: "permissions", json: flag("json") };
  const usage = "permissions test 'Tool(specifier)' | permissions test TOOL 'JSON-INPUT'";
  if (sub !== "test") throw new UsageError(`Unknown permissions command "${sub}": usage: mewcode ${usage}`);
  const [target, input, ...extra] = args;
  if (target === undefined) throw new UsageError(`Missing arguments: usage: mewcode ${usage}`);
  if (extra.length > 0) expectArguments(usage, args, 2);
  return { kind: "permissions-test", target, input: input ?? null };
}

/** Words of a prompt, joined; null when there are none. */
function joinPrompt(words: string[]): string | null {
  return words.length === 0 ? null : words.join(" ");
}

function rejectConflicts(flag: (name: string) => boolean, pairs: readonly [string, string][]): void {
  for (const [first, second] of pairs) {
    if (flag(first) && flag(second)) {
      throw new UsageError(`--${first} and --${second} cannot be used together`);
    }
  }
}

function requireCommand(
  flag: (name: string) => boolean,
  command: CliCommand,
  option: string,
  commands: readonly CliCommand["kind"][],
): void {
  if (!flag(option) || commands.includes(command.kind)) return;
  const only = `--${option} only applies to: ${commands.map((name) => `mewcode ${name}`).join(", ")}`;
  throw new UsageError(
    command.kind === "permissions-test"
      ? `${only}; mewcode permissions test prints text, whose "Decision:" line says allow, ask or deny`
      : only,
  );
}

/** Options of a prompt's run only: with a command they would do nothing (`mewcode sessions --output-format json`). */
const PROMPT_ONLY_OPTIONS = ["output-format", "include-partial-messages", "json-schema", "wait-for-stdin"];

function requirePrompt(flag: (name: string) => boolean, command: CliCommand): void {
  // `--help` and `--version` answer whatever else the line holds.
  if (command.kind === "prompt" || command.kind === "help" || command.kind === "version") return;
  const given = PROMPT_ONLY_OPTIONS.find((name) => flag(name));
  if (given === undefined) return;
  const listing = command.kind === "tools" || command.kind === "sessions" || command.kind === "permissions";
  throw new UsageError(
    `--${given} only applies to a prompt (mewcode -p "…")` +
      (listing ? `; for JSON, use mewcode ${command.kind} --json` : ""),
  );
}

function expectArguments(usage: string, rest: string[], count: number): void {
  if (rest.length === count) return;
  throw new UsageError(
    rest.length < count
      ? `Missing arguments: usage: mewcode ${usage}`
      : `Too many arguments (${
        rest.map((value) => JSON.stringify(value)).join(" ")
      }): usage: mewcode ${usage}`,
  );
}

/**
 * One `--allowedTools` value may hold several rules, separated by commas or spaces outside parentheses:
 * `"ReadFile,Bash(npm test *)"` is two rules.
 */
export function splitRules(flag: string, value: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of value) {
    if (char === "(") depth += 1;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current !== "") rules.push(current);
      current = "";
      continue;
    }
    current += char;
  }
  if (depth !== 0) throw new UsageError(`Invalid ${flag} "${value}": a "(" is never closed`);
  if (current !== "") rules.push(current);
  if (rules.length === 0) throw new UsageError(`Invalid ${flag} "${value}": no rule given`);
  return rules;
}

function textOrFile(text: string | null, file: string | null): { text: string } | { file: string } | null {
  if (text !== null) return { text };
  if (file !== null) return { file };
  return null;
}

function nonEmpty(flag: string, value: string | null): string | null {
  if (value !== null && value.trim() === "") throw new UsageError(`Invalid ${flag}: the value is empty`);
  return value;
}

function sizeOption(flag: string, value: string | null): number | null {
  if (value === null) return null;
  const bytes = parseSize(value);
  if (bytes === null || bytes < 16 * 1024 * 1024) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a size of at least 16M, such as 512M or 4G`);
  }
  return bytes;
}

function positiveInteger(flag: string, value: string | null): number | null {
  if (value === null) return null;
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a positive integer`);
  }
  return Number(value);
}

function dollars(flag: string, value: string | null): number | null {
  if (value === null) return null;
  const amount = Number(value);
  if (!/^[0-9]*\.?[0-9]+$/.test(value) || !(amount > 0) || !Number.isFinite(amount)) {
    throw new UsageError(
      `Invalid ${flag} "${value}": expected an amount of US dollars above 0, such as 0.50`,
    );
  }
  return amount;
}
