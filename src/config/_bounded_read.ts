/**
 * Reads files mewcode parses but did not write (a repository's settings, its own state that a person may
 * have edited): only regular files, never more than a size limit, and, for a repository's files, never
 * through a symbolic link that leads out of the workspace.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import { describeError } from "../common/errors.ts";
import { lstatSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";

/** Whether `path` is `directory` or inside it (both real paths). */
export function isInside(path: string, directory: string): boolean {
  const rest = relative(directory, path);
  return rest === "" || (rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/** What reading a file gave: its bytes, or why it was not read. */
export type BoundedRead =
  | { status: "missing" }
  | { status: "refused"; reason: string }
  | { status: "read"; bytes: Uint8Array };

/**
 * Reads the regular file at `path`, at most `maxBytes` long. With `within` (a real directory path), a file
 * whose real path lies outside it is refused. Never throws.
 *
 * Every step is synchronous: these files are read before the first request, where each asynchronous file
 * operation waited for a thread of Deno's pool and back (0.3 to 4 ms each on a 2-core machine, against
 * 20 to 50 µs), and none of them can block: the file is opened without blocking, and a regular file's read
 * ends.
 */
export function readBoundedFile(
  path: string,
  options: { within: string | null; maxBytes: number },
): Promise<BoundedRead> {
  let read = readBoundedFileSync(path, options);
  // Replaced between the look and the open (an atomic rewrite by another mewcode, as trust.json gets): the
  // new file is whole, so it is read again rather than reported as unreadable.
  for (let again = 0; again < 3 && read.status === "refused" && read.reason === CHANGED; again++) {
    read = readBoundedFileSync(path, options);
  }
  return Promise.resolve(read);
}

const CHANGED = "it changed while it was being read";

function readBoundedFileSync(
  path: string,
  options: { within: string | null; maxBytes: number },
): BoundedRead {
  if (lstatSyncOrNull(path) === null) return { status: "missing" };
  const real = realPathSyncOrNull(path);
  if (real === null) return { status: "refused", reason: "it is a symbolic link to nothing" };
  if (options.within !== null && !isInside(real, options.within)) {
    return { status: "refused", reason: `it resolves to "${real}", outside the workspace` };
  }
  const tooLarge = (size: number): BoundedRead => ({
    status: "refused",
    reason: `it is larger than ${options.maxBytes} bytes (${size})`,
  });
  let fd: number;
  let checked: Deno.FileInfo;
  try {
    checked = Deno.statSync(real);
    if (!checked.isFile) return { status: "refused", reason: "it is not a regular file" };
    if (checked.size > options.maxBytes) return tooLarge(checked.size);
    // A named pipe swapped in since the check would block a plain open (O_NONBLOCK), and a symbolic link
    // swapped in for the real path is not followed (O_NOFOLLOW).
    fd = openSync(real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    return { status: "refused", reason: `it cannot be read: ${describeError(error)}` };
  }
  try {
    // The file opened must be the one checked, not another swapped in since.
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.ino !== checked.ino || opened.dev !== checked.dev) {
      return { status: "refused", reason: CHANGED };
    }
    const buffer = new Uint8Array(options.maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > options.maxBytes) return tooLarge(length);
    return { status: "read", bytes: buffer.slice(0, length) };
  } catch (error) {
    return { status: "refused", reason: `it cannot be read: ${describeError(error)}` };
  } finally {
    closeSync(fd);
  }
}
