/**
 * What an `.envrc` has direnv load besides itself: `dotenv` (`.env` unless named), `dotenv_if_exists`,
 * `source_env` and `source_env_if_exists` (a file, or a folder's `.envrc`), `source_up` and
 * `source_up_if_exists` (the nearest `.envrc`, or the file named, in the folders above), the nix files of
 * `use flake` and `use nix` (whose shellHook runs), and the folders `PATH_add`, `layout node` and
 * `layout python` (its virtualenv's `bin`) put first on the PATH (a program made there runs when the user
 * types its name); and, in turn, what a file it sources loads (direnv runs that file from its own folder).
 * direnv checks an `.envrc` against the hash the user allowed, never what it loads, and loads it in the
 * user's own shell when they enter the folder. `.envrc.local` is protected by name
 * (src/tools/protected_paths.ts); the rest cannot be: a `.env` holds the settings agents are asked to change,
 * `node_modules/.bin` is what `npm install` writes. So the session notes them before its first shell call or
 * write, and at its end tells the user which one changed and which file's line loads it, and which lines it
 * could not follow (a name built from a variable, another layout, PATH set by hand).
 *
 * @module
 */
import { headDigest, lstatSyncOrNull, readTextHead } from "../common/fs.ts";
import { dirname, join, resolve, shownFrom } from "../common/path.ts";
import { isAtOrBelow } from "./bubblewrap.ts";
import { simpleCommands } from "./_git_hook_scripts.ts";

/** `.envrc` files read at most. */
const MAX_ENVRCS = 64;
/** Bytes of an `.envrc` read at most. */
const MAX_ENVRC_BYTES = 64 * 1024;
/** Bytes of a loaded file hashed at most (a larger one counts as changed when its first bytes or size do). */
const MAX_LOADED_BYTES = 4 * 1024 * 1024;
/** Entries of a folder on the PATH noted at most. */
const MAX_FOLDER_ENTRIES = 4096;
/** Programs named at most in a line about a folder on the PATH. */
const NAMED_PROGRAMS = 5;

/** What direnv does with what an `.envrc` loads. */
export type DirenvLoad = "variables" | "script" | "nix" | "path-folder";

/** What the user is told direnv does with each kind, when they next enter the folder. */
const EFFECTS: Readonly<Record<DirenvLoad, string>> = {
  variables: "direnv exports what it sets (PATH, LD_PRELOAD and the like run code) into your shell",
  script: "direnv runs it in your shell",
  nix: "direnv has nix evaluate it and runs its shellHook in your shell",
  "path-folder": "direnv puts that folder first on your PATH, so a name you type there runs them",
};

/** What an `.envrc` loads (a file or folder, and what it was when the session noted it), or a line not followed. */
export type DirenvRecord = DirenvLoaded | DirenvNotFollowed;

/** A file or folder an `.envrc` loads, and what it was when the session noted it. */
export interface DirenvLoaded {
  /**
   * Absolute path of the file or folder; for `layout python`, of the virtualenvs' `bin` folders as a
   * pattern (`<folder>/.direnv/python-*\/bin`).
   */
  path: string;
  /** Absolute path of the `.envrc` (or of the file it sources) whose line loads it. */
  envrc: string;
  /** The command, as the `.envrc` says it (`dotenv`, `PATH_add bin`). */
  command: string;
  kind: DirenvLoad;
  /**
   * A file's size and SHA-256 of its first bytes, null when it did not exist; a folder's entries, each by
   * name with its identity (see `folderEntries`).
   */
  state: string | null | ReadonlyMap<string, string>;
}

/** A line of an `.envrc` that loads something the session cannot name before direnv runs it. */
export interface DirenvNotFollowed {
  kind: "not-followed";
  envrc: string;
  command: string;
  /** Why, after "was not followed (". */
  why: string;
}

/** What a line of an `.envrc` loads, relative to its folder, or why that is not known before it runs. */
type Load = { name: string; kind: DirenvLoad } | { source: "up"; name: string } | { why: string };

/**
 * What the `envrcs` (absolute paths of `.envrc` files, as the session's first walk found them) load that
 * lies in one of `roots`, existing or not, as it is now, and what a file they source loads in turn. A word
 * the shell computes (`$HOME/x`), a layout other than node and python and a PATH set by hand are recorded as
 * not followed; a remote flake (`use flake github:…`) and what lies outside the roots are not the session's.
 * Never throws.
 */
