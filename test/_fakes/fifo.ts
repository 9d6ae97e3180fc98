/**
 * Named pipes for tests of code that must never wait on one: making one, and waking whatever still waits
 * to open one for reading.
 *
 * @module
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** Opens the write end of every named pipe among `paths`, which lets a reader blocked in `open` go on. */
export async function releasePipes(...paths: string[]): Promise<void> {
  for (const path of paths) {
    try {
      const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
      await handle.close();
    } catch {
      // Not a pipe, or no reader waiting: nothing to release.
    }
  }
}

/** Opens and closes the read end of every named pipe among `paths`, which lets a writer blocked in `open` go on. */
export async function releaseWriters(...paths: string[]): Promise<void> {
  for (const path of paths) {
    try {
      const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
      await handle.close();
    } catch {
      // Not a pipe: nothing to release.
    }
  }
}

/** Makes a named pipe at `path` (mkfifo). */
export async function makeFifo(path: string): Promise<void> {
  const output = await new Deno.Command("mkfifo", { args: [path] }).output();
  if (!output.success) throw new Error(`mkfifo "${path}" failed: ${new TextDecoder().decode(output.stderr)}`);
}
