/**
 * Keeps a sandboxed shell from turning the workspace's git metadata into a way to run commands later,
 * when the user runs their own git outside any sandbox (hooks, `core.fsmonitor`, `core.pager`, filters…).
 *
 * `planGitProtection` runs in the main process before each shell call and lists what the bubblewrap plan
 * must mount (its look-ups are synchronous: as asynchronous ones, each waiting for a thread of Deno's pool,
 * they cost 3 ms of every Bash call; file contents are still read asynchronously, so that a named pipe
 * swapped in for a config file cannot block the main thread): the metadata files read-only (config, hooks, pointers to other git directories, the `.git`
 * files of submodules and linked worktrees), every directory above them bound onto itself so that it
 * cannot be renamed away and replaced by a planted copy (a bind mount pins only its own path: renaming a
 * parent directory carries the mount along), and placeholders for protected directories that do not
 * exist. Files that do not exist cannot be pinned without creating them, which would change what git
 * does, so `revertAppeared` removes any that appear during the call.
 *
 * The bubblewrap plan binds, in this order: the workspace, `keepInPlace` (`--bind P P`), `readOnly`
 * (`--ro-bind P P`), `placeholders` (`--tmpfs P --remount-ro P`). Ordinary git work keeps working:
 * git writes objects, refs, the index and logs, never `config`, hooks or pointers. Commands that do
 * write the config (`git config`, `git remote add`, `git branch --set-upstream-to`) fail.
 *
 * The module also exports the metadata scan (git_scan.ts), which reports what the mounts cannot stop.
 * Not covered by the mounts (see `scanGitMetadata`): new repositories planted anywhere in the workspace,
 * nested repositories the plan is not told about (`nestedDotGits`), and a `.git` or protected file that is
 * a symlink (a mount pins the target, never the link). A protected folder that exists but is empty (the
 * user's, or another session's placeholder, which that session removes when done) is covered by a
 * placeholder too, which needs no folder when the sandbox starts; a session removes only the placeholders it
 * made (`ownPlaceholders` in call_plan.ts).
 *
 * @module
 */