export async function recordDirenvFiles(
  envrcs: readonly string[],
  roots: readonly string[],
): Promise<DirenvRecord[]> {
  const records: DirenvRecord[] = [];
  const inRoots = (path: string): boolean => roots.some((root) => isAtOrBelow(path, root) && path !== root);
  const loaded = (path: string): boolean =>
    records.some((record) => record.kind !== "not-followed" && record.path === path);
  // The files to read: each .envrc, then each file one of them sources (run from that file's folder).
  const queue = envrcs.slice(0, MAX_ENVRCS);
  for (let next = 0; next < queue.length; next++) {
    const file = queue[next]!;
    const text = await readTextHead(file, MAX_ENVRC_BYTES);
    if (text === null) continue;
    for (const parts of simpleCommands(text)) {
      const command = parts.join(" ");
      for (const load of loadedBy(parts)) {
        if ("why" in load) {
          records.push({ kind: "not-followed", envrc: file, command, why: load.why });
          continue;
        }
        const paths = "source" in load
          ? nearestAbove(dirname(file), load.name, inRoots)
          : [resolve(dirname(file), load.name)];
        const kind = "kind" in load ? load.kind : "script";
        for (const named of paths) {
          // `source_env dir` loads the folder's .envrc.
          const path = kind === "script" && lstatSyncOrNull(named)?.isDirectory
            ? join(named, ".envrc")
            : named;
          if (loaded(path) || !inRoots(path)) continue;
          const state = kind === "path-folder"
            ? pathFolderEntries(path)
            : await headDigest(path, MAX_LOADED_BYTES);
          records.push({ path, envrc: file, command, kind, state });
          if (kind === "script" && state !== null && !queue.includes(path) && queue.length < MAX_ENVRCS) {
            queue.push(path);
          }
        }
      }
    }
  }
  return records;
}

/**
 * Where `source_up NAME` looks, from the folder above `folder` up (direnv's `find_up`), kept to the folders
 * of the roots: each missing candidate (one a command makes would be loaded first) down to the first that
 * exists.
 */
function nearestAbove(folder: string, name: string, inRoots: (path: string) => boolean): string[] {
  const candidates: string[] = [];
  for (let above = dirname(folder);; above = dirname(above)) {
    const path = join(above, name);
    if (!inRoots(path)) break;
    candidates.push(path);
    if (lstatSyncOrNull(path) !== null || dirname(above) === above) break;
  }
  return candidates;
}

/**
 * One line for the user per recorded file whose content is not what it was, or folder on the PATH that
 * gained or changed programs: the `.envrc` that loads it and how, since direnv loads what it holds now when
 * the user next enters that folder. Paths are shown relative to `root`.
 */
export async function changedDirenvFiles(records: readonly DirenvRecord[], root: string): Promise<string[]> {
  const lines: string[] = [];
  for (const record of records) {
    const where = `\`${record.command}\` in ${shownFrom(root, record.envrc)}`;
    if (record.kind === "not-followed") {
      lines.push(
        `${where} was not followed (${record.why}): whether the session changed what it loads was not ` +
          "checked; look at it before you next enter that folder",
      );
      continue;
    }
    const effect = `${EFFECTS[record.kind]}, outside any sandbox, when you next enter that folder`;
    const state = record.state;
    if (state instanceof Map) {
      const changed = [...pathFolderEntries(record.path)]
        .filter(([name, identity]) => state.get(name) !== identity)
        .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
      if (changed.length === 0) continue;
      const names = changed.slice(0, NAMED_PROGRAMS).map(([name]) => name).join(", ");
      const more = changed.length > NAMED_PROGRAMS ? `, and ${changed.length - NAMED_PROGRAMS} more` : "";
      lines.push(
        `${shownFrom(root, record.path)} gained or changed ${changed.length} program${
          changed.length === 1 ? "" : "s"
        } during the session (${names}${more}), and ${where} loads it: ${effect}; look at them before you do`,
      );
      continue;
    }
    if ((await headDigest(record.path, MAX_LOADED_BYTES)) === state) continue;
    const what = state === null ? "appeared" : "changed";
    lines.push(
      `${
        shownFrom(root, record.path)
      } ${what} during the session, and ${where} loads it: ${effect}; look at what ` +
        "it holds before you do",
    );
  }
  return lines;
}

/** Why a line's word is not followed: the shell computes it when direnv runs the `.envrc`. */
const COMPUTED = "it names what it loads with a variable or a command, known only when direnv runs it";

