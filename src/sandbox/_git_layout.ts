/**
 * Reads where git keeps a repository's metadata, starting from `.git` entries: the git directory a
 * `gitdir:` file or symlink points to, its common directory (`commondir`), submodule git directories
 * (`modules/**`, nested), linked worktree directories (`worktrees/*`) and the working trees they belong to,
 * and the config files each one reads (`config`, `config.worktree`, `include.path` targets). Where hooks
 * are taken from also follows the config the user's git reads besides the repository's (`UserGitConfig`).
 *
 * Private to src/sandbox/: shared by the protection plan and the metadata scan. Never throws for a missing
 * or unreadable file: what cannot be read is left out.
 *
 * @module
 */
import { lstatSyncOrNull, readLinkSyncOrNull, realPathSyncOrNull, statSyncOrNull } from "../common/fs.ts";
import { dirname, isAbsolute, join, resolve } from "../common/path.ts";
import { type GitConfigEntry, type ParsedGitConfig, parseGitConfig } from "./git_config.ts";
import type { UserGitConfig } from "./_user_git_config.ts";

/** Git directories read per layout, at most; beyond it `truncated` is set. */
const MAX_DIRECTORIES = 1_000;
/** Directory levels searched under a `modules` folder for submodule git directories (names may hold "/"). */
const MAX_MODULE_NAME_DEPTH = 8;
/** Nesting of `include.path` git follows at most. */
const MAX_INCLUDE_DEPTH = 10;
/** Config files larger than this are not parsed (an error is recorded instead). */
const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

/** One config file a git directory reads. */
export interface GitConfigFile {
  /** Absolute path as git names it (not resolved through symlinks). */
  path: string;
  /** The parsed text, or null when the file does not exist or cannot be read. */
  parsed: ParsedGitConfig | null;
  /** Whether an `include.path` or `includeIf.*.path` of another file names it. */
  included: boolean;
}

/** A git directory: a repository's own, a submodule's, or a linked worktree's administrative directory. */
export interface GitDirectory {
  /** Real path. */
  path: string;
  /** "worktree" for a linked worktree's directory (it has a `commondir` file), else "repository". */
  kind: "repository" | "worktree";
  /** The working tree git uses it for, when known. */
  worktree: string | null;
  /**
   * The `.git` entry in that working tree (directory, `gitdir:` file or symlink), when known; for a
   * directory read only as one of `readGitLayout`'s `gitDirectories`, that directory.
   */
  dotGit: string | null;
  /** `config`, then `config.worktree`, then included files, in the order git reads them. */
  configFiles: GitConfigFile[];
  /**
   * Where git looks for this repository's hooks (`hooks`, or `core.hooksPath` of the repository's config or,
   * given `ReadGitLayoutOptions.user`, the user's), or null if not known.
   */
  hooks: string | null;
}

/** A file that tells git where a git directory is: a `gitdir:` file, `commondir`, a worktree's `gitdir`. */
export interface GitPointer {
  /** Absolute path of the pointer file (or `.git` symlink). */
  path: string;
  /** Absolute path it points to, resolved as git resolves it, or its raw text when it is not a pointer. */
  target: string;
}

/** Everything reachable from some `.git` entries. */
export interface GitLayout {
  directories: GitDirectory[];
  pointers: GitPointer[];
  /** Whether more git directories existed than were read. */
  truncated: boolean;
}

/** Options of `readGitLayout`. */
export interface ReadGitLayoutOptions {
  /** The config the user's git reads besides each repository's (system, global, environment); default none. */
  user?: UserGitConfig;
  /** Config files parsed by earlier layouts, reused while unchanged (`ParsedConfigs`); default none. */
  parsedConfigs?: ParsedConfigs;
}

/**
 * How long before a read a config file must have last changed (its change and modification times) for its
 * parse to be kept: Deno gives change times in whole seconds, and a file system stamps times by its clock's
 * tick (FAT's modification times by two seconds), so a change in the same second as an earlier one can leave
 * the times as they were.
 */
const SETTLED_MS = 3_000;
/** Config files kept parsed at most; past it the kept ones are dropped. */
const MAX_PARSED_CONFIGS = 64;

/**
 * Config files parsed by earlier layouts, kept for a later one while each file is the same: the same device,
 * inode, size, modification and change time (which no process can set back: any write, rename over it or
 * `utimes` sets it to the clock's now), and settled (`SETTLED_MS`) when read. Reading a file is an
 * asynchronous op (a named pipe swapped in must not block the main thread), ~0.15-0.25 ms each; the plan of
 * each shell call reads the repository's and the user's config. Used by the plans only, whose config files
 * commands can rarely write at all (bound read-only, or set aside when they appear; the user's are hidden),
 * and never by the end-of-session scan, which reads what commands wrote.
 */
