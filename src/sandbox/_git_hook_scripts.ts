/**
 * The workspace files a repository's git hooks run: `.git/hooks/pre-commit` holding `sh scripts/check.sh`,
 * or husky's `.husky/pre-commit` holding `./scripts/lint.sh`. The hook itself is protected (git_metadata.ts),
 * but a script it names is code the user's git runs just the same, outside any sandbox, at the next
 * `git commit`: a command that rewrites it plants code as surely as one that rewrites the hook. So is a hook
 * that is a symlink to a file of the working tree.
 *
 * A hook is read as simple commands, without running it: the program of each (`./scripts/check.sh`, a word
 * with a `/` or a script's extension) or the script an interpreter or `.`/`source` is given (`sh x.sh`,
 * `node tools/lint.js`, `python3 -m` is not a file), relative to the working tree (where git runs hooks) or
 * to the hook's folder, or absolute, when it is an existing file inside the root. A word the shell computes
 * (`$x/check.sh`) is not followed. The scripts found are read the same way, a few levels deep (`check.sh`
 * running `. scripts/lib.sh`). The config files of the hook managers
 * a hook names (`pre-commit`, `lint-staged`, `lefthook`, `overcommit`) and a `--config=FILE` are the hook's
 * commands too, existing or not. A task runner's file (`npm test` reads `package.json`) is not: protecting
 * it would make every dependency change ask. Private to src/sandbox/.
 *
 * @module
 */
import { lstatSyncOrNull, readTextHead, realPathSyncOrNull } from "../common/fs.ts";
import { dirname, isAbsolute, join, resolve } from "../common/path.ts";
import { isInside } from "./_git_layout.ts";

