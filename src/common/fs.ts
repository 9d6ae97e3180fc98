/**
 * File-system lookups that answer null instead of throwing, for code that only asks whether something is
 * there. They follow the caller's permissions: in a restricted worker a path outside its grant is null too.
 *
 * @module
 */

/** `Deno.stat` (follows symlinks), or null when the path cannot be looked up. */
export async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

/** `Deno.lstat` (does not follow a final symlink), or null when the path cannot be looked up. */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch {
    return null;
  }
}

/**
 * `Deno.lstat`, or null when nothing is at the path; any other failure (a permission, an I/O error) throws,
 * for code that must not take an unreadable entry for a missing one.
 */
export async function lstatIfExists(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** `Deno.lstatSync`, or null when nothing is at the path; any other failure throws (see `lstatIfExists`). */
export function lstatSyncIfExists(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** `Deno.realPath`, or null when the path (or a symlink on the way) cannot be resolved. */
export async function realPathOrNull(path: string): Promise<string | null> {
  if (path === "") return null;
  try {
    return await Deno.realPath(path);
  } catch {
    return null;
  }
}

/** `Deno.lstatSync`, or null when the path cannot be looked up. */
export function lstatSyncOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/** `Deno.realPathSync`, or null when the path (or a symlink on the way) cannot be resolved. */
export function realPathSyncOrNull(path: string): string | null {
  if (path === "") return null;
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/** `Deno.statSync` (follows symlinks), or null when the path cannot be looked up. */
export function statSyncOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

/** `Deno.readLinkSync`, or null when the path is not a symlink or cannot be read. */
export function readLinkSyncOrNull(path: string): string | null {
  try {
    return Deno.readLinkSync(path);
  } catch {
    return null;
  }
}

/** Reads from `file` into `buffer` until it is full or the file ends; returns how many bytes were read. */
export async function readInto(file: Deno.FsFile, buffer: Uint8Array): Promise<number> {
  let read = 0;
  while (read < buffer.length) {
    const count = await file.read(buffer.subarray(read));
    if (count === null) break;
    read += count;
  }
  return read;
}

/**
 * The first `max` bytes of a file and its size when opened. Throws what opening or reading throws, and
 * `TypeError` for what is not a regular file (symlinks followed): opening a named pipe a sandboxed command
 * left (`mkfifo .git/packed-refs`) would wait for a writer forever.
 */
export async function readFileHead(path: string, max: number): Promise<{ bytes: Uint8Array; size: number }> {
  if (!(await Deno.stat(path)).isFile) throw new TypeError(`Cannot read "${path}": not a regular file`);
  using file = await Deno.open(path);
  const size = (await file.stat()).size;
  const buffer = new Uint8Array(Math.min(size, max));
  return { bytes: buffer.subarray(0, await readInto(file, buffer)), size };
}

/** The first `max` bytes of a file as UTF-8 text; null when it cannot be read (see `readFileHead`). */
export async function readTextHead(path: string, max: number): Promise<string | null> {
  try {
    return new TextDecoder().decode((await readFileHead(path, max)).bytes);
  } catch {
    return null;
  }
}

/**
 * A file's size and the SHA-256 (hex) of its first `max` bytes, as "SIZE:HEX": what tells later that it
 * changed. Null when it cannot be read (gone, a folder, a named pipe).
 */
export async function headDigest(path: string, max: number): Promise<string | null> {
  try {
    const { bytes, size } = await readFileHead(path, max);
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
    return `${size}:${[...hash].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
  } catch {
    return null;
  }
}
