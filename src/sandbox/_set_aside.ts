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
 * symlink, then removed; an entry too large to copy (`COPY_LIMITS`), or with nowhere to go (a session that
 * keeps no state), is removed as before.
 *
 * @module
 */
import { basename, dirname, join } from "../common/path.ts";
import { describeError } from "../common/errors.ts";
import type { MadeEntry } from "./_made_entries.ts";

/** What became of an entry. */
export type SetAsideOutcome =
  | { kind: "moved"; to: string }
  | { kind: "removed"; why: string }
  | { kind: "failed"; error: string };

/**
 * How long set-aside entries are kept: each time one is set aside, older ones go, so a model that makes the
 * same path on every call cannot fill the disk over months of sessions.
 */
export const KEEP_DAYS = 30;

/** The most an entry may hold to be copied aside across file systems. */
export const COPY_LIMITS = { entries: 2_000, bytes: 64 * 1024 * 1024 };

/** Options of `setAside`. */
export interface SetAsideOptions {
  /** The folder entries go to; null to remove them (nowhere to keep them). */
  folder: string | null;
  /** The roots the entry may lie in: its path below the one holding it is kept. */
  roots: readonly string[];
  /** Whether a folder is removed with what it holds, when it cannot be set aside. */
  recursive: boolean;
}

/**
 * Moves `entry` out of the way (see the module doc): into `options.folder` when it can, else removes it.
 * Never throws.
 */
export async function setAside(entry: MadeEntry, options: SetAsideOptions): Promise<SetAsideOutcome> {
  let why = "the session keeps no state to set it aside in";
  if (options.folder !== null) {
    try {
      return { kind: "moved", to: await moveAside(entry, options.folder, options.roots) };
    } catch (error) {
      why = `it could not be set aside: ${describeError(error)}`;
    }
  }
  try {
    await Deno.remove(entry.path, { recursive: options.recursive });
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

async function moveAside(entry: MadeEntry, folder: string, roots: readonly string[]): Promise<string> {
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  await removeOld(folder, Date.now() - KEEP_DAYS * 24 * 60 * 60 * 1000);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const own = join(folder, `${stamp}-${crypto.randomUUID().slice(0, 8)}`);
  await Deno.mkdir(own, { mode: 0o700 });
  const to = join(own, relativeName(entry.path, roots));
  await Deno.mkdir(dirname(to), { recursive: true, mode: 0o700 });
  try {
    await Deno.rename(entry.path, to);
    return to;
  } catch (error) {
    if (!isCrossDevice(error)) {
      await Deno.remove(own, { recursive: true }).catch(() => undefined);
      throw error;
    }
  }
  try {
    await copyWithin(entry.path, to, { entries: 0, bytes: 0 });
  } catch (error) {
    await Deno.remove(own, { recursive: true }).catch(() => undefined);
    throw error;
  }
  await Deno.remove(entry.path, { recursive: true });
  return to;
}

/** The name of an entry's folder: the time it was set aside (`20261203T104512Z`), then an id. */
const STAMPED_NAME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-.*$/;

/** Removes the entries' folders of `folder` made before `before` (by the time in their names). */
async function removeOld(folder: string, before: number): Promise<void> {
  for await (const entry of Deno.readDir(folder)) {
    const made = Date.parse(entry.name.replace(STAMPED_NAME, "$1-$2-$3T$4:$5:$6Z"));
    if (!entry.isDirectory || !STAMPED_NAME.test(entry.name) || made >= before) continue;
    await Deno.remove(join(folder, entry.name), { recursive: true }).catch(() => undefined);
  }
}

/** The entry's path below the root holding it, or its name when it lies in none. */
function relativeName(path: string, roots: readonly string[]): string {
  const root = roots.find((folder) => path.startsWith(folder.endsWith("/") ? folder : `${folder}/`));
  if (root === undefined) return basename(path);
  return path.slice(root.length).replace(/^\/+/, "");
}

function isCrossDevice(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EXDEV";
}

/**
 * Copies `from` to `to` as it is: a symlink as a symlink, a folder with what it holds, a file with its mode;
 * anything else (a named pipe, a socket) is left out. Throws past `COPY_LIMITS`, counted in `used`.
 */
async function copyWithin(from: string, to: string, used: { entries: number; bytes: number }): Promise<void> {
  const info = await Deno.lstat(from);
  if (++used.entries > COPY_LIMITS.entries) {
    throw new Error(`it holds more than ${COPY_LIMITS.entries} entries`);
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
    if (used.bytes > COPY_LIMITS.bytes) throw new Error(`it holds more than ${COPY_LIMITS.bytes} bytes`);
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
    if (total > COPY_LIMITS.bytes) throw new Error(`it holds more than ${COPY_LIMITS.bytes} bytes`);
    for (let written = 0; written < read;) written += await copy.write(buffer.subarray(written, read));
  }
}