/** Hook files read per folder at most. */
const MAX_HOOKS = 64;
/** Scripts followed from a hook (a script the hook runs is 1, one that script runs is 2). */
const MAX_SCRIPT_DEPTH = 3;
/** Hooks and scripts read at most, all hooks folders of a repository together. */
const MAX_FILES_READ = 256;
/** Bytes of a hook read at most. */
const MAX_HOOK_BYTES = 64 * 1024;
/** Extensions that make a word without a `/` a script's name. */
const SCRIPT_EXTENSION = /\.(?:sh|bash|zsh|js|mjs|cjs|ts|mts|py|rb|pl|php)$/;
/** What ends a simple command in a hook. */
const COMMAND_SEPARATORS = /[\n;&|()`{}]+/;
/** Programs whose first word that is not an option is the script they run. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "node",
  "nodejs",
  "bun",
  "deno",
  "tsx",
  "ts-node",
  "python",
  "python3",
  "ruby",
  "perl",
  "php",
  ".",
  "source",
]);
/** Words before the program that leave it as it is (`exec ./x.sh`, `env A=1 ./x.sh`). */
const PREFIXES: ReadonlySet<string> = new Set([
  "exec",
  "command",
  "env",
  "nohup",
  "time",
  "then",
  "do",
  "else",
]);
/** Subcommands an interpreter takes before the script (`deno run x.ts`, `bun run x.ts`). */
const SUBCOMMANDS: ReadonlySet<string> = new Set(["run"]);

/**
 * Hook managers whose hook reads its commands from a file of the working tree, by a word of the hook that
 * names the manager, and those files: what they name runs at the next commit as the hook's own lines do. A
 * missing one counts too (a command could make one that takes precedence, or `lefthook-local.yml`, which
 * lefthook merges over its config).
 */
const HOOK_MANAGER_CONFIGS: Readonly<Record<string, readonly string[]>> = {
  "pre-commit": [".pre-commit-config.yaml"],
  "lint-staged": [
    ".lintstagedrc",
    ".lintstagedrc.json",
    ".lintstagedrc.yaml",
    ".lintstagedrc.yml",
    ".lintstagedrc.mjs",
    ".lintstagedrc.cjs",
    ".lintstagedrc.js",
    "lint-staged.config.js",
    "lint-staged.config.mjs",
    "lint-staged.config.cjs",
  ],
  lefthook: [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    "lefthook.toml",
    ".lefthook.toml",
    "lefthook.json",
    ".lefthook.json",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
  ],
  overcommit: [".overcommit.yml"],
};

/** What the hooks of a repository run from its working tree (absolute paths inside the root, each once). */
export interface HookFiles {
  /** Existing scripts the hooks' commands run, and files a hook is a symlink to. */
  scripts: HookFile[];
  /**
   * The hook managers' config files, existing or not (see `HOOK_MANAGER_CONFIGS`), and the file a hook's
   * `--config=FILE` names.
   */
  configs: HookFile[];
  /** The task runners' files the hooks' commands read (`npm test`: `package.json`), existing or not. */
  tasks: HookTask[];
}

/**
 * A file of the working tree a hook runs, and which hook: the hook itself for a script that a script it runs
 * runs in turn (`. scripts/lib.sh` in `scripts/check.sh`).
 */
export interface HookFile {
  /** Absolute path of the file, as the hook names it (`<worktree>/scripts/check.sh`). */
  path: string;
  /** Absolute path of the hook (`<gitdir>/hooks/pre-commit`, `.husky/pre-commit`). */
  hook: string;
  /**
   * `script`: the hook's commands run it; `hook-target`: the hook is a symlink to it; `config`: a hook
   * manager the hook starts reads the commands it runs from it (`.pre-commit-config.yaml`).
   */
  kind: "script" | "hook-target" | "config";
}

/** A task runner's file a hook's command reads, which is not protected (see git_hook_tasks.ts). */
export interface HookTask {
  /** Absolute path of the file (`package.json` of the working tree). */
  path: string;
  /** Absolute path of the hook. */
  hook: string;
  /** The command, as the hook says it (`npm test`). */
  command: string;
}

/** Programs that run what a file of the working tree says: the file is their script. */
const TASK_FILES: Readonly<Record<string, readonly string[]>> = {
  // With the runner's own config, which changes how it runs them (`.npmrc`'s `script-shell` and
  // `node-options`, `.yarnrc.yml`'s `yarnPath`, which yarn runs for any command).
  npm: ["package.json", ".npmrc"],
  npx: ["package.json", ".npmrc"],
  yarn: ["package.json", ".yarnrc", ".yarnrc.yml", ".npmrc"],
  pnpm: ["package.json", ".npmrc", ".pnpmfile.cjs"],
  bun: ["package.json", "bunfig.toml"],
  deno: ["deno.json", "deno.jsonc"],
  make: ["Makefile", "makefile", "GNUmakefile"],
  just: ["justfile", "Justfile", ".justfile"],
  rake: ["Rakefile"],
  composer: ["composer.json"],
};

/**
 * What the hooks in `folders` run from the working tree: scripts, hook managers' configs and task runners'
 * files. `worktree` is
 * where git runs the hooks (null for a bare repository). Never throws.
 */
export async function hookScripts(
  folders: readonly string[],
  options: { root: string; worktree: string | null },
): Promise<HookFiles> {
  const scripts = new Map<string, HookFile>();
  const configs = new Map<string, HookFile>();
  const tasks = new Map<string, HookTask>();
  const inRoot = (path: string): boolean => path !== options.root && isInside(options.root, path);
  // The hooks, then the scripts they run (what those run in turn, `. scripts/lib.sh`), a few levels deep.
  const queue: { file: string; folder: string; depth: number; hook: string }[] = [];
  for (const folder of folders) {
    for (const hook of hookFiles(folder)) {
      // A hook linked to a file of the working tree (`ln -s ../../scripts/pre-commit .git/hooks/`) is that
      // file: binding the hooks folder pins the link, not what it leads to.
      const target = isFileLink(hook) ? realPathSyncOrNull(hook) : null;
      if (target !== null && inRoot(target)) scripts.set(target, { path: target, hook, kind: "hook-target" });
      queue.push({ file: hook, folder, depth: 0, hook });
    }
  }
  for (let next = 0; next < queue.length && next < MAX_FILES_READ; next++) {
    const { file, folder, depth, hook } = queue[next]!;
    const text = await readTextHead(file, MAX_HOOK_BYTES);
    if (text === null) continue;
    for (const word of scriptWords(text)) {
      const bases = isAbsolute(word) ? [word] : [
        ...(options.worktree === null ? [] : [resolve(options.worktree, word)]),
        resolve(folder, word),
      ];
      for (const path of bases) {
        if (scripts.has(path) || !inRoot(path)) continue;
        if (lstatSyncOrNull(path)?.isFile !== true && !isFileLink(path)) continue;
        scripts.set(path, { path, hook, kind: "script" });
        if (depth < MAX_SCRIPT_DEPTH) {
          queue.push({ file: path, folder: dirname(path), depth: depth + 1, hook });
        }
      }
    }
    if (options.worktree === null) continue;
    for (const name of configWords(text)) {
      const path = resolve(options.worktree, name);
      if (inRoot(path) && !configs.has(path)) configs.set(path, { path, hook, kind: "config" });
    }
    for (const parts of simpleCommands(text)) {
      const program = parts[programIndex(parts)];
      for (const name of program === undefined ? [] : TASK_FILES[basenameOf(program)] ?? []) {
        const path = resolve(options.worktree, name);
        // Missing too: one a command makes (`.yarnrc.yml`) changes what the hook runs as much.
        if (tasks.has(path) || !inRoot(path)) continue;
        tasks.set(path, { path, hook: file, command: parts.slice(programIndex(parts)).join(" ") });
      }
    }
  }
  return { scripts: [...scripts.values()], configs: [...configs.values()], tasks: [...tasks.values()] };
}

/** The hook managers' config files a hook reads (`HOOK_MANAGER_CONFIGS`) and its `--config=FILE` words. */
function configWords(text: string): string[] {
  const names: string[] = [];
  const code = text.split("\n").filter((line) => !line.trimStart().startsWith("#")).join("\n");
  const words = code.split(/[\s;&|()<>`"']+/).filter((word) => word !== "" && !word.includes("$"));
  for (const [index, word] of words.entries()) {
    const manager = word.replace(/^-m/, "").replaceAll("_", "-");
    names.push(...HOOK_MANAGER_CONFIGS[basenameOf(manager)] ?? []);
    if (word.startsWith("--config=")) names.push(word.slice("--config=".length));
    else if (word === "--config" && words[index + 1] !== undefined) names.push(words[index + 1]!);
  }
  return names.filter((name) => name !== "" && !name.startsWith("-"));
}

