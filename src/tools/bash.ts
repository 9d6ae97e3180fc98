/**
 * Bash: runs one shell command in the workspace, under the session's shell plan (bubblewrap or direct).
 *
 * Runs inside a worker whose only permission is to spawn the sandbox (`sh`, which becomes bubblewrap, for
 * the sandbox the worker keeps across calls: src/tools/_shell_host.ts; or, in `danger-full-access`, the
 * shell itself): no environment, file or `Deno.kill(-pid)` access. So the process tree is ended through
 * what those permissions allow: killing bubblewrap ends its whole PID namespace; without bubblewrap, the
 * shell itself signals the call's process group.
 *
 * @module
 */
import { z } from "zod";
import { BASH_DEFAULT_TIMEOUT_MS } from "./_shared.ts";
import { defineTool, loadedOnCall } from "./tool.ts";
import { lazyImport } from "../common/lazy_import.ts";

export { BASH_DEFAULT_TIMEOUT_MS } from "./_shared.ts";
/** Largest time limit the model may ask for in milliseconds. */
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Added to the command's own limit for the executor's hard limit, so Bash reports its own timeout. */
const EXECUTOR_GRACE_MS = 5_000;

const BASH_DESCRIPTION =
  `Runs a shell command with bash -c in the workspace root and returns its combined output and exit code.

Use it for what needs a program: builds, tests, linters, package managers, git (status, diff, log, commit), running scripts. Do NOT use it to read, search or change files: use ReadFile to read, Grep to search contents, Glob to find files by name, and EditFile or WriteFile to change files (not cat, head, tail, grep, find, sed, awk or echo >).

Every call starts a fresh shell in the workspace root: nothing carries over between calls (cd, exported variables, shell functions, activated virtualenvs). Use absolute paths, or chain commands in one call: "cd packages/api && npm test". Standard input is empty (/dev/null), so commands that wait for input, a pager or an editor do not hang; pagers are set to cat and the terminal is "dumb". Pass non-interactive flags (for example --yes) where a tool asks questions.

timeout is in milliseconds: default 120000 (2 min), at most 600000 (10 min); give long builds and test suites a longer one. On timeout the command and every process it started are killed and you get the output so far. Background processes (cmd &) do not outlive the call: start servers and watchers only when the same command also uses and stops them.

Output: stdout and stderr merged in the order they were written, as <output>...</output> followed by <exit_code>N</exit_code>. A non-zero exit code is a normal result: read the output to see what failed. Output longer than 10000 characters keeps the first 2000 and the last 8000 with a note of how many were cut, so filter noisy commands (for example "npm test 2>&1 | tail -n 50" or "--quiet"). Colours and other escape sequences are removed; invalid UTF-8 is replaced.

Sandbox: by default (workspace-write) the command can write only inside the workspace and to a private /tmp that is discarded after the call; everything else is read-only, .git/hooks, .git/config and .mewcode are read-only, credentials such as ~/.ssh are hidden, the environment holds no secrets, and there is no network access, so downloads and installs fail unless the user enabled the network. In read-only mode nothing can be written. A write that fails with "Read-only file system" is the sandbox: do not try to work around it; tell the user what you need instead.`;

const BashInput = z.object({
  command: z.string().describe(
    'The shell command to run, for example "npm test" or "git status". Runs in the workspace root',
  ),
  timeout: z.number().int().min(1).max(BASH_MAX_TIMEOUT_MS).optional().describe(
    "Time limit in milliseconds, at most 600000; default 120000",
  ),
}).strict();

/** The input of Bash. */
export type BashInput = z.infer<typeof BashInput>;

/** Runs a shell command in the workspace under the session's sandbox. */
export const bashTool = defineTool({
  name: "Bash",
  category: "shell",
  description: BASH_DESCRIPTION,
  inputSchema: BashInput,
  isReadOnly: false,
  isDestructive: true,
  isConcurrencySafe: () => false,
  validateInput(input) {
    if (input.command.trim() === "") return "Cannot run Bash: command is empty: give the command to run";
    return null;
  },
  timeoutMs: (input) => (input.timeout ?? BASH_DEFAULT_TIMEOUT_MS) + EXECUTOR_GRACE_MS,
  execute: loadedOnCall(async () =>
    (await lazyImport<typeof import("./_bash_run.ts")>(new URL("./_bash_run.ts", import.meta.url))).bashRunner
  ),
});