import { isEmptyDirectory } from "./kept_sandbox.ts";
import { basename, dirname, join, resolve } from "../common/path.ts";
import { describeError } from "../common/errors.ts";
import { lstatSyncOrNull, readLinkSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";
import { entryType, madeEntry } from "./_made_entries.ts";
import { describeSetAside, setAside, type SetAsideBudget, type SetAsideOutcome } from "./_set_aside.ts";
import {
  type GitDirectory,
  isGitDirectory,
  isInside,
  type ParsedConfigs,
  readGitLayout,
} from "./_git_layout.ts";
import type { UserGitConfig } from "./_user_git_config.ts";
import { type HookFile, hookScripts, type HookTask } from "./_git_hook_scripts.ts";

export {
  type GitFinding,
  type GitFindingKind,
  type GitScan,
  type GitScanOptions,
  scanGitMetadata,
} from "./git_scan.ts";
export { diffGitFindings, type GitMetadataChange, type GitMetadataDiff } from "./git_scan_diff.ts";
export type { GitConfigEffect } from "./git_config.ts";
export { type UserGitConfig, userGitConfig } from "./_user_git_config.ts";
export type { HookFile } from "./_git_hook_scripts.ts";

/** What the sandbox mounts so that one shell call cannot change the workspace's git metadata. */
export interface GitProtection {
  /** Existing files and directories to bind read-only onto themselves, shallowest first. */
  readOnly: string[];
  /** Directories to bind writable onto themselves (before `readOnly`) so none can be renamed away. */
  keepInPlace: string[];
  /** Missing directories to cover with an empty read-only tmpfs; `removePlaceholders` cleans up after. */
  placeholders: string[];
  /** Missing files that git would read if they appeared; check them with `revertAppeared` after the call. */
  mustNotAppear: string[];
  /** What could not be pinned and why (symlinks, unreadable entries), for the log. */
  notes: string[];
  /**
   * The folders inside the workspace that hold hooks from elsewhere than `<gitdir>/hooks` (`core.hooksPath`,
   * and `.husky` for husky's `.husky/_`), real paths as far as they exist, whether or not they do.
   */
  hooksFolders: string[];
  /**
   * Task runners' files the hooks run (`npm test` reads `package.json`): not mounted, since every dependency
   * change writes them; the end of the session says when one changed (git_hook_tasks.ts).
   */
  hookTasks: HookTask[];
  /**
   * The files of the workspace the hooks run (scripts, what a hook links to, hook managers' configs), as
   * protected among `readOnly` and `mustNotAppear` (real paths), with the hook that runs each: writers name
   * it when they refuse one.
   */
  hookFiles: HookFile[];
}

/** Options of `planGitProtection`. */
export interface GitProtectionOptions {
  /** More `.git` entries to protect like the root's (absolute paths), e.g. `GitScan.dotGits` of a scan. */
  nestedDotGits?: readonly string[];
  /**
   * The config the user's git reads besides the repository's (`userGitConfig(env)`): a `core.hooksPath` of
   * the user's global config names the hooks as one of the repository's does. Default none.
   */
  user?: UserGitConfig;
  /** Config files parsed by the plans of earlier calls (see `ParsedConfigs`); default none. */
  parsedConfigs?: ParsedConfigs;
}

/** Files a repository's git directory must keep as they are (or never gain). */
const REPOSITORY_FILES = ["config", "config.worktree", "commondir"];
/** Directories a repository's git directory must keep as they are (`info` holds `attributes`). */
const REPOSITORY_DIRECTORIES = ["hooks", "info"];
/** Files a linked worktree's git directory must keep (its hooks and config are the common directory's). */
const WORKTREE_FILES = ["config.worktree", "commondir", "gitdir"];
/** The list of other object stores a repository's git directory reads objects from. */
const ALTERNATES = "objects/info/alternates";
/** Symlinks followed at most when a protected path is a chain of them. */
const MAX_SYMLINK_HOPS = 8;

/**
 * Lists the mounts that protect the git metadata of the workspace `root` for one shell call: its `.git`
 * (a directory or a `gitdir:` file), the common directory, submodules' and linked worktrees' git
 * directories, and included config files. Paths outside the workspace are left out (the sandbox mounts
 * them read-only anyway). Never throws: what cannot be read is left out and noted.
 */
export async function planGitProtection(
  root: string,
  options: GitProtectionOptions = {},
): Promise<GitProtection> {
  const realRoot = realPathSyncOrNull(root);
  if (realRoot === null) {
    return {
      readOnly: [],
      keepInPlace: [],
      placeholders: [],
      mustNotAppear: [],
      notes: [`Cannot read "${root}"`],
      hooksFolders: [],
      hookTasks: [],
      hookFiles: [],
    };
  }
  const plan = new PlanBuilder(realRoot);
  try {
    const dotGits = [join(realRoot, ".git"), ...(options.nestedDotGits ?? [])];
    const layout = await readGitLayout(dotGits, [], {
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.parsedConfigs === undefined ? {} : { parsedConfigs: options.parsedConfigs }),
    });
    if (layout.truncated) plan.note("Too many git directories: only the first ones are protected");
    for (const dotGit of dotGits) plan.protectDotGit(dotGit);
    for (const directory of layout.directories) {
      protectDirectory(plan, directory);
      if (directory.kind !== "repository") continue;
      // The scripts its hooks run, and the hook managers' configs they read, are code the user's git runs as
      // surely as the hooks.
      const folders = [
        ...new Set([directory.hooks ?? join(directory.path, "hooks"), configuredHooks(directory)]),
      ];
      const worktree = directory.worktree;
      const options = { root: realRoot, worktree };
      const run = await hookScripts(folders.filter((folder) => folder !== null), options);
      for (const script of run.scripts) plan.hookFile(script, "ignore");
      for (const config of run.configs) plan.hookFile(config, "must-not-appear");
      plan.hookTasks(run.tasks);
    }
  } catch (error) {
    plan.note(`Cannot read the git metadata of "${realRoot}": ${describeError(error)}`);
  }
  return plan.build();
}

