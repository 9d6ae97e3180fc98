/**
 * Project memory: the instruction files sent to the model with the system prompt. `$MEWCODE_HOME/AGENTS.md`
 * (the user's own) comes first, then `AGENTS.md` (else `CLAUDE.md`) of each directory from the git root down
 * to the workspace, so the more specific files come later.
 *
 * The files of a repository are untrusted and their content goes to the model, so each is read safely:
 *   - a file whose real path leaves its own directory's tree (a symlink to /etc/shadow, to ~/.ssh/id_rsa) is
 *     skipped with a notice; the user-level file may be a symlink (dotfile managers link it), since a
 *     repository cannot place it;
 *   - anything but a regular file is skipped (opened non-blocking, so a named pipe cannot hang the session);
 *   - each file is cut at MAX_MEMORY_FILE_BYTES and all of them at MAX_MEMORY_TOTAL_BYTES, with a notice
 *     saying what was cut and where the full file is. The budget goes to the workspace's own file first,
 *     then to its ancestors, then to the user-level file: the nearest instructions matter most.
 *
 * @module
 */
import { dirname, isAbsolute, join, relative, sep } from "../common/path.ts";
import { withDeadline } from "../common/deadline.ts";
import { describeError } from "../common/errors.ts";
import { lstatSyncOrNull, realPathSyncOrNull, statSyncOrNull } from "../common/fs.ts";
import { formatBytes } from "../common/size.ts";
import { currentUid } from "../common/current_uid.ts";

/** The memory file names of a directory, in order of preference: the first that exists is used. */
export const MEMORY_FILE_NAMES: readonly string[] = ["AGENTS.md", "CLAUDE.md"];

/**
 * Bytes kept of one file (40 KiB, about 10,000 tokens): a generous instruction file is a few KiB, and Claude
 * Code warns above 40,000 characters; more is almost always generated text that crowds out the task.
 */
export const MAX_MEMORY_FILE_BYTES = 40 * 1024;

/**
 * Bytes kept of all files together (100 KiB, about 25,000 tokens, an eighth of a 200k context): the system
 * prompt is sent with every request, so even a deep monorepo's chain of files must leave room for the work.
 */
export const MAX_MEMORY_TOTAL_BYTES = 100 * 1024;

/** One memory file as it goes into the system prompt. */
export interface MemorySection {
  /** Absolute path of the file as found (not resolved through symlinks). */
  path: string;
  /** "user" for `$MEWCODE_HOME/AGENTS.md`, "project" for a repository's files. */
  scope: "user" | "project";
  /** The file's text, or its first part when it was cut. */
  content: string;
  /** When the file was cut: what was cut and where the full file is, shown after the content; else null. */
  cut: string | null;
}

/** The memory files of a session, and the notices about files left out. */
export interface ProjectMemory {
  /** User-level first, then from the git root down to the workspace. */
  sections: MemorySection[];
  /** One sentence per file left out (unsafe, unreadable, over the total limit), for the model and the user. */
  notices: string[];
}

/** Where to look for memory files. */
export interface LoadMemoryOptions {
  /** Real path of the workspace root. */
  root: string;
  /** mewcode's state directory (`$MEWCODE_HOME`); null for no user-level file. */
  home: string | null;
  /** The git root (an ancestor of `root`, or `root`); default: found with `findGitRoot`. */
  gitRoot?: string | null;
  /** Default MAX_MEMORY_FILE_BYTES. */
  maxFileBytes?: number;
  /** Default MAX_MEMORY_TOTAL_BYTES. */
  maxTotalBytes?: number;
}

/**
 * The nearest directory at or above `root` that holds a `.git` directory or file; null when none does. Above
 * the workspace, only what another user cannot have put there counts (as git's `safe.directory` refuses a
 * repository of another owner): the walk stops at a folder anyone may write (/tmp: another user's
 * `/tmp/.git` and `/tmp/AGENTS.md` would reach every workspace below it), and a `.git` owned by someone other
 * than the user or root is not taken.
 */
export function findGitRoot(root: string): string | null {
  let directory = root;
  const uid = currentUid();
  while (true) {
    if (directory !== root) {
      const info = statSyncOrNull(directory);
      if (info === null || info.mode === null || (info.mode & 0o002) !== 0) return null;
    }
    const dotGit = statSyncOrNull(join(directory, ".git"));
    if (dotGit !== null && (dotGit.isDirectory || dotGit.isFile)) {
      const foreign = directory !== root && uid !== null && dotGit.uid !== null && dotGit.uid !== uid &&
        dotGit.uid !== 0;
      return foreign ? null : directory;
    }
    const parent = dirname(directory);
    if (parent === directory) return null;
    directory = parent;
  }
}

