/**
 * What an `.envrc` has direnv load besides itself: `dotenv` (`.env` unless named), `dotenv_if_exists`,
 * `source_env`, `source_env_if_exists`, the nix files of `use flake` and `use nix` (whose shellHook runs),
 * and the folders `PATH_add` and `layout node` put first on the PATH (a program made there runs when the
 * user types its name). direnv checks an `.envrc` against the hash the user allowed, never what it loads,
 * and loads it in the user's own shell when they enter the folder. `.envrc.local` is protected by name
 * (src/tools/protected_paths.ts); the rest cannot be: a `.env` holds the settings agents are asked to change,
 * `node_modules/.bin` is what `npm install` writes. So the session notes them before its first shell call or
 * write, and at its end tells the user which one changed and which `.envrc` loads it.
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

/** A file or folder an `.envrc` loads, and what it was when the session noted it. */
export interface DirenvRecord {
  /** Absolute path of the file or folder. */
  path: string;
  /** Absolute path of the `.envrc` that loads it. */
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

/**
 * What the `envrcs` (absolute paths of `.envrc` files, as the session's first walk found them) load that
 * lies in one of `roots`, existing or not, as it is now. A word the shell computes (`$HOME/x`) and a remote
 * flake (`use flake github:…`) are not followed. Never throws.
 */
export async function recordDirenvFiles(
  envrcs: readonly string[],
  roots: readonly string[],
): Promise<DirenvRecord[]> {
  const records: DirenvRecord[] = [];
  for (const envrc of envrcs.slice(0, MAX_ENVRCS)) {
    const text = await readTextHead(envrc, MAX_ENVRC_BYTES);
    if (text === null) continue;
    for (const parts of simpleCommands(text)) {
      for (const { name, kind } of loadedBy(parts)) {
        if (name.includes("$")) continue;
        const path = resolve(dirname(envrc), name);
        if (records.some((record) => record.path === path)) continue;
        if (!roots.some((root) => isAtOrBelow(path, root) && path !== root)) continue;
        const state = kind === "path-folder" ? folderEntries(path) : await headDigest(path, MAX_LOADED_BYTES);
        records.push({ path, envrc, command: parts.join(" "), kind, state });
      }
    }
  }
  return records;
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
    const effect = `${EFFECTS[record.kind]}, outside any sandbox, when you next enter that folder`;
    const state = record.state;
    if (state instanceof Map) {
      const changed = [...folderEntries(record.path)]
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

/** The files and folders a simple command of an `.envrc` has direnv load, relative to the `.envrc`'s folder. */
function loadedBy(parts: readonly string[]): { name: string; kind: DirenvLoad }[] {
  const [command, ...words] = parts;
  const operands = words.filter((word) => !word.startsWith("-"));
  switch (command) {
    case "dotenv":
    case "dotenv_if_exists":
      return [{ name: operands[0] ?? ".env", kind: "variables" }];
    case "source_env":
    case "source_env_if_exists":
      return operands[0] === undefined ? [] : [{ name: operands[0], kind: "script" }];
    case "PATH_add":
      return operands.map((name) => ({ name, kind: "path-folder" }));
    case "layout":
      return operands[0] === "node" ? [{ name: "node_modules/.bin", kind: "path-folder" }] : [];
    case "use":
      return nixFiles(operands);
    default:
      return [];
  }
}

/** The nix files of `use flake [ref]` (a local one: `.`, `./nix#dev`) and `use nix [file.nix]`. */
function nixFiles(operands: readonly string[]): { name: string; kind: DirenvLoad }[] {
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
