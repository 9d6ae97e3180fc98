/**
 * What opens a session's shell sandbox (`ShellSandbox.open`, shell_sandbox.ts) and what one call's plan comes
 * with (`ShellSandbox.prepareCall`).
 *
 * @module
 */
import type { ProtectedPath, SandboxMode, ShellPlan } from "../tools/tool.ts";
import type { HelperPaths } from "./helpers.ts";
import type { ResourceLimits } from "./limits.ts";

/** How a session's shell sandbox is set up. */
export interface ShellSandboxOptions {
  /** Real path of the workspace root. */
  root: string;
  /**
   * Real paths of the folders added to the workspace (`--add-dir`): bound like it (read-write in
   * workspace-write), with the same protected paths and git metadata guard. Default none.
   */
  additionalRoots?: readonly string[];
  mode: SandboxMode;
  /** Let the sandboxed shell use the network (`--sandbox-network`). */
  network: boolean;
  /** The parent environment: PATH, HOME and the allowlisted variables are taken from it. */
  env: Readonly<Record<string, string>>;
  /** Variables the settings set for the tools (`env`): added to the shell's environment as they are. */
  extraEnv?: Readonly<Record<string, string>>;
  limits: ResourceLimits;
  /** Real paths the tools treat as outside the workspace (mewcode's state folder): hidden from the shell. */
  excluded: readonly string[];
  /** The workspace's protected paths (PROTECTED_PATHS): read-only for the shell. */
  protectedPaths: readonly ProtectedPath[];
  /** Default: resolved from the system directories and PATH. Tests inject missing helpers. */
  helpers?: HelperPaths;
  /**
   * Where what a call made of a path that was to stay missing is set aside (`_set_aside.ts`), in mewcode's
   * state folder; default none: it is removed.
   */
  setAsideIn?: string;
  /** Where the kept sandbox's private folder is made; default the system's temporary folder (tests inject). */
  keptFilesIn?: string;
  /** Time limit of the start-up check in milliseconds; default 10000. */
  preflightTimeoutMs?: number;
  /** Default: the running architecture's filter. Tests pass null to see the sandbox refuse to start. */
  seccomp?: Uint8Array | null;
  /**
   * Run the start-up check when it is first needed rather than in `open` (see the module doc); default
   * false. Only the bubblewrap modes defer it; danger-full-access needs it to choose its wrapper.
   */
  deferPreflight?: boolean;
}

/** The plan of one call, and what to do once it has ended. */
export interface ShellCall {
  plan: ShellPlan;
  /**
   * Undoes the call's placeholders (unless it ran in the sandbox kept across calls, which keeps them
   * mounted) and checks what it must not leave behind; returns notes for the model.
   */
  finish(ran?: { keptSandbox: boolean }): Promise<string[]>;
}
