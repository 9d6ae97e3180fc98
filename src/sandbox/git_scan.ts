/**
 * A snapshot of what in the workspace's git metadata can make the user's git run commands, and the
 * difference between two snapshots: the session takes one before the first shell call and compares at the
 * end (and after each call), to warn about what the protection plan cannot stop, such as a repository
 * planted in a subfolder and registered as a submodule, a folder laid out as a git directory, or an
 * `exec` line in the todo list of a rebase in progress.
 *
 * A scan walks the workspace for `.git` entries and folders laid out as git directories
 * (_git_scan_walk.ts), reads their layout (_git_layout.ts; where hooks are taken from follows the user's
 * global and system config too, as it does for the protection plan), and lists what in each can make git run
 * something: config, hooks, pointers, todo lists, merge strategies, marked index entries
 * (_git_scan_findings.ts), and what makes git write other content than the files' history holds: replace
 * refs and loose objects that do not hash to their names (_git_scan_objects.ts). `diffGitFindings`
 * (git_scan_diff.ts) compares two scans and says what changed in sentences for the user.
 *
 * @module
 */
import { type GitLayout, isInside, readGitLayout } from "./_git_layout.ts";
import type { ObjectFolder } from "./git_packs.ts";
import { join } from "../common/path.ts";
import type { GitConfigEffect } from "./git_config.ts";
import { collectFindings } from "./_git_scan_findings.ts";
import { collectObjectFindings } from "./_git_scan_objects.ts";
import { confirmGitDirectories, findDotGits } from "./_git_scan_walk.ts";
import type { UserGitConfig } from "./_user_git_config.ts";

/** What a finding is about. */
export type GitFindingKind =
  | "repository"
  | "config"
  | "config-error"
  | "hook"
  | "pointer"
  | "todo-exec"
  | "strategy"
  | "index-mark"
  | "replace-ref"
  | "object"
  | "unlisted"
  | "writable";

/** One thing in the git metadata that can make the user's git run something. */
export interface GitFinding {
  kind: GitFindingKind;
  /** Identity across scans: the same entry has the same id before and after its content changes. */
  id: string;
  /** `id` plus a hash of the content: equal across scans only when nothing changed. */
  key: string;
  /** The git directory it belongs to, relative to the root (".git", "sub/.git", ".git/modules/sub"). */
  gitDir: string;
  /**
   * The `.git` entry (or the folder laid out as a git directory), config file, hook, pointer file or todo
   * list, relative to the root.
   */
  path: string;
  /**
   * Config name (`core.fsmonitor`), hook name, "exec" for a todo list's command (`exec#2` for the second
   * line with the same command, "too-large" for a list too large to read whole), "git-directory" for a
   * repository found by its layout rather than a `.git` entry, "strategy" for a merge strategy a rebase or
   * cherry-pick in progress runs, the ref (`refs/replace/<name>`) of a replace ref, the object name of a
   * loose object that does not hash to it ("stopped" when the check ran out of budget), who may write a
   * "writable" entry besides its owner ("group", "others"), or "" for the other kinds.
   */
  name: string;
  /**
   * Config value, pointer target, parse error or `exec` command as shown to the user (shortened), a
   * replace ref's target, what a mismatched object hashes to (or why it cannot be read, or for "stopped"
   * how much was checked), a "writable" entry's mode in octal ("0777"), "" for the other kinds.
   */
  value: string;
  /**
   * SHA-256 (hex) of the hook's content, the full config value, the pointer target, the error or the
   * `exec` command (which is also part of `id`: a changed command is a new finding).
   */
  sha256: string;
  /** Where the user's git uses it, relative to the root ("." for the root), or null when not known. */
  worktree: string | null;
  /** What a config entry makes git do; null for the other kinds. */
  effect: GitConfigEffect | null;
}

/** A scan of the workspace's git metadata. */
export interface GitScan {
  /** Real path of the workspace root. */
  root: string;
  findings: GitFinding[];
  /** Absolute paths of the `.git` entries found (for `planGitProtection`'s `nestedDotGits`). */
  dotGits: string[];
  /** Absolute paths of the folders laid out as git directories (not `.git` entries; see _git_scan_walk.ts). */
  gitDirectories: string[];
  /** Absolute paths of the entries named as `GitScanOptions.named` asks, anywhere the walk reached. */
  named: string[];
  /** The `objects` folders of the repositories inside the root, with their git directories (real paths). */
  objectFolders: ObjectFolder[];
  /**
   * Absolute paths (as Deno decodes them) of the folders the walk could not list: a name that is not valid
   * UTF-8 (Deno cannot open it), or a folder it may not read. Each is a finding: what it holds is unknown.
   */
  unlisted: string[];
  /** False when the walk stopped at its entry limit or deadline, or was aborted. */
  complete: boolean;
  /** Directory entries read by the walk. */
  entries: number;
  /** Milliseconds the scan took. */
  elapsedMs: number;
  /** When the scan started, in epoch milliseconds (`Date.now`): `looseObjects.since` of a later scan. */
  startedAt: number;
}