function protectDirectory(plan: PlanBuilder, directory: GitDirectory): void {
  plan.keepInPlace(directory.path);
  const isRepository = directory.kind === "repository";
  for (const name of isRepository ? REPOSITORY_FILES : WORKTREE_FILES) {
    plan.protect(join(directory.path, name), "must-not-appear");
  }
  if (isRepository) {
    for (const name of REPOSITORY_DIRECTORIES) plan.protect(join(directory.path, name), "placeholder");
    // The object stores git reads besides its own: an object missing from the repository's is read from a
    // folder this names (a loose object the model wrote in `vendor/objs`), so `git checkout` writes content
    // the history never held while `git status` stays clean. Only `git clone --reference` writes one.
    plan.protect(join(directory.path, ALTERNATES), "must-not-appear");
    // Hooks taken from elsewhere (`core.hooksPath`, as husky sets it: `.husky/_`) run as the default ones do.
    const hooks = configuredHooks(directory);
    if (hooks !== null) {
      plan.protect(hooks, "placeholder");
      plan.hooksFolder(hooks);
    }
  }
  if (directory.dotGit !== null) plan.protectDotGit(directory.dotGit);
  for (const file of directory.configFiles) {
    if (file.included) plan.protect(file.path, "must-not-appear");
  }
}

/**
 * The folder of hooks a repository takes from elsewhere than `<gitdir>/hooks`, or null. For husky's layout
 * (`core.hooksPath` is `.husky/_`, whose scripts run the user's hook code in `.husky/<hook>`), all of `.husky`:
 * changing `.husky/pre-commit` is changing a hook.
 */
function configuredHooks(directory: GitDirectory): string | null {
  const hooks = directory.hooks;
  if (hooks === null || hooks === join(directory.path, "hooks")) return null;
  const parent = dirname(hooks);
  return basename(hooks) === "_" && basename(parent) === ".husky" ? parent : hooks;
}

/** What to do about a protected path that does not exist. */
type WhenMissing = "placeholder" | "must-not-appear" | "ignore";

class PlanBuilder {
  #root: string;
  #readOnly = new Set<string>();
  #keepInPlace = new Set<string>();
  #placeholders = new Set<string>();
  #mustNotAppear = new Set<string>();
  #notes: string[] = [];
  #hooksFolders = new Set<string>();
  #hookTasks: HookTask[] = [];
  #hookFiles = new Map<string, HookFile>();
  /** Real paths of the folders of protected paths: most lie in one git directory, resolved once per plan. */
  #realFolders = new Map<string, string | null>();

  constructor(root: string) {
    this.#root = root;
  }

  note(message: string): void {
    this.#notes.push(message);
  }

