/**
 * `mewcode permissions` (the effective rules and where each comes from), `mewcode permissions test`
 * (the decision for one call and what decided it) and `mewcode trust [--revoke]` (what this workspace's
 * own settings would enable, and recording or withdrawing the trust).
 *
 * @module
 */
import { realPathOrNull } from "../common/fs.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import type { IgnoredItem } from "../config/repository_screen.ts";
import type { SourcedDirectory } from "../config/settings.ts";
import { describeTrust, revokeTrust, trustWorkspace } from "../config/trust.ts";
import { describeRules } from "../permissions/explain.ts";
import { formatRule } from "../permissions/rules.ts";
import { explainPermission, type PermissionQuery } from "../session/permission_report.ts";
import { describeProtectedPaths, listProtectedPaths } from "../tools/protected_paths_text.ts";
import type { Workspace } from "../session/workspace.ts";
import { type CliCommand, type CliOptions, UsageError } from "./args.ts";
import { sanitizeLines, terminalSafeJson } from "./_terminal_text.ts";
import { EXIT } from "./exit_codes.ts";
import { sessionSetup } from "./session_options.ts";
import { parseToolInput } from "./tool_command.ts";

/** What the commands need; the environment, stdin and the writers are injectable for tests. */
export interface PermissionsCommandInput {
  workspace: Workspace;
  options: CliOptions;
  command: Extract<CliCommand, { kind: "permissions" | "permissions-test" | "trust" }>;
  env?: Record<string, string>;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Asks the user a yes/no question on the terminal; null when no one is at one. Default: the process's. */
  confirm?: Confirm | null;
  /** Aborted by an interrupting signal (Ctrl-C): a question it ends gets no answer. */
  signal?: AbortSignal;
}

/** A yes/no question's answer: null when it was interrupted (Ctrl-C) before one was given. */
export type Confirm = (question: string) => boolean | null | Promise<boolean | null>;

/** Runs `permissions`, `permissions test` or `trust`; returns the exit status. */
export async function runPermissionsCommand(input: PermissionsCommandInput): Promise<number> {
  const env = input.env ?? Deno.env.toObject();
  const { command } = input;
  // Rules and paths come from the repository's settings: shown on the terminal, never obeyed (JSON escapes).
  const json = command.kind === "permissions" && command.json;
  const write = input.stdout ?? ((text: string) => console.log(text));
  const writeError = input.stderr ?? ((text: string) => console.error(text));
  const out = (text: string) => write(json ? terminalSafeJson(text) : sanitizeLines(text));
  const err = (text: string) => writeError(sanitizeLines(text));
  switch (command.kind) {
    case "permissions":
      return await listPermissions(input, env, { out, err, json: command.json });
    case "permissions-test":
      return await testPermission(input, env, { out, err }, command);
    case "trust":
      return await trust(input, env, { out, err, revoke: command.revoke });
  }
}

interface Writers {
  out: (text: string) => void;
  err: (text: string) => void;
}

async function listPermissions(
  input: PermissionsCommandInput,
  env: Record<string, string>,
  writers: Writers & { json: boolean },
): Promise<number> {
  const { options, notices, settings } = await sessionSetup(input.workspace, input.options, env);
  const rules = options.rules ?? [];
  const mode = settings.defaultMode;
  if (writers.json) {
    writers.out(JSON.stringify(
      {
        schema_version: 1,
        workspace: input.workspace.root,
        permission_mode: {
          value: options.permissionMode,
          source: mode?.source ?? "default",
          path: mode?.path ?? null,
        },
        rules: rules.map((rule) => ({
          action: rule.action,
          rule: formatRule(rule),
          source: rule.source.layer,
          path: rule.source.path ?? null,
        })),
        additional_directories: options.additionalDirectories ?? [],
        trusted: settings.trusted,
        trust_status: settings.trustStatus,
        not_applied: settings.ignored.map(ignoredJson),
        warnings: notices,
        protected_paths: listProtectedPaths().map(({ path, anyDepth }) => ({ path, any_depth: anyDepth })),
      },
      null,
      2,
    ));
    return EXIT.ok;
  }
  const modeOrigin = mode === null
    ? "the default"
    : mode.path === null
    ? "the command line"
    : `"${mode.path}"`;
  const lines = [
    `Workspace: ${input.workspace.root} (${trustLine(settings.trusted, settings.trustStatus)})`,
    `Permission mode: ${options.permissionMode} (from ${modeOrigin})`,
    ...describeRules(rules),
  ];
  const directories = settings.additionalDirectories;
  if (directories.length > 0) {
    lines.push("Added directories:", ...await Promise.all(directories.map(directoryLine)));
  }
  lines.push(
    `Always asked about, in every mode, unless a rule names them: writes to ${describeProtectedPaths()}, and ` +
      "the git metadata and hook folders this workspace's layout names (mewcode permissions test shows " +
      "the decision for one)",
  );
  writers.out(lines.join("\n"));
  for (const notice of notices) writers.err(`mewcode: warning: ${notice}`);
  return EXIT.ok;
}

async function testPermission(
  input: PermissionsCommandInput,
  env: Record<string, string>,
  writers: Writers,
  command: Extract<CliCommand, { kind: "permissions-test" }>,
): Promise<number> {
  const { options, notices } = await sessionSetup(input.workspace, input.options, env);
  for (const notice of notices) writers.err(`mewcode: warning: ${notice}`);
  const query: PermissionQuery = command.input === null
    ? { text: command.target }
    : { tool: command.target, input: parseToolInput(command.input) };
  const explained = await explainPermission(options, query);
  if (!explained.ok) throw new UsageError(explained.error);
  writers.out(explained.value.join("\n"));
  return EXIT.ok;
}

