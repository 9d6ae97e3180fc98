/**
 * Where the user's git finds the config it reads before a repository's own (system, then global), and the
 * settings the environment adds after it (`GIT_CONFIG_COUNT`), as git itself resolves them from the
 * environment the user runs it with. Only paths and values: nothing here runs git, which would read (and
 * could run) what a repository's config names.
 *
 * Private to src/sandbox/.
 *
 * @module
 */
import { join } from "../common/path.ts";
import type { GitConfigEntry } from "./git_config.ts";

/** What the user's git reads besides a repository's own config files. */
export interface UserGitConfig {
  /** System, then global config files, in the order git reads them (missing ones are skipped). */
  files: string[];
  /** Entries from `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, read after the repository's. */
  environment: GitConfigEntry[];
  /** The home folder `~/` stands for in config paths, or null when unknown. */
  home: string | null;
}

/** Config entries the environment may add at most (git has no limit; a larger count is read this far). */
const MAX_ENVIRONMENT_ENTRIES = 1_000;

/**
 * The config the user's git reads besides a repository's, given the environment it runs in: the system
 * file (`GIT_CONFIG_SYSTEM`, else /etc/gitconfig, none with `GIT_CONFIG_NOSYSTEM`), the global ones
 * (`GIT_CONFIG_GLOBAL`, else `$XDG_CONFIG_HOME/git/config` or `~/.config/git/config`, then `~/.gitconfig`)
 * and the environment's own entries.
 */
export function userGitConfig(env: Readonly<Record<string, string | undefined>>): UserGitConfig {
  const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : null;
  const files: string[] = [];
  if (!isTrue(env.GIT_CONFIG_NOSYSTEM)) files.push(env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig");
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== "") files.push(env.GIT_CONFIG_GLOBAL);
  } else {
    const xdg = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ""
      ? join(env.XDG_CONFIG_HOME, "git", "config")
      : home === null
      ? null
      : join(home, ".config", "git", "config");
    if (xdg !== null) files.push(xdg);
    if (home !== null) files.push(join(home, ".gitconfig"));
  }
  return { files, environment: environmentEntries(env), home };
}

/** The `GIT_CONFIG_KEY_<n>` = `GIT_CONFIG_VALUE_<n>` pairs, named as the parser names them. */
function environmentEntries(env: Readonly<Record<string, string | undefined>>): GitConfigEntry[] {
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? "", 10);
  if (!Number.isFinite(count) || count <= 0) return [];
  const entries: GitConfigEntry[] = [];
  for (let index = 0; index < Math.min(count, MAX_ENVIRONMENT_ENTRIES); index++) {
    const key = env[`GIT_CONFIG_KEY_${index}`];
    const first = key?.indexOf(".") ?? -1;
    const last = key?.lastIndexOf(".") ?? -1;
    if (key === undefined || first <= 0 || last === key.length - 1) continue;
    const section = key.slice(0, first).toLowerCase();
    const subsection = first === last ? null : key.slice(first + 1, last);
    const name = key.slice(last + 1).toLowerCase();
    entries.push({
      section,
      subsection,
      key: name,
      name: subsection === null ? `${section}.${name}` : `${section}.${subsection}.${name}`,
      value: env[`GIT_CONFIG_VALUE_${index}`] ?? null,
      line: 0,
    });
  }
  return entries;
}

/** Whether a boolean environment variable is set to true, as git reads one. */
function isTrue(value: string | undefined): boolean {
  if (value === undefined) return false;
  const folded = value.trim().toLowerCase();
  if (["", "0", "false", "no", "off"].includes(folded)) return false;
  return true;
}
