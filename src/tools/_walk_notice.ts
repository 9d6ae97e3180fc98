/**
 * What a walk skipped, told to the model in a tool's result.
 *
 * @module
 */
import { EXCLUDED_DIRECTORY_NAMES } from "./_shared.ts";
import type { WalkCounts } from "./_walk.ts";

/** A notice for the model about what a walk skipped, or null when it skipped nothing. */
export function skippedNotice(walk: WalkCounts): string | null {
  const parts: string[] = [];
  if (walk.ignoredFiles > 0) {
    parts.push(
      `${walk.ignoredFiles} file${walk.ignoredFiles === 1 ? " was" : "s were"} ignored by .gitignore`,
    );
  }
  if (walk.ignoredDirectories > 0) {
    parts.push(
      `${walk.ignoredDirectories} director${
        walk.ignoredDirectories === 1 ? "y was" : "ies were"
      } not entered ` +
        `(${[...EXCLUDED_DIRECTORY_NAMES].join(", ")} or ignored by .gitignore)`,
    );
  }
  if (walk.skippedSymlinks > 0) {
    parts.push(
      `${walk.skippedSymlinks} symlink${walk.skippedSymlinks === 1 ? " was" : "s were"} not followed ` +
        "(target outside the workspace, missing, or a loop)",
    );
  }
  if (walk.changedDirectories > 0) {
    parts.push(
      `${walk.changedDirectories} director${walk.changedDirectories === 1 ? "y" : "ies"} changed while ` +
        "being listed (replaced by a symlink)",
    );
  }
  const notices = walk.ignoreProblems.map((problem) => `(Ignore file ${problem}.)`);
  if (parts.length > 0) {
    notices.unshift(`(Skipped: ${parts.join("; ")}. Use Bash to look inside ignored paths.)`);
  }
  return notices.length === 0 ? null : notices.join("\n");
}
