/**
 * The credentials and start-up files a home folder holds, hidden from every tool when the workspace or an
 * added folder holds the home (mewcode run in `~`, or `--add-dir ~`), where the workspace's own rules would
 * show them: the shell sandbox covers those that exist (folders with an empty tmpfs, files with /dev/null,
 * `src/sandbox/shell_policy.ts`) and keeps the missing ones from being made (`missingCredentialsInside`), and
 * the file tools treat them as outside the workspace, missing ones included (`excludedPaths`,
 * `src/execution/runtime.ts`), so a model can neither read, search, list, overwrite nor create them,
 * directly or through a link.
 *
 * @module
 */
import { lstatSyncOrNull, realPathOrNull, realPathSyncOrNull } from "./fs.ts";
import { join } from "./path.ts";

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
];

/** The entries of `HOME_CREDENTIALS` that are folders (the others are files). */
const CREDENTIAL_FOLDERS: ReadonlySet<string> = new Set(CREDENTIAL_FOLDER_NAMES);

/**
 * The home's credentials that do not exist yet, whose folder does, inside `roots` (real paths), for the
 * shell sandbox: a missing folder gets a read-only placeholder for each call (a command cannot make
 * `~/.ssh/authorized_keys`), a missing file is removed after a call that made it (`~/.gitconfig`). None when
 * the home lies outside every root.
 */
export function missingCredentialsInside(
  roots: readonly string[],
  home: string | undefined,
): HiddenCredential[] {
  const realHome = home === undefined ? null : realPathSyncOrNull(home);
  const inRoots = (path: string) => roots.some((root) => isAtOrBelow(path, root));
  if (realHome === null || !inRoots(realHome)) return [];
  const missing: HiddenCredential[] = [];
  for (const name of HOME_CREDENTIALS) {
    const path = join(realHome, name);
    if (lstatSyncOrNull(path) !== null) continue;
    const slash = path.lastIndexOf("/");
    const folder = realPathSyncOrNull(path.slice(0, slash));
    if (folder === null || !inRoots(folder)) continue;
    missing.push({
      path: join(folder, path.slice(slash + 1)),
      kind: CREDENTIAL_FOLDERS.has(name) ? "directory" : "file",
    });
  }
  return missing;
}

/** A credential of the home inside the workspace. */
export interface HiddenCredential {
  /** Its real path. */
  path: string;
  kind: "file" | "directory";
}

/**
 * The home's credentials whose real paths lie inside `roots` (real paths: the workspace root and the added
 * folders); none when `home` is unset, cannot be resolved, or lies outside every root.
 */
export async function credentialsInside(
  roots: readonly string[],
  home: string | undefined,
): Promise<HiddenCredential[]> {
  const realHome = await realPathOrNull(home ?? "");
  const inRoots = (path: string) => roots.some((root) => isAtOrBelow(path, root));
  if (realHome === null || !inRoots(realHome)) return [];
  const hidden: HiddenCredential[] = [];
  for (const name of HOME_CREDENTIALS) {
    const real = await realPathOrNull(join(realHome, name));
    if (real === null || !inRoots(real)) continue;
    let directory = false;
    try {
      directory = (await Deno.stat(real)).isDirectory;
    } catch {
      // Gone since: hidden as a file, which shows nothing.
    }
    hidden.push({ path: real, kind: directory ? "directory" : "file" });
  }
  return hidden;
}

/**
 * The paths the file tools treat as outside the workspace when it holds the home: the credentials of
 * `credentialsInside`, and where the missing ones would be (a model must not create `~/.gitconfig` either).
 */
export async function credentialPathsInside(
  roots: readonly string[],
  home: string | undefined,
): Promise<string[]> {
  const realHome = await realPathOrNull(home ?? "");
  const inRoots = (path: string) => roots.some((root) => isAtOrBelow(path, root));
  if (realHome === null || !inRoots(realHome)) return [];
  const paths: string[] = [];
  for (const name of HOME_CREDENTIALS) {
    const path = join(realHome, name);
    const real = await realPathOrNull(path);
    if (real !== null) {
      if (inRoots(real)) paths.push(real);
      continue;
    }
    // Missing: where it would be made, through the real path of its folder.
    const slash = path.lastIndexOf("/");
    const folder = await realPathOrNull(path.slice(0, slash));
    if (folder !== null && inRoots(folder)) paths.push(join(folder, path.slice(slash + 1)));
  }
  return paths;
}

/** Whether a path the tools treat as outside the workspace is one of the home's credentials (by its name). */
export function isCredentialPath(path: string): boolean {
  return HOME_CREDENTIALS.some((name) => path.endsWith(`/${name}`));
}

function isAtOrBelow(path: string, folder: string): boolean {
  return folder === "/" || path === folder || path.startsWith(`${folder}/`);
}