/** The words of each simple command of a hook (comments left out, quotes around words removed). */
export function simpleCommands(text: string): string[][] {
  const lines = text.split("\n").filter((line) => !line.trimStart().startsWith("#")).join("\n");
  return lines.split(COMMAND_SEPARATORS)
    .map((command) => command.split(/\s+/).map(unquote).filter((word) => word !== ""))
    .filter((parts) => parts.length > 0);
}

/** The index of a simple command's program: past `exec`, `env` and the like, and assignments. */
export function programIndex(parts: readonly string[]): number {
  let index = 0;
  while (
    index < parts.length && (PREFIXES.has(parts[index]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(parts[index]!))
  ) {
    index++;
  }
  return index;
}

/** The words of a hook's simple commands that name the script each runs (see the module doc). */
function scriptWords(text: string): string[] {
  const words: string[] = [];
  for (const parts of simpleCommands(text)) {
    let index = programIndex(parts);
    const program = parts[index];
    if (program === undefined || program.includes("$")) continue;
    if (!INTERPRETERS.has(basenameOf(program))) {
      if (program.includes("/") || SCRIPT_EXTENSION.test(program)) words.push(program);
      continue;
    }
    // The script: the first word after the interpreter that is not an option (nor `run`).
    for (index++; index < parts.length; index++) {
      const word = parts[index]!;
      if (word.startsWith("-")) {
        // `python3 -m module` and `node -e code` run no file of their own.
        if (word === "-m" || word === "-e" || word === "-c" || word === "--eval") break;
        continue;
      }
      if (SUBCOMMANDS.has(word) && index === parts.findIndex((part) => part === word)) continue;
      if (!word.includes("$")) words.push(word);
      break;
    }
  }
  return words;
}

/** A word without the quotes around it (`"scripts/check.sh"`). */
function unquote(word: string): string {
  return word.replace(/^["']+|["']+$/g, "");
}

/** The last part of a path. */
export function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The files of a hooks folder git or husky may run (not git's `*.sample`), sorted, at most `MAX_HOOKS`. */
export function hookFiles(folder: string): string[] {
  try {
    return [...Deno.readDirSync(folder)]
      .filter((entry) => (entry.isFile || entry.isSymlink) && !entry.name.endsWith(".sample"))
      .map((entry) => entry.name)
      .sort()
      .slice(0, MAX_HOOKS)
      .map((name) => join(folder, name));
  } catch {
    return [];
  }
}

/** Whether `path` is a symlink to a file (its target is protected as the hook's script). */
function isFileLink(path: string): boolean {
  if (lstatSyncOrNull(path)?.isSymlink !== true) return false;
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
