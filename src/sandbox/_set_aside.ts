/**
 * Where an entry goes when a call made a path that was to stay missing (`_made_entries.ts`): aside, into
 * mewcode's state folder, not deleted. mewcode cannot tell a command's file from one the user made on the
 * host while the command ran (the same file system, the same owner): `aws configure` in another terminal
 * during a long test run writes `~/.aws/credentials` as a command in the sandbox could, and `npx husky init`
 * makes `.husky/` as one could. Set aside, the entry is out of the way of the user's programs, which is all
 * the protection needs, and nothing is lost: the note names where it went.
 *
 * The folder is `<MEWCODE_HOME>/projects/<slug>/set-aside` (hidden from every sandbox, as the whole state
 * folder is), one new folder per entry (`<time>-<id>`), which holds the entry at its path in the workspace
 * (`.aws/credentials`). The entry is renamed there: a symlink is moved as itself, never followed, and a folder
 * with all it holds. Across file systems (a workspace on a mounted volume), it is copied, without following a
 * symlink, then removed. What a user makes is small: an entry larger than `KEEP_LIMITS`, one past the
 * session's `SetAsideBudget`, or one with nowhere to go (a session that keeps no state) is removed, as is
 * what is older than `KEEP_DAYS`, so a model cannot fill the disk with what is kept.
 *
 * The path is looked at again, synchronously, right before the rename or removal (every folder on its way a
 * real one, the entry the one found): another session's command could swap a folder on the way for a symlink
 * meanwhile, and the rename would follow it. After the rename, what arrived must be that entry. A removal
 * never recurses through a tree of unknown depth (`removeTree`).
 *
 * @module
 */
import { basename, dirname, join } from "../common/path.ts";
import { describeError } from "../common/errors.ts";
import { lstatSyncOrNull } from "../common/fs.ts";
import { isAtOrBelow } from "./bubblewrap.ts";
import { type MadeEntry, madeEntry } from "./_made_entries.ts";

/** What became of an entry. */
export type SetAsideOutcome =
  | { kind: "moved"; to: string }
  | { kind: "removed"; why: string }
  | { kind: "failed"; error: string };

/**
 * How long set-aside entries are kept: the first time a session sets one aside, older ones go, so a model
 * that makes the same path on every call cannot fill the disk over months of sessions.
 */
export const KEEP_DAYS = 30;

/** The most an entry may hold to be kept (its files' sizes as `lstat` gives them). */
export const KEEP_LIMITS = { entries: 2_000, bytes: 64 * 1024 * 1024 };

/** The most bytes one session sets aside: past it, what a call made is removed. */
export const SESSION_SET_ASIDE_BYTES = 256 * 1024 * 1024;

/**
 * The largest tree removed by the runtime's own recursive removal, which works on open folders (a swapped
 * folder is not followed) but recurses once per level: a tree 30,000 folders deep overflowed its stack and
 * aborted the process. A larger tree, or one whose paths grow too long to be measured, is removed by
 * `removeTree` (the system's rm).
 */
const RECURSIVE_REMOVAL_ENTRIES = 5_000;

/** What a session may still set aside (bytes); one per session, shared by its calls. */
export interface SetAsideBudget {
  bytes: number;
  /**
   * The folders whose old entries this session removed already. Once a session is enough (they are days
   * old); before every entry, a model making thousands of entries made the session's end quadratic: 3,000 took
   * 28 seconds, long enough for a user to press Ctrl-C twice and leave the rest where they were.
   */
  swept?: Set<string>;
}

/** Options of `setAside`. */
export interface SetAsideOptions {
  /** The folder entries go to; null to remove them (nowhere to keep them). */
  folder: string | null;
  /** The roots the entry may lie in: its path below the one holding it is kept. */
  roots: readonly string[];
  /** Whether a folder is removed with what it holds, when it cannot be set aside. */
  recursive: boolean;
  /** The session's budget; default a fresh one. */
  budget?: SetAsideBudget;
}

/**
 * Moves `entry` out of the way (see the module doc): into `options.folder` when it can, else removes it.
 * Never throws.
 */
