/**
 * The workspace files a hook or the approval command runs (`sh scripts/hook.sh`, `node
 * "$CLAUDE_PROJECT_DIR"/.claude/hooks/check.js`, `./approve.sh`, `cd .hooks && sh check.sh`, `npm run lint`),
 * protected like `.mewcode` for the session and fingerprinted into a repository's trust: trust covers a
 * repository's settings and what they run, and a model that rewrote a script (WriteFile in acceptEdits, or
 * a command) would decide its own calls, or run its code outside the sandbox through the user's hook.
 *
 * A command is read the way a shell would find its files, without running it: `$MEWCODE_PROJECT_DIR`,
 * `$CLAUDE_PROJECT_DIR`, `$PWD` and `$(pwd)` are the root; a folder it changes to (`cd`, `pushd`) is
 * protected whole and its words are looked up there too; a word names a file as written or with a script's
 * extension (`node .hooks/check` runs `.hooks/check.js`); a path that does not exist yet is protected as
 * named, so it cannot be made; and a task runner's file is its script (`npm run` reads package.json, `make`
 * the Makefile).
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { lstatOrNull, realPathOrNull, statOrNull } from "../common/fs.ts";
import { basename, dirname, isAbsolute, join, normalize, relative } from "../common/path.ts";
import { isWithinRoot } from "../tools/_paths.ts";
import type { ProtectedPath } from "../tools/tool.ts";

const REASON = "a hook or the approval command of this session runs it, outside the model's control; " +
  "writing it is refused. Ask the user to make this change";

/** The root, as a command may name it. */
const PROJECT_DIR = /\$\{?(?:MEWCODE_PROJECT_DIR|CLAUDE_PROJECT_DIR|PWD)\}?|\$\(\s*pwd\s*\)|`\s*pwd\s*`/g;

/** Extensions an interpreter or a loader adds to a name given without one. */
const SCRIPT_EXTENSIONS = [
  ".sh",
  ".bash",
  ".js",
  ".mjs",
  ".cjs",
  ".node",
  ".ts",
  ".mts",
  ".py",
  ".rb",
  ".pl",
  ".php",
];

/** Programs that run what a file of the project says: the file is their script. */
const TASK_FILES: Readonly<Record<string, readonly string[]>> = {
  npm: ["package.json"],
  npx: ["package.json"],
  yarn: ["package.json"],
  pnpm: ["package.json"],
  bun: ["package.json"],
  deno: ["deno.json", "deno.jsonc"],
  make: ["Makefile", "makefile", "GNUmakefile"],
  just: ["justfile", "Justfile", ".justfile"],
  rake: ["Rakefile"],
  composer: ["composer.json"],
};

/** Files that make a folder a project of its own (a package of a monorepo), not a folder of scripts. */
const PROJECT_FILES: readonly string[] = [
  ...new Set(Object.values(TASK_FILES).flat()),
  "pyproject.toml",
  "setup.py",
  "Cargo.toml",
  "go.mod",
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
  "Gemfile",
];

/**
 * Whether a folder a command changes to (relative to `root`) is a project of its own (`cd web && npm run fmt`),
 * not a folder of scripts (`cd .hooks && sh check.sh`, whose check.sh may source its neighbours).
 */
async function isProjectFolder(root: string, folder: string): Promise<boolean> {
  for (const name of PROJECT_FILES) {
    if ((await statOrNull(join(root, folder, name)))?.isFile === true) return true;
  }
  return false;
}