/** Options of `scanGitMetadata`. */
export interface GitScanOptions {
  /** Directory entries read at most; default 200,000. */
  maxEntries?: number;
  /** Milliseconds the walk may take; default 2,000. */
  timeoutMs?: number;
  /** The clock in milliseconds; default `performance.now`. */
  now?: () => number;
  /** Stops the walk; the scan is then incomplete. */
  signal?: AbortSignal;
  /** Checks the loose objects changed since a time (see git_loose_objects.ts); none are checked without. */
  looseObjects?: LooseObjectScanOptions;
  /**
   * The config the user's git reads besides each repository's (`userGitConfig(env)`): a `core.hooksPath` of
   * the user's global or system config names the hooks folder as one of the repository's does, and hooks
   * written there are reported like any other. Default: none (the repositories' own config only).
   */
  user?: UserGitConfig;
  /**
   * Other names the walk lists wherever it finds them, compared without regard to case: the protected
   * paths that apply at any depth (`.vscode`; `*.code-workspace`, any name ending so), which no mount can
   * cover before they are made. Default none.
   */
  named?: readonly string[];
}

/** Which loose objects a scan checks against their names, and how much work that may take. */
export interface LooseObjectScanOptions {
  /** Epoch milliseconds, e.g. `GitScan.startedAt` of the session's first scan. */
  since: number;
  /** Objects inflated and hashed at most; default 20,000. */
  maxObjects?: number;
  /** Bytes read and inflated at most; default 256 MiB. */
  maxBytes?: number;
  /** Loose object files looked at (one `stat` each) at most; default 200,000. */
  maxListed?: number;
  /** Milliseconds the checks may take (all repositories together); default 3,000. */
  timeoutMs?: number;
}

const DEFAULT_MAX_ENTRIES = 200_000;
const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * Walks the workspace for git metadata (see _git_scan_walk.ts) and lists what can make git run commands.
 * Never throws: an unreadable root gives an empty, incomplete scan.
 */
export async function scanGitMetadata(root: string, options: GitScanOptions = {}): Promise<GitScan> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const startedAt = Date.now();
  const realRoot = await Deno.realPath(root).catch(() => null);
  if (realRoot === null) {
    return {
      root,
      findings: [],
      dotGits: [],
      gitDirectories: [],
      named: [],
      objectFolders: [],
      unlisted: [],
      complete: false,
      entries: 0,
      elapsedMs: now() - started,
      startedAt,
    };
  }
  const limits = {
    maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
    deadline: started + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    now,
    signal: options.signal,
  };
  const named = new Set((options.named ?? []).map((name) => name.toLowerCase()));
  const walk = await findDotGits(realRoot, limits, named);
  const shaped = await confirmGitDirectories(walk.candidates, limits);
  const layout = await readGitLayout(
    walk.dotGits,
    shaped.gitDirectories,
    options.user === undefined ? {} : { user: options.user },
  );
  const findings = await collectFindings(realRoot, layout, new Set(shaped.gitDirectories), walk.unlisted);
  findings.push(...await collectObjectFindings(realRoot, layout, options));
  return {
    root: realRoot,
    findings,
    dotGits: walk.dotGits,
    gitDirectories: shaped.gitDirectories,
    named: walk.named,
    objectFolders: await objectFolders(realRoot, layout),
    unlisted: walk.unlisted,
    complete: walk.complete && shaped.complete && !layout.truncated,
    entries: walk.entries,
    elapsedMs: now() - started,
    startedAt,
  };
}

/** The `objects` folders of the layout's repositories that lie inside the root (worktrees share them). */
async function objectFolders(root: string, layout: GitLayout): Promise<ObjectFolder[]> {
  const folders: ObjectFolder[] = [];
  for (const directory of layout.directories) {
    if (directory.kind !== "repository" || !isInside(root, directory.path)) continue;
    const objects = await Deno.realPath(join(directory.path, "objects")).catch(() => null);
    if (objects === null || !isInside(root, objects)) continue;
    if (!folders.some((folder) => folder.objects === objects)) {
      folders.push({ gitDir: directory.path, objects });
    }
  }
  return folders;
}