/** Reads the user-level and project memory files; never throws (what cannot be read becomes a notice). */
export async function loadProjectMemory(options: LoadMemoryOptions): Promise<ProjectMemory> {
  const maxFile = options.maxFileBytes ?? MAX_MEMORY_FILE_BYTES;
  const maxTotal = options.maxTotalBytes ?? MAX_MEMORY_TOTAL_BYTES;
  let budget = maxTotal;
  const gitRoot = options.gitRoot === undefined ? findGitRoot(options.root) : options.gitRoot;
  const candidates: Candidate[] = [];
  if (options.home !== null) {
    const path = join(options.home, "AGENTS.md");
    if (lstatSyncOrNull(path) !== null) candidates.push({ path, scope: "user", confine: null });
  }
  for (const directory of directoriesDown(gitRoot ?? options.root, options.root)) {
    for (const name of MEMORY_FILE_NAMES) {
      const path = join(directory, name);
      if (lstatSyncOrNull(path) === null) continue;
      candidates.push({ path, scope: "project", confine: directory });
      break;
    }
  }
  // The budget goes to the nearest file first; the sections keep the reading order.
  const outcomes = new Map<Candidate, MemorySection | string>();
  for (const candidate of [...candidates].reverse()) {
    if (budget <= 0) {
      outcomes.set(
        candidate,
        `Left out ${candidate.path}: the memory limit of ${formatBytes(maxTotal)} was reached`,
      );
      continue;
    }
    const limit = Math.min(maxFile, budget);
    const outcome = await readMemoryFile(candidate, { limit, maxFile, maxTotal, root: options.root });
    if (typeof outcome !== "string") budget -= new TextEncoder().encode(outcome.content).length;
    outcomes.set(candidate, outcome);
  }
  const memory: ProjectMemory = { sections: [], notices: [] };
  for (const candidate of candidates) {
    const outcome = outcomes.get(candidate);
    if (outcome === undefined) continue;
    if (typeof outcome === "string") memory.notices.push(outcome);
    else memory.sections.push(outcome);
  }
  return memory;
}

/** A prefix of a text file, or why it was not read. */
export type TextPrefix =
  | {
    ok: true;
    /** The text of the first `maxBytes` at most, never ending inside a character. */
    text: string;
    /** Bytes read (at most `maxBytes`). */
    bytes: number;
    /** The file's size when opened. */
    size: number;
    /** Whether the file is longer than `maxBytes`. */
    truncated: boolean;
  }
  | { ok: false; reason: "missing" | "not-regular" | "outside" | "unreadable"; message: string };

/**
 * How long opening a file that was a regular file a moment earlier may take by default. Only a named pipe
 * swapped in between the look and the open makes it wait (for a writer that never comes); then the file is
 * skipped.
 */
export const OPEN_DEADLINE_MS = 2_000;

/**
 * Reads at most `maxBytes` of a regular file without hanging on a named pipe; with `confine`, the file's real
 * path must lie inside that directory (a real path) and name the file opened. Never throws.
 *
 * Deno's open has no O_NONBLOCK (and `node:fs`, which has, costs more start-up time than the whole read), so
 * the file is looked at first and opened only when it is a regular file; the open file must then be that
 * same file, and an open that waits (a named pipe swapped in between) is given up after `openDeadlineMs`.
 * Everything but the open is synchronous: memory files are read before the first request, where each
 * asynchronous file operation waited for a thread of Deno's pool and back (0.3 to 4 ms each).
 */
