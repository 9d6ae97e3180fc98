/**
 * The task runners' files a repository's git hooks run: husky's `.husky/pre-commit` holding `npm test`, or
 * `npx lint-staged` (whose config may live in `package.json`), or `make lint`. What they say runs at the
 * user's next `git commit`, outside any sandbox, yet they cannot be protected like the hooks' own scripts:
 * every dependency change writes `package.json`. So the session notes them, with a digest of each, before
 * its first shell call or write, and at its end tells the user which one changed and which hook runs it.
 *
 * @module
 */
import { headDigest } from "../common/fs.ts";
import { shownFrom } from "../common/path.ts";
import type { HookTask } from "./_git_hook_scripts.ts";
import { planGitProtection, type UserGitConfig } from "./git_metadata.ts";

export type { HookTask };

/** Bytes of a task file hashed at most (a larger one counts as changed when its first bytes or size do). */
const MAX_TASK_FILE_BYTES = 4 * 1024 * 1024;

/** The task files of the hooks of the roots' repositories, with what each held (see `taskDigest`). */
export interface HookTaskRecord {
  task: HookTask;
  digest: string | null;
}

/**
 * The task runners' files the hooks of each root's repositories (the nested ones given too) run now, with
 * their digests. Never throws.
 */
export async function recordHookTasks(
  roots: readonly string[],
  options: { nestedDotGits: readonly string[]; user: UserGitConfig },
): Promise<HookTaskRecord[]> {
  const records: HookTaskRecord[] = [];
  for (const root of roots) {
    const nestedDotGits = options.nestedDotGits.filter((path) => path.startsWith(`${root}/`));
    const protection = await planGitProtection(root, { nestedDotGits, user: options.user });
    for (const task of protection.hookTasks) {
      if (records.some((record) => record.task.path === task.path)) continue;
      records.push({ task, digest: await headDigest(task.path, MAX_TASK_FILE_BYTES) });
    }
  }
  return records;
}

/**
 * One line for the user per recorded task file whose content is not what it was: the hook that runs it and
 * the command, since the next commit runs what the file says now. Paths are shown relative to `root`.
 */
export async function changedHookTasks(records: readonly HookTaskRecord[], root: string): Promise<string[]> {
  const lines: string[] = [];
  for (const { task, digest } of records) {
    if ((await headDigest(task.path, MAX_TASK_FILE_BYTES)) === digest) continue;
    const file = shownFrom(root, task.path);
    const what = digest === null ? "appeared" : "changed";
    lines.push(
      `${file} ${what} during the session, and \`${task.command}\` in ${shownFrom(root, task.hook)}, which ` +
        "your git runs as a hook, reads it: your next git commit runs what it says now, outside any sandbox; " +
        `look at git diff -- ${file} before you commit`,
    );
  }
  return lines;
}
