/**
 * A snapshot of what in the workspace's git metadata can make the user's git run commands, and the
 * difference between two snapshots: the session takes one before the first shell call and compares at the
 * end (and after each call), to warn about what the protection plan cannot stop, such as a repository
 * planted in a subfolder and registered as a submodule, a folder laid out as a git directory, or an
 * `exec` line in the todo list of a rebase in progress.
 *
 * The walk reads every directory of the workspace, `node_modules` included: skipping a folder by name
 * would tell a planted repository where to hide, and a gitlink can make the user's `git status` enter any
 * folder. It enters no symlinked directory and no `.git` directory (those are read by their layout:
 * config, hooks, `modules/**`, `worktrees/*`), and it stops at `maxEntries` entries or after `timeoutMs`,
 * marking the scan incomplete. Directories are read breadth first in name order, so a truncated scan
 * still covers the shallow folders and covers the same ones each time.
 *
 * A folder with no `.git` is a repository too when git takes the folder itself for a git directory (a bare
 * repository, or one whose `core.worktree` names a working tree elsewhere): it holds a `HEAD` that names a
 * ref or a commit, and `objects` and `refs` (or a `commondir` file pointing to them). Git run in that folder
 * uses its config and hooks, so the walk reports such a folder like a nested `.git` (its layout is read the
 * same way), and still walks into it: any folder can be given that shape, which must not hide what is
 * below it.
 *
 * In each git directory, the todo list of an interactive rebase (`rebase-merge/git-rebase-todo`) is read for
 * `exec` lines (`x` for short), commands git runs when the user continues the rebase; each command is a
 * finding of its own, so that a line the session added is new while those that were there are not. A
 * cherry-pick or revert sequence (`sequencer/todo`) is read too: git refuses to continue one that holds an
 * `exec` line, but git never writes one there, so it is reported as planted. The apply backend's
 * `rebase-apply` folder holds patches and no commands, and is not read.
 *
 * What makes the user's git write other content than the files' history holds, while `git status` shows
 * nothing, is reported too: replace refs (git_replace_refs.ts) and, when the scan is given the time the
 * session started (`looseObjects`), loose objects written since whose content does not hash to their
 * name (git_loose_objects.ts).
 *
 * @module
 */
import { readFileHead } from "../common/fs.ts";
import { assertNever } from "../common/errors.ts";
import { escapeHidden } from "../common/hidden_chars.ts";
import { nextTurn } from "../common/next_turn.ts";
import { dirname, join, relative } from "../common/path.ts";
import { type GitConfigEffect, gitConfigEffect, parseGitConfig } from "./git_config.ts";
import { type GitDirectory, type GitLayout, isInside, readGitLayout } from "./_git_layout.ts";
import { type IndexMarks, markedIndexEntries } from "./git_index.ts";
import { checkLooseObjects, type LooseObjectBudget } from "./git_loose_objects.ts";
import { readReplaceRefs } from "./git_replace_refs.ts";

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
  | "unlisted";

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
   * loose object that does not hash to it ("stopped" when the check ran out of budget), or "" for the other
   * kinds.
   */
  name: string;
  /**
   * Config value, pointer target, parse error or `exec` command as shown to the user (shortened), a
   * replace ref's target, what a mismatched object hashes to (or why it cannot be read, or for "stopped"
   * how much was checked), "" for the other kinds.
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
  /** Absolute paths of the folders laid out as git directories (not `.git` entries; see the module note). */
  gitDirectories: string[];
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
/** Milliseconds of synchronous walking between two yields to the event loop. */
const SLICE_MS = 20;
/** Hook files larger than this are hashed by their first bytes and their size. */
const MAX_HOOK_BYTES = 16 * 1024 * 1024;
/** Characters of a value kept for display. */
const MAX_SHOWN = 200;
/** Bytes of a rebase or sequencer todo list read at most; a larger list is reported as unchecked. */
const MAX_TODO_BYTES = 16 * 1024 * 1024;
/** Bytes of a `HEAD` file git reads to tell whether a folder is a git directory. */
const HEAD_BYTES = 255;
/** Bytes of an index read at most (a repository of about half a million files); a larger one is not read. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
/** Marked index entries reported one by one per git directory and mark; beyond, one finding counts them. */
const MAX_MARKED_SHOWN = 50;
/** Replace refs reported one by one per git directory; beyond, one finding counts them. */
const MAX_REPLACE_REFS_SHOWN = 50;
/** Mismatched loose objects reported one by one per git directory; beyond, one finding counts them. */
const MAX_OBJECTS_SHOWN = 20;
const DEFAULT_MAX_OBJECTS = 20_000;
const DEFAULT_MAX_OBJECT_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_LISTED_OBJECTS = 200_000;
const DEFAULT_OBJECTS_TIMEOUT_MS = 3_000;
/** Todo lists that can hold `exec` lines, relative to a git directory. */
const TODO_LISTS = ["rebase-merge/git-rebase-todo", "sequencer/todo"];

