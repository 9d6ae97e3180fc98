/**
 * What a built-in tool's definition (in the main process, with its zod schema) and its runner (in the tool
 * worker, with node:fs) both need: defaults, limits, input checks, messages. The main process never imports
 * a runner: a runner loads node:fs, and with it Deno's Node compatibility layer, which costs a process
 * ~10 MB and ~50 ms to load (measured) while the main process never opens a file for a tool. A definition
 * loads its runner only if it runs a call itself (`loadedOnCall`, the direct executor of tests).
 *
 * @module
 */
import type { ReadFileInput } from "./read_file.ts";

/** Directory names never entered, whatever the ignore files say. */
export const EXCLUDED_DIRECTORY_NAMES: ReadonlySet<string> = new Set([
  ".git",
  "node_modules",
  "vendor",
  ".idea",
  "__pycache__",
]);

/** ReadFile: lines returned when `limit` is not given. */
export const DEFAULT_READ_LIMIT = 2000;

/** ReadFile: characters of numbered text one call returns at most; a read stops early past it. */
export const MAX_READ_CHARACTERS = 250_000;

/** ReadFile's offset and limit, checked by validateInput and by the runner (which tests reach directly). */
export function pagingProblem(input: ReadFileInput): string | null {
  for (const name of ["offset", "limit"] as const) {
    const value = input[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      return `Invalid ${name} ${value}: ${name} must be a positive integer`;
    }
  }
  return null;
}

/** Glob: paths one call returns at most; the rest are counted in a notice. */
export const MAX_GLOB_RESULTS = 200;

/** Grep: matches (content), files (files_with_matches) or counts (count) returned when head_limit is not given. */
export const DEFAULT_HEAD_LIMIT = 100;

/** Grep: the input field that carries a prepass request (`_grep_prepass.ts`), set only by the runtime. */
export const GREP_PREPASS = "mewcodePrepass";

/** Grep: the result of a prepass past its budget that was not asked for the walk. */
export const BUDGET_SPENT = "budget-spent";

/**
 * Grep: a budgeted search (`_grep_prepass.ts`) that has found this share of what it may show when its budget
 * is spent goes on, up to `EXTENDED_BUDGET_FACTOR` times the budget. Dense searches end near the budget (a
 * first call's code is still cold), and missing it by a millisecond cost a whole ripgrep search and walk:
 * measured on the benchmark tree, a default-limit regex Grep took 33-76 ms in the worker, and 0.9-1 s when
 * it missed.
 */
export const EXTEND_FROM_FULLNESS = 0.5;
/** How many budgets a search past `EXTEND_FROM_FULLNESS` may take in all. */
export const EXTENDED_BUDGET_FACTOR = 3;

/** Bash: default time limit of one command in milliseconds. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;

/** EditFile's refusal of an edit that changes nothing. */
export function identicalMessage(path: string): string {
  return `Cannot edit file "${path}": old_string and new_string are identical, so there is nothing to change`;
}
