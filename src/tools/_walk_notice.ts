/**
 * What a walk skipped, told to the model in a tool's result.
 *
 * @module
 */
import { EXCLUDED_DIRECTORY_NAMES } from "./_shared.ts";
import type { WalkCounts } from "./_walk.ts";

/** Directories that could not be read named in a notice; the rest are counted. */
const MAX_UNREADABLE_SHOWN = 3;

/**
 * The notice of the directories a walk could not read or enter (their files are missing from any result, so
 * it goes with results that found something too), or null.
 */
export function unreadableNotice(walk: Pick<WalkCounts, "unreadable">): string | null {
  const unreadable = walk.unreadable.length;
  if (unreadable === 0) return null;
  const shown = walk.unreadable.slice(0, MAX_UNREADABLE_SHOWN).join(", ");
  const more = unreadable > MAX_UNREADABLE_SHOWN ? `, and ${unreadable - MAX_UNREADABLE_SHOWN} more` : "";
  return `(Could not read ${unreadable} director${unreadable === 1 ? "y" : "ies"}, so ${
    unreadable === 1 ? "its" : "their"
  } files are missing from this result: ${shown}${more}.)`;
}

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
  const denied = deniedNotice(walk);
  if (denied !== null) notices.push(denied);
  const unreadable = unreadableNotice(walk);
  if (unreadable !== null) notices.push(unreadable);
  return notices.length === 0 ? null : notices.join("\n");
}

/**
 * The notice of the files a walk left out because a deny or ask rule covers them (so the model does not take
 * their absence for their nonexistence, nor look for them again), or null. It goes with every result: the
 * files are missing from results that found something too.
 */
export function deniedNotice(
  walk: Pick<WalkCounts, "deniedFiles" | "denyingRules" | "askingRules">,
): string | null {
  const count = walk.deniedFiles ?? 0;
  if (count === 0) return null;
  const denying = walk.denyingRules ?? [];
  const asking = walk.askingRules ?? [];
  const them = count === 1 ? "it" : "them";
  const reasons: string[] = [];
  if (denying.length > 0) {
    reasons.push(
      `${denying.length === 1 ? `the deny rule ${denying[0]}` : `the deny rules ${denying.join(", ")}`} ` +
        `den${denying.length === 1 ? "ies" : "y"} reading ${asking.length > 0 ? "some of them" : them}`,
    );
  }
  if (asking.length > 0) {
    reasons.push(
      `${asking.length === 1 ? `the ask rule ${asking[0]}` : `the ask rules ${asking.join(", ")}`} ` +
        `ask${asking.length === 1 ? "s" : ""} the user before ${
          denying.length > 0 ? "others are" : `${count === 1 ? "it is" : "they are"}`
        } read (ReadFile a file by its path to have the user asked)`,
    );
  }
  return `(${count} file${count === 1 ? " was" : "s were"} left out: ${reasons.join("; ")}, so ${
    count === 1 ? "its" : "their"
  } name and contents are not shown.)`;
}
