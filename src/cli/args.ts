/**
 * Command-line parsing: argv in, a validated CliOptions or a usage error out.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PERMISSION_MODES, type PermissionMode } from "../permissions/modes.ts";
import { parseSize } from "../common/size.ts";
import { DEFAULT_MAX_PROCESSES, type SandboxMode } from "../session/session.ts";

/** The shell sandbox modes. */
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;

/** The model used when `--model` is not given. */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
/** The response token limit used when `--max-tokens` is not given. */
export const DEFAULT_MAX_TOKENS = 16_000;

/** What the user asked mewcode to do. */
export type CliCommand =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "tools"; json: boolean }
  | { kind: "tool"; name: string; input: string }
  | { kind: "doctor" }
  | { kind: "print"; prompt: string | null };

/** Everything argv says, validated. */
export interface CliOptions {
  command: CliCommand;
  /** The workspace root as given (`-C`), or null for the current directory. */
  cd: string | null;
  readOnly: boolean;
  sandbox: SandboxMode;
  sandboxNetwork: boolean;
  strictLinks: boolean;
  model: string;
  maxTokens: number;
  maxTurns: number | null;
  permissionMode: PermissionMode;
  verbose: boolean;
  /** `--sandbox-max-processes`, or null for the default. */
  sandboxMaxProcesses: number | null;
  /** `--sandbox-max-memory` in bytes, or null for the default. */
  sandboxMaxMemory: number | null;
}

/** A usage error: main prints it with a hint and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The text of `mewcode --help`. */
export const HELP = `mewcode — a terminal coding agent whose tools run inside a runtime-enforced sandbox

Usage:
  mewcode -p "PROMPT" [options]     run one prompt to completion and print the answer
  mewcode tools [--json]            list the enabled tools (--json: the exact API "tools" array)
  mewcode tool NAME 'JSON-INPUT'    run one tool call through the whole pipeline, print the result as JSON
  mewcode doctor                    check Deno, the sandbox backend and the workspace
  mewcode --version | --help

Options:
  -p, --print                  one-shot mode: the prompt is the argument (or standard input when absent)
  -C, --cd DIR                 workspace root (default: the current directory)
      --read-only              offer no WriteFile, EditFile or Bash
      --sandbox MODE           shell sandbox: read-only | workspace-write (default) | danger-full-access
      --sandbox-network        let the sandboxed shell use the network
      --sandbox-max-processes N  processes a shell command may run at once (default: ${DEFAULT_MAX_PROCESSES})
      --sandbox-max-memory SIZE  memory a shell command may use, e.g. 2G (default: half the RAM, at most 8G)
      --strict-links           refuse to read files that have more than one hard link
      --permission-mode MODE   default | acceptEdits | plan | bypassPermissions
      --model NAME             model (default: ${DEFAULT_MODEL})
      --max-tokens N           response token limit per request (default: ${DEFAULT_MAX_TOKENS})
      --max-turns N            stop after N model requests (exit 53)
  -v, --verbose                print tool calls and retries on standard error
      --json                   with "tools": print JSON

Environment:
  ANTHROPIC_API_KEY            API key (required for -p)
  ANTHROPIC_BASE_URL           API endpoint (proxies, tests)
  MEWCODE_HOME                 state directory (default: ~/.mewcode)

Exit status: 0 success; 1 tool error or API/runtime error; 2 usage error; 53 --max-turns reached;
130 interrupted (Ctrl-C).`;

/** Parses argv (without the program name). Throws UsageError for anything malformed. */
export function parseCli(argv: readonly string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
        print: { type: "boolean", short: "p" },
        cd: { type: "string", short: "C" },
        "read-only": { type: "boolean" },
        sandbox: { type: "string" },
        "sandbox-network": { type: "boolean" },
        "sandbox-max-processes": { type: "string" },
        "sandbox-max-memory": { type: "string" },
        "strict-links": { type: "boolean" },
        "permission-mode": { type: "string" },
        model: { type: "string" },
        "max-tokens": { type: "string" },
        "max-turns": { type: "string" },
        verbose: { type: "boolean", short: "v" },
        json: { type: "boolean" },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const sandbox = values.sandbox ?? "workspace-write";
  if (!(SANDBOX_MODES as readonly string[]).includes(sandbox)) {
    throw new UsageError(`Invalid --sandbox "${sandbox}": use one of ${SANDBOX_MODES.join(", ")}`);
  }
  const permissionMode = values["permission-mode"] ?? "default";
  if (!(PERMISSION_MODES as readonly string[]).includes(permissionMode)) {
    throw new UsageError(
      `Invalid --permission-mode "${permissionMode}": use one of ${PERMISSION_MODES.join(", ")}`,
    );
  }
  if (values.cd !== undefined && values.cd.trim() === "") {
    throw new UsageError("Invalid -C/--cd: the path is empty");
  }
  return {
    command: parseCommand(values, positionals),
    cd: values.cd ?? null,
    readOnly: values["read-only"] ?? false,
    sandbox: sandbox as SandboxMode,
    sandboxNetwork: values["sandbox-network"] ?? false,
    strictLinks: values["strict-links"] ?? false,
    model: values.model ?? DEFAULT_MODEL,
    maxTokens: positiveInteger("--max-tokens", values["max-tokens"]) ?? DEFAULT_MAX_TOKENS,
    maxTurns: positiveInteger("--max-turns", values["max-turns"]),
    permissionMode: permissionMode as PermissionMode,
    verbose: values.verbose ?? false,
    sandboxMaxProcesses: positiveInteger("--sandbox-max-processes", values["sandbox-max-processes"]),
    sandboxMaxMemory: sizeOption("--sandbox-max-memory", values["sandbox-max-memory"]),
  };
}

function parseCommand(
  values: { help?: boolean; version?: boolean; print?: boolean; json?: boolean },
  positionals: string[],
): CliCommand {
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  if (values.print) return { kind: "print", prompt: positionals.length ? positionals.join(" ") : null };
  const [name, ...rest] = positionals;
  switch (name) {
    case undefined:
      throw new UsageError('Missing a command: use -p "PROMPT", tools, tool, doctor or --help');
    case "tools":
      expectArguments("tools", rest, 0);
      return { kind: "tools", json: values.json ?? false };
    case "tool": {
      expectArguments("tool NAME 'JSON-INPUT'", rest, 2);
      const [toolName = "", input = ""] = rest;
      return { kind: "tool", name: toolName, input };
    }
    case "doctor":
      expectArguments("doctor", rest, 0);
      return { kind: "doctor" };
    default:
      throw new UsageError(`Unknown command "${name}": use -p "PROMPT", tools, tool, doctor or --help`);
  }
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

function sizeOption(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const bytes = parseSize(value);
  if (bytes === null || bytes < 16 * 1024 * 1024) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a size of at least 16M, such as 512M or 4G`);
  }
  return bytes;
}

function positiveInteger(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a positive integer`);
  }
  return Number(value);
}
