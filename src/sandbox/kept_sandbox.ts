/**
 * The host side of a sandbox kept across Bash calls (the worker side is src/tools/_shell_host.ts): the two
 * files it needs, made once per session in a private folder, with a lock file held while the folder is in
 * use, so that the next session can remove a folder whose process was killed before it could.
 *
 * - The seccomp program as a file: the kept sandbox's standard input carries the commands, so bubblewrap
 *   reads the program from fd 3, which `sh` opens from this file before it becomes bubblewrap.
 * - A copy of the shell with mode 0111, for the supervisor. A program started from a file its user may
 *   not read is not dumpable: no other process of the sandbox may open its /proc entries (its pipes under
 *   /proc/1/fd, its memory), although they all run as the same user without capabilities. So a command
 *   can neither read the next command nor write a false exit status.
 *
 * The folder also records the placeholder folders the session may have made in its workspace (empty folders
 * where a protected folder was missing, which bubblewrap mounts an empty read-only file system on), so that
 * the session that removes a left folder removes those too: a killed session cannot (`recordPlaceholders`).
 *
 * @module
 */
import { lstatSyncOrNull } from "../common/fs.ts";
import { join } from "../common/path.ts";

/** The files of a kept sandbox, and how to remove them. */
export interface KeptSandboxFiles {
  /** The private folder (mode 0700) holding both and the lock file. */
  directory: string;
  seccompFile: string;
  /** The supervisor's shell: a copy of the session's shell that may be run, not read. */
  supervisorCopy: string;
  /**
   * The folder's lock file, held (an exclusive `flock`) for as long as the folder is in use: the kernel
   * releases it when this process ends, however it ends, which tells other sessions the folder was left.
   */
  lock: Deno.FsFile;
  /** The placeholders recorded (`recordPlaceholders`): path, and when the session decided to make it. */
  placeholders: Map<string, number>;
}

const FOLDER_PREFIX = "mewcode-shell-";
const LOCK_FILE = "owner.lock";
const SECCOMP_FILE = "seccomp.bpf";
const SHELL_FILE = "shell";
const PLACEHOLDERS_FILE = "placeholders";
/** What a private folder holds: the sweep of folders left behind removes nothing else. */
const FOLDER_FILES: ReadonlySet<string> = new Set([LOCK_FILE, SECCOMP_FILE, SHELL_FILE]);
/** What it may hold besides. */
const OPTIONAL_FILES: ReadonlySet<string> = new Set([PLACEHOLDERS_FILE]);
/** The largest record of placeholders the sweep reads. */
const MAX_PLACEHOLDERS_BYTES = 1024 * 1024;
/**
 * How much older than its record a left placeholder may look (file systems with a coarse clock): one older
 * still was there before the session decided to make it, so it is someone else's.
 */
const PLACEHOLDER_CLOCK_MARGIN_MS = 2_000;

/**
 * Makes the files in a new private folder (in `directory`, default the system's temporary folder); null (and
 * nothing left behind) when that fails. Then removes the folders beside it that mewcode processes killed
 * before they could (SIGKILL, the OOM killer) left (`removeLeftFolders`).
 */
export async function prepareKeptSandboxFiles(
  options: { shell: string; seccomp: Uint8Array; directory?: string },
): Promise<KeptSandboxFiles | null> {
  const prepared = await makeKeptSandboxFiles(options);
  if (prepared !== null) await removeLeftFolders(prepared.directory);
  return prepared;
}

async function makeKeptSandboxFiles(
  options: { shell: string; seccomp: Uint8Array; directory?: string },
): Promise<KeptSandboxFiles | null> {
  let directory: string;
  try {
    directory = await Deno.makeTempDir({
      prefix: FOLDER_PREFIX,
      ...(options.directory === undefined ? {} : { dir: options.directory }),
    });
  } catch {
    return null;
  }
  const seccompFile = join(directory, SECCOMP_FILE);
  const supervisorCopy = join(directory, SHELL_FILE);
  let lock: Deno.FsFile | null = null;
  try {
    await Deno.chmod(directory, 0o700);
    // Locked before the other files exist: a folder holding all three is either locked or left.
    lock = await Deno.open(join(directory, LOCK_FILE), { write: true, createNew: true, mode: 0o600 });
    if (!await lock.tryLock(true)) throw new Error("the new lock file is locked");
    await Deno.writeFile(seccompFile, options.seccomp, { mode: 0o600, createNew: true });
    await Deno.copyFile(options.shell, supervisorCopy);
    await Deno.chmod(supervisorCopy, 0o111);
    return { directory, seccompFile, supervisorCopy, lock, placeholders: new Map() };
  } catch {
    await Deno.remove(directory, { recursive: true }).catch(() => undefined);
    lock?.close();
    return null;
  }
}

/** Removes the private folder, then lets its lock go; never throws. */
export async function removeKeptSandboxFiles(files: KeptSandboxFiles): Promise<void> {
  await Deno.remove(files.directory, { recursive: true }).catch(() => undefined);
  try {
    files.lock.close();
  } catch {
    // Closed already.
  }
}

/**
 * Records that the session is about to make the placeholder folders `made` (missing now; bubblewrap makes
 * them when the sandbox starts), and forgets those of `gone` that no longer exist (the session removed
 * them). Written before the sandbox starts, so that a session killed at any time later has them on record.
 * Synchronous: a few hundred bytes, rewritten only when the record changes. Never throws.
 */
