/**
 * The workspace a session works in: its real path, resolved once at start, and the names the user gave it.
 *
 * @module
 */
import { realPathSyncOrNull } from "../common/fs.ts";
import { isAbsolute, resolve } from "../common/path.ts";

/** The workspace as resolved at start: its real path, and the names the user gave it that differ. */
export interface Workspace {
  /** Real path of the root. */
  root: string;
  /** Other absolute names of the root (`-C link`, or a symlinked current directory), normalised. */
  aliases: string[];
}

/** Why a workspace cannot be used, for a usage error. */
export class WorkspaceError extends Error {
  override name = "WorkspaceError";
}

/**
 * Resolves `-C DIR` or the current directory to its real path, plus the names the user gave it when they
 * differ (a symlink), so that paths under those names still count as inside. `pwd` is the shell's logical
 * current directory ($PWD), used when no directory was given.
 */
export function resolveWorkspace(
  cd: string | null,
  options: { pwd?: string | undefined } = {},
): Promise<Workspace> {
  try {
    return Promise.resolve(resolveWorkspaceSync(cd, options));
  } catch (error) {
    return Promise.reject(error);
  }
}

// Synchronous: it runs before the first request, where each asynchronous file operation waited for a thread
// of Deno's pool and back (0.3 to 4 ms each on a 2-core machine, against microseconds).
function resolveWorkspaceSync(cd: string | null, options: { pwd?: string | undefined }): Workspace {
  const wanted = cd ?? currentDirectory();
  let root: string;
  try {
    root = Deno.realPathSync(wanted);
    const info = Deno.statSync(root);
    if (!info.isDirectory) {
      throw new WorkspaceError(`Cannot use "${wanted}" as the workspace: not a directory`);
    }
    if (root === "/") {
      // Every program and every secret of the machine would lie inside the workspace: the tools' rules and
      // the sandbox's bind of the workspace would keep nothing out.
      throw new WorkspaceError(
        `Cannot use "${wanted}" as the workspace: it is the root of the file system, which would put every ` +
          "file of the machine inside it; run mewcode in a project folder, or pass it with -C DIR",
      );
    }
  } catch (error) {
    if (error instanceof WorkspaceError) throw error;
    const reason = error instanceof Deno.errors.NotFound ? "no such directory" : String(error);
    throw new WorkspaceError(`Cannot use "${wanted}" as the workspace: ${reason}`);
  }
  const names = [resolve(wanted)];
  const logical = cd === null ? options.pwd : undefined;
  if (logical !== undefined && isAbsolute(logical)) {
    const real = realPathSyncOrNull(logical);
    if (real === root) names.push(resolve(logical));
  }
  return { root, aliases: [...new Set(names)].filter((name) => name !== root) };
}

/** The current directory; a WorkspaceError when its path is not UTF-8, which the runtime cannot name. */
function currentDirectory(): string {
  try {
    return Deno.cwd();
  } catch (error) {
    if (!(error instanceof Deno.errors.InvalidData)) throw error;
    throw new WorkspaceError(
      `Cannot use the current directory as the workspace: ${error.message}, and the runtime names files ` +
        "only by UTF-8 paths: rename the folder (or a folder above it), or run mewcode from another one",
    );
  }
}
