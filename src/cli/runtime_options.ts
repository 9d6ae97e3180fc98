/**
 * What the command line says about the tool runtime, shared by every command that runs tools.
 *
 * @module
 */
import { resolve } from "node:path";
import { resolveMewcodeHome } from "../config/home.ts";
import type { RuntimeOptions } from "../execution/runtime.ts";
import { policyForMode } from "../permissions/modes.ts";
import { defaultLimits } from "../sandbox/limits.ts";
import type { CliOptions } from "./args.ts";

/** The workspace as resolved at start: its real path, and the names the user gave it that differ. */
export interface Workspace {
  /** Real path of the root. */
  root: string;
  /** Other absolute names of the root (`-C link`, or a symlinked current directory), normalised. */
  aliases: string[];
}

/** The runtime options the flags decide; callers add their approver and other specifics. */
export async function runtimeOptionsFrom(
  workspace: Workspace,
  options: CliOptions,
  env: Record<string, string>,
): Promise<RuntimeOptions> {
  const defaults = defaultLimits();
  return {
    root: workspace.root,
    rootAliases: workspace.aliases,
    excludedPaths: await stateFolders(env),
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    policy: policyForMode(options.permissionMode),
    limits: {
      maxProcesses: options.sandboxMaxProcesses ?? defaults.maxProcesses,
      maxMemoryBytes: options.sandboxMaxMemory ?? defaults.maxMemoryBytes,
    },
    env,
  };
}

/**
 * mewcode's state folder (`$MEWCODE_HOME`, other sessions' transcripts), which the tools treat as outside
 * the workspace even when the workspace contains it: its real path, and the path as named when they differ.
 */
async function stateFolders(env: Record<string, string>): Promise<string[]> {
  let home: string;
  try {
    home = resolve(resolveMewcodeHome(env));
  } catch {
    return [];
  }
  try {
    const real = await Deno.realPath(home);
    return real === home ? [real] : [real, home];
  } catch {
    return [home];
  }
}