/**
 * Walks the workspace for git metadata (see the module note) and lists what can make git run commands.
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
  const walk = await findDotGits(realRoot, limits);
  const shaped = await confirmGitDirectories(walk.candidates, limits);
  const layout = await readGitLayout(walk.dotGits, shaped.gitDirectories);
  const findings = await collectFindings(realRoot, layout, new Set(shaped.gitDirectories), walk.unlisted);
  findings.push(...await collectObjectFindings(realRoot, layout, options));
  return {
    root: realRoot,
    findings,
    dotGits: walk.dotGits,
    gitDirectories: shaped.gitDirectories,
    unlisted: walk.unlisted,
    complete: walk.complete && shaped.complete && !layout.truncated,
    entries: walk.entries,
    elapsedMs: now() - started,
    startedAt,
  };
}

interface WalkLimits {
  maxEntries: number;
  deadline: number;
  now: () => number;
  signal: AbortSignal | undefined;
}

/** What the walk found: `.git` entries, and folders whose entries name a git directory's files. */
interface Walk {
  dotGits: string[];
  /** Folders holding `HEAD` and `objects` and `refs`, or `HEAD` and `commondir` (not yet checked). */
  candidates: string[];
  /** Folders that could not be listed (see `GitScan.unlisted`). */
  unlisted: string[];
  complete: boolean;
  entries: number;
}

/**
 * The `.git` entries under the root and the folders that may be git directories (the root included),
 * breadth first; synchronous reads, yielding every few milliseconds.
 */
async function findDotGits(root: string, limits: WalkLimits): Promise<Walk> {
  const dotGits: string[] = [];
  const candidates: string[] = [];
  const unlisted: string[] = [];
  const queue = [root];
  let entries = 0;
  let sliceEnd = limits.now() + SLICE_MS;
  for (let next = 0; next < queue.length; next++) {
    const directory = queue[next]!;
    const time = limits.now();
    if (time > limits.deadline || limits.signal?.aborted === true) {
      return { dotGits, candidates, unlisted, complete: false, entries };
    }
    if (time > sliceEnd) {
      await nextTurn();
      sliceEnd = limits.now() + SLICE_MS;
    }
    let listing: Deno.DirEntry[];
    try {
      listing = [...Deno.readDirSync(directory)];
    } catch (error) {
      // A folder removed since its parent was listed holds nothing; any other the scan could not see into.
      if (!(error instanceof Deno.errors.NotFound) && !unlisted.includes(directory)) unlisted.push(directory);
      continue;
    }
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (hasGitDirectoryNames(listing)) candidates.push(directory);
    for (const entry of listing) {
      if (++entries > limits.maxEntries) {
        return { dotGits, candidates, unlisted, complete: false, entries: entries - 1 };
      }
      const path = `${directory === "/" ? "" : directory}/${entry.name}`;
      // A name that is not UTF-8 comes back with U+FFFD in place of its bytes: the scan cannot open it, or
      // opens another entry whose name really is that (a folder named U+FFFD beside one named 0xFF), while
      // git reaches it. Never silently skipped.
      if (entry.name.includes("\uFFFD")) unlisted.push(path);
      if (entry.name === ".git") dotGits.push(path);
      else if (entry.isDirectory) queue.push(path);
    }
  }
  return { dotGits, candidates, unlisted, complete: true, entries };
}

