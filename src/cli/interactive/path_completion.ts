/**
 * The file system side of `@path` tokens in the prompt: which paths under the workspace root start with what
 * the user typed, and whether a typed path exists. Paths are relative to the root, "/"-separated; a directory
 * ends with "/". Nothing outside the root is listed or confirmed: absolute paths, ".." segments and folders
 * whose real path (symbolic links resolved) leaves the root give nothing.
 *
 * @module
 */
import { join, sep } from "node:path";

/** Completes and checks the paths of `@path` tokens; the line editor's only access to the file system. */
export interface PathCompleter {
  /** Paths that start with `partial`, sorted, directories ending in "/". */
  candidates(partial: string): Promise<readonly string[]>;
  /** Whether `path` names an existing file or folder inside the workspace. */
  exists(path: string): Promise<boolean>;
}

/** How many candidates a listing returns at most; 500 unless given. */
export interface PathCompleterOptions {
  maxCandidates?: number;
}

/**
 * Names a token cannot carry: whitespace ends a token, and control characters would reach the terminal.
 * Such files are not offered.
 */
const UNTYPABLE = /[\s\p{Cc}]/u;

/** A completer over the folder `root`. */
export function workspacePathCompleter(root: string, options: PathCompleterOptions = {}): PathCompleter {
  const maxCandidates = options.maxCandidates ?? 500;
  return {
    async candidates(partial) {
      if (!isRelative(partial)) return [];
      const slash = partial.lastIndexOf("/");
      const folder = partial.slice(0, slash + 1);
      const prefix = partial.slice(slash + 1);
      const realFolder = await insideRoot(root, folder);
      if (realFolder === null) return [];
      const found: string[] = [];
      try {
        for await (const entry of Deno.readDir(realFolder)) {
          if (!entry.name.startsWith(prefix) || UNTYPABLE.test(entry.name)) continue;
          // Hidden files only when asked for with a leading dot.
          if (entry.name.startsWith(".") && !prefix.startsWith(".")) continue;
          const isDirectory = entry.isDirectory ||
            (entry.isSymlink &&
              (await Deno.stat(join(realFolder, entry.name)).catch(() => null))?.isDirectory);
          found.push(`${folder}${entry.name}${isDirectory ? "/" : ""}`);
        }
      } catch {
        return [];
      }
      return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, maxCandidates);
    },
    async exists(path) {
      if (!isRelative(path)) return false;
      return (await insideRoot(root, path)) !== null;
    },
  };
}

function isRelative(path: string): boolean {
  return !path.startsWith("/") && !path.includes("\\") && !path.split("/").includes("..");
}

/** The real path of `relative` under `root` when it exists and does not leave the root; otherwise null. */
async function insideRoot(root: string, relative: string): Promise<string | null> {
  try {
    const [realRoot, real] = await Promise.all([Deno.realPath(root), Deno.realPath(join(root, relative))]);
    return real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)
      ? real
      : null;
  } catch {
    return null;
  }
}
