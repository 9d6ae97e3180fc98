/**
 * The findings of a metadata scan (git_scan.ts) in each git directory the walk and the layout found: the
 * repository itself, config entries that make git run commands (git_config.ts), hooks, the commands and
 * merge strategies a rebase or cherry-pick in progress runs when continued, index entries marked to hide
 * their changes (git_index.ts); and pointers to other git directories, and folders the walk could not list.
 *
 * In each git directory, the todo list of an interactive rebase (`rebase-merge/git-rebase-todo`) is read for
 * `exec` lines (`x` for short), commands git runs when the user continues the rebase; each command is a
 * finding of its own, so that a line the session added is new while those that were there are not. A
 * cherry-pick or revert sequence (`sequencer/todo`) is read too: git refuses to continue one that holds an
 * `exec` line, but git never writes one there, so it is reported as planted. The apply backend's
 * `rebase-apply` folder holds patches and no commands, and is not read.
 *
 * Private to src/sandbox/.
 *
 * @module
 */
import { lstatSyncOrNull, readFileHead, realPathSyncOrNull } from "../common/fs.ts";
import { dirname, join, relative } from "../common/path.ts";
import { gitConfigEffect, parseGitConfig } from "./git_config.ts";
import { type GitDirectory, type GitLayout, isInside } from "./_git_layout.ts";
import { type IndexMarks, markedIndexEntries } from "./git_index.ts";
import type { GitFinding } from "./git_scan.ts";

/** Hook files larger than this are hashed by their first bytes and their size. */
const MAX_HOOK_BYTES = 16 * 1024 * 1024;
/** Characters of a value kept for display. */
const MAX_SHOWN = 200;
/** Bytes of a rebase or sequencer todo list read at most; a larger list is reported as unchecked. */
const MAX_TODO_BYTES = 16 * 1024 * 1024;
/** Bytes of an index read at most (a repository of about half a million files); a larger one is not read. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
/** Marked index entries reported one by one per git directory and mark; beyond, one finding counts them. */
const MAX_MARKED_SHOWN = 50;
/** Todo lists that can hold `exec` lines, relative to a git directory. */
const TODO_LISTS = ["rebase-merge/git-rebase-todo", "sequencer/todo"];

/**
 * The findings of every git directory of the layout inside the root; `gitDirectories` are the folders the
 * walk found laid out as git directories.
 */
export async function collectFindings(
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
    for (const entry of writableByOthers(root, directory, laidOut)) {
      const mode = `0${entry.mode.toString(8)}`;
      await add({ ...base, kind: "writable", path: show(entry.path), name: entry.who }, mode, mode);
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

/**
 * The entries of a git directory that users other than its owner may write (mode g+w or o+w): the git
 * directory, the `.git` entry and the folder that holds it, the hooks folder, the config files, and the
 * refs, objects and `info` folders and `packed-refs`. Through any of them, such a user can put hooks or
 * config in place that run when the owner's git does (rename `.git/hooks` away in a writable `.git`, and
 * make a new one), or refs and objects that make it check out their content. Each by its real path, inside
 * the root; git's own files of a repository shared with its group (`core.sharedRepository`) are writable by
 * the group from the start, and only a change is reported.
 */
function writableByOthers(
  root: string,
  directory: GitDirectory,
  laidOut: boolean,
): { path: string; mode: number; who: "group" | "others" }[] {
  const candidates = [
    directory.path,
    directory.dotGit,
    directory.hooks,
    ...directory.configFiles.map((file) => file.path),
    // What git checks out: a ref moved or an object or graft put there by another user.
    ...["refs", "objects", "info", "packed-refs"].map((name) => join(directory.path, name)),
  ];
  // The folder that holds the `.git` entry: a `.git` in a folder others may write can be swapped whole.
  if (directory.dotGit !== null && !laidOut) candidates.push(dirname(directory.dotGit));
  const found: { path: string; mode: number; who: "group" | "others" }[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (candidate === null) continue;
    const path = realPathSyncOrNull(candidate);
    if (path === null || seen.has(path) || !isInside(root, path)) continue;
    seen.add(path);
    const mode = (lstatSyncOrNull(path)?.mode ?? 0) & 0o7777;
    if ((mode & 0o002) !== 0) found.push({ path, mode, who: "others" });
    else if ((mode & 0o020) !== 0) found.push({ path, mode, who: "group" });
  }
  return found;
}

/** A finding's fields other than those `newFinding` computes. */
export type FindingFields = Omit<GitFinding, "id" | "key" | "sha256" | "value">;

/** A finding whose `sha256` hashes `content`, which `contentInId` makes part of its identity. */
export async function newFinding(
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

/** Whether the directory's config sets `extensions.objectFormat = sha256`. */
export function usesSha256(directory: GitDirectory): boolean {
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
