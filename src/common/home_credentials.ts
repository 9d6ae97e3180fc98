/**
 * The credentials and start-up files a home folder holds, hidden from every tool when the workspace or an
 * added folder holds the home (mewcode run in `~`, or `--add-dir ~`), where the workspace's own rules would
 * show them: the shell sandbox covers those that exist (folders with an empty tmpfs, files with /dev/null,
 * `src/sandbox/shell_policy.ts`) and keeps the missing ones from being made (`credentialPlaces`), and
 * the file tools treat them as outside the workspace, missing ones included (`excludedPaths`,
 * `src/execution/runtime.ts`), so a model can neither read, search, list, overwrite nor create them,
 * directly or through a link.
 *
 * @module
 */
import { lstatSyncOrNull, realPathSyncOrNull } from "./fs.ts";
import { join, relative } from "./path.ts";
import type { ProtectedPath } from "../tools/tool.ts";

/** The files a shell runs when it starts or ends (also protected at any workspace's top level). */
export const SHELL_STARTUP_FILES: readonly string[] = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".cshrc",
  ".tcshrc",
];

/** The credential folders of a home (the first entries of `HOME_CREDENTIALS`). */
const CREDENTIAL_FOLDER_NAMES: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".gnupg",
  ".config",
  ".kube",
  ".docker",
  ".password-store",
  ".local/share/keyrings",
  ".mozilla",
  ".terraform.d",
  // Other agents' and tools' logins, tokens and transcripts; mewcode's own state folder when it lies elsewhere.
  ".claude",
  ".codex",
  ".gemini",
  ".mewcode",
  ".cache/huggingface",
  ".ollama",
  ".kaggle",
  ".pulumi",
  ".fly",
  ".netlify",
  ".wrangler",
  ".supabase",
  ".railway",
  ".render",
  ".expo",
  ".twilio-cli",
  ".huggingface",
  ".oci",
  ".tsh",
  ".nuget",
  ".dbt",
  ".snowflake",
  ".snowsql",
  ".circleci",
  ".ngrok2",
  ".minikube",
  ".cf",
  ".ibmcloud",
  ".vagrant.d",
  ".streamlit",
  ".jupyter",
  ".local/share/com.vercel.cli",
  ".local/share/jupyter",
  // Code that runs later: scripts a shell's start-up sources, programs found first on PATH, Python's
  // site-packages (a `.pth` line runs at every interpreter start), editors' and REPLs' start-up folders.
  ".bashrc.d",
  ".local/bin",
  ".local/lib",
  ".emacs.d",
  ".vim",
  ".ipython",
  ".gradle/init.d",
  ".oh-my-zsh",
  ".julia/config",
];

/**
 * Relative to the home: folders and files that hold keys, tokens and what was typed at prompts, and the
 * start-up files the user's shell, git and editors run later (they often export tokens too): written by a
 * model, one would run its code outside any sandbox (a `core.pager` in `~/.gitconfig`, a line in `~/.bashrc`),
 * as the workspace's own git metadata would, which mewcode protects for that reason.
 */
export const HOME_CREDENTIALS: readonly string[] = [
  ...CREDENTIAL_FOLDER_NAMES,
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".npmrc",
  ".yarnrc",
  ".netrc",
  ".git-credentials",
  ".claude.json",
  ".android/adbkey",
  ".gem/credentials",
  ".m2/settings-security.xml",
  ".bundle/config",
  ".composer/auth.json",
  ".sentryclirc",
  ".wakatime.cfg",
  // Files a shell's start-up sources (rustup, deno, fzf, ghcup install them).
  ".cargo/env",
  ".deno/env",
  ".fzf.bash",
  ".fzf.zsh",
  ".ghcup/env",
  ".pgpass",
  ".my.cnf",
  ".vault-token",
  ".s3cfg",
  ".boto",
  ".databrickscfg",
  ".terraformrc",
  ".dockercfg",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".lesshst",
  ".viminfo",
  ...SHELL_STARTUP_FILES,
  ".gitconfig",
  ".vimrc",
  ".exrc",
  ".emacs",
  ".tmux.conf",
  ".pam_environment",
  // Start-up files that run code or commands: shells, X sessions, debuggers, REPLs, other tools.
  ".bash_aliases",
  ".xsession",
  ".xsessionrc",
  ".xinitrc",
  ".xprofile",
  ".hgrc",
  ".gdbinit",
  ".lldbinit",
  ".irbrc",
  ".pryrc",
  ".ghci",
  ".Rprofile",
  ".pythonrc",
  ".pythonrc.py",
  ".screenrc",
  // Where build and download tools take their settings from: a proxy, an index or a helper command.
  ".cargo/config",
  ".cargo/config.toml",
  ".curlrc",
  ".wgetrc",
  ".gemrc",
  ".condarc",
  ".yarnrc.yml",
  ".bunfig.toml",
  ".pip/pip.conf",
];

