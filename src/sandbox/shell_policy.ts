/**
 * What the sandboxed shell may see of the machine, decided once per session from the file system: the
 * environment it gets, the home folders and system secrets it does not see, the toolchains it keeps,
 * and the protected paths of the workspace, decided again before each call.
 *
 * @module
 */
import { lstatOrNull, realPathOrNull, realPathSyncOrNull } from "../common/fs.ts";
import { dirname, isAbsolute, join } from "../common/path.ts";
import type { ProtectedPath } from "../tools/tool.ts";
import { isAtOrBelow } from "./bubblewrap.ts";
import { credentialPlaces } from "../common/home_credentials.ts";
import { isEmptyDirectory } from "./kept_sandbox.ts";
import { entryType, madeEntry } from "./_made_entries.ts";
import { setAside, type SetAsideBudget, type SetAsideOutcome } from "./_set_aside.ts";
import { EntryProbe } from "./_entry_probe.ts";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Variables copied from the parent environment when set: locale, identity and toolchain locations, no secrets. */
const ALLOWED_ENV = [
  "PATH",
  "USER",
  "LOGNAME",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_NUMERIC",
  "LC_TIME",
  "TZ",
  "JAVA_HOME",
  "GOROOT",
  "GOPATH",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "NVM_DIR",
  "PYENV_ROOT",
  "VIRTUAL_ENV",
] as const;

/** Settings that keep programs from waiting for a terminal, a pager, an editor or a password. */
const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  TERM: "dumb",
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  EDITOR: "true",
  VISUAL: "true",
  GIT_EDITOR: "true",
  GIT_TERMINAL_PROMPT: "0",
  GIT_SSH_COMMAND: "ssh -o BatchMode=yes",
  GH_PROMPT_DISABLED: "1",
  DEBIAN_FRONTEND: "noninteractive",
  PIP_NO_INPUT: "1",
  CI: "1",
  NO_COLOR: "1",
};

/**
 * Toolchain folders under a home folder that stay visible (read-only): compilers, interpreters and
 * package caches, never the credentials that sit next to them (`~/.cargo/credentials.toml` is not in
 * `~/.cargo/bin`). Each is relative to the home unless an environment variable names it.
 */
const TOOLCHAIN_FOLDERS: readonly { variable?: string; path: string; parts?: readonly string[] }[] = [
  { variable: "RUSTUP_HOME", path: ".rustup" },
  { variable: "CARGO_HOME", path: ".cargo", parts: ["bin", "registry", "git"] },
  { variable: "PYENV_ROOT", path: ".pyenv" },
  { variable: "NVM_DIR", path: ".nvm" },
  { variable: "GOPATH", path: "go", parts: ["bin", "pkg/mod"] },
  { variable: "GOROOT", path: ".go" },
  { variable: "JAVA_HOME", path: ".jdk" },
  { variable: "VIRTUAL_ENV", path: ".venv" },
  { path: ".local/bin" },
  { path: ".local/lib" },
  { path: ".deno" },
  { path: ".cache/deno" },
  { path: ".bun" },
  { path: ".volta" },
  { path: ".asdf" },
  { path: ".rbenv" },
  { path: ".sdkman/candidates" },
];

/** System files that hold secrets readable by root. */
const SYSTEM_SECRET_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
/** System folders that hold host sockets or secrets. */
const SYSTEM_HIDDEN_DIRECTORIES = ["/run", "/var/run", "/etc/ssl/private"];

/** What the shell sees of the machine outside the workspace, for one session. */
export interface MachineView {
  env: Record<string, string>;
  home: string | undefined;
  homeRoots: string[];
  exposed: string[];
  hiddenFiles: string[];
  hiddenDirectories: string[];
  hiddenInWorkspace: { path: string; kind: "file" | "directory" }[];
  /** Existing real paths of excluded folders (mewcode's state), hidden by a tmpfs. */
  excluded: string[];
}