/**
 * Whether a listing has the names git checks to take a folder for a git directory: `HEAD`, and `objects`
 * and `refs`, or a `commondir` file (then `objects` and `refs` are those of the directory it names). Any
 * type counts: git follows symlinks for all of them but `HEAD`, which `isGitHead` checks.
 */
function hasGitDirectoryNames(listing: readonly Deno.DirEntry[]): boolean {
  let head = false;
  let objects = false;
  let refs = false;
  let commonDir = false;
  for (const entry of listing) {
    switch (entry.name) {
      case "HEAD":
        head = true;
        break;
      case "objects":
        objects = true;
        break;
      case "refs":
        refs = true;
        break;
      case "commondir":
        commonDir = true;
        break;
    }
  }
  return head && ((objects && refs) || commonDir);
}

/** The candidates whose `HEAD` git accepts, in walk order; stops (incomplete) at the deadline. */
async function confirmGitDirectories(
  candidates: readonly string[],
  limits: WalkLimits,
): Promise<{ gitDirectories: string[]; complete: boolean }> {
  const gitDirectories: string[] = [];
  for (const candidate of candidates) {
    if (limits.now() > limits.deadline || limits.signal?.aborted === true) {
      return { gitDirectories, complete: false };
    }
    if (await isGitHead(join(candidate, "HEAD"))) gitDirectories.push(candidate);
  }
  return { gitDirectories, complete: true };
}

/**
 * Whether git takes the file for a repository's `HEAD` (git's `validate_headref`): a symlink to `refs/…`,
 * or a file starting with `ref:` and `refs/…` after blanks, or with a 40- or 64-digit object id.
 */
async function isGitHead(path: string): Promise<boolean> {
  const info = await Deno.lstat(path).catch(() => null);
  if (info === null) return false;
  if (info.isSymlink) return (await Deno.readLink(path).catch(() => "")).startsWith("refs/");
  if (!info.isFile) return false;
  try {
    const text = new TextDecoder().decode((await readFileHead(path, HEAD_BYTES)).bytes);
    return /^ref:\s*refs\//.test(text) || /^[0-9a-fA-F]{40}/.test(text);
  } catch {
    return false;
  }
}

/**
 * The findings of every git directory of the layout inside the root; `gitDirectories` are the folders the
 * walk found laid out as git directories.
 */
