/**
 * An Approver that asks a command (`--approval-command CMD` or `permissions.approvalCommand`): each "ask"
 * goes to the command as JSON on its standard input,
 *
 * ```json
 * {"tool": "Bash", "input": {"command": "npm test"}, "reason": "…", "tool_use_id": "…", "session_id": "…", "cwd": "/w"}
 * ```
 *
 * and the command prints `{"decision": "allow" | "deny", "reason": "…"}`: its answer is the user's. It fails
 * closed: a timeout, a command that cannot start, a non-zero exit or any other output denies the call, as a
 * failure of the command (no one's choice), saying what it printed and what was expected.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { checkJsonBounds } from "../common/json_bounds.ts";
import { CommandScriptsBaseline } from "../config/command_scripts.ts";
import { isRecord } from "../common/values.ts";
import type { Approval, Approver, PermissionRequest } from "./decision.ts";
import { type ProcessResult, runHostCommand } from "./host_command.ts";

/** Seconds the approval command may take by default. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60_000;

/** Runs the approval command with its input: as the user by default; a sandboxed runner fits too. */
export type ApprovalCommandRunner = (
  command: string,
  options: { stdin: string; timeoutMs: number },
) => Promise<ProcessResult>;

/** How the approval command runs. */
export interface ApprovalCommandOptions {
  command: string;
  /** Real path of the workspace root: the command's working directory and the `cwd` it is told. */
  cwd: string;
  /** The environment of the command (when run as the user). */
  env: Readonly<Record<string, string>>;
  /** The session's id, read at each question. */
  sessionId: () => string;
  /** Default DEFAULT_APPROVAL_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Default: `/bin/sh -c` as the user (runHostCommand). */
  run?: ApprovalCommandRunner;
}

const MAX_SHOWN = 300;

/** An Approver that runs `options.command` for each question and denies unless it answers "allow". */
export function approvalCommandApprover(options: ApprovalCommandOptions): Approver {
  const timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  const run: ApprovalCommandRunner = options.run ??
    ((command, runOptions) => runHostCommand(command, { ...runOptions, cwd: options.cwd, env: options.env }));
  // Taken now, as the session starts: a script the model changed since then never decides its calls.
  const scripts = new CommandScriptsBaseline(options.cwd, [options.command]);
  return {
    async approve(request: PermissionRequest, reason: string): Promise<Approval> {
      const changed = await scripts.changed(options.command);
      if (changed !== null) {
        return readAnswer({ status: "failed", message: changed }, { command: options.command, timeoutMs });
      }
      const stdin = JSON.stringify({
        tool: request.tool.name,
        input: request.input,
        reason,
        tool_use_id: request.callId,
        session_id: options.sessionId(),
        cwd: options.cwd,
      });
      const result = await run(options.command, { stdin, timeoutMs });
      return readAnswer(result, { command: options.command, timeoutMs });
    },
  };
}

/**
 * The approval in a command's result: its decision, or a failure (no decision to read) that says what went
 * wrong; the pipeline denies the call either way but for "allow".
 */
function readAnswer(result: ProcessResult, context: { command: string; timeoutMs: number }): Approval {
  const who = `the approval command ${JSON.stringify(shorten(context.command))}`;
  const deny = (why: string): Approval => ({
    approved: false,
    failure: {
      message: `${who} ${why}`,
      decidedBy: { kind: "approval-command", command: shorten(context.command) },
    },
  });
  switch (result.status) {
    case "failed":
      return deny(`could not run (${result.message})`);
    case "timed-out":
      return deny(`did not answer within ${context.timeoutMs / 1000} s`);
    case "exited":
      break;
    default:
      return assertNever(result);
  }
  if (result.code !== 0) {
    const stderr = result.stderr.trim();
    // A shell reports a process killed by signal N as 128 + N (SIGSEGV: 139).
    const crashed = result.code > 128 && result.code < 160 ? `, killed by signal ${result.code - 128}` : "";
    return deny(`exited with code ${result.code}${crashed}${stderr === "" ? "" : ` (${shorten(stderr)})`}`);
  }
  const text = result.stdout.trim();
  const expected = 'expected {"decision": "allow" | "deny", "reason": "…"}';
  let value: unknown = null;
  if (checkJsonBounds(text) === null) {
    try {
      value = JSON.parse(text);
    } catch {
      value = null;
    }
  }
  if (!isRecord(value) || (value.decision !== "allow" && value.decision !== "deny")) {
    const shown = text === "" ? "nothing" : JSON.stringify(shorten(text));
    return deny(`printed ${shown}, which is not a decision (${expected})`);
  }
  const reason = typeof value.reason === "string" ? value.reason.trim() : "";
  if (value.decision === "allow") return { approved: true };
  return { approved: false, feedback: reason === "" ? `${who} denied the call` : reason };
}

function shorten(text: string): string {
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}
