/**
 * Writes a file mewcode owns by writing a temporary file next to it and renaming it over the old one, so a
 * reader never sees half a file, and a symbolic link at the path is replaced rather than followed.
 *
 * @module
 */
import { basename, dirname, join } from "../common/path.ts";

/** Writes `text` to `path` atomically with file mode `mode`; throws what the file system throws. */
export async function writeFileAtomic(path: string, text: string, options: { mode: number }): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  try {
    await Deno.writeTextFile(temp, text, { mode: options.mode, createNew: true });
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => undefined);
    throw error;
  }
}