/** The files and folders a simple command of an `.envrc` has direnv load, relative to the `.envrc`'s folder. */
function loadedBy(parts: readonly string[]): Load[] {
  const [command, ...words] = parts;
  const operands = words.filter((word) => !word.startsWith("-"));
  const computed = (loads: Load[]): Load[] =>
    loads.some((load) => "name" in load && /[$`]/.test(load.name)) ? [{ why: COMPUTED }] : loads;
  switch (command) {
    case "dotenv":
    case "dotenv_if_exists":
      return computed([{ name: operands[0] ?? ".env", kind: "variables" }]);
    case "source_env":
    case "source_env_if_exists":
      return operands[0] === undefined ? [] : computed([{ name: operands[0], kind: "script" }]);
    case "source_up":
    case "source_up_if_exists":
      return computed([{ source: "up", name: operands[0] ?? ".envrc" }]);
    case "PATH_add":
      return computed(operands.map((name) => ({ name, kind: "path-folder" })));
    case "layout":
      return layoutFolders(operands);
    case "use":
      return nixFiles(operands);
    case "export":
      return words.some((word) => word.startsWith("PATH=")) ? [{ why: "it sets PATH itself" }] : [];
    default:
      return command?.startsWith("PATH=") === true ? [{ why: "it sets PATH itself" }] : [];
  }
}

/**
 * The folder a layout puts first on the PATH: `layout node` its `node_modules/.bin`; `layout python`
 * (`python3`, or any Python program named) the `bin` of the virtualenv it makes in `.direnv`, named after
 * the Python version it finds when it runs (`python-3.12`), or `.direnv/virtualenv` when that exists.
 */
function layoutFolders(operands: readonly string[]): Load[] {
  const [layout, program] = operands;
  if (layout === "node") return [{ name: "node_modules/.bin", kind: "path-folder" }];
  if (layout === "python" || layout === "python3") {
    if (program !== undefined && /[$`]/.test(program)) return [{ why: COMPUTED }];
    return [
      { name: ".direnv/python-*/bin", kind: "path-folder" },
      { name: ".direnv/virtualenv/bin", kind: "path-folder" },
    ];
  }
  return layout === undefined
    ? []
    : [{ why: "where that layout puts programs is known only when direnv runs it" }];
}

/** The nix files of `use flake [ref]` (a local one: `.`, `./nix#dev`) and `use nix [file.nix]`. */
function nixFiles(operands: readonly string[]): Load[] {
  const [what, argument] = operands;
  if (what === "flake") {
    const reference = argument ?? ".";
    // `github:owner/repo`, `nixpkgs#hello`: not a folder of the workspace.
    if (reference.includes(":") || !reference.startsWith(".")) return [];
    const folder = reference.split("#")[0] || ".";
    return ["flake.nix", "flake.lock"].map((name) => ({ name: join(folder, name), kind: "nix" }));
  }
  if (what !== "nix") return [];
  const files = operands.slice(1).filter((word) => word.endsWith(".nix"));
  return (files.length > 0 ? files : ["shell.nix", "default.nix"]).map((name) => ({ name, kind: "nix" }));
}

/**
 * The entries of a folder on the PATH (see `folderEntries`); of every folder a pattern with one `*` name
 * matches (`.direnv/python-*\/bin`), each by its path from the pattern's fixed part (`python-3.12/bin/git`).
 */
function pathFolderEntries(path: string): Map<string, string> {
  const parts = path.split("/");
  const star = parts.findIndex((part) => part.includes("*"));
  if (star === -1) return folderEntries(path);
  const base = parts.slice(0, star).join("/") || "/";
  const [prefix, suffix] = parts[star]!.split("*") as [string, string];
  const rest = parts.slice(star + 1);
  const entries = new Map<string, string>();
  let names: string[];
  try {
    names = [...Deno.readDirSync(base)].map((entry) => entry.name).sort();
  } catch {
    return entries;
  }
  for (const name of names) {
    if (name.length < prefix.length + suffix.length || !name.startsWith(prefix) || !name.endsWith(suffix)) {
      continue;
    }
    const folder = [name, ...rest].join("/");
    for (const [entry, identity] of folderEntries(join(base, folder))) {
      if (entries.size >= MAX_FOLDER_ENTRIES) return entries;
      entries.set(`${folder}/${entry}`, identity);
    }
  }
  return entries;
}

/**
 * The entries of a folder on the PATH, by name, each with its identity (`dev:ino:size:mtime`, of the entry
 * itself: a symlink as a symlink); empty when the folder is missing or cannot be listed.
 */
function folderEntries(folder: string): Map<string, string> {
  const entries = new Map<string, string>();
  try {
    for (const entry of Deno.readDirSync(folder)) {
      if (entries.size >= MAX_FOLDER_ENTRIES) break;
      const info = lstatSyncOrNull(join(folder, entry.name));
      if (info === null) continue;
      entries.set(entry.name, `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}`);
    }
  } catch {
    // Missing, or not a folder: nothing on the PATH from it.
  }
  return entries;
}
