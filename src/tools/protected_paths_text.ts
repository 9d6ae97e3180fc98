/**
 * The protected paths of every session (`PROTECTED_PATHS`) for people: one list, shown the same way by
 * `mewcode permissions` and `mewcode doctor`, so neither can name fewer paths than the writers protect.
 *
 * @module
 */
import { SHELL_STARTUP_FILES } from "../common/home_credentials.ts";
import { PROTECTED_PATHS } from "./protected_paths.ts";

/** A protected path as listed: a folder's ends in "/"; `anyDepth` when it is protected in every subfolder too. */
export interface ListedProtectedPath {
  path: string;
  anyDepth: boolean;
}

/** The shell's start-up files, which the text names as one group. */
const SHELL_FILES: ReadonlySet<string> = new Set([...SHELL_STARTUP_FILES, ".config/fish"]);

/** Every session's protected paths, one entry per path (a folder's ends in "/"). */
export function listProtectedPaths(): ListedProtectedPath[] {
  const merged = new Map<string, { folder: boolean; anyDepth: boolean }>();
  for (const entry of PROTECTED_PATHS) {
    const seen = merged.get(entry.path) ?? { folder: false, anyDepth: false };
    merged.set(entry.path, {
      folder: seen.folder || entry.folder === true,
      anyDepth: seen.anyDepth || entry.anyDepth,
    });
  }
  return [...merged].map(([path, { folder, anyDepth }]) => ({ path: folder ? `${path}/` : path, anyDepth }));
}

/** The protected paths in one line: `.git (at any depth), .mewcode/, …, shell start-up files (…)`. */
export function describeProtectedPaths(): string {
  const paths = listProtectedPaths().filter(({ path }) => !SHELL_FILES.has(path))
    .map(({ path, anyDepth }) => anyDepth ? `${path} (at any depth)` : path);
  return `${paths.join(", ")}, shell start-up files (${[...SHELL_FILES].join(", ")})`;
}
