/**
 * `mewcode tool NAME 'JSON'`: one call through the whole pipeline, the result as JSON on stdout.
 *
 * @module
 */
import type { CallOutcome } from "../agent/events.ts";
import { APPROVE_ALL } from "../permissions/decision.ts";
import { openSession } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import type { CliOptions } from "./args.ts";
import { sessionSetup } from "./session_options.ts";
import { sanitizeLines, terminalSafeJson } from "./_terminal_text.ts";
import { checkJsonBounds } from "../common/json_bounds.ts";
import { UsageError } from "./args.ts";

/** The JSON printed by `mewcode tool`. */
export interface ToolCommandOutput {
  content: string;
  is_error: boolean;
  /** How the call ended and at which gate (and, for a denial, why and who decided). */
  outcome: CallOutcome;
  metadata: Record<string, unknown>;
}

/** The output as `mewcode tool` prints it: indented JSON, nothing in it a terminal would act on. */
export function toolOutputText(output: ToolCommandOutput): string {
  return terminalSafeJson(JSON.stringify(output, null, 2));
}

/** Parses the JSON input argument; malformed JSON is a usage error (exit 2). */
export function parseToolInput(text: string): unknown {
  const bounds = checkJsonBounds(text);
  if (bounds !== null) throw new UsageError(`Cannot use the tool input: ${bounds}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `Cannot parse the tool input as JSON: ${reason}: pass one JSON object, e.g. '{"path": "/abs/file"}'`,
    );
  }
}

/** Runs one call in a session of its own and returns what to print and the exit status (0 success, 1 error). */
export async function runToolCommand(
  workspace: Workspace,
  cli: CliOptions,
  call: { name: string; input: unknown },
  options: { signal: AbortSignal },
): Promise<{ output: ToolCommandOutput; exitCode: 0 | 1 }> {
  const env = Deno.env.toObject();
  const setup = await sessionSetup(workspace, cli, env);
  for (const notice of setup.notices) console.error(sanitizeLines(`mewcode: warning: ${notice}`));
  await using session = await openSession({
    ...setup.options,
    persist: false,
    // The user typed this call: "ask" counts as approved; deny rules and the sandbox still apply.
    approver: APPROVE_ALL,
    // ...and the user is the authority on the files they name: no "read it first" for their writes, and
    // they may write protected paths by naming them (the shell still sees them read-only).
    requireRead: false,
    protectedPaths: [],
  });
  const { result, outcome } = await session.runTool({ id: `cli_${crypto.randomUUID()}`, ...call }, options);
  return {
    output: { content: result.content, is_error: result.isError, outcome, metadata: result.metadata },
    exitCode: result.isError ? 1 : 0,
  };
}