async function collectFindings(
  root: string,
  layout: GitLayout,
  gitDirectories: ReadonlySet<string>,
  unlisted: readonly string[],
): Promise<GitFinding[]> {
  const show = (path: string): string => (isInside(root, path) ? relative(root, path) || "." : path);
  const findings: GitFinding[] = [];
  const add = async (
    fields: FindingFields,
    content: string | Uint8Array,
    value = "",
    contentInId = false,
  ): Promise<void> => {
    findings.push(await newFinding(fields, content, value, contentInId));
  };
  const directoryOf = new Map(layout.directories.map((directory) => [directory.path, directory]));
  for (const directory of layout.directories) {
    if (!isInside(root, directory.path)) continue;
    const gitDir = show(directory.path);
    // A folder git takes for a git directory, reached from no `.git` entry, is used when git runs in it.
    const laidOut = gitDirectories.has(directory.path) && directory.dotGit === directory.path;
    const worktree = laidOut
      ? gitDir
      : directory.worktree !== null && isInside(root, directory.worktree)
      ? show(directory.worktree)
      : null;
    const base = { gitDir, worktree, effect: null };
    await add({
      ...base,
      kind: "repository",
      path: show(directory.dotGit ?? directory.path),
      name: laidOut ? "git-directory" : "",
    }, "");
    for (const file of directory.configFiles) {
      const path = show(file.path);
      const occurrences = new Map<string, number>();
      for (const entry of file.parsed?.entries ?? []) {
        const effect = gitConfigEffect(entry);
        if (effect === null) continue;
        const occurrence = occurrences.get(entry.name) ?? 0;
        occurrences.set(entry.name, occurrence + 1);
        const name = occurrence === 0 ? entry.name : `${entry.name}#${occurrence + 1}`;
        const shown = entry.value ?? "true";
        await add(
          { ...base, kind: "config", path, name, effect },
          entry.value === null ? "\0" : shown,
          shown,
        );
      }
      for (const [index, error] of (file.parsed?.errors ?? []).entries()) {
        const text = `line ${error.line}: ${error.message}`;
        await add({ ...base, kind: "config-error", path, name: `error#${index + 1}` }, text, text);
      }
    }
    for (const hook of await listHooks(root, directory)) {
      const content = await readHook(hook.path);
      await add({ ...base, kind: "hook", path: show(hook.path), name: hook.name }, content);
    }
    for (const list of TODO_LISTS) {
      const path = join(directory.path, list);
      const todo = await readTodo(path);
      if (todo === null) continue;
      const fields = { ...base, kind: "todo-exec" as const, path: show(path) };
      if (todo.size > MAX_TODO_BYTES) {
        const text = `${todo.size} bytes`;
        await add({ ...fields, name: "too-large" }, text, text);
      }
      const occurrences = new Map<string, number>();
      for (const command of execCommands(todo.text)) {
        const occurrence = occurrences.get(command) ?? 0;
        occurrences.set(command, occurrence + 1);
        const name = occurrence === 0 ? "exec" : `exec#${occurrence + 1}`;
        await add({ ...fields, name }, command, command, true);
      }
    }
    for (const strategy of await mergeStrategies(directory.path)) {
      const fields = { ...base, kind: "strategy" as const, path: show(strategy.path), name: "strategy" };
      await add(fields, strategy.value, strategy.value);
    }
  }
  for (const directory of layout.directories) {
    if (!isInside(root, directory.path)) continue;
    const marks = await readIndexMarks(directory);
    if (marks === null) continue;
    const gitDir = show(directory.path);
    const worktree = directory.worktree !== null && isInside(root, directory.worktree)
      ? show(directory.worktree)
      : null;
    const path = show(join(directory.path, "index"));
    const base = { kind: "index-mark" as const, gitDir, worktree, effect: null, path };
    for (
      const [name, entries] of [["skip-worktree", marks.skipWorktree], [
        "assume-unchanged",
        marks.assumeUnchanged,
      ]] as const
    ) {
      if (entries.length > MAX_MARKED_SHOWN) {
        // Sparse checkouts mark thousands: one finding, which changes with the count.
        await add({ ...base, name: `${name}#many` }, String(entries.length), String(entries.length));
        continue;
      }
      for (const entry of entries) await add({ ...base, name: `${name} ${entry}` }, entry, entry);
    }
  }
  for (const folder of new Set(unlisted)) {
    const fields = { kind: "unlisted" as const, gitDir: "", path: show(folder), name: "", worktree: null };
    await add({ ...fields, effect: null }, "");
  }
  for (const pointer of layout.pointers) {
    if (!isInside(root, pointer.path)) continue;
    const owner = pointer.path.endsWith("/.git") ? null : directoryOf.get(dirname(pointer.path));
    const worktree = owner === undefined || owner === null ? dirname(pointer.path) : owner.worktree;
    await add(
      {
        kind: "pointer",
        gitDir: show(owner?.path ?? pointer.path),
        path: show(pointer.path),
        name: "",
        worktree: worktree !== null && isInside(root, worktree) ? show(worktree) : null,
        effect: null,
      },
      pointer.target,
      show(pointer.target),
    );
  }
  return findings;
}

type FindingFields = Omit<GitFinding, "id" | "key" | "sha256" | "value">;

/** A finding whose `sha256` hashes `content`, which `contentInId` makes part of its identity. */
async function newFinding(
  fields: FindingFields,
  content: string | Uint8Array,
  value: string,
  contentInId: boolean,
): Promise<GitFinding> {
  const sha256 = await hashHex(content);
  const id = `${fields.kind} ${fields.gitDir} ${fields.path} ${fields.name}${
    contentInId ? ` ${sha256}` : ""
  }`;
  return { ...fields, id, key: `${id} ${sha256}`, sha256, value: shorten(value) };
}

