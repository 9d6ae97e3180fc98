/**
 * Folders added to the workspace (`--add-dir`, settings `permissions.additionalDirectories`): the only way
 * past the workspace boundary. The tools read them, and writers and the shell write them, by the same rules
 * as the root, so what may be added is checked here once, before any worker or sandbox is set up.
 *
 * @module
 */
import { posix } from "../common/path.ts";

/** Why a folder cannot be added to the workspace; the message names the folder and the reason. */
export class AdditionalDirectoryError extends Error {
  override name = "AdditionalDirectoryError";
}

/**
 * Resolves folders as the user named them (absolute, or relative to `base`) to their real paths. Throws
 * AdditionalDirectoryError for a folder that is missing or not a directory.
 */
export async function resolveAdditionalDirectories(
  directories: readonly string[],
  base: string,
): Promise<string[]> {
  const resolved: string[] = [];
  for (const directory of directories) {
    const named = posix.resolve(base, directory);
    let real: string;
    try {
      real = await Deno.realPath(named);
    } catch (error) {
      throw new AdditionalDirectoryError(`Cannot add the directory "${directory}": ${describe(error)}`, {
        cause: error,
      });
    }
    if (!await isDirectory(real)) {
      throw new AdditionalDirectoryError(`Cannot add the directory "${directory}": it is not a directory`);
    }
    resolved.push(real);
  }
  return resolved;
}

/**
 * Checks the folders a runtime is given (real absolute paths) and returns them without duplicates and
 * without the root itself. Throws AdditionalDirectoryError, naming the folder and why, for one that is not
 * absolute, not its own real path, missing, not a directory, the file system's root, or inside or around
 * mewcode's state folder (`excludedPaths`), which the tools and the shell must never reach.
 */
export async function checkAdditionalRoots(
  folders: readonly string[],
  options: { root: string; excludedPaths: readonly string[] },
): Promise<string[]> {
  const checked: string[] = [];
  for (const folder of folders) {
    const fail = (reason: string): never => {
      throw new AdditionalDirectoryError(`Cannot add the directory "${folder}": ${reason}`);
    };
    if (!posix.isAbsolute(folder)) fail("it is not an absolute path");
    const normalized = posix.resolve(folder);
    if (normalized === "/") {
      fail("it is the root of the file system, and the tools and the shell would reach every file");
    }
    let real: string;
    try {
      real = await Deno.realPath(normalized);
    } catch (error) {
      return fail(describe(error));
    }
    if (real !== normalized) fail(`it is not a real path (it resolves to "${real}"): add the real path`);
    if (!await isDirectory(real)) fail("it is not a directory");
    for (const excluded of options.excludedPaths) {
      const state = posix.resolve(excluded);
      if (isAtOrBelow(real, state)) {
        fail(`it is inside mewcode's state folder "${state}", which the tools never reach`);
      }
      if (isAtOrBelow(state, real)) {
        fail(
          `it contains mewcode's state folder "${state}" (sessions and settings, which the tools never ` +
            "reach): add a folder that does not contain it",
        );
      }
    }
    if (real !== options.root && !checked.includes(real)) checked.push(real);
  }
  return checked;
}

function isAtOrBelow(path: string, folder: string): boolean {
  return folder === "/" || path === folder || path.startsWith(`${folder}/`);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

function describe(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such directory";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotADirectory) return "a parent of it is not a directory";
  return error instanceof Error ? error.message : String(error);
}