export class ParsedConfigs {
  #files = new Map<string, { identity: string; parsed: ParsedGitConfig }>();
  readonly #settledMs: number;

  /** `settledMs`: see `SETTLED_MS` (tests shorten it). */
  constructor(options: { settledMs?: number } = {}) {
    this.#settledMs = options.settledMs ?? SETTLED_MS;
  }

  /** The time before which a file read from now must have last changed to be kept, in ms since the epoch. */
  settledBefore(): number {
    return Date.now() - this.#settledMs;
  }

  /** The parse of `path` when kept for this identity, else undefined. */
  get(path: string, identity: string): ParsedGitConfig | undefined {
    const kept = this.#files.get(path);
    return kept?.identity === identity ? kept.parsed : undefined;
  }

  /** Keeps the parse of `path` as it was when it had `identity`. */
  set(path: string, identity: string, parsed: ParsedGitConfig): void {
    if (this.#files.size >= MAX_PARSED_CONFIGS && !this.#files.has(path)) this.#files.clear();
    this.#files.set(path, { identity, parsed });
  }
}

/** What tells a config file from the same path changed, or null when it cannot be told (no times). */
function configIdentity(info: Deno.FileInfo, settledBefore: number): string | null {
  const changed = info.ctime?.getTime();
  const modified = info.mtime?.getTime();
  if (changed === undefined || modified === undefined) return null;
  if (Math.max(changed, modified) > settledBefore) return null;
  return `${info.dev}:${info.ino}:${info.size}:${modified}:${changed}`;
}

/**
 * Reads the git directories reachable from `.git` entries and from `gitDirectories`, directories git
 * itself takes for a git directory (a bare repository, or a git directory whose `core.worktree` names its
 * working tree); absolute paths, missing ones are skipped. The `.git` entries are read first, so that a
 * directory reachable from both keeps the `.git` entry as its `dotGit`; one reached only from
 * `gitDirectories` has itself as `dotGit`.
 */
export async function readGitLayout(
  dotGits: readonly string[],
  gitDirectories: readonly string[] = [],
  options: ReadGitLayoutOptions = {},
): Promise<GitLayout> {
  const reader = new LayoutReader(options.user ?? null, options.parsedConfigs ?? null);
  for (const dotGit of dotGits) await reader.fromDotGit(dotGit);
  for (const path of gitDirectories) await reader.fromGitDirectory(path);
  return reader.layout();
}

interface Origin {
  worktree: string | null;
  dotGit: string | null;
}

class LayoutReader {
  #directories = new Map<string, GitDirectory>();
  #pointers = new Map<string, GitPointer>();
  #truncated = false;
  #user: UserGitConfig | null;
  /** The entries of the user's config files (includes followed), read with the first repository. */
  #userEntries: GitConfigEntry[] | null = null;
  #parsedConfigs: ParsedConfigs | null;

  constructor(user: UserGitConfig | null, parsedConfigs: ParsedConfigs | null) {
    this.#user = user;
    this.#parsedConfigs = parsedConfigs;
  }

