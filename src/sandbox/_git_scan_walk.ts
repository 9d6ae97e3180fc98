/**
 * The walk of a metadata scan (git_scan.ts): the `.git` entries under a root, and the folders git takes for
 * git directories.
 *
 * The walk reads every directory of the workspace, `node_modules` included: skipping a folder by name
 * would tell a planted repository where to hide, and a gitlink can make the user's `git status` enter any
 * folder. It enters no symlinked directory and no `.git` directory (those are read by their layout:
 * config, hooks, `modules/**`, `worktrees/*`), and it stops at `maxEntries` entries or after `timeoutMs`,
 * marking the scan incomplete. Directories are read breadth first in name order, so a truncated scan
 * still covers the shallow folders and covers the same ones each time.
 *
 * A folder with no `.git` is a repository too when git takes the folder itself for a git directory (a bare
 * repository, or one whose `core.worktree` names a working tree elsewhere): it holds a `HEAD` that names a
 * ref or a commit, and `objects` and `refs` (or a `commondir` file pointing to them). Git run in that folder
 * uses its config and hooks, so the scan reports such a folder like a nested `.git` (its layout is read the
 * same way), and the walk still enters it: any folder can be given that shape, which must not hide what is
 * below it.
 *
 * Private to src/sandbox/.
 *
 * @module
 */
import { readTextHead } from "../common/fs.ts";
import { nextTurn } from "../common/next_turn.ts";
import { join } from "../common/path.ts";

/** Milliseconds of synchronous walking between two yields to the event loop. */
const SLICE_MS = 20;
/** Bytes of a `HEAD` file git reads to tell whether a folder is a git directory. */
const HEAD_BYTES = 255;

/** When the walk stops: entries read, the deadline on `now`'s clock, an abort. */
export interface WalkLimits {
  maxEntries: number;
  deadline: number;
  now: () => number;
  signal: AbortSignal | undefined;
}

/** What the walk found: `.git` entries, and folders whose entries name a git directory's files. */
export interface Walk {
  dotGits: string[];
  /**
   * Entries of any type whose name is one of the walk's `named` (compared in lower case; `*<suffix>`: any
   * longer name ending so), in walk order; none below a `node_modules` folder.
   */
  named: string[];
  /** Folders holding `HEAD` and `objects` and `refs`, or `HEAD` and `commondir` (not yet checked). */
  candidates: string[];
  /** Folders that could not be listed (see `GitScan.unlisted`). */
  unlisted: string[];
  complete: boolean;
  entries: number;
}

/**
 * The `.git` entries under the root and the folders that may be git directories (the root included),
 * breadth first; synchronous reads, yielding every few milliseconds. `named` (lower case) are other names
 * to list wherever they are (`.vscode`: protected at any depth; `*.code-workspace`, `mise.*.toml`: any name
 * starting and ending so; `mise/config.toml`: an entry whose path from the root ends with those names), on
 * the same walk.
 */