/**
 * The replace refs of the repositories inside the root and, with `options.looseObjects`, their loose
 * objects changed since then that do not hash to their names (linked worktrees' directories share their
 * repository's refs and objects).
 */
async function collectObjectFindings(
  root: string,
  layout: GitLayout,
  options: GitScanOptions,
): Promise<GitFinding[]> {
  const show = (path: string): string => relative(root, path) || ".";
  const findings: GitFinding[] = [];
  const looseObjects = options.looseObjects;
  const budget: LooseObjectBudget = {
    listed: looseObjects?.maxListed ?? DEFAULT_MAX_LISTED_OBJECTS,
    objects: looseObjects?.maxObjects ?? DEFAULT_MAX_OBJECTS,
    bytes: looseObjects?.maxBytes ?? DEFAULT_MAX_OBJECT_BYTES,
    deadline: performance.now() + (looseObjects?.timeoutMs ?? DEFAULT_OBJECTS_TIMEOUT_MS),
  };
  for (const directory of layout.directories) {
    if (directory.kind !== "repository" || !isInside(root, directory.path)) continue;
    const gitDir = show(directory.path);
    const worktree = directory.worktree !== null && isInside(root, directory.worktree)
      ? show(directory.worktree)
      : null;
    const base = { gitDir, worktree, effect: null };
    const refs = await readReplaceRefs(directory.path);
    for (const ref of refs.slice(0, MAX_REPLACE_REFS_SHOWN)) {
      // The loose ref's path even for a packed ref: `git pack-refs` moves a ref, the finding stays the same.
      const path = show(join(directory.path, ref.ref));
      const fields = { ...base, kind: "replace-ref" as const, path, name: ref.ref };
      findings.push(await newFinding(fields, ref.target, ref.target, false));
    }
    if (refs.length > MAX_REPLACE_REFS_SHOWN) {
      const fields = { ...base, kind: "replace-ref" as const, path: show(directory.path), name: "#many" };
      findings.push(await newFinding(fields, String(refs.length), String(refs.length), false));
    }
    if (looseObjects === undefined) continue;
    const objects = await Deno.realPath(join(directory.path, "objects")).catch(() => null);
    if (objects === null || !isInside(root, objects)) continue;
    const check = await checkLooseObjects(objects, {
      since: looseObjects.since,
      format: usesSha256(directory) ? "sha256" : "sha1",
      budget,
      signal: options.signal,
    });
    for (const object of check.mismatched.slice(0, MAX_OBJECTS_SHOWN)) {
      const value = object.actual ?? object.problem;
      const path = show(join(directory.path, "objects", object.name.slice(0, 2), object.name.slice(2)));
      const fields = { ...base, kind: "object" as const, path, name: object.name };
      findings.push(await newFinding(fields, value, value, false));
    }
    if (check.mismatched.length > MAX_OBJECTS_SHOWN) {
      const count = String(check.mismatched.length);
      const fields = { ...base, kind: "object" as const, path: show(objects), name: "#many" };
      findings.push(await newFinding(fields, count, count, false));
    }
    if (!check.complete) {
      const spent = `${check.checked} objects`;
      const fields = { ...base, kind: "object" as const, path: show(objects), name: "stopped" };
      findings.push(await newFinding(fields, spent, spent, false));
    }
  }
  return findings;
}

/** Whether the directory's config sets `extensions.objectFormat = sha256`. */
function usesSha256(directory: GitDirectory): boolean {
  return directory.configFiles.some((file) =>
    file.parsed?.entries.some((entry) =>
      entry.name === "extensions.objectformat" && entry.value?.toLowerCase() === "sha256"
    )
  );
}