export function recordPlaceholders(
  files: KeptSandboxFiles,
  changes: { made?: readonly string[]; gone?: readonly string[] },
): void {
  let changed = false;
  const now = Date.now();
  for (const path of changes.made ?? []) {
    if (files.placeholders.has(path)) continue;
    files.placeholders.set(path, now);
    changed = true;
  }
  for (const path of changes.gone ?? []) {
    if (!files.placeholders.has(path) || lstatSyncOrNull(path) !== null) continue;
    files.placeholders.delete(path);
    changed = true;
  }
  if (!changed) return;
  const lines = [...files.placeholders].map(([path, since]) => `${JSON.stringify({ path, since })}\n`);
  try {
    Deno.writeTextFileSync(join(files.directory, PLACEHOLDERS_FILE), lines.join(""), { mode: 0o600 });
  } catch {
    // The record is a courtesy for a session killed later; the session itself removes them.
  }
}

/**
 * Removes the private folders beside `own` (this session's) that their session left: owned by the same
 * user, mode 0700, holding the three files a private folder holds and nothing else but its record of
 * placeholders, and with a lock file no process holds. A session holds its lock from before it writes the
 * other two files until after it removed them, so that is a folder whose process ended without removing
 * it. The lock, not a process id, tells: the process that made a folder may run in another PID namespace (a
 * container sharing the temporary folder), and mewcode's permissions do not let it look at other processes.
 * Anything else is left alone, and so is each recorded placeholder that is not still an empty folder made
 * since (`removeLeftPlaceholders`). Never throws; resolves when done.
 */
export async function removeLeftFolders(own: string): Promise<void> {
  try {
    const parent = own.slice(0, own.lastIndexOf("/")) || "/";
    const owner = (await Deno.lstat(own)).uid;
    // One listing in one call: a temporary folder may hold thousands of entries, of which few are ours.
    for (const entry of Deno.readDirSync(parent)) {
      if (!entry.name.startsWith(FOLDER_PREFIX) || !entry.isDirectory) continue;
      const folder = join(parent, entry.name);
      if (folder !== own) await removeIfLeft(folder, owner);
    }
  } catch {
    // The temporary folder cannot be listed: the folders stay until the system clears it.
  }
}

async function removeIfLeft(folder: string, owner: number | null): Promise<void> {
  const info = await Deno.lstat(folder).catch(() => null);
  if (info === null || !info.isDirectory || info.uid !== owner || (info.mode ?? 0) % 0o1000 !== 0o700) return;
  const names: string[] = [];
  try {
    for await (const file of Deno.readDir(folder)) {
      if (!(FOLDER_FILES.has(file.name) || OPTIONAL_FILES.has(file.name)) || !file.isFile) return;
      names.push(file.name);
    }
  } catch {
    return;
  }
  if (names.filter((name) => FOLDER_FILES.has(name)).length !== FOLDER_FILES.size) return;
  let lock: Deno.FsFile;
  try {
    lock = await Deno.open(join(folder, LOCK_FILE), { read: true });
  } catch {
    return;
  }
  try {
    // Held while the folder goes: a session that finds it meanwhile sees it locked.
    if (!await lock.tryLock(true)) return;
    if (names.includes(PLACEHOLDERS_FILE)) await removeLeftPlaceholders(join(folder, PLACEHOLDERS_FILE));
    for (const name of names) await Deno.remove(join(folder, name)).catch(() => undefined);
    await Deno.remove(folder).catch(() => undefined);
  } catch {
    // Another session removed it first.
  } finally {
    lock.close();
  }
}

/**
 * Removes the placeholders a left folder's session recorded, each only when it is still an empty directory
 * (not a symlink) made since the record: the removal itself fails on a folder with anything in it, and an
 * older one was someone else's (the user's, made before; a placeholder is only ever recorded as missing).
 */
async function removeLeftPlaceholders(record: string): Promise<void> {
  let text: string;
  try {
    const file = await Deno.lstat(record);
    if (!file.isFile || file.size > MAX_PLACEHOLDERS_BYTES) return;
    text = await Deno.readTextFile(record);
  } catch {
    return;
  }
  // A record cut short by the kill: its last line has no line feed, and is not taken.
  for (const line of text.split("\n").slice(0, -1)) {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const { path, since } = (entry ?? {}) as { path?: unknown; since?: unknown };
    if (typeof path !== "string" || !path.startsWith("/") || typeof since !== "number") continue;
    const info = lstatSyncOrNull(path);
    if (
      info === null || !info.isDirectory || (info.mtime?.getTime() ?? 0) < since - PLACEHOLDER_CLOCK_MARGIN_MS
    ) {
      continue;
    }
    await Deno.remove(path).catch(() => undefined);
  }
}

/** Whether `path` is a directory (not a symlink to one) with nothing in it. */
export function isEmptyDirectory(path: string): boolean {
  try {
    if (!Deno.lstatSync(path).isDirectory) return false;
    return Deno.readDirSync(path).next().done === true;
  } catch {
    return false;
  }
}

/** What a session without a kept sandbox, or without bash, should say (`ShellSandbox.caveats`). */
export function keptSandboxCaveats(
  facts: { bash: string | null; sh: string | null; kept: boolean },
): string[] {
  const caveats: string[] = [];
  if (!facts.kept) {
    const why = facts.bash === null
      ? "bash is not installed"
      : facts.sh === null
      ? "no sh found in the system directories"
      : "its files could not be made";
    caveats.push(
      `each Bash call starts a sandbox of its own (about 20 ms; a kept sandbox needs bash: ${why})`,
    );
  }
  if (facts.bash === null) {
    caveats.push(
      "sh closes only descriptors 3 to 9 it inherited: one above 9 left open by mewcode's parent reaches commands",
    );
  }
  return caveats;
}