/** The inputs of `machineView`. */
export interface MachineViewOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`), treated like it. Default none. */
  additionalRoots?: readonly string[];
  /** The parent environment the allowlist is taken from. */
  env: Readonly<Record<string, string>>;
  /** The absolute path of the shell, for SHELL. */
  shell: string;
  /** Folders the tools treat as outside the workspace (mewcode's state folder). */
  excluded: readonly string[];
}

/** Decides the environment and the visible machine for the shell. Never throws. */
export async function machineView(options: MachineViewOptions): Promise<MachineView> {
  const { root } = options;
  const roots = [root, ...options.additionalRoots ?? []];
  const home = await realPathOrNull(options.env.HOME ?? "");
  const homeRoots: string[] = [];
  for (const candidate of ["/home", "/root", ...(home === null ? [] : [home])]) {
    const real = await realPathOrNull(candidate);
    if (real === null || real === "/" || !(await isDirectory(real))) continue;
    if (homeRoots.some((existing) => isAtOrBelow(real, existing))) continue;
    homeRoots.push(real);
  }
  const hiddenDirectories: string[] = [];
  const runtimeDir = options.env.XDG_RUNTIME_DIR;
  for (const candidate of [...SYSTEM_HIDDEN_DIRECTORIES, ...(runtimeDir ? [runtimeDir] : [])]) {
    const info = await lstatOrNull(candidate);
    // A symlink (/var/run -> /run) is covered by hiding its target.
    if (info === null || !info.isDirectory || isAtOrBelow(root, candidate)) continue;
    if (!hiddenDirectories.some((existing) => isAtOrBelow(candidate, existing))) {
      hiddenDirectories.push(candidate);
    }
  }
  const hiddenFiles: string[] = [];
  for (const file of [...SYSTEM_SECRET_FILES, ...await sshHostKeys()]) {
    if ((await lstatOrNull(file))?.isFile) hiddenFiles.push(file);
  }
  const exposed = await exposedPaths(options, home, [...homeRoots, ...hiddenDirectories]);
  // The home's credentials, when its bind (as the workspace or an added folder) would show them again.
  const hiddenInWorkspace = credentialPlaces(roots, home ?? undefined)
    .filter((place) => place.state === "present")
    .map(({ path, kind }) => ({ path, kind }));
  const excluded: string[] = [];
  for (const folder of options.excluded) {
    const real = await realPathOrNull(folder);
    if (real !== null && (await isDirectory(real))) excluded.push(real);
  }
  return {
    env: shellEnvironment(options.env, home ?? undefined, options.shell),
    home: home ?? undefined,
    homeRoots,
    exposed,
    hiddenFiles,
    hiddenDirectories,
    hiddenInWorkspace,
    excluded,
  };
}

/** The shell's complete environment: the allowlist, HOME, SHELL and the non-interactive settings. */
export function shellEnvironment(
  parent: Readonly<Record<string, string>>,
  home: string | undefined,
  shell: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ALLOWED_ENV) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  if (env.LANG === undefined && env.LC_ALL === undefined) env.LANG = "C.UTF-8";
  if (home !== undefined) env.HOME = home;
  env.SHELL = shell;
  return { ...env, ...NON_INTERACTIVE_ENV };
}

/**
 * Paths that must stay visible although they lie in a hidden folder: toolchain folders under a home,
 * PATH entries, and the target of /etc/resolv.conf (often under /run).
 */
async function exposedPaths(
  options: MachineViewOptions,
  home: string | null,
  hiddenRoots: readonly string[],
): Promise<string[]> {
  const candidates: string[] = [];
  for (const entry of (options.env.PATH ?? "").split(":")) {
    if (isAbsolute(entry)) candidates.push(entry);
  }
  if (home !== null) {
    for (const folder of TOOLCHAIN_FOLDERS) {
      const named = folder.variable === undefined ? undefined : options.env[folder.variable];
      const base = named !== undefined && isAbsolute(named) ? named : join(home, folder.path);
      for (const part of folder.parts ?? [""]) candidates.push(part === "" ? base : join(base, part));
    }
  }
  const resolver = await realPathOrNull("/etc/resolv.conf");
  if (resolver !== null) candidates.push(resolver);
  const exposed: string[] = [];
  for (const candidate of candidates) {
    const real = await realPathOrNull(candidate);
    if (real === null || !hiddenRoots.some((hidden) => isAtOrBelow(real, hidden))) continue;
    // Never expose the parents of the workspace (or of an added folder) or mewcode's state through a
    // toolchain path.
    if ([options.root, ...options.additionalRoots ?? []].some((folder) => isAtOrBelow(folder, real))) {
      continue;
    }
    if (options.excluded.some((folder) => isAtOrBelow(folder, real) || isAtOrBelow(real, folder))) continue;
    if (real === home || hiddenRoots.includes(real)) continue;
    if (!exposed.includes(real)) exposed.push(real);
  }
  return exposed.sort();
}

async function sshHostKeys(): Promise<string[]> {
  const keys: string[] = [];
  try {
    for await (const entry of Deno.readDir("/etc/ssh")) {
      if (/^ssh_host_.*_key$/.test(entry.name)) keys.push(join("/etc/ssh", entry.name));
    }
  } catch {
    // No /etc/ssh: nothing to hide.
  }
  return keys.sort();
}

/**
 * Protected files a command may make: `git submodule add` writes `.gitmodules`, and git ignores the commands
 * one could name (`update = !…`) and its `ext::` URLs.
 */
const MADE_BY_COMMANDS: ReadonlySet<string> = new Set([".gitmodules"]);

/**
 * Existing protected paths of the workspace's top level, and protected folders that do not exist yet or are
 * empty. An empty one may be another session's placeholder, which that session removes when its call ends:
 * bound onto itself it would have to exist when the sandbox starts; covered by a placeholder it need not.
 * Missing protected files (but `MADE_BY_COMMANDS`) and nested folders are `mustNotBeMade`, where every
 * folder on their way that exists is a real one: a symlink on the way after the call was made by it (see
 * `setAsideMade`).
 */
export function protectedTopLevel(
  root: string,
  protectedPaths: readonly ProtectedPath[],
  options: { probe?: EntryProbe } = {},
): { readOnly: string[]; placeholders: string[]; mustNotBeMade: string[] } {
  const probe = options.probe ?? new EntryProbe([root]);
  const readOnly: string[] = [];
  const placeholders: string[] = [];
  const mustNotBeMade: string[] = [];
  for (const entry of protectedPaths) {
    if (entry.anyDepth || (entry.within !== undefined && entry.within !== root)) continue;
    const path = join(root, entry.path);
    const info = probe.lstat(path);
    const placeholder = entry.folder === true && !entry.path.includes("/");
    if (info === null) {
      // A missing top-level folder gets an empty read-only placeholder for the call; a missing file cannot
      // (an empty file would stand in for it), nor a nested folder (a placeholder's mount point would be made
      // in a folder the home's view may bind from elsewhere): what a command makes of them (.mcp.json, a
      // hook's script, go/bin of a home) is removed after the call.
      if (placeholder) placeholders.push(path);
      else if (!MADE_BY_COMMANDS.has(entry.path)) {
        // Through a folder that is a symlink (the user's), or under a file, the path is not here to guard.
        if (realFoldersOnTheWay(root, path, probe)) mustNotBeMade.push(path);
      }
      continue;
    }
    if (placeholder && info.isDirectory && isEmptyDirectory(path)) {
      placeholders.push(path);
      continue;
    }
    if (info.isSymlink) {
      const real = realPathSyncOrNull(path);
      if (real !== null && isAtOrBelow(real, root)) readOnly.push(real);
      continue;
    }
    readOnly.push(path);
  }
  return { readOnly, placeholders, mustNotBeMade };
}

/** Whether every folder between `root` and `path` (a path inside it) that exists is a real folder. */
function realFoldersOnTheWay(root: string, path: string, probe: EntryProbe): boolean {
  for (let folder = dirname(path); folder !== root && isAtOrBelow(folder, root); folder = dirname(folder)) {
    const info = probe.lstat(folder);
    if (info !== null && !info.isDirectory) return false;
  }
  return true;
}

/** What `setAsideMade` found where a path was to stay missing, and where it went. */
export interface MadePath {
  /** What was there: the path itself, or a symlink the command made on its way. */
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  outcome: SetAsideOutcome;
}

/**
 * Undoes what a call made of paths that were to stay missing (`mustNotBeMade`), each inside one of `roots`:
 * a symlink on the way goes, never followed (`madeEntry`; a folder the call renamed away stays where it put
 * it), and so does the path itself, with all it holds when a folder. Each goes into `setAsideIn`
 * (`_set_aside.ts`: the user may have made it on the host while the command ran), or is removed where it
 * cannot. Never throws.
 */
export async function setAsideMade(
  paths: readonly string[],
  roots: readonly string[],
  setAsideIn: string | null = null,
  budget?: SetAsideBudget,
): Promise<MadePath[]> {
  const found: MadePath[] = [];
  for (const planned of paths) {
    const made = madeEntry(planned, roots);
    if (made === null) continue;
    const type = entryType(made.info);
    const outcome = await setAside(made, {
      folder: setAsideIn,
      roots,
      recursive: type === "directory",
      ...(budget === undefined ? {} : { budget }),
    });
    found.push({ path: made.path, type, outcome });
  }
  return found;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}