export async function readTextPrefix(
  path: string,
  maxBytes: number,
  options: { confine?: string | null; openDeadlineMs?: number } = {},
): Promise<TextPrefix> {
  let seen: Deno.FileInfo;
  try {
    seen = Deno.statSync(path);
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound;
    return { ok: false, reason: missing ? "missing" : "unreadable", message: describeError(error) };
  }
  if (!seen.isFile) return { ok: false, reason: "not-regular", message: "it is not a regular file" };
  let file: Deno.FsFile;
  try {
    const opened = await openWithin(path, options.openDeadlineMs ?? OPEN_DEADLINE_MS);
    if (opened === null) {
      return {
        ok: false,
        reason: "not-regular",
        message: "it did not open in time (it is not a regular file)",
      };
    }
    file = opened;
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound;
    return { ok: false, reason: missing ? "missing" : "unreadable", message: describeError(error) };
  }
  try {
    const info = file.statSync();
    if (!info.isFile) return { ok: false, reason: "not-regular", message: "it is not a regular file" };
    if (info.dev !== seen.dev || info.ino !== seen.ino) {
      return { ok: false, reason: "unreadable", message: "it was replaced while it was being opened" };
    }
    const confine = options.confine ?? null;
    if (confine !== null) {
      const real = realPathSyncOrNull(path);
      const named = real === null ? null : statSyncOrNull(real);
      if (real === null || !isInside(real, confine) || named?.dev !== info.dev || named?.ino !== info.ino) {
        return { ok: false, reason: "outside", message: `its real path lies outside ${confine}` };
      }
    }
    const buffer = new Uint8Array(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = file.readSync(buffer.subarray(length));
      if (read === null || read === 0) break;
      length += read;
    }
    const truncated = length > maxBytes || info.size > maxBytes;
    const kept = buffer.subarray(0, Math.min(length, maxBytes));
    // With `stream`, an incomplete character at the cut is held back instead of becoming U+FFFD.
    const text = new TextDecoder().decode(kept, { stream: truncated });
    return { ok: true, text, bytes: kept.length, size: Math.max(info.size, length), truncated };
  } catch (error) {
    return { ok: false, reason: "unreadable", message: describeError(error) };
  } finally {
    file.close();
  }
}

/** Opens `path` for reading, or gives up after `deadlineMs` (null); a late open is closed when it comes. */
async function openWithin(path: string, deadlineMs: number): Promise<Deno.FsFile | null> {
  const opening = Deno.open(path, { read: true });
  const opened = await withDeadline(opening, deadlineMs);
  if (opened !== "timeout") return opened;
  opening.then((file) => file.close(), () => undefined);
  return null;
}

interface Candidate {
  path: string;
  scope: "user" | "project";
  /** The directory whose tree the file's real path must stay in; null for the user-level file. */
  confine: string | null;
}

async function readMemoryFile(
  candidate: Candidate,
  options: { limit: number; maxFile: number; maxTotal: number; root: string },
): Promise<MemorySection | string> {
  const { path } = candidate;
  const read = await readTextPrefix(path, options.limit, { confine: candidate.confine });
  if (!read.ok) return `Skipped ${path}: ${read.message}`;
  if (read.text.includes("\u0000")) return `Skipped ${path}: it is not a text file`;
  if (!read.truncated) return { path, scope: candidate.scope, content: read.text, cut: null };
  // Cut after the last full line when one ends in the second half, so no instruction is cut mid-sentence.
  const lineEnd = read.text.lastIndexOf("\n");
  const content = lineEnd >= read.text.length / 2 ? read.text.slice(0, lineEnd + 1) : read.text;
  const why = options.limit < options.maxFile
    ? `the memory limit of ${formatBytes(options.maxTotal)} for all files was reached`
    : `the limit per file is ${formatBytes(options.maxFile)}`;
  const where = isInside(path, options.root)
    ? `the full file is ${path}; read the rest with ReadFile if you need it`
    : `the full file is ${path} (outside the workspace)`;
  const cut = `[mewcode cut this file here: showing the first ${
    formatBytes(new TextEncoder().encode(content).length)
  } of ${formatBytes(read.size)} (${why}); ${where}]`;
  return { path, scope: candidate.scope, content, cut };
}

/** `top`, then each directory below it down to `bottom` (which must be `top` or inside it). */
function directoriesDown(top: string, bottom: string): string[] {
  if (!isInside(bottom, top) && bottom !== top) return [bottom];
  const directories = [top];
  const steps = relative(top, bottom).split(sep).filter((step) => step !== "");
  let current = top;
  for (const step of steps) {
    current = join(current, step);
    directories.push(current);
  }
  return directories;
}

/** Whether `path` lies strictly inside the directory `folder` (both absolute and normalised). */
function isInside(path: string, folder: string): boolean {
  const rest = relative(folder, path);
  return rest !== "" && rest.split(sep)[0] !== ".." && !isAbsolute(rest);
}