/**
 * Folders of a home that hold code the user runs later, outside any sandbox: programs found on PATH
 * (`~/bin`, `~/.local/bin`, `~/.cargo/bin`), the toolchains and version managers behind them (`~/.rustup`,
 * `~/.pyenv`, `~/.nvm`, a global npm prefix), the packages their builds compile or import (`~/.cargo/registry`,
 * `~/go/pkg`, `~/.local/lib`), Deno's cache (mewcode's own dependencies, which run in mewcode's process at its
 * next start), editor plugins, and build tools' init scripts. Hidden, they would take the toolchains away
 * from the sandbox when the workspace holds the home; so they stay visible, read-only, and the file tools
 * refuse to write them (`homeCodeProtections`).
 */
export const HOME_CODE_FOLDERS: readonly string[] = [
  "bin",
  "go/bin",
  "go/pkg",
  ".local/bin",
  ".local/lib",
  ".local/share/nvim",
  ".cargo/bin",
  ".cargo/registry",
  ".cargo/git",
  ".rustup",
  ".deno",
  ".cache/deno",
  ".bun",
  ".npm-global",
  ".pyenv",
  ".rbenv",
  ".asdf",
  ".nvm",
  ".sdkman",
  ".volta",
  ".vim",
  ".emacs.d",
  ".ipython",
  ".gradle/init.d",
  // Python distributions and environments, other package managers' global bins and caches of code they run.
  "miniconda3",
  "anaconda3",
  "miniforge3",
  "mambaforge",
  ".conda",
  ".venv",
  ".virtualenvs",
  ".local/share/virtualenvs",
  ".local/share/pnpm",
  ".local/share/fnm",
  ".local/share/mise",
  ".npm/_npx",
  ".yarn",
  ".ghcup",
  ".cabal",
  ".pub-cache",
  ".dotnet",
  ".m2/repository",
  ".gradle/caches",
  ".pixi",
  ".nodenv",
  ".goenv",
  ".jenv",
  ".juliaup",
  ".elan",
  ".opam",
];

/**
 * The protections of `HOME_CODE_FOLDERS` in each root (real paths: the workspace root, the added folders)
 * that is the home or holds it (`--add-dir ~`, a workspace at /home): relative to that root and applying in
 * it alone, read-only in the sandbox, refused by the writers. None when the home lies outside every root.
 */
export function homeCodeProtections(roots: readonly string[], home: string | undefined): ProtectedPath[] {
  const realHome = realPathSyncOrNull(home ?? "");
  if (realHome === null) return [];
  return roots.filter((root) => isAtOrBelow(realHome, root)).flatMap((root) =>
    HOME_CODE_FOLDERS.map((folder) =>
      protectionWithin(
        root,
        join(realHome, folder),
        "your shell or your tools run the code of this folder of your home later, outside any sandbox; " +
          "writing it is refused. Ask the user to make this change",
      )
    )
  );
}

/**
 * The protections of the code mewcode itself runs, wherever it lies strictly inside a root: Deno's cache
 * (`$DENO_DIR`, else `$XDG_CACHE_HOME/deno` or `~/.cache/deno`, which holds mewcode's npm dependencies), the
 * folder of the Deno binary, and mewcode's own program folder (`program`; a checkout being worked on as the
 * workspace root itself is the user's project and stays writable). Code planted there would run at
 * mewcode's next start, in its own process, with the API key.
 */