  /** Records task runners' files the hooks run (`GitProtection.hookTasks`). */
  hookTasks(tasks: readonly HookTask[]): void {
    for (const task of tasks) {
      if (!this.#hookTasks.some((known) => known.path === task.path)) this.#hookTasks.push(task);
    }
  }

  /** Protects a file a hook runs, and records it under the path protected (`GitProtection.hookFiles`). */
  hookFile(file: HookFile, whenMissing: WhenMissing): void {
    const planned = this.protect(file.path, whenMissing);
    if (planned !== null && !this.#hookFiles.has(planned)) {
      this.#hookFiles.set(planned, { ...file, path: planned });
    }
  }

  /** Pins a directory inside the workspace and every directory between it and the root. */
  keepInPlace(directory: string): void {
    if (!isInside(this.#root, directory)) return;
    for (let path = directory; path !== this.#root && isInside(this.#root, path); path = dirname(path)) {
      this.#keepInPlace.add(path);
    }
  }

  /**
   * Records a folder of hooks inside the workspace (`GitProtection.hooksFolders`): the real path of the
   * deepest folder on its way that exists, then the rest as named (it may not exist yet).
   */
  hooksFolder(path: string): void {
    let existing = path;
    let rest = "";
    while (realPathSyncOrNull(existing) === null && existing !== dirname(existing)) {
      rest = rest === "" ? basename(existing) : `${basename(existing)}/${rest}`;
      existing = dirname(existing);
    }
    const real = realPathSyncOrNull(existing);
    if (real === null) return;
    const resolved = rest === "" ? real : join(real, rest);
    if (resolved !== this.#root && isInside(this.#root, resolved)) this.#hooksFolders.add(resolved);
  }

  /** Protects a working tree's `.git`: a directory stays in place, a `gitdir:` file becomes read-only. */
  protectDotGit(path: string): void {
    const info = lstatSyncOrNull(path);
    if (info === null) return;
    if (info.isSymlink) {
      this.note(`"${path}" is a symlink: it can be replaced by one pointing elsewhere (the scan reports it)`);
      return;
    }
    if (!info.isDirectory) {
      this.protect(path, "ignore");
      return;
    }
    const real = realPathSyncOrNull(path);
    if (real !== null) this.keepInPlace(real);
  }

  /**
   * Protects one path as its kind requires; a symlink's target is protected instead when it is inside.
   * Returns the path planned (read-only, placeholder or must-not-appear), or null when none is.
   */
  protect(path: string, whenMissing: WhenMissing, hops = 0): string | null {
    // Resolve the parent so that no symlink above the path is followed out of the workspace.
    const parent = this.#realFolder(dirname(path));
    if (parent === null) {
      return whenMissing === "must-not-appear" ? this.#mustNotAppearBelow(path) : null;
    }
    if (!isInside(this.#root, parent)) return null;
    const canonical = join(parent, basename(path));
    if (canonical === this.#root) return null;
    const info = lstatSyncOrNull(canonical);
    if (info === null) {
      if (whenMissing === "ignore") return null;
      (whenMissing === "placeholder" ? this.#placeholders : this.#mustNotAppear).add(canonical);
      this.keepInPlace(parent);
      return canonical;
    }
    if (whenMissing === "placeholder" && info.isDirectory && isEmptyDirectory(canonical)) {
      // Empty: maybe another session's placeholder, which may be gone by the time the sandbox starts.
      this.#placeholders.add(canonical);
      this.keepInPlace(parent);
      return canonical;
    }
    if (info.isSymlink) {
      this.note(
        `"${canonical}" is a symlink: its target is protected when inside the workspace, the link is not`,
      );
      const target = readLinkSyncOrNull(canonical);
      if (target === null || hops >= MAX_SYMLINK_HOPS) return null;
      return this.protect(resolve(parent, target), whenMissing, hops + 1);
    }
    this.#readOnly.add(canonical);
    this.keepInPlace(parent);
    return canonical;
  }

  #realFolder(path: string): string | null {
    if (!this.#realFolders.has(path)) this.#realFolders.set(path, realPathSyncOrNull(path));
    return this.#realFolders.get(path) ?? null;
  }

  /**
   * A missing file whose folder is missing too (`objects/info/alternates` without `objects/info`, a config
   * include in a folder not made yet): a command could make both. Planned below the deepest folder on its way
   * that exists, a real one (a symlink or a file there is left alone: a symlink on the way of a planned path
   * is taken for one the call made, and set aside), pinned in place.
   */
  #mustNotAppearBelow(path: string): string | null {
    let existing = dirname(path);
    let rest = basename(path);
    while (lstatSyncOrNull(existing) === null) {
      if (existing === dirname(existing)) return null;
      rest = `${basename(existing)}/${rest}`;
      existing = dirname(existing);
    }
    if (lstatSyncOrNull(existing)?.isDirectory !== true) return null;
    const real = realPathSyncOrNull(existing);
    if (real === null || !isInside(this.#root, real)) return null;
    const planned = join(real, rest);
    this.#mustNotAppear.add(planned);
    this.keepInPlace(real);
    return planned;
  }

  build(): GitProtection {
    const readOnly = byDepth(this.#readOnly).filter((path, index, all) =>
      !all.slice(0, index).some((above) => isInside(above, path))
    );
    const isCovered = (path: string): boolean => readOnly.some((covered) => isInside(covered, path));
    return {
      readOnly,
      keepInPlace: byDepth(this.#keepInPlace).filter((path) => !isCovered(path)),
      placeholders: byDepth(this.#placeholders).filter((path) => !isCovered(path)),
      mustNotAppear: byDepth(this.#mustNotAppear).filter((path) => !isCovered(path)),
      notes: this.#notes,
      hooksFolders: byDepth(this.#hooksFolders),
      hookTasks: this.#hookTasks,
      hookFiles: [...this.#hookFiles.values()],
    };
  }
}

/** Paths sorted shallowest first, then by name, so that a mount never hides one made before it. */
function byDepth(paths: Iterable<string>): string[] {
  const depth = (path: string): number => path.split("/").length;
  return [...paths].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Removes the placeholder directories a shell call left behind (bubblewrap creates each mount point), each
 * in one of `roots` or where no command reaches: only empty directories, never a file, a symlink or a
 * directory with something in it, nor one reached through a symlink on its way (`madeEntry`: a folder of that
 * name elsewhere is not the placeholder). Never throws.
 */
export async function removePlaceholders(paths: readonly string[], roots: readonly string[]): Promise<void> {
  for (const path of paths) {
    const found = madeEntry(path, roots);
    if (found === null || found.onTheWay || !found.info.isDirectory) continue;
    // Not recursive: removing fails, and the directory stays, if anything was put in it.
    await Deno.remove(found.path).catch(() => undefined);
  }
}

/** A protected file that appeared during a shell call, and where it went. */
export interface AppearedPath {
  /** Absolute path: the planned one, or a symlink the command made on its way. */
  path: string;
  /** The path that was to stay missing. */
  planned: string;
  /** What the shell left there. */
  type: "file" | "directory" | "symlink" | "other";
  outcome: SetAsideOutcome;
  /**
   * A sentence for the model, e.g. `"/ws/.git/commondir" (a file), which appeared during the command, was
   * moved to "…": …`.
   */
  message: string;
}

/**
 * Sets aside every listed path that now exists (`GitProtection.mustNotAppear`, a home's missing credential
 * files) into `setAsideIn` (`_set_aside.ts`: the user may have made it on the host meanwhile), each in one
 * of `roots` or where no command reaches: the entry itself, never a symlink's target, nor through a symlink
 * made on its way (that symlink goes instead: `madeEntry`). Where it cannot be set aside, it is removed: a
 * directory recursively only when it sits in a git directory, else only when empty. Returns what appeared,
 * so the caller can warn. Never throws.
 */
export async function revertAppeared(
  paths: readonly string[],
  roots: readonly string[],
  setAsideIn: string | null = null,
  budget?: SetAsideBudget,
): Promise<AppearedPath[]> {
  const appeared: AppearedPath[] = [];
  for (const planned of paths) {
    const made = madeEntry(planned, roots);
    if (made === null) continue;
    const { path, info } = made;
    const type = entryType(info);
    const recursive = type === "directory" && !made.onTheWay && isGitDirectory(dirname(path));
    const outcome = await setAside(made, {
      folder: setAsideIn,
      roots,
      recursive,
      ...(budget === undefined ? {} : { budget }),
    });
    appeared.push({
      path,
      planned,
      type,
      outcome,
      message: `"${path}" (a ${type}), which appeared during the command` +
        (made.onTheWay ? ` on the way to "${planned}"` : "") +
        `, ${describeSetAside(outcome)}: ${
          planned.endsWith(`/${ALTERNATES}`)
            ? "the user's git would read objects from the folders it names in place of the repository's, and " +
              "write content the history never held"
            : "the user's git would read it as repository metadata and could run commands it names"
        }${outcome.kind === "failed" ? "; remove it before running git in this folder" : ""}`,
    });
  }
  return appeared;
}
