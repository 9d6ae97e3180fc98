/**
 * Reading a file the user named on the command line, at most so many bytes: a regular file, or a pipe
 * (`--append-system-prompt-file <(make rules)`, `--json-schema @<(jq …)`), whose size is known only once
 * it is read.
 *
 * @module
 */
import { readInto } from "./fs.ts";

/** What `readUpTo` found. */
export type ReadUpTo =
  | { status: "read"; bytes: Uint8Array }
  /** `size`: a regular file's, or null for a pipe (known only to be larger). */
  | { status: "too-large"; size: number | null }
  | { status: "not-a-file" };

/**
 * The bytes of a regular file or a pipe at `path` (links followed), or why not: more than `maxBytes`, or
 * something else (a folder, a device). Throws what opening or reading throws (NotFound, PermissionDenied).
 */
export async function readUpTo(path: string, maxBytes: number): Promise<ReadUpTo> {
  const info = await Deno.stat(path);
  if (!info.isFile && info.isFifo !== true) return { status: "not-a-file" };
  if (info.isFile && info.size > maxBytes) return { status: "too-large", size: info.size };
  using file = await Deno.open(path);
  // One byte more than the cap tells a pipe that is too long from one of exactly the cap.
  const buffer = new Uint8Array(maxBytes + 1);
  const read = await readInto(file, buffer);
  if (read > maxBytes) return { status: "too-large", size: info.isFile ? read : null };
  return { status: "read", bytes: buffer.subarray(0, read) };
}