export function runtimeCodeProtections(
  roots: readonly string[],
  options: { env: Record<string, string | undefined>; denoBinary: string; program: string },
): ProtectedPath[] {
  const { env } = options;
  const cache = env.DENO_DIR !== undefined && env.DENO_DIR !== ""
    ? env.DENO_DIR
    : env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME.startsWith("/")
    ? join(env.XDG_CACHE_HOME, "deno")
    : env.HOME === undefined
    ? null
    : join(env.HOME, ".cache", "deno");
  const folders = [cache, options.denoBinary.slice(0, options.denoBinary.lastIndexOf("/")), options.program];
  const reason = "it holds code mewcode itself runs (its program, the Deno runtime or Deno's cache of its " +
    "dependencies), with all of mewcode's permissions at its next start; writing it is refused. Ask the " +
    "user to make this change";
  const entries: ProtectedPath[] = [];
  for (const folder of folders) {
    const real = folder === null || !folder.startsWith("/") ? null : realPathSyncOrNull(folder);
    if (real === null) continue;
    for (const root of roots) {
      if (real !== root && isAtOrBelow(real, root)) entries.push(protectionWithin(root, real, reason));
    }
  }
  return entries;
}

/** A folder's protection in `root`, which holds it: its path relative to the root, applying there alone. */
function protectionWithin(root: string, folder: string, reason: string): ProtectedPath {
  return {
    path: relative(root, folder),
    anyDepth: false,
    folder: true,
    within: root,
    reason,
  };
}

/** The entries of `HOME_CREDENTIALS` that are folders (the others are files). */
const CREDENTIAL_FOLDERS: ReadonlySet<string> = new Set(CREDENTIAL_FOLDER_NAMES);

/** Where a credential of the home lies inside the workspace, and what is there. */
export interface CredentialPlace {
  /** The real path of what is there; when nothing resolves, where it would be made (its folder's real path). */
  path: string;
  /** What is there, or (when nothing is) what the credential is. */
  kind: "file" | "directory";
  /** `present`: it resolves; `missing`: nothing is there; `unresolved`: a link that leads nowhere. */
  state: "present" | "missing" | "unresolved";
}

/**
 * Each credential of `home` that lies inside `roots` (real paths: the workspace root and the added folders),
 * in `HOME_CREDENTIALS` order; none when `home` is unset, cannot be resolved, or lies outside every root. The
 * sandbox hides the `present` ones and keeps the `missing` ones from being made (a placeholder for a folder,
 * removal after the call for a file); the file tools treat every one as outside the workspace.
 */
export function credentialPlaces(roots: readonly string[], home: string | undefined): CredentialPlace[] {
  const realHome = realPathSyncOrNull(home ?? "");
  const inRoots = (path: string) => roots.some((root) => isAtOrBelow(path, root));
  if (realHome === null || !inRoots(realHome)) return [];
  const places: CredentialPlace[] = [];
  for (const name of HOME_CREDENTIALS) {
    const named = join(realHome, name);
    const real = realPathSyncOrNull(named);
    if (real !== null) {
      if (!inRoots(real)) continue;
      // Gone since it resolved: hidden as a file, which shows nothing.
      const kind = lstatSyncOrNull(real)?.isDirectory === true ? "directory" : "file";
      places.push({ path: real, kind, state: "present" });
      continue;
    }
    // Nothing resolves: where it would be made, through the real path of its folder.
    const slash = named.lastIndexOf("/");
    const folder = realPathSyncOrNull(named.slice(0, slash));
    if (folder === null || !inRoots(folder)) continue;
    places.push({
      path: join(folder, named.slice(slash + 1)),
      kind: CREDENTIAL_FOLDERS.has(name) ? "directory" : "file",
      state: lstatSyncOrNull(named) === null ? "missing" : "unresolved",
    });
  }
  return places;
}

/** Whether a path the tools treat as outside the workspace is one of the home's credentials (by its name). */
export function isCredentialPath(path: string): boolean {
  return HOME_CREDENTIALS.some((name) => path.endsWith(`/${name}`));
}

function isAtOrBelow(path: string, folder: string): boolean {
  return folder === "/" || path === folder || path.startsWith(`${folder}/`);
}