export async function setAside(entry: MadeEntry, options: SetAsideOptions): Promise<SetAsideOutcome> {
  const size = measureTree(entry.path, KEEP_LIMITS);
  const budget = options.budget ?? { bytes: SESSION_SET_ASIDE_BYTES };
  let why = "the session keeps no state to set it aside in";
  if (size === null) {
    why = `it holds more than ${KEEP_LIMITS.entries} entries or ${KEEP_LIMITS.bytes} bytes`;
  } else if (size.bytes > budget.bytes) {
    why = `this session has set aside ${SESSION_SET_ASIDE_BYTES} bytes already`;
  } else if (options.folder !== null) {
    try {
      const to = await moveAside(entry, options.folder, options.roots, budget);
      budget.bytes -= size.bytes;
      return { kind: "moved", to };
    } catch (error) {
      if (error instanceof PathChanged) return { kind: "failed", error: error.message };
      why = `it could not be set aside: ${describeError(error)}`;
    }
  }
  try {
    if (!stillThere(entry, options.roots)) throw new PathChanged(entry.path);
    if (!entry.info.isDirectory || entry.onTheWay) {
      await Deno.remove(entry.path);
    } else if (!options.recursive) {
      await Deno.remove(entry.path);
    } else if (size !== null && size.entries <= RECURSIVE_REMOVAL_ENTRIES) {
      await Deno.remove(entry.path, { recursive: true });
    } else {
      await removeTree(entry.path);
    }
    return { kind: "removed", why };
  } catch (error) {
    return { kind: "failed", error: describeError(error) };
  }
}

/** The sentence a note says of an outcome, after the entry's name: `moved to "…"`, `removed (…)`. */
export function describeSetAside(outcome: SetAsideOutcome): string {
  switch (outcome.kind) {
    case "moved":
      return `was moved to "${outcome.to}"`;
    case "removed":
      return `was removed (${outcome.why})`;
    case "failed":
      return `could not be removed (${outcome.error})`;
  }
}

/** The path of an entry no longer leads where it was found: nothing is moved or removed through it. */
class PathChanged extends Error {
  constructor(path: string) {
    super(
      `"${path}" changed while it was being set aside (a folder on its way was replaced); it was left as is`,
    );
  }
}

