/**
 * What the command line says about a session, shared by every command that opens one.
 *
 * @module
 */
import type { SessionOptions } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import type { CliOptions } from "./args.ts";

/** The session options the flags decide; commands add their approver and other specifics. */
export function sessionOptionsFrom(
  workspace: Workspace,
  options: CliOptions,
  env: Record<string, string>,
): SessionOptions {
  return {
    workspace,
    env,
    model: options.model,
    maxTokens: options.maxTokens,
    maxTurns: options.maxTurns,
    permissionMode: options.permissionMode,
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    limits: {
      ...(options.sandboxMaxProcesses === null ? {} : { maxProcesses: options.sandboxMaxProcesses }),
      ...(options.sandboxMaxMemory === null ? {} : { maxMemoryBytes: options.sandboxMaxMemory }),
    },
  };
}