async function trust(
  input: PermissionsCommandInput,
  env: Record<string, string>,
  writers: Writers & { revoke: boolean },
): Promise<number> {
  const home = resolveMewcodeHome(env);
  const root = input.workspace.root;
  if (writers.revoke) {
    const revoked = await revokeTrust({ home, root });
    if (!revoked.ok) {
      writers.err(`mewcode: ${revoked.error}`);
      return EXIT.error;
    }
    writers.out(
      revoked.existed
        ? `No longer trusted: "${root}": its settings files may only tighten again`
        : `"${root}" was not trusted; nothing changed`,
    );
    return EXIT.ok;
  }
  const description = await describeTrust({ home, root });
  const lines = [`Workspace: ${root} (${trustLine(false, description.status)})`];
  if (description.files.length === 0) {
    lines.push(
      "It has no settings files (.mewcode/settings.json, .mewcode/settings.local.json): nothing to trust.",
    );
    writers.out(lines.join("\n"));
    return EXIT.ok;
  }
  lines.push(`Settings files: ${description.files.join(", ")}`);
  lines.push(
    description.enables.length === 0
      ? "Trusting it enables nothing more: its settings only tighten."
      : "Trusting it enables:",
    ...description.enables.map((item) => `  ${item.item}  (${item.path})`),
  );
  if (description.neverApplied.length > 0) {
    lines.push(
      "Never applied, even when trusted:",
      ...description.neverApplied.map((item) => `  ${item.item}`),
    );
  }
  lines.push(
    "Hooks from a trusted workspace run inside the shell sandbox (workspace-write, no network) unless your " +
      "own settings say otherwise.",
  );
  writers.out(lines.join("\n"));
  for (const warning of description.warnings) writers.err(`mewcode: warning: ${warning.message}`);
  const confirm = input.confirm === undefined ? terminalConfirm(input.signal) : input.confirm;
  const answer = confirm === null
    ? true
    : await confirm(sanitizeLines(`Trust "${root}" with exactly these settings? [y/N] `));
  if (answer === null) {
    // Not an answer: nothing is recorded, and nothing says so as if the user had declined.
    writers.err("mewcode: interrupted before an answer: the trust was not changed");
    return EXIT.interrupted;
  }
  if (!answer) {
    writers.out("Not trusted.");
    return EXIT.ok;
  }
  const recorded = await trustWorkspace({ home, root, fingerprint: description.fingerprint });
  if (!recorded.ok) {
    writers.err(`mewcode: ${recorded.error}`);
    return EXIT.error;
  }
  writers.out(
    "Trusted. A change to these files, to the scripts they run or to where their added directories lead " +
      "needs trust again; mewcode trust --revoke withdraws it.",
  );
  return EXIT.ok;
}

/**
 * An added directory: the path used, where it leads when that differs (a symbolic link), and the path as
 * its settings file wrote it when that differs (a repository's is used by the real path its trust covers).
 */
async function directoryLine(directory: SourcedDirectory): Promise<string> {
  const real = await realPathOrNull(directory.value);
  const leads = real === null || real === directory.value ? "" : ` -> ${real}`;
  const named = directory.path === null || directory.named === directory.value
    ? ""
    : `  (${JSON.stringify(directory.named)} in "${directory.path}")`;
  return `  ${directory.value}${leads}${named}`;
}

/** A yes/no question on the terminal, or null when stdin or stdout is not one (a script asked: it is done). */
function terminalConfirm(signal: AbortSignal | undefined): Confirm | null {
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) return null;
  return async (question) => {
    await writeTerminal(question);
    const line = await readTerminalLine(signal);
    // At Ctrl-C or Ctrl-D the terminal leaves the cursor after the question.
    if (line === null || line.eof) await writeTerminal("\n");
    if (line === null) return null;
    return !line.eof && /^y(es)?$/i.test(line.text.trim());
  };
}

/**
 * One line typed at the terminal, read in its own line mode: null when a signal interrupted the question
 * (Ctrl-C is a SIGINT there, which main.ts's listener turns into `signal`); `eof` at Ctrl-D. Deno's
 * `prompt()` is no use here: it returns null for Ctrl-C, Ctrl-D and Esc alike.
 */
async function readTerminalLine(
  signal: AbortSignal | undefined,
): Promise<{ text: string; eof: boolean } | null> {
  if (signal?.aborted) return null;
  const interrupted = new Promise<null>((resolve) => signal?.addEventListener("abort", () => resolve(null)));
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(1024);
  let text = "";
  while (!text.includes("\n") && text.length < 4096) {
    // A read the signal overtakes is left pending: the process exits right after.
    const count = await Promise.race([Deno.stdin.read(buffer), interrupted]);
    if (signal?.aborted) return null;
    if (count === null) return { text: text + decoder.decode(), eof: true };
    text += decoder.decode(buffer.subarray(0, count), { stream: true });
  }
  return { text: text.split("\n")[0]!, eof: false };
}

async function writeTerminal(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

function trustLine(trusted: boolean, status: string): string {
  if (trusted && status !== "trusted") return "trusted for this run";
  switch (status) {
    case "trusted":
      return "trusted";
    case "changed":
      return "its settings changed since you trusted them: run mewcode trust to review them";
    default:
      return "not trusted: its own settings may only tighten";
  }
}

function ignoredJson(item: IgnoredItem): Record<string, unknown> {
  return { item: item.item, reason: item.reason, kind: item.kind, source: item.source, path: item.path };
}