/** Characters after which a word is a pattern or an expansion, never a file's name. */
const NOT_A_NAME = /[$*?[\]{}`~]/;

/**
 * The protections of what `commands` run inside `root`: workspace-relative paths (as their real paths name
 * them, or as named when missing), folders a command changes to marked `folder`.
 */
export async function commandScriptProtections(
  root: string,
  commands: readonly string[],
): Promise<ProtectedPath[]> {
  const { files, folders } = await commandScripts(root, commands);
  return [
    ...[...folders].map((path) => ({ path, anyDepth: false, folder: true, reason: REASON })),
    ...[...files].filter((path) => ![...folders].some((folder) => path.startsWith(`${folder}/`))).map((
      path,
    ) => ({ path, anyDepth: false, reason: REASON })),
  ];
}

/**
 * The files and folders that stand for what `commands` run, read file by file for the trust of a repository's
 * settings (src/config/settings.ts) and for the state a hook's scripts started the session with
 * (`commandScriptsState`): as `commandScriptProtections`, but a project folder a command changes to
 * (`isProjectFolder`: `cd web && npm run fmt`) stands for the files the command names in it (its project file,
 * its scripts), the files its tasks name and its task runner's config, not for every file: its sources change
 * with every edit.
 */
export async function watchedCommandScripts(
  root: string,
  commands: readonly string[],
): Promise<{ files: string[]; folders: string[] }> {
  const { files, folders } = await commandScripts(root, commands);
  const scriptFolders: string[] = [];
  for (const folder of folders) {
    if (!await isProjectFolder(root, folder)) {
      scriptFolders.push(folder);
      continue;
    }
    // What the project's task runner runs: its scripts' files (`"fmt": "node tools/pretty.js"`, run in the
    // folder), and the config files that change how it runs them (`.npmrc`'s `script-shell`).
    for (const task of await projectTasks(root, folder)) {
      for (const file of await namedFiles(root, folder, task)) files.add(file);
    }
    for (const name of RUNNER_CONFIG_FILES) {
      if ((await statOrNull(join(root, folder, name)))?.isFile === true) files.add(join(folder, name));
    }
  }
  const inScriptFolder = (path: string) => scriptFolders.some((folder) => path.startsWith(`${folder}/`));
  return { files: [...files].filter((path) => !inScriptFolder(path)), folders: scriptFolders };
}

/** Files in a project folder that change what its task runner runs or how. */
const RUNNER_CONFIG_FILES: readonly string[] = [
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  "bunfig.toml",
];

/** The most bytes of a project file read for its tasks. */
const MAX_PROJECT_FILE_BYTES = 1024 * 1024;
/** The most tasks of a project read: each word of one that names a path is looked up as a file. */
const MAX_PROJECT_TASKS = 200;
/** The most characters of a task read. */
const MAX_TASK_CHARS = 1_000;

/**
 * The files inside the workspace a task names by a path or a script's name (`node tools/pretty.js`,
 * `./scripts/build.sh`), relative to its project folder, that exist: a lighter reading than a hook's own
 * command gets (no extensions tried, nothing missing kept), since every task of the project is read.
 */
async function namedFiles(root: string, folder: string, task: string): Promise<string[]> {
  const found: string[] = [];
  for (const word of commandWords(task)) {
    if (word === "" || word.startsWith("-") || NOT_A_NAME.test(word)) continue;
    if (!word.includes("/") && !hasScriptExtension(word)) continue;
    const real = await realPathOrNull(isAbsolute(word) ? word : join(root, folder, word));
    if (real === null || !isWithinRoot(root, real) || (await statOrNull(real))?.isFile !== true) continue;
    found.push(relative(root, real));
  }
  return found;
}

/** The commands of a project folder's task definitions: package.json's `scripts`, deno.json's `tasks`. */
async function projectTasks(root: string, folder: string): Promise<string[]> {
  const tasks: string[] = [];
  for (
    const [name, field] of [["package.json", "scripts"], ["deno.json", "tasks"], ["deno.jsonc", "tasks"]]
  ) {
    const path = join(root, folder, name!);
    const info = await statOrNull(path);
    if (info?.isFile !== true || info.size > MAX_PROJECT_FILE_BYTES) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await Deno.readTextFile(path));
    } catch {
      continue;
    }
    const entries = typeof parsed === "object" && parsed !== null
      ? (parsed as Record<string, unknown>)[field!]
      : undefined;
    if (typeof entries !== "object" || entries === null) continue;
    for (const value of Object.values(entries)) {
      const command = typeof value === "string" ? value : typeof value === "object" && value !== null &&
          typeof (value as { command?: unknown }).command === "string"
        ? (value as { command: string }).command
        : null;
      if (command !== null) tasks.push(command.slice(0, MAX_TASK_CHARS));
      if (tasks.length >= MAX_PROJECT_TASKS) return tasks;
    }
  }
  return tasks;
}

/** A command line's words, split at blanks and shell operators, without quotes. */
function commandWords(command: string): string[] {
  return command.split(/[\s;&|()<>=]+/).map((part) => part.replaceAll(/["']/g, ""));
}

/** The files (workspace-relative) and the folders a command changes to of what `commands` run. */
async function commandScripts(
  root: string,
  commands: readonly string[],
): Promise<{ files: Set<string>; folders: Set<string> }> {
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const command of commands) {
    const words = commandWords(command.replaceAll(PROJECT_DIR, root));
    const bases = [root];
    for (const [index, word] of words.entries()) {
      if (index === 0 || !["cd", "pushd"].includes(words[index - 1]!) || NOT_A_NAME.test(word)) continue;
      const real = await realPathOrNull(isAbsolute(word) ? word : join(root, word));
      if (real === null || real === root || !isWithinRoot(root, real)) continue;
      if ((await statOrNull(real))?.isDirectory !== true) continue;
      folders.add(relative(root, real));
      bases.push(real);
    }
    for (const word of words) {
      if (word === "" || word.startsWith("-") || NOT_A_NAME.test(word)) continue;
      for (const name of TASK_FILES[basename(word)] ?? []) {
        for (const base of bases) await addFile(root, join(base, name), files);
      }
      let found = false;
      let foundBelow = false;
      const missing: string[] = [];
      for (const base of isAbsolute(word) ? [root] : bases) {
        const named = isAbsolute(word) ? word : join(base, word);
        if (await addFile(root, named, files)) {
          found = true;
          foundBelow ||= base !== root;
          continue;
        }
        // The name as written is missing: an interpreter tries it first, then with an extension (node runs
        // `.hooks/check` before `.hooks/check.js`), so every one of them is the script once it is made.
        missing.push(named);
        for (const candidate of SCRIPT_EXTENSIONS.map((extension) => named + extension)) {
          if (await addFile(root, candidate, files)) {
            found = true;
            foundBelow ||= base !== root;
          } else if (!hasScriptExtension(word)) missing.push(candidate);
        }
      }
      // Found in a folder the command changes to (protected whole), it is not the root's.
      if (!foundBelow && (found || word.includes("/") || hasScriptExtension(word))) {
        for (const path of missing) await addMissing(root, path, files);
      }
    }
  }
  return { files, folders };
}

function hasScriptExtension(word: string): boolean {
  return SCRIPT_EXTENSIONS.some((extension) => word.endsWith(extension));
}

/** Adds the file at `path` when it is one inside the root (by its real path); whether it was. */
async function addFile(root: string, path: string, files: Set<string>): Promise<boolean> {
  const real = await realPathOrNull(path);
  if (real === null || real === root || !isWithinRoot(root, real)) return false;
  if ((await statOrNull(real))?.isFile !== true) return false;
  files.add(relative(root, real));
  return true;
}

/**
 * Adds a path that names nothing yet, when it would lie inside the root: it cannot be made. Named from the
 * real path of its nearest folder that exists (the folders below it would be made too).
 */
async function addMissing(root: string, path: string, files: Set<string>): Promise<void> {
  if (await statOrNull(path) !== null) return;
  let existing = normalize(path);
  const rest: string[] = [];
  while (true) {
    rest.unshift(basename(existing));
    existing = dirname(existing);
    const real = await realPathOrNull(existing);
    if (real !== null) {
      if (real !== root && !isWithinRoot(root, real)) return;
      const named = relative(root, join(real, ...rest));
      if (named !== "" && !named.startsWith("..")) files.add(named);
      return;
    }
    if (existing === dirname(existing)) return;
  }
}

/**
 * Entries of a script folder walked at most (`scriptFolderEntries`), folders counted with files: a folder of
 * scripts is small, and a bound on files alone would let a tree of a million empty folders make the trust
 * check at each start, and the state check before each run of a hook, walk every one of them.
 */
const MAX_SCRIPT_FOLDER_ENTRIES = 2_000;
/** Bytes of one script read at most for its state; a larger file counts by its size and times. */
const MAX_STATE_BYTES = 16 * 1024 * 1024;

/**
 * An entry of a script folder's walk, workspace-relative: a folder (the walked one first), one whose
 * entries could not be listed, or anything else (a file, a link: links are never followed).
 */
export interface ScriptFolderEntry {
  kind: "folder" | "unreadable-folder" | "file";
  path: string;
}

/**
 * The entries of `folder` (relative to `root`, a folder a hook changes to) and of the folders below it,
 * breadth first and in name order within each folder, for the trust fingerprint (src/config/settings.ts) and
 * for the state of a hook's scripts (`commandScriptsState`): one walk, so both cover the same files. At most
 * `MAX_SCRIPT_FOLDER_ENTRIES` entries below `folder` are taken, folders and files alike; once one had to be
 * left out, the folders taken but not walked yet are not listed (none of their entries would be taken).
 */
export async function scriptFolderEntries(root: string, folder: string): Promise<ScriptFolderEntry[]> {
  const walked: ScriptFolderEntry[] = [];
  const pending = [folder];
  let taken = 0;
  let full = false;
  while (pending.length > 0) {
    const path = pending.shift()!;
    const entries = full ? [] : await sortedEntries(join(root, path));
    if (entries === null) {
      walked.push({ kind: "unreadable-folder", path });
      continue;
    }
    walked.push({ kind: "folder", path });
    for (const entry of entries) {
      if (taken === MAX_SCRIPT_FOLDER_ENTRIES) {
        full = true;
        break;
      }
      taken++;
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory) pending.push(child);
      else walked.push({ kind: "file", path: child });
    }
  }
  return walked;
}

/** A folder's entries by name (in UTF-16 code unit order, whatever the locale), or null when unlistable. */
async function sortedEntries(path: string): Promise<Deno.DirEntry[] | null> {
  try {
    const entries = await Array.fromAsync(Deno.readDir(path));
    return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  } catch {
    return null;
  }
}

/**
 * The bytes of the file at `path` (a link is read as what it leads to), or null when it is not a regular
 * file (a folder; a pipe or a device, which may block when opened or never end), holds more than `maxBytes`
 * or cannot be read. Its size is looked at before it is opened, and it is read no further than `maxBytes`:
 * it may grow in between, and some files (in /proc) say a size of 0 whatever they hold.
 */
export async function readScriptBytes(
  path: string,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  const info = await statOrNull(path);
  if (info?.isFile !== true || info.size > maxBytes) return null;
  try {
    using file = await Deno.open(path);
    // One byte past the size looked at, to see the end; a file that grew since is read on, to the limit.
    let bytes = new Uint8Array(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    while (true) {
      if (length === bytes.length) {
        if (length > maxBytes) return null;
        const grown = new Uint8Array(Math.min(length * 2, maxBytes + 1));
        grown.set(bytes);
        bytes = grown;
      }
      const read = await file.read(bytes.subarray(length));
      if (read === null) return bytes.subarray(0, length);
      length += read;
    }
  } catch {
    return null;
  }
}

/**
 * What the workspace files `command` runs are now (`commandScriptProtections`: which paths, where they
 * lead, their bytes), as one string: a hook or the approval command whose state differs from the one its
 * session started with runs something the model may have written (a command in the sandbox can make a
 * script that was missing, which no read-only mount covers), and is not run.
 */
export async function commandScriptsState(root: string, command: string): Promise<string> {
  const lines: string[] = [];
  const watched = await watchedCommandScripts(root, [command]);
  for (const file of watched.files) lines.push(await fileState(root, file));
  for (const folder of watched.folders) {
    for (const entry of await scriptFolderEntries(root, folder)) lines.push(await entryState(root, entry));
  }
  return lines.join("\n");
}

/** A script folder's entry's line of a state. */
async function entryState(root: string, entry: ScriptFolderEntry): Promise<string> {
  switch (entry.kind) {
    case "folder":
      return `${entry.path}/`;
    case "unreadable-folder":
      return `${entry.path}/ unreadable`;
    case "file":
      return await fileState(root, entry.path);
    default:
      return assertNever(entry.kind);
  }
}

/** One file's line of a state: its path, where it leads and a hash of its bytes. */
async function fileState(root: string, path: string): Promise<string> {
  const full = join(root, path);
  if (await lstatOrNull(full) === null) return `${path} missing`;
  const real = await realPathOrNull(full);
  const info = real === null ? null : await statOrNull(real);
  if (real === null || info === null) return `${path} unresolved`;
  if (!info.isFile || info.size > MAX_STATE_BYTES) {
    return `${path} -> ${real} ${
      info.isDirectory ? "folder" : "other"
    } ${info.size} ${info.mtime?.getTime()}`;
  }
  const bytes = await readScriptBytes(real, MAX_STATE_BYTES);
  if (bytes === null) return `${path} -> ${real} unreadable`;
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return `${path} -> ${real} ${encodeHex(new Uint8Array(digest))}`;
}

function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The state of the scripts of each command as the session started (`commandScriptsState`), taken when
 * made: before each run, `changed` says whether the command would now run other files.
 */
export class CommandScriptsBaseline {
  #root: string;
  #states = new Map<string, Promise<string>>();

  constructor(root: string, commands: readonly string[]) {
    this.#root = root;
    for (const command of commands) this.#take(command);
  }

  /** Null when the files `command` runs are as they were; else a sentence naming those that changed. */
  async changed(command: string): Promise<string | null> {
    const before = (await (this.#states.get(command) ?? this.#take(command))).split("\n");
    const now = (await commandScriptsState(this.#root, command)).split("\n");
    const differ = [
      ...now.filter((line) => !before.includes(line)),
      ...before.filter((line) => !now.includes(line)),
    ].map((line) => line.split(" ")[0]!);
    if (differ.length === 0) return null;
    const names = [...new Set(differ)].slice(0, 5).map((name) => JSON.stringify(name)).join(", ");
    return `the workspace files it runs changed during this session (${names}), maybe by the model's tools, ` +
      "so it was not run: check them, then start a new session";
  }

  #take(command: string): Promise<string> {
    const state = commandScriptsState(this.#root, command).catch((error) => `unreadable: ${error}`);
    this.#states.set(command, state);
    return state;
  }
}
