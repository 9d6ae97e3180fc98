/**
 * What the command line says about the tool runtime, shared by every command that runs tools.
 *
 * @module
 */
import type { RuntimeOptions } from "../execution/runtime.ts";
import { policyForMode } from "../permissions/modes.ts";
import type { CliOptions } from "./args.ts";

/** The runtime options the flags decide; callers add their approver and other specifics. */
export function runtimeOptionsFrom(
  root: string,
  options: CliOptions,
  env: Record<string, string>,
): RuntimeOptions {
  return {
    root,
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    policy: policyForMode(options.permissionMode),
    env,
  };
}