export async function findDotGits(
  root: string,
  limits: WalkLimits,
  named: ReadonlySet<string> = new Set(),
): Promise<Walk> {
  const dotGits: string[] = [];
  const namedFound: string[] = [];
  // src/tools/protected_paths.ts `isProtectedName`, kept to a set lookup and a few prefix and suffix tests
  // per entry: the walk reads up to 200,000 of them.
  const patterns = [...named].filter((name) => name.includes("*") && !name.includes("/")).map((name) => {
    const star = name.indexOf("*");
    return { prefix: name.slice(0, star), suffix: name.slice(star + 1) };
  });
  // Names in a row (`mise/config.toml`): an entry whose path ends with them, checked name by name.
  const rows = [...named].filter((name) => name.includes("/"));
  const isNamed = (name: string, folders: () => string[]): boolean =>
    named.has(name) ||
    patterns.some(({ prefix, suffix }) =>
      name.length > prefix.length + suffix.length && name.startsWith(prefix) && name.endsWith(suffix)
    ) ||
    rows.some((row) => endsWithNames([...folders(), name], row.split("/")));
  const candidates: string[] = [];
  const unlisted: string[] = [];
  const queue = [root];
  let entries = 0;
  let sliceEnd = limits.now() + SLICE_MS;
  for (let next = 0; next < queue.length; next++) {
    const directory = queue[next]!;
    const time = limits.now();
    if (time > limits.deadline || limits.signal?.aborted === true) {
      return { dotGits, named: namedFound, candidates, unlisted, complete: false, entries };
    }
    if (time > sliceEnd) {
      await nextTurn();
      sliceEnd = limits.now() + SLICE_MS;
    }
    let listing: Deno.DirEntry[];
    try {
      listing = [...Deno.readDirSync(directory)];
    } catch (error) {
      // A folder removed since its parent was listed holds nothing; any other the scan could not see into.
      if (!(error instanceof Deno.errors.NotFound) && !unlisted.includes(directory)) unlisted.push(directory);
      continue;
    }
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (hasGitDirectoryNames(listing)) candidates.push(directory);
    // No editor, agent or direnv is opened inside a package folder, and packages ship .vscode or .idea
    // folders: bound read-only there, they would make `rm -rf node_modules` (and `npm ci`) fail.
    const inPackages = directory.slice(root.length).split("/").includes("node_modules");
    // The folders from the root down to this one, lower case, once and only when a row of names needs them.
    let folders: string[] | null = null;
    const folderNames = (): string[] =>
      folders ??= directory.slice(root.length).split("/").filter((part) => part !== "").map((part) =>
        part.toLowerCase()
      );
    for (const entry of listing) {
      if (++entries > limits.maxEntries) {
        return { dotGits, named: namedFound, candidates, unlisted, complete: false, entries: entries - 1 };
      }
      const path = `${directory === "/" ? "" : directory}/${entry.name}`;
      // A name that is not UTF-8 comes back with U+FFFD in place of its bytes: the scan cannot open it, or
      // opens another entry whose name really is that (a folder named U+FFFD beside one named 0xFF), while
      // git reaches it. Never silently skipped.
      if (entry.name.includes("\uFFFD")) unlisted.push(path);
      if (!inPackages && isNamed(entry.name.toLowerCase(), folderNames)) namedFound.push(path);
      if (entry.name === ".git") dotGits.push(path);
      else if (entry.isDirectory) queue.push(path);
    }
  }
  return { dotGits, named: namedFound, candidates, unlisted, complete: true, entries };
}

/**
 * Whether `segments` end with `names`, each a name or a pattern with one `*` (src/tools/protected_paths.ts
 * `isNamesEnd`, without its import: the walk loads nothing of the tools).
 */
function endsWithNames(segments: readonly string[], names: readonly string[]): boolean {
  const start = segments.length - names.length;
  if (start < 0) return false;
  return names.every((name, index) => {
    const segment = segments[start + index]!;
    const star = name.indexOf("*");
    if (star === -1) return segment === name;
    const prefix = name.slice(0, star);
    const suffix = name.slice(star + 1);
    return segment.length > prefix.length + suffix.length && segment.startsWith(prefix) &&
      segment.endsWith(suffix);
  });
}

/**
 * Whether a listing has the names git checks to take a folder for a git directory: `HEAD`, and `objects`
 * and `refs`, or a `commondir` file (then `objects` and `refs` are those of the directory it names). Any
 * type counts: git follows symlinks for all of them but `HEAD`, which `isGitHead` checks.
 */
function hasGitDirectoryNames(listing: readonly Deno.DirEntry[]): boolean {
  let head = false;
  let objects = false;
  let refs = false;
  let commonDir = false;
  for (const entry of listing) {
    switch (entry.name) {
      case "HEAD":
        head = true;
        break;
      case "objects":
        objects = true;
        break;
      case "refs":
        refs = true;
        break;
      case "commondir":
        commonDir = true;
        break;
    }
  }
  return head && ((objects && refs) || commonDir);
}

/** The candidates whose `HEAD` git accepts, in walk order; stops (incomplete) at the deadline. */
export async function confirmGitDirectories(
  candidates: readonly string[],
  limits: WalkLimits,
): Promise<{ gitDirectories: string[]; complete: boolean }> {
  const gitDirectories: string[] = [];
  for (const candidate of candidates) {
    if (limits.now() > limits.deadline || limits.signal?.aborted === true) {
      return { gitDirectories, complete: false };
    }
    if (await isGitHead(join(candidate, "HEAD"))) gitDirectories.push(candidate);
  }
  return { gitDirectories, complete: true };
}

/**
 * Whether git takes the file for a repository's `HEAD` (git's `validate_headref`): a symlink to `refs/…`,
 * or a file starting with `ref:` and `refs/…` after blanks, or with a 40- or 64-digit object id.
 */
async function isGitHead(path: string): Promise<boolean> {
  const info = await Deno.lstat(path).catch(() => null);
  if (info === null) return false;
  if (info.isSymlink) return (await Deno.readLink(path).catch(() => "")).startsWith("refs/");
  if (!info.isFile) return false;
  const text = await readTextHead(path, HEAD_BYTES);
  return text !== null && (/^ref:\s*refs\//.test(text) || /^[0-9a-fA-F]{40}/.test(text));
}
