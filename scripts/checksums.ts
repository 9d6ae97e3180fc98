/**
 * SHA-256 checksums of release files, in the format `sha256sum` writes and `sha256sum -c` (or
 * `shasum -a 256 -c`) checks: one `<64 hex digits>  <file name>` line per file, sorted by name.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

/** The name of the checksum file in a release directory. */
export const CHECKSUMS_FILE = "SHA256SUMS";

/** The SHA-256 of a file as 64 lowercase hex digits, read in chunks (binaries are ~100 MB). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  // The readable closes the file when it ends, or when the loop exits early.
  const file = await Deno.open(path);
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

/** The checksum lines of `names` (files in `dir`), sorted by name. */
export async function checksumLines(dir: string, names: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const name of [...names].sort()) {
    if (/[/\\\n]/.test(name)) {
      throw new RangeError(`Cannot list "${name}" in ${CHECKSUMS_FILE}: not a plain file name`);
    }
    lines.push(`${await sha256File(join(dir, name))}  ${name}\n`);
  }
  return lines.join("");
}

/** Writes `dir`/SHA256SUMS for `names` (files in `dir`) and returns its path. */
export async function writeChecksums(dir: string, names: readonly string[]): Promise<string> {
  const path = join(dir, CHECKSUMS_FILE);
  await Deno.writeTextFile(path, await checksumLines(dir, names));
  return path;
}