/** Executable files in the directory's hooks folder, other than git's `*.sample` files. */
async function listHooks(
  root: string,
  directory: GitDirectory,
): Promise<Array<{ name: string; path: string }>> {
  if (directory.hooks === null) return [];
  const real = await Deno.realPath(directory.hooks).catch(() => null);
  if (real === null || !isInside(root, real)) return [];
  const hooks: Array<{ name: string; path: string }> = [];
  try {
    for await (const entry of Deno.readDir(real)) {
      if (entry.name.endsWith(".sample") || entry.isDirectory) continue;
      const path = join(directory.hooks, entry.name);
      const info = await Deno.stat(path).catch(() => null);
      if (info === null || !info.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
      hooks.push({ name: entry.name, path });
    }
  } catch {
    return [];
  }
  return hooks.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * A todo list's text (its first `MAX_TODO_BYTES`) and size, or null when it is missing, not a file or
 * unreadable. Symlinks are followed, as git follows them.
 */
async function readTodo(path: string): Promise<{ text: string; size: number } | null> {
  const info = await Deno.stat(path).catch(() => null);
  if (info === null || !info.isFile) return null;
  try {
    const { bytes, size } = await readFileHead(path, MAX_TODO_BYTES);
    return { text: new TextDecoder().decode(bytes), size };
  } catch {
    return null;
  }
}

/**
 * The commands of a todo list's `exec` lines as git's sequencer parses them: blanks, then `exec` or `x`
 * (case matters), then a blank, then the command up to the line's end (a carriage return dropped). Comment
 * lines start with `#`; an `exec` with no command is an error to git and runs nothing.
 */
function execCommands(text: string): string[] {
  const commands: string[] = [];
  for (const line of text.split("\n")) {
    const match = /^[ \t]*(?:exec|x)[ \t]+(.*)$/s.exec(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (match !== null && match[1] !== "") commands.push(match[1]!);
  }
  return commands;
}

/**
 * The merge strategies git's own: git runs any other as the program `git-merge-NAME`, found on PATH or, for
 * a name with a "/", as a path relative to the working tree.
 */
const BUILT_IN_STRATEGIES: ReadonlySet<string> = new Set([
  "ort",
  "recursive",
  "resolve",
  "octopus",
  "ours",
  "subtree",
]);

/**
 * The merge strategies other than git's own that a rebase or cherry-pick in progress in this git directory
 * runs when continued: `rebase-merge/strategy` (one line) and `options.strategy` of `sequencer/opts`.
 */
async function mergeStrategies(gitDir: string): Promise<{ path: string; value: string }[]> {
  const found: { path: string; value: string }[] = [];
  const rebase = join(gitDir, "rebase-merge", "strategy");
  const line = await readTodo(rebase);
  if (line !== null) {
    const value = line.text.replace(/\r?\n$/, "");
    if (!BUILT_IN_STRATEGIES.has(value)) found.push({ path: rebase, value });
  }
  const options = join(gitDir, "sequencer", "opts");
  const config = await readTodo(options);
  if (config !== null) {
    for (const entry of parseGitConfig(config.text).entries) {
      if (entry.name !== "options.strategy" || entry.value === null) continue;
      if (!BUILT_IN_STRATEGIES.has(entry.value)) found.push({ path: options, value: entry.value });
    }
  }
  return found;
}

/** The index entries of a git directory, by its path, size and time: an unchanged index is not parsed again. */
const indexMarksCache = new Map<string, { stamp: string; marks: IndexMarks | null }>();

/**
 * The marked entries of a git directory's index (see git_index.ts), or null when it has none that can be
 * read (missing, not a file, larger than `MAX_INDEX_BYTES`, or not an index).
 */
async function readIndexMarks(directory: GitDirectory): Promise<IndexMarks | null> {
  const path = join(directory.path, "index");
  const info = await Deno.stat(path).catch(() => null);
  if (info === null || !info.isFile || info.size > MAX_INDEX_BYTES) return null;
  const stamp = `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:${info.ctime?.getTime()}`;
  const cached = indexMarksCache.get(path);
  if (cached?.stamp === stamp) return cached.marks;
  const sha256 = usesSha256(directory);
  // Read up to the bound only: the index may have grown since it was looked at.
  const head = await readFileHead(path, MAX_INDEX_BYTES).catch(() => null);
  const marks = head === null || head.size > MAX_INDEX_BYTES
    ? null
    : markedIndexEntries(head.bytes, sha256 ? 32 : 20);
  indexMarksCache.set(path, { stamp, marks });
  return marks;
}

/** A hook's bytes (the first `MAX_HOOK_BYTES` and the size when larger), or a marker when unreadable. */
async function readHook(path: string): Promise<Uint8Array | string> {
  try {
    const { bytes, size } = await readFileHead(path, MAX_HOOK_BYTES);
    return size > MAX_HOOK_BYTES ? `${size}:${await hashHex(bytes)}` : bytes;
  } catch (error) {
    return `unreadable: ${error instanceof Error ? error.name : String(error)}`;
  }
}

async function hashHex(content: string | Uint8Array): Promise<string> {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function shorten(value: string): string {
  return value.length <= MAX_SHOWN ? value : `${value.slice(0, MAX_SHOWN)}…`;
}

/** A finding that is new or changed since an earlier scan, with a sentence for the user. */
export interface GitMetadataChange {
  status: "new" | "changed";
  finding: GitFinding;
  /** E.g. `sub/.git/config sets core.fsmonitor = "…" (runs when you use git in sub)`. */
  message: string;
}

/** What changed between two scans, and a notice when either scan was incomplete. */
export interface GitMetadataDiff {
  changes: GitMetadataChange[];
  /** Why the comparison may miss or misreport something, or null when both scans were complete. */
  notice: string | null;
}

/** Lists what is new or changed in `after` compared with `before` (removals are not reported). */
export function diffGitFindings(before: GitScan, after: GitScan): GitMetadataDiff {
  const keys = new Set(before.findings.map((finding) => finding.key));
  const ids = new Set(before.findings.map((finding) => finding.id));
  const changes: GitMetadataChange[] = [];
  for (const finding of after.findings) {
    if (keys.has(finding.key)) continue;
    const status = ids.has(finding.id) ? "changed" : "new";
    changes.push({ status, finding, message: describeChange(status, finding) });
  }
  return { changes, notice: incompleteNotice(before, after) };
}

function incompleteNotice(before: GitScan, after: GitScan): string | null {
  if (!after.complete) {
    return `The git metadata scan stopped after ${after.entries} entries: folders beyond them were not ` +
      "checked for planted repositories";
  }
  if (!before.complete) {
    return "The first git metadata scan was incomplete: some findings reported as new may be older";
  }
  return null;
}

function describeChange(status: "new" | "changed", finding: GitFinding): string {
  const path = escapeHidden(finding.path);
  const where = finding.worktree === null
    ? `the repository ${escapeHidden(finding.gitDir)}`
    : finding.worktree === "."
    ? "the workspace"
    : escapeHidden(finding.worktree);
  switch (finding.kind) {
    case "repository":
      if (finding.name === "git-directory") {
        const folder = finding.path === "." ? "The workspace folder" : path;
        return `${folder} is laid out as a git directory, which git takes for a repository (its hooks and ` +
          `config run when you use git in ${where})`;
      }
      return `${path} is a new git repository (its hooks and config run when you use git in ${where})`;
    case "config": {
      const verb = status === "new" ? `sets ${finding.name} =` : `changes ${finding.name} to`;
      return `${path} ${verb} ${quote(finding.value)} (${effectPhrase(finding.effect, where)})`;
    }
    case "config-error":
      return `${path} has a line git cannot read (${quote(finding.value)}): check the file by hand`;
    case "hook":
      return status === "new"
        ? `${path} is a new hook (runs when you use git in ${where})`
        : `${path} was changed (a hook that runs when you use git in ${where})`;
    case "pointer":
      return `${path} ${status === "new" ? "points" : "now points"} to ${quote(finding.value)} ` +
        `(git uses the repository there when you use git in ${where})`;
    case "todo-exec":
      if (finding.name === "too-large") {
        return `${path} is too large to check for exec lines (${finding.value}): check it by hand`;
      }
      return finding.path.endsWith("sequencer/todo")
        ? `${path} has an exec line, which git never writes there: ${quote(finding.value)} (git refuses ` +
          `to continue a cherry-pick or revert with it; check the file by hand)`
        : `${path} has an exec line: ${quote(finding.value)} (git runs it when you continue the rebase ` +
          `in ${where}, e.g. with git rebase --continue)`;
    case "strategy":
      return `${path} names the merge strategy ${quote(finding.value)}, which is not git's own: git runs ` +
        `it as the program git-merge-${escapeHidden(finding.value)} when you continue the rebase or ` +
        `cherry-pick in ${where} (git rebase --continue); abort it instead (git rebase --abort)`;
    case "unlisted":
      return `${path} cannot be listed (its name is not valid UTF-8, or it may not be read), so mewcode ` +
        `cannot tell whether it holds a git repository your git would use: look inside it (ls -b) before ` +
        `you run git in the workspace`;
    case "index-mark": {
      const mark = finding.name.startsWith("skip-worktree") ? "skip-worktree" : "assume-unchanged";
      if (finding.name.endsWith("#many")) {
        return `${path} marks ${finding.value} files ${mark}: git status and git diff in ${where} do not ` +
          `show their changes (a sparse checkout does this; if you did not set one up, check them with ` +
          `git ls-files -v)`;
      }
      return `${path} marks ${quote(finding.value)} ${mark}: git status and git diff in ${where} do not ` +
        `show its changes; review it after git update-index --no-${mark} -- ${quote(finding.value)}`;
    }
    case "replace-ref":
      return describeReplaceRef(finding, where);
    case "object":
      return describeObject(finding, where);
    default:
      return assertNever(finding.kind);
  }
}

function describeReplaceRef(finding: GitFinding, where: string): string {
  const path = escapeHidden(finding.path);
  if (finding.name === "#many") {
    return `${path} has ${finding.value} replace refs, which make git use other objects in place of the ones ` +
      `your files' history names: list them with git replace -l in ${where}`;
  }
  const replaced = escapeHidden(finding.name.slice("refs/replace/".length));
  const target = /^[0-9a-f]+$/.test(finding.value) ? finding.value : quote(finding.value);
  return `${path} (a replace ref) makes git use object ${target} wherever object ${replaced} is named: git status in ` +
    `${where} does not show it, but git checkout and git reset write the replacement's content; if you ` +
    `did not make it, delete it with git replace -d ${replaced} (in ${where}) and look at what it pointed ` +
    `to with git cat-file -p ${target}`;
}

function describeObject(finding: GitFinding, where: string): string {
  const path = escapeHidden(finding.path);
  if (finding.name === "stopped") {
    return `mewcode stopped checking the loose objects written during the session in ${path} after ` +
      `${finding.value} (its limit of objects, bytes or time): the others were not compared with their names; ` +
      `check them with git fsck in ${where}`;
  }
  if (finding.name === "#many") {
    return `${path} holds ${finding.value} loose objects written during the session whose content does not ` +
      `match their names: git checkout and git reset in ${where} would write that content while git ` +
      `status shows nothing; list them with git fsck`;
  }
  if (!/^[0-9a-f]+$/.test(finding.value)) {
    return `${path} cannot be read as a loose object (${escapeHidden(finding.value)}), yet it was written ` +
      `during the session: check the repository with git fsck in ${where}`;
  }
  return `${path} holds content that does not hash to its name (it hashes to ${finding.value}): git ` +
    `status in ${where} does not show it, but git checkout and git reset write that content wherever ` +
    `object ${finding.name} is used; check with git fsck, then delete the file and restore the object ` +
    `(git hash-object -w on the file's unchanged copy, or fetch it again)`;
}

function effectPhrase(effect: GitConfigEffect | null, where: string): string {
  switch (effect) {
    case "runs-command":
    case null:
      return `runs when you use git in ${where}`;
    case "sets-hooks":
      return `git runs the hooks found there when you use git in ${where}`;
    case "includes-config":
      return `git reads more config, which can run commands, when you use git in ${where}`;
    case "moves-repository":
      return `git uses another working tree for this repository`;
    case "allows-protocol":
      return `lets git fetch or push through transports that can run commands, in ${where}`;
    default:
      return assertNever(effect);
  }
}

/** A value in double quotes with control, quote and bidirectional characters escaped. */
function quote(value: string): string {
  return `"${escapeHidden(value.replaceAll("\\", "\\\\").replaceAll('"', '\\"'))}"`;
}
