/**
 * Permission profiles: the Deno permissions of a tool's worker, derived from the tool's metadata and never
 * written per tool.
 *
 *   read-only (ReadFile, Glob, Grep)     read: [root, ...added]                     everything else false
 *   writer (WriteFile, EditFile)         read: [root, ...added],
 *                                        write: [root, ...added]                    everything else false
 *   shell (destructive: Bash)            run: [the program Bash spawns: "sh", which   everything else false
 *                                        becomes bwrap, for a kept sandbox; "bwrap";
 *                                        or the shell itself in danger-full-access]
 *
 * `added` are the folders added to the workspace (`--add-dir`), granted exactly like the root.
 *
 * Every key is spelled out (an omitted key is denied today, but the intent must not depend on a default),
 * and no key is ever `"inherit"` or `true`.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { ShellPlan } from "../tools/tool.ts";
import { PERMISSION_NAMES, type PermissionName } from "../tools/worker_protocol.ts";

/** The class of a tool as far as its sandbox is concerned. */
export type ProfileKind = "read-only" | "writer" | "shell";

/** A `Deno.PermissionOptionsObject` with every key present and nothing inherited or fully granted. */
export interface WorkerPermissions {
  env: false;
  net: false;
  sys: false;
  ffi: false;
  import: false;
  read: false | string[];
  write: false | string[];
  run: false | string[];
}

/** The permissions of one class of workers; workers are pooled by `key`. */
export interface PermissionProfile {
  kind: ProfileKind;
  /** Identifies the profile: equal keys mean equal permissions. */
  key: string;
  permissions: WorkerPermissions;
}

/** The part of a tool the profile is derived from. */
export interface ToolAccess {
  readonly name: string;
  isReadOnly(): boolean;
  isDestructive(): boolean;
}

/** The class of a tool: read-only, non-destructive writer, or destructive (the shell). */
export function profileKind(tool: ToolAccess): ProfileKind {
  if (tool.isReadOnly()) return "read-only";
  return tool.isDestructive() ? "shell" : "writer";
}

/** What a profile is derived from besides the tool. */
export interface ProfileOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`); default none. */
  additionalRoots?: readonly string[] | undefined;
  /** The session's shell plan, which says which program the shell tool spawns. */
  shell: ShellPlan;
}

/** The narrowest permissions a tool's worker needs. */
export function profileFor(tool: ToolAccess, options: ProfileOptions): PermissionProfile {
  const kind = profileKind(tool);
  const roots = [options.root, ...options.additionalRoots ?? []];
  const none: WorkerPermissions = {
    env: false,
    net: false,
    sys: false,
    ffi: false,
    import: false,
    read: false,
    write: false,
    run: false,
  };
  switch (kind) {
    case "read-only":
      return makeProfile(kind, { ...none, read: [...roots] });
    case "writer":
      return makeProfile(kind, { ...none, read: [...roots], write: [...roots] });
    case "shell": {
      const program = shellProgram(options.shell);
      return makeProfile(kind, { ...none, run: program === null ? false : [program] });
    }
    default:
      return assertNever(kind);
  }
}

/**
 * The program the shell tool spawns under this plan: the launcher (`sh`, which becomes bubblewrap) of a
 * sandbox kept across calls, else the wrapper (bubblewrap) when there is one, else the shell itself; null
 * when the plan says the shell cannot run (then the worker needs no `run` at all). All are absolute paths
 * resolved once from the system directories (src/sandbox/helpers.ts), so the grant names exactly one
 * file, whatever PATH says.
 */
export function shellProgram(plan: ShellPlan): string | null {
  if (plan.unavailable !== null) return null;
  return plan.persistent?.launcher ?? plan.wrapper[0] ?? plan.shell;
}

/** The distinct profiles of a set of tools, in first-seen order: what the pool prewarms. */
export function profilesForTools(
  tools: readonly ToolAccess[],
  options: ProfileOptions,
): PermissionProfile[] {
  const profiles = new Map<string, PermissionProfile>();
  for (const tool of tools) {
    const profile = profileFor(tool, options);
    if (!profiles.has(profile.key)) profiles.set(profile.key, profile);
  }
  return [...profiles.values()];
}

/**
 * Checks what a worker reports about itself against its profile: no permission may be fully granted,
 * since no profile grants anything without a list. Returns the names that are broader than the profile.
 */
export function broaderPermissions(
  states: Readonly<Record<PermissionName, Deno.PermissionState>>,
): PermissionName[] {
  return PERMISSION_NAMES.filter((name) => states[name] === "granted");
}

function makeProfile(kind: ProfileKind, permissions: WorkerPermissions): PermissionProfile {
  const key = `${kind} ${
    PERMISSION_NAMES.map((name) => `${name}=${JSON.stringify(permissions[name])}`).join(" ")
  }`;
  return { kind, key, permissions };
}