  layout(): GitLayout {
    return {
      directories: [...this.#directories.values()],
      pointers: [...this.#pointers.values()],
      truncated: this.#truncated,
    };
  }

  async fromDotGit(dotGit: string): Promise<void> {
    const info = lstatSyncOrNull(dotGit);
    if (info === null) return;
    const origin = { worktree: dirname(dotGit), dotGit };
    if (info.isDirectory) return await this.#visit(dotGit, origin);
    if (info.isSymlink) {
      const target = readLinkSyncOrNull(dotGit);
      if (target === null) return;
      this.#addPointer(dotGit, resolve(dirname(dotGit), target));
      return await this.#visit(dotGit, origin);
    }
    if (!info.isFile) return;
    const text = await readPointerFile(dotGit);
    if (text === null) return;
    if (!text.startsWith("gitdir: ")) {
      this.#addPointer(dotGit, text);
      return;
    }
    const target = resolve(dirname(dotGit), text.slice("gitdir: ".length));
    this.#addPointer(dotGit, target);
    await this.#visit(target, origin);
  }

  /** A directory git uses as a git directory when run inside it: no `.git` entry, no known working tree. */
  async fromGitDirectory(path: string): Promise<void> {
    await this.#visit(path, { worktree: null, dotGit: path });
  }

  #addPointer(path: string, target: string): void {
    if (!this.#pointers.has(path)) this.#pointers.set(path, { path, target });
  }

  async #visit(path: string, origin: Origin): Promise<void> {
    const real = realPathSyncOrNull(path);
    if (real === null) return;
    const known = this.#directories.get(real);
    if (known !== undefined) {
      known.worktree ??= origin.worktree;
      known.dotGit ??= origin.dotGit;
      return;
    }
    if (this.#directories.size >= MAX_DIRECTORIES) {
      this.#truncated = true;
      return;
    }
    if (statSyncOrNull(real)?.isDirectory !== true) return;
    const commonDir = await readPointerFile(join(real, "commondir"));
    const directory: GitDirectory = {
      path: real,
      kind: commonDir === null ? "repository" : "worktree",
      worktree: origin.worktree,
      dotGit: origin.dotGit,
      configFiles: [],
      hooks: null,
    };
    this.#directories.set(real, directory);
    await this.#readConfig(directory);
    if (commonDir !== null) {
      const target = resolve(real, commonDir);
      this.#addPointer(join(real, "commondir"), target);
      await this.#visit(target, { worktree: null, dotGit: null });
    }
    const backPointer = await readPointerFile(join(real, "gitdir"));
    if (backPointer !== null && commonDir !== null) {
      const dotGit = resolve(real, backPointer);
      this.#addPointer(join(real, "gitdir"), dotGit);
      directory.dotGit ??= dotGit;
      directory.worktree ??= dirname(dotGit);
    }
    if (directory.kind === "worktree") return;
    directory.hooks = hooksDirectory(directory, await this.#userConfigEntries(), this.#user?.home ?? null);
    for (const module of findModuleDirectories(join(real, "modules"))) {
      await this.#visit(module, { worktree: null, dotGit: null });
    }
    for (const entry of listDirectories(join(real, "worktrees"))) {
      await this.#visit(entry, { worktree: null, dotGit: null });
    }
  }

  /** The user's config entries, in the order git reads them; none without `UserGitConfig`. */
  async #userConfigEntries(): Promise<{ before: GitConfigEntry[]; after: GitConfigEntry[] }> {
    const user = this.#user;
    if (user === null) return { before: [], after: [] };
    if (this.#userEntries === null) {
      const files = await readConfigChain(user.files, {
        home: user.home,
        optional: () => true,
        parsedConfigs: this.#parsedConfigs,
      });
      this.#userEntries = files.flatMap((file) => file.parsed?.entries ?? []);
    }
    return { before: this.#userEntries, after: user.environment };
  }

  /** Reads `config`, `config.worktree` and their includes, and the working tree `core.worktree` names. */
  async #readConfig(directory: GitDirectory): Promise<void> {
    directory.configFiles.push(
      ...await readConfigChain([join(directory.path, "config"), join(directory.path, "config.worktree")], {
        home: this.#user?.home ?? null,
        optional: (path) => path.endsWith(".worktree"),
        parsedConfigs: this.#parsedConfigs,
      }),
    );
    const worktree = lastValue(directory, "core.worktree");
    if (worktree !== null) {
      const path = resolve(directory.path, worktree);
      directory.worktree ??= path;
      directory.dotGit ??= join(path, ".git");
    }
    if (directory.worktree === null && directory.path.endsWith("/.git")) {
      directory.worktree = dirname(directory.path);
    }
  }
}

/**
 * Config files as git reads them, each followed by the files its `include.path` and `includeIf.*.path`
 * name (every condition taken as met); a missing file that `optional` accepts is left out.
 */
async function readConfigChain(
  paths: readonly string[],
  options: { home: string | null; optional: (path: string) => boolean; parsedConfigs: ParsedConfigs | null },
): Promise<GitConfigFile[]> {
  const files: GitConfigFile[] = [];
  const pending = paths.map((path) => ({ path, depth: 0 }));
  const seen = new Set<string>();
  while (pending.length > 0) {
    const { path, depth } = pending.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const parsed = await readConfigFile(path, options.parsedConfigs);
    if (parsed === null && depth === 0 && options.optional(path)) continue;
    files.push({ path, parsed, included: depth > 0 });
    if (parsed === null || depth >= MAX_INCLUDE_DEPTH) continue;
    for (const entry of parsed.entries) {
      if (entry.key !== "path" || entry.value === null || entry.value === "") continue;
      if (entry.section !== "include" && entry.section !== "includeif") continue;
      const target = resolveConfigPath(dirname(path), entry.value, options.home);
      if (target !== null) pending.push({ path: target, depth: depth + 1 });
    }
  }
  return files;
}

/**
 * Where git takes hooks from: the last `core.hooksPath` of the user's config (`before`), the repository's
 * and the environment's (`after`), relative to the working tree, else `<gitdir>/hooks`.
 */
function hooksDirectory(
  directory: GitDirectory,
  user: { before: readonly GitConfigEntry[]; after: readonly GitConfigEntry[] },
  home: string | null,
): string | null {
  const configured = lastOf(user.after, "core.hookspath") ?? lastValue(directory, "core.hookspath") ??
    lastOf(user.before, "core.hookspath");
  if (configured === null) return join(directory.path, "hooks");
  if (configured.startsWith("~")) return expandHome(configured, home);
  if (isAbsolute(configured)) return configured;
  return directory.worktree === null ? null : resolve(directory.worktree, configured);
}

/** The last value of a config name among entries, or null. */
function lastOf(entries: readonly GitConfigEntry[], name: string): string | null {
  let value: string | null = null;
  for (const entry of entries) {
    if (entry.name === name && entry.value !== null) value = entry.value;
  }
  return value;
}

/** `~/x` as git expands it, with the user's home; null for `~user/x` or an unknown home. */
function expandHome(path: string, home: string | null): string | null {
  if (home === null || (path !== "~" && !path.startsWith("~/"))) return null;
  return resolve(home, path.slice(2));
}

/** The last value of a config name across the directory's config files (git's "last one wins"). */
function lastValue(directory: GitDirectory, name: string): string | null {
  return lastOf(directory.configFiles.flatMap((file) => file.parsed?.entries ?? []), name);
}

/** An include path resolved as git does, relative to the including file; `~/` is the user's home. */
function resolveConfigPath(base: string, value: string, home: string | null): string | null {
  if (value.startsWith("~")) return expandHome(value, home);
  return resolve(base, value);
}

/** Submodule git directories under a `modules` folder: those holding `HEAD` and `config` or `objects`. */
function findModuleDirectories(modules: string): string[] {
  const found: string[] = [];
  const pending = [{ path: modules, depth: 0 }];
  while (pending.length > 0) {
    const { path, depth } = pending.pop()!;
    for (const child of listDirectories(path)) {
      if (isGitDirectory(child)) found.push(child);
      else if (depth + 1 < MAX_MODULE_NAME_DEPTH) pending.push({ path: child, depth: depth + 1 });
    }
  }
  return found.sort();
}

/** Whether a directory looks like a git directory: `HEAD`, and `config` or `objects`. */
export function isGitDirectory(path: string): boolean {
  if (lstatSyncOrNull(join(path, "HEAD")) === null) return false;
  return lstatSyncOrNull(join(path, "config")) !== null || lstatSyncOrNull(join(path, "objects")) !== null;
}

/** Real subdirectories of a directory (not symlinks), sorted; none when it cannot be listed. */
function listDirectories(path: string): string[] {
  const directories: string[] = [];
  try {
    for (const entry of Deno.readDirSync(path)) {
      if (entry.isDirectory) directories.push(join(path, entry.name));
    }
  } catch {
    return [];
  }
  return directories.sort();
}

/** A small pointer file's text without trailing line ends (as git reads it), or null when unreadable. */
async function readPointerFile(path: string): Promise<string | null> {
  const info = statSyncOrNull(path);
  if (info === null || !info.isFile || info.size > 64 * 1024) return null;
  const text = await Deno.readTextFile(path).catch(() => null);
  return text === null ? null : text.replace(/[\r\n]+$/, "");
}

/**
 * A config file parsed, or null when it does not exist or cannot be read; taken from `parsedConfigs` while the
 * file is the one parsed there.
 */
async function readConfigFile(
  path: string,
  parsedConfigs: ParsedConfigs | null,
): Promise<ParsedGitConfig | null> {
  const settledBefore = parsedConfigs?.settledBefore() ?? 0;
  const info = statSyncOrNull(path);
  if (info === null || !info.isFile) return null;
  if (info.size > MAX_CONFIG_BYTES) {
    return { entries: [], errors: [{ line: 0, message: `file is larger than ${MAX_CONFIG_BYTES} bytes` }] };
  }
  const identity = parsedConfigs === null ? null : configIdentity(info, settledBefore);
  const kept = identity === null ? undefined : parsedConfigs?.get(path, identity);
  if (kept !== undefined) return kept;
  const text = await Deno.readTextFile(path).catch(() => null);
  if (text === null) return null;
  const parsed = parseGitConfig(text);
  // Kept only if the file did not change while it was read.
  const after = statSyncOrNull(path);
  if (identity !== null && after !== null && configIdentity(after, settledBefore) === identity) {
    parsedConfigs?.set(path, identity, parsed);
  }
  return parsed;
}

/** Whether `path` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}
