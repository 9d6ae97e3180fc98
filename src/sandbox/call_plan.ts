/**
 * The plan of one shell call in the bubblewrap modes: the mounts (bubblewrap.ts) from the session's view of
 * the machine and the protected paths as they are at the call, and the launcher of the sandbox kept across
 * calls where the session has one. `ShellSandbox` (shell_sandbox.ts) decides when a plan is made and keeps
 * what the plans are made from; this module makes them.
 *
 * @module
 */
import type { ProtectedPath, SandboxMode, ShellPlan } from "../tools/tool.ts";
import {
  bubblewrapArguments,
  type BubblewrapOptions,
  isAtOrBelow,
  scratchFolders,
  SUPERVISOR_PATH,
} from "./bubblewrap.ts";
import { excessOf, fitMounts, isOver } from "./_argument_limit.ts";
import { planGitProtection, type UserGitConfig } from "./git_metadata.ts";
import type { HelperPaths } from "./helpers.ts";
import { lstatSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";
import { madeEntry } from "./_made_entries.ts";
import { EntryProbe } from "./_entry_probe.ts";
import type { ParsedConfigs } from "./_git_layout.ts";
import { plannedAtTop } from "./_nested_protected.ts";
import type { KeptSandboxFiles } from "./kept_sandbox.ts";
import type { LimitPlan } from "./limits.ts";
import { type MachineView, protectedTopLevel } from "./shell_policy.ts";
import { closeInheritedDescriptors } from "./shell_startup.ts";

/** The protected paths of one call, as they are when it is planned. */
export interface CallProtection {
  /** Directories bound writable onto themselves, so that none can be renamed away (see git_metadata.ts). */
  keepInPlace: string[];
  /** Existing protected files and directories, bound read-only onto themselves. */
  readOnly: string[];
  /**
   * Missing or empty protected directories, covered with an empty read-only tmpfs (bubblewrap creates a
   * missing mount point, so none has to exist when the sandbox starts).
   */
  placeholders: string[];
  /**
   * The placeholders this session makes: those missing when planned, and those its kept sandbox mounted.
   * These are removed after the call (when still empty); see `ownPlaceholders` for the others.
   */
  created: string[];
  /**
   * The placeholders that were empty folders when planned (the user's, or another session's), with their
   * identity (`folderIdentity`): one found replaced after the call was made by this call's sandbox (see
   * `ownPlaceholders`).
   */
  found: { path: string; identity: string }[];
  /** Missing files git would read if they appeared: removed after the call if they did. */
  mustNotAppear: string[];
  /**
   * Other missing protected paths no mount covers (`.mcp.json`, a hook's script, a nested home code folder):
   * removed after the call if they appeared.
   */
  mustNotBeMade: string[];
  /**
   * Credentials of a home in the workspace that are there now but were not when the session's view was taken
   * (the user made them meanwhile): hidden like those of the view.
   */
  hiddenNow: { path: string; kind: "file" | "directory" }[];
}

/** A call without protected paths (a mode that writes nothing, or a read-only command). */
export function noProtection(): CallProtection {
  return {
    keepInPlace: [],
    readOnly: [],
    placeholders: [],
    created: [],
    found: [],
    mustNotAppear: [],
    mustNotBeMade: [],
    hiddenNow: [],
  };
}

/**
 * The placeholders of a call that are this session's once its sandbox started: those it created, and those
 * found empty but gone and made again since (another session removed its own placeholder, and this call's
 * bubblewrap made the folder anew). An empty folder still the one found there stays: it is the user's, or
 * another session's.
 */
export function ownPlaceholders(protection: CallProtection): string[] {
  const remade = protection.found.filter(({ path, identity }) => isRemade(path, identity));
  return [...protection.created, ...remade.map(({ path }) => path)];
}

/** What the plans of a session's calls are made from. */
export interface CallPlanning {
  /** The session's plan as of its start: the shell, its environment, mode and network. */
  plan: ShellPlan;
  view: MachineView;
  helpers: HelperPaths;
  root: string;
  additionalRoots: readonly string[];
  mode: SandboxMode;
  network: boolean;
  limits: LimitPlan | null;
  seccomp: Uint8Array | null;
  /** The files of the sandbox kept across calls; null when each call gets a sandbox of its own. */
  kept: KeptSandboxFiles | null;
  /** Whether commands may create user namespaces (`BubblewrapOptions.userNamespaces`); default false. */
  userNamespaces?: boolean;
}

/**
 * What tells a folder from one made in its place later: its inode and its times (a freed inode number is
 * soon given to the next folder made, as ext4 does).
 */
export function folderIdentity(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}:${info.ctime?.getTime()}:${info.mtime?.getTime()}`;
}

/** Whether `path` is now a folder other than the one of `identity`. */
export function isRemade(path: string, identity: string): boolean {
  const info = lstatSyncOrNull(path);
  return info !== null && info.isDirectory && folderIdentity(info) !== identity;
}

/**
 * The protected paths of the roots as they are now, the same protection in each root. A placeholder that a
 * kept sandbox has mounted (`livePlaceholders`) is an empty folder on the host: like any empty protected
 * folder it plans as a placeholder (so the plan stays the same), and it stays this session's to remove.
 * Anything put in it makes it the user's.
 */
export async function protectionNow(
  options: {
    roots: readonly string[];
    /** The `.git` entries found below the roots by the scan before the first call. */
    dotGits: readonly string[];
    /**
     * The entries of the protected paths that apply at any depth (`web/.vscode`) the same scan found below
     * the roots: bound read-only where they still are. Default none.
     */
    nested?: readonly string[];
    protectedPaths: readonly ProtectedPath[];
    livePlaceholders: ReadonlySet<string>;
    /** The home's missing credentials, when a root holds the home (see `credentialPlaces`). */
    missingCredentials?: readonly { path: string; kind: "file" | "directory" }[];
    /** The home's credentials made since the session's view was taken (`CallProtection.hiddenNow`). */
    newCredentials?: readonly { path: string; kind: "file" | "directory" }[];
    /** The config the user's git reads besides a repository's (its `core.hooksPath` names hooks too). */
    user?: UserGitConfig;
    /** Config files parsed by the plans of earlier calls (`ParsedConfigs`); default none. */
    parsedConfigs?: ParsedConfigs;
  },
): Promise<CallProtection> {
  const keepInPlace: string[] = [];
  const readOnly: string[] = [];
  const placeholders: string[] = [];
  const mustNotAppear: string[] = [];
  const mustNotBeMade: string[] = [];
  const probe = new EntryProbe(options.roots);
  // Each plan covers only what lies in its own root.
  for (const root of options.roots) {
    const nestedDotGits = options.dotGits.filter((path) => isAtOrBelow(path, root));
    const git = await planGitProtection(root, {
      nestedDotGits,
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.parsedConfigs === undefined ? {} : { parsedConfigs: options.parsedConfigs }),
    });
    const topLevel = protectedTopLevel(root, options.protectedPaths, { probe });
    keepInPlace.push(...git.keepInPlace);
    readOnly.push(...git.readOnly, ...topLevel.readOnly);
    placeholders.push(...git.placeholders, ...topLevel.placeholders);
    mustNotAppear.push(...git.mustNotAppear);
    mustNotBeMade.push(...topLevel.mustNotBeMade);
  }
  readOnly.push(...nestedReadOnly(options.nested ?? [], options));
  for (const { path, kind } of options.missingCredentials ?? []) {
    (kind === "directory" ? placeholders : mustNotAppear).push(path);
  }
  const created: string[] = [];
  const found: CallProtection["found"] = [];
  for (const path of placeholders) {
    const info = options.livePlaceholders.has(path) ? null : probe.lstat(path);
    if (info === null) created.push(path);
    else found.push({ path, identity: folderIdentity(info) });
  }
  // With folders nested in one another, a mount must still never hide one made before it; and the same
  // paths must always give the same plan (a kept sandbox is reused only for an equal one).
  return {
    keepInPlace: shallowestFirst(keepInPlace),
    readOnly: shallowestFirst(readOnly),
    placeholders: shallowestFirst(placeholders),
    created: shallowestFirst(created),
    found,
    mustNotAppear: shallowestFirst(mustNotAppear),
    mustNotBeMade: shallowestFirst(mustNotBeMade),
    hiddenNow: [...options.newCredentials ?? []],
  };
}

/** The mode, network and filter of a command of mewcode's own, whatever the session's. */
export interface CommandOverride {
  mode: "read-only" | "workspace-write";
  network: boolean;
  seccomp: Uint8Array;
  /** Plan the sandbox kept across such commands too (`persistent`), where the session can keep one. */
  keep?: boolean;
}

/**
 * The plan of one call. `override` is for mewcode's own commands (`ShellSandbox.runCommand`): their mode,
 * network and filter, whatever the session's, and a sandbox of their own.
 */
export function planCall(
  planning: CallPlanning,
  protection: Pick<CallProtection, "keepInPlace" | "readOnly" | "placeholders" | "hiddenNow">,
  override: CommandOverride | null = null,
): PlannedCall {
  const { view, helpers, limits } = planning;
  const seccomp = override?.seccomp ?? planning.seccomp;
  const unfitted = {
    bwrap: helpers.bwrap!,
    root: planning.root,
    additionalRoots: planning.additionalRoots,
    mode: override?.mode ?? (planning.mode === "read-only" ? "read-only" : "workspace-write"),
    network: override?.network ?? planning.network,
    hiddenFiles: view.hiddenFiles,
    hiddenDirectories: view.hiddenDirectories,
    homeRoots: view.homeRoots,
    home: view.home,
    exposed: view.exposed,
    hiddenInWorkspace: [...view.hiddenInWorkspace, ...protection.hiddenNow],
    keepInPlace: protection.keepInPlace,
    readOnly: protection.readOnly,
    placeholders: protection.placeholders,
    excluded: [...view.excluded, ...keptFolderShown(planning)],
    writableFiles: limits?.writableFiles ?? [],
    ...(limits === null ? {} : { scratchBytes: limits.limits.maxMemoryBytes }),
    seccomp: seccomp !== null,
    userNamespaces: planning.userNamespaces ?? false,
    env: view.env,
  } as const;
  const { mounts, wrapper, readOnlyWhole } = withinLimits(unfitted, planning);
  const { persistent: _sessionKept, ...base } = planning.plan;
  // What every shell of the sandbox runs first, a kept sandbox's supervisor included.
  const setup = [closeInheritedDescriptors(base.shell), ...(limits?.prologue ?? [])];
  const plan: ShellPlan = {
    ...base,
    wrapper,
    prologue: ["exec </dev/null", ...setup],
    seccomp,
    unavailable: null,
  };
  // mewcode's own commands (`override`) each get a sandbox, but for those that ask for the kept one
  // (ripgrep's searches, kept_command.ts).
  const kept = planning.kept;
  if (
    (override !== null && override.keep !== true) || kept === null || seccomp === null || helpers.sh === null
  ) {
    return { plan, readOnlyWhole };
  }
  return {
    plan: {
      ...plan,
      persistent: {
        launcher: helpers.sh,
        seccompFile: kept.seccompFile,
        wrapper: bubblewrapArguments({ ...mounts, supervisorCopy: kept.supervisorCopy }),
        supervisor: SUPERVISOR_PATH,
        prologue: setup,
        scratch: scratchFolders(mounts),
      },
    },
    readOnlyWhole,
  };
}

/** A call's plan, and the folders it binds read-only whole to stay within bubblewrap's limits. */
export interface PlannedCall {
  plan: ShellPlan;
  /** See `fitMounts` (_argument_limit.ts); empty in the usual case. */
  readOnlyWhole: string[];
}

/**
 * The mounts and their bubblewrap arguments, with the protected mounts reduced until the arguments are
 * within what bubblewrap and Linux accept (`fitMounts`). Each round measures the real arguments: the
 * estimate of `fitMounts` leaves out a few shared pins.
 */
function withinLimits(
  unfitted: BubblewrapOptions,
  planning: Pick<CallPlanning, "root" | "additionalRoots">,
): { mounts: BubblewrapOptions; wrapper: string[]; readOnlyWhole: string[] } {
  let mounts = unfitted;
  let wrapper = bubblewrapArguments(mounts);
  let readOnlyWhole: string[] = [];
  const roots = [planning.root, ...planning.additionalRoots];
  for (let round = 0; round < MAX_FIT_ROUNDS; round++) {
    const excess = excessOf(wrapper);
    if (!isOver(excess)) break;
    const fitted = fitMounts(mounts, { roots, excess, isFolder });
    // Nothing left to bind whole: what is over is not the protected paths' (bubblewrap then says so).
    if (fitted.readOnlyWhole.length === 0) break;
    const { keepInPlace, readOnly, placeholders } = fitted;
    mounts = { ...mounts, keepInPlace, readOnly, placeholders };
    readOnlyWhole = outermost([...readOnlyWhole, ...fitted.readOnlyWhole]);
    wrapper = bubblewrapArguments(mounts);
  }
  return { mounts, wrapper, readOnlyWhole };
}

/** The paths not below another of them, shallowest first. */
function outermost(paths: readonly string[]): string[] {
  const kept = new Set<string>();
  for (const path of shallowestFirst(paths)) {
    let above = false;
    for (let folder = path; folder.lastIndexOf("/") > 0 && !above;) {
      folder = folder.slice(0, folder.lastIndexOf("/"));
      above = kept.has(folder);
    }
    if (!above) kept.add(path);
  }
  return [...kept];
}

/** Rounds of `withinLimits`: the first is enough but where pins shared with hidden paths were counted. */
const MAX_FIT_ROUNDS = 4;

/** Whether `path` is a real folder on the host now (not a symlink). */
function isFolder(path: string): boolean {
  return lstatSyncOrNull(path)?.isDirectory === true;
}

/**
 * The kept sandbox's private folder, as a real path, when the sandbox would show it (a temporary folder in the
 * workspace: `TMPDIR=~/tmp` with the workspace the home): hidden with mewcode's state. Shown, a command could
 * replace the seccomp program the next kept sandbox starts with, or put a symlink where mewcode writes its
 * record of placeholders from its own process on the host.
 */
function keptFolderShown(planning: CallPlanning): string[] {
  if (planning.kept === null) return [];
  const folder = realPathSyncOrNull(planning.kept.directory);
  if (folder === null) return [];
  const shown = [planning.root, ...planning.additionalRoots, ...planning.view.exposed];
  return shown.some((path) => isAtOrBelow(folder, path)) ? [folder] : [];
}

/**
 * What of the nested protected entries (`web/.vscode`) to bind read-only: each below a root but not one at
 * its top that `protectedTopLevel` plans (as a placeholder where missing; `app.code-workspace` it does not),
 * with only real folders on its way; a symlink by its real path where that lies in a root (an editor follows
 * it, as the user's git does).
 */
function nestedReadOnly(
  paths: readonly string[],
  options: { roots: readonly string[]; protectedPaths: readonly ProtectedPath[] },
): string[] {
  const { roots } = options;
  const bound: string[] = [];
  for (const path of paths) {
    const root = roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
    if (root === undefined || plannedAtTop(path, options)) continue;
    const made = madeEntry(path, roots);
    if (made === null || made.onTheWay) continue;
    if (!made.info.isSymlink) {
      bound.push(path);
      continue;
    }
    const real = realPathSyncOrNull(path);
    if (real !== null && roots.some((folder) => isAtOrBelow(real, folder) && real !== folder)) {
      bound.push(real);
    }
  }
  return bound;
}

/** Distinct paths, shallowest first (then by name): a later mount may only go below an earlier one. */
function shallowestFirst(paths: readonly string[]): string[] {
  const depth = (path: string): number => path.split("/").length;
  return [...new Set(paths)].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}
