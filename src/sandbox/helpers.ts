/**
 * The helper programs mewcode starts (bubblewrap, the shell, git, ripgrep, and cat, which hands ripgrep's
 * report on in the sandbox), resolved once per session to absolute paths that a repository cannot influence.
 *
 * A program found through PATH is whatever the first PATH entry holds, and PATH is not ours: started
 * through `npx`, it begins with the workspace's `node_modules/.bin`, so a repository shipping
 * `node_modules/.bin/bwrap` would run unsandboxed as the sandbox itself. So the system directories come
 * first, and a PATH entry is considered only when it is absolute, outside the workspace (and the folders
 * added to it) and outside the temporary directories, and no one else can replace it or the program: neither
 * they nor the program's own folder is writable by others, nor any folder above them unless it is sticky
 * (whoever may write a folder above can rename the folder below and put their own in its place).
 *
 * @module
 */
import { realPathOrNull, statOrNull } from "../common/fs.ts";
import { dirname, isAbsolute, join } from "../common/path.ts";

/** The programs mewcode may start. */
export const HELPER_NAMES = ["bwrap", "bash", "sh", "git", "rg", "cat"] as const;

/** One of HELPER_NAMES. */
export type HelperName = typeof HELPER_NAMES[number];

/** Absolute paths of the helpers found, null where a helper is missing. */
export type HelperPaths = Readonly<Record<HelperName, string | null>>;

/** Directories searched before PATH, in order. */
export const SYSTEM_DIRECTORIES: readonly string[] = [
  "/usr/bin",
  "/bin",
  "/usr/sbin",
  "/sbin",
  "/usr/local/bin",
  "/usr/local/sbin",
  "/opt/homebrew/bin",
  "/run/current-system/sw/bin",
];

/** Real-path prefixes a PATH entry may never lie under: anyone (or the sandbox) may write there. */
const UNTRUSTED_PREFIXES = ["/tmp", "/var/tmp", "/dev/shm"];

/** What the resolution needs to know. */
export interface ResolveHelpersOptions {
  /** Real path of the workspace root: nothing under it is trusted. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`): nothing under them is trusted either. */
  additionalRoots?: readonly string[];
  /** PATH as the user set it; entries are considered after the system directories. */
  path: string | undefined;
  /** Directories searched first; default SYSTEM_DIRECTORIES. Tests narrow it. */
  systemDirectories?: readonly string[];
}

/** Resolves every helper; never throws. */
export async function resolveHelpers(options: ResolveHelpersOptions): Promise<HelperPaths> {
  const directories = await trustedDirectories(options);
  const roots = [options.root, ...options.additionalRoots ?? []];
  const entries = await Promise.all(
    HELPER_NAMES.map(async (name) => [name, await findIn(name, directories, roots)] as const),
  );
  return Object.fromEntries(entries) as Record<HelperName, string | null>;
}

/** One line per helper, for `mewcode doctor`. */
export function describeHelpers(helpers: HelperPaths): string[] {
  return HELPER_NAMES.map((name) => `  ${name}: ${helpers[name] ?? "not found"}`);
}

async function trustedDirectories(options: ResolveHelpersOptions): Promise<string[]> {
  const candidates = [...(options.systemDirectories ?? SYSTEM_DIRECTORIES)];
  for (const entry of (options.path ?? "").split(":")) {
    if (entry !== "" && isAbsolute(entry) && !candidates.includes(entry)) candidates.push(entry);
  }
  const trusted: string[] = [];
  for (const directory of candidates) {
    const real = await realPathOrNull(directory);
    if (
      real === null || [options.root, ...options.additionalRoots ?? []].some((root) => isUnder(real, root)) ||
      UNTRUSTED_PREFIXES.some((prefix) => isUnder(real, prefix))
    ) {
      continue;
    }
    const info = await statOrNull(real);
    if (info === null || !info.isDirectory || await othersMayReplace(real)) continue;
    trusted.push(directory);
  }
  return trusted;
}

async function findIn(
  name: string,
  directories: readonly string[],
  roots: readonly string[],
): Promise<string | null> {
  for (const directory of directories) {
    const candidate = join(directory, name);
    const real = await realPathOrNull(candidate);
    if (
      real === null || roots.some((root) => isUnder(real, root)) ||
      UNTRUSTED_PREFIXES.some((prefix) => isUnder(real, prefix))
    ) {
      continue;
    }
    const info = await statOrNull(real);
    if (info === null || !info.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
    if (othersMayWrite(info) || await othersMayReplace(dirname(real))) continue;
    return candidate;
  }
  return null;
}

/** Writable by anyone: such a directory or program could be replaced by another user. */
function othersMayWrite(info: Deno.FileInfo): boolean {
  return info.mode !== null && (info.mode & 0o002) !== 0;
}

/**
 * Whether another user could put other files in real directory `directory`: it is writable by anyone, or a
 * folder above it is and is not sticky (a sticky folder lets only an entry's owner rename it).
 */
async function othersMayReplace(directory: string): Promise<boolean> {
  const own = await statOrNull(directory);
  if (own === null || othersMayWrite(own)) return true;
  for (let above = dirname(directory);; above = dirname(above)) {
    const info = await statOrNull(above);
    if (info === null || (othersMayWrite(info) && ((info.mode ?? 0) & 0o1000) === 0)) return true;
    if (above === dirname(above)) return false;
  }
}

function isUnder(path: string, folder: string): boolean {
  if (folder === "/") return true;
  return path === folder || path.startsWith(`${folder}/`);
}