async function moveAside(
  entry: MadeEntry,
  folder: string,
  roots: readonly string[],
  budget: SetAsideBudget,
): Promise<string> {
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  budget.swept ??= new Set();
  if (!budget.swept.has(folder)) {
    await removeOld(folder, Date.now() - KEEP_DAYS * 24 * 60 * 60 * 1000);
    budget.swept.add(folder);
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const own = join(folder, `${stamp}-${crypto.randomUUID().slice(0, 8)}`);
  await Deno.mkdir(own, { mode: 0o700 });
  const to = join(own, relativeName(entry.path, roots));
  await Deno.mkdir(dirname(to), { recursive: true, mode: 0o700 });
  try {
    // Looked at and renamed with nothing in between: no await lets another task run, and the look-ups take
    // microseconds.
    if (!stillThere(entry, roots)) throw new PathChanged(entry.path);
    Deno.renameSync(entry.path, to);
  } catch (error) {
    if (!isCrossDevice(error)) {
      await removeTree(own).catch(() => undefined);
      throw error;
    }
    try {
      await copyWithin(entry.path, to, { entries: 0, bytes: 0 });
    } catch (error) {
      await removeTree(own).catch(() => undefined);
      throw error;
    }
    if (!stillThere(entry, roots)) throw new PathChanged(entry.path);
    await Deno.remove(entry.path, { recursive: true });
    return to;
  }
  const arrived = lstatSyncOrNull(to);
  if (arrived === null || arrived.dev !== entry.info.dev || arrived.ino !== entry.info.ino) {
    throw new PathChanged(entry.path);
  }
  return to;
}

/**
 * Whether `entry` is still what was found at its path: looked up the same way (`madeEntry`: every folder
 * between its root and it a real folder, not a symlink), it is the same file (device and inode).
 */
function stillThere(entry: MadeEntry, roots: readonly string[]): boolean {
  const now = madeEntry(entry.path, roots);
  return now !== null && now.path === entry.path && now.info.dev === entry.info.dev &&
    now.info.ino === entry.info.ino;
}

/** The name of an entry's folder: the time it was set aside (`20261203T104512Z`), then an id. */
const STAMPED_NAME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-.*$/;

/** Removes the entries' folders of `folder` made before `before` (by the time in their names). */
async function removeOld(folder: string, before: number): Promise<void> {
  for await (const entry of Deno.readDir(folder)) {
    const made = Date.parse(entry.name.replace(STAMPED_NAME, "$1-$2-$3T$4:$5:$6Z"));
    if (!entry.isDirectory || !STAMPED_NAME.test(entry.name) || made >= before) continue;
    await removeTree(join(folder, entry.name)).catch(() => undefined);
  }
}

/**
 * The entries and bytes of the tree at `path` (not following symlinks), or null past `limits` or when a
 * path in it is too long to look at. Without recursion.
 */
export function measureTree(
  path: string,
  limits: { entries: number; bytes: number },
): { entries: number; bytes: number } | null {
  let entries = 0;
  let bytes = 0;
  const pending = [path];
  try {
    while (pending.length > 0) {
      const at = pending.pop()!;
      const info = Deno.lstatSync(at);
      if (++entries > limits.entries) return null;
      if (info.isFile) bytes += info.size;
      if (bytes > limits.bytes) return null;
      if (!info.isDirectory) continue;
      for (const child of Deno.readDirSync(at)) pending.push(join(at, child.name));
    }
  } catch {
    return null;
  }
  return { entries, bytes };
}

/**
 * Removes the tree at `path`, however large or deep, never following a symlink. With the system's `rm`: it
 * walks by open folders (as the runtime's recursive removal does), so a folder another process swaps for a
 * symlink meanwhile is not followed, and it keeps its walk on the heap, not the stack. Without one, by a flat
 * walk: each folder is moved up to `path` itself before it is emptied, so no path is longer than
 * `path/<id>/<name>` (a walk by path names, which a swap under way could mislead). `options.rm`: tests
 * choose the walk (null) or another program.
 */
export async function removeTree(path: string, options: { rm?: string | null } = {}): Promise<void> {
  const info = await Deno.lstat(path);
  if (!info.isDirectory) return await Deno.remove(path);
  const rm = options.rm === undefined
    ? SYSTEM_RM.find((candidate) => lstatSyncOrNull(candidate)?.isFile === true) ?? null
    : options.rm;
  if (rm !== null) {
    const removed = await new Deno.Command(rm, {
      args: ["-rf", "--", path],
      clearEnv: true,
      env: { LC_ALL: "C" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (lstatSyncOrNull(path) === null) return;
    const said = new TextDecoder().decode(removed.stderr).trim().split("\n")[0] ?? "";
    throw new Error(`rm could not remove "${path}" (exit ${removed.code}): ${said}`);
  }
  const tag = crypto.randomUUID().slice(0, 8);
  let moved = 0;
  const pending = [path];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    for (const child of Array.from(Deno.readDirSync(folder))) {
      const at = join(folder, child.name);
      if (!child.isDirectory) {
        await Deno.remove(at);
      } else if (folder === path) {
        pending.push(at);
      } else {
        const up = join(path, `.mewcode-removing-${tag}-${moved++}`);
        await Deno.rename(at, up);
        pending.push(up);
      }
    }
    // Its files are gone and its folders moved up: empty.
    if (folder !== path) await Deno.remove(folder);
  }
  await Deno.remove(path);
}

/** Where the system's rm is, by absolute path: never looked up on PATH, which the workspace may lead. */
const SYSTEM_RM = ["/usr/bin/rm", "/bin/rm"];

/** The entry's path below the root holding it, or its name when it lies in none. */
function relativeName(path: string, roots: readonly string[]): string {
  // The root that holds it, found as `madeEntry` finds it.
  const root = roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
  if (root === undefined) return basename(path);
  return path.slice(root.length).replace(/^\/+/, "");
}

function isCrossDevice(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EXDEV";
}

/**
 * Copies `from` to `to` as it is: a symlink as a symlink, a folder with what it holds, a file with its mode;
 * anything else (a named pipe, a socket) is left out. Throws past `KEEP_LIMITS`, counted in `used`.
 */
async function copyWithin(from: string, to: string, used: { entries: number; bytes: number }): Promise<void> {
  const info = await Deno.lstat(from);
  if (++used.entries > KEEP_LIMITS.entries) {
    throw new Error(`it holds more than ${KEEP_LIMITS.entries} entries`);
  }
  if (info.isSymlink) {
    await Deno.symlink(await Deno.readLink(from), to);
  } else if (info.isDirectory) {
    await Deno.mkdir(to, { mode: 0o700 });
    for await (const child of Deno.readDir(from)) {
      await copyWithin(join(from, child.name), join(to, child.name), used);
    }
    await Deno.chmod(to, (info.mode ?? 0o700) & 0o777);
  } else if (info.isFile) {
    used.bytes += info.size;
    if (used.bytes > KEEP_LIMITS.bytes) throw new Error(`it holds more than ${KEEP_LIMITS.bytes} bytes`);
    await copyFile(from, to, info);
  }
}

/** Copies the regular file `from`, as `lstat` saw it (`seen`), to the new file `to`, with its mode. */
async function copyFile(from: string, to: string, seen: Deno.FileInfo): Promise<void> {
  using file = await Deno.open(from, { read: true });
  const opened = await file.stat();
  // Swapped for a symlink since the lstat: what it leads to is not the entry.
  if (!opened.isFile || opened.ino !== seen.ino || opened.dev !== seen.dev) {
    throw new Error(`"${from}" changed while it was being copied`);
  }
  using copy = await Deno.open(to, { write: true, createNew: true, mode: (seen.mode ?? 0o600) & 0o777 });
  const buffer = new Uint8Array(64 * 1024);
  let total = 0;
  for (let read = await file.read(buffer); read !== null; read = await file.read(buffer)) {
    total += read;
    // It grew since the lstat that counted it.
    if (total > KEEP_LIMITS.bytes) throw new Error(`it holds more than ${KEEP_LIMITS.bytes} bytes`);
    for (let written = 0; written < read;) written += await copy.write(buffer.subarray(written, read));
  }
}
