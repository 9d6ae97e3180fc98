/**
 * Where a path really leads, the way the file tools resolve it (src/tools/_paths.ts `safePath`): `..` is
 * resolved first, a path under another name of the workspace is mapped to the workspace, then symlinks are
 * resolved; a path that does not exist yet resolves through its deepest existing ancestor. Rules match the
 * real path, so `EditFile(src/**)` does not cover `src/link/key` when `src/link -> ../secrets`.
 *
 * @module
 */
import { posix } from "../common/path.ts";

/** A path as named (normalised, aliases mapped) and where it really leads (null when that cannot be told). */
export interface ResolvedPath {
  named: string;
  real: string | null;
}

/** Options of `resolvePath`. */
export interface ResolveOptions {
  /** Real path of the workspace: relative paths start there, and aliases map to it. */
  workspace: string;
  /** Other absolute names of the workspace (the symlink the user named it by). */
  aliases?: readonly string[];
}

/**
 * Resolves a path (absolute, or relative to the workspace). Never throws. Synchronous: each call's gates
 * resolve its path, and two look-ups on the thread pool cost more than the look-ups themselves (neither
 * opens the file, so a FIFO cannot block it).
 */
export function resolvePath(path: string, options: ResolveOptions): ResolvedPath {
  const named = mapAlias(posix.resolve(options.workspace, path), options);
  const missing: string[] = [];
  let existing = named;
  while (true) {
    try {
      Deno.lstatSync(existing);
      break;
    } catch (error) {
      const absent = error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
      if (!absent || existing === "/") return { named, real: null };
      missing.unshift(posix.basename(existing));
      existing = posix.dirname(existing);
    }
  }
  try {
    return { named, real: posix.join(Deno.realPathSync(existing), ...missing) };
  } catch {
    return { named, real: null };
  }
}

/** The real path of a folder the user named (home, an additional directory), or its normalised form. */
export async function realFolder(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return posix.resolve(path);
  }
}

/** Whether `path` is `folder` or below it (both absolute and normalised). */
export function isWithin(folder: string, path: string): boolean {
  if (folder === "/") return path.startsWith("/");
  return path === folder || path.startsWith(`${folder}/`);
}

// A path under an alias of the workspace, moved under the workspace (the longest alias wins).
function mapAlias(path: string, options: ResolveOptions): string {
  if (isWithin(options.workspace, path)) return path;
  let found: string | null = null;
  for (const alias of options.aliases ?? []) {
    if (!posix.isAbsolute(alias)) continue;
    const normalized = posix.resolve(alias);
    if (normalized === "/" || !isWithin(normalized, path)) continue;
    if (found === null || normalized.length > found.length) found = normalized;
  }
  return found === null ? path : posix.join(options.workspace, path.slice(found.length));
}
