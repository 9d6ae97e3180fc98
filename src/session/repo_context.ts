/**
 * What the system prompt says about the workspace's repository, and the one call that gathers everything
 * the prompt needs for a session (repository state and project memory).
 *
 * mewcode runs in repositories it does not trust, and a repository's git configuration runs commands
 * (`core.fsmonitor`, clean filters, …) whenever git reads the working tree. So:
 *   - the branch is read from the git metadata directly (HEAD of the git directory, following a `.git`
 *     file's `gitdir:`), with bounded non-blocking reads and strict parsing;
 *   - `git status` runs only inside the shell sandbox (`ShellSandbox.runCommand`, read-only, no network,
 *     a short time limit), with the system's git and `core.fsmonitor` off. Whatever a filter runs stays in
 *     the sandbox; on any failure the status is simply "unavailable". Where the git directory lies outside
 *     the workspace (a linked worktree, a workspace below the repository root) the sandbox may not see it,
 *     and the status is unavailable too.
 *
 * @module
 */
import { dirname, join, resolve } from "../common/path.ts";
import type { GitHead, GitStatusSummary, RepositoryState } from "../agent/system_prompt.ts";
import { assertNever } from "../common/errors.ts";
import { statSyncOrNull } from "../common/fs.ts";
import { findGitRoot, loadProjectMemory, type ProjectMemory, readTextPrefix } from "../config/memory.ts";
import type { CommandResult } from "../sandbox/sandboxed_command.ts";
import { shellQuote } from "../common/shell_quote.ts";

export type { CommandResult, GitHead, GitStatusSummary, ProjectMemory, RepositoryState };

/** What reading the status needs of the shell sandbox (`ShellSandbox` fits). */
export interface GitStatusSandbox {
  /** The helper programs resolved from the system directories; `git` null when there is none. */
  readonly helpers: { readonly git: string | null };
  /** Runs a command of mewcode's own inside the sandbox. */
  runCommand(
    command: string,
    options: { mode: "read-only"; timeoutMs: number; signal?: AbortSignal },
  ): Promise<CommandResult>;
}

/** Time limit of `git status` by default: the session waits for it before the first request. */
export const DEFAULT_STATUS_TIMEOUT_MS = 3_000;
/** Lines of `git status --short --branch` kept by default; the rest are counted. */
export const DEFAULT_STATUS_LINES = 20;

/** `.git` files and HEAD are a line long; anything longer is not git's. */
const MAX_POINTER_BYTES = 4096;
const MAX_LINE_CHARS = 300;
const MAX_REASON_CHARS = 200;

/** Options of `readRepositoryState`. */
export interface RepositoryStateOptions {
  sandbox: GitStatusSandbox;
  /** Default: found with `findGitRoot`. */
  gitRoot?: string | null;
  /** Default DEFAULT_STATUS_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Default DEFAULT_STATUS_LINES. */
  maxLines?: number;
  signal?: AbortSignal;
}

/** The git root, HEAD and short status of the repository around `root` (a real path); never throws. */
export async function readRepositoryState(
  root: string,
  options: RepositoryStateOptions,
): Promise<RepositoryState> {
  const gitRoot = options.gitRoot === undefined ? findGitRoot(root) : options.gitRoot;
  if (gitRoot === null) return { gitRoot: null, head: null, status: null };
  const [head, status] = await Promise.all([readGitHead(gitRoot), readGitStatus(options)]);
  return { gitRoot, head, status };
}

/** The branch or detached commit of the repository whose working tree is `gitRoot`; null when unreadable. */
export async function readGitHead(gitRoot: string): Promise<GitHead | null> {
  const gitDirectory = await resolveGitDirectory(join(gitRoot, ".git"));
  if (gitDirectory === null) return null;
  const head = await readTextPrefix(join(gitDirectory, "HEAD"), MAX_POINTER_BYTES);
  if (!head.ok || head.truncated) return null;
  const line = firstLine(head.text);
  const symbolic = /^ref: *refs\/heads\/(.+)$/.exec(line);
  if (symbolic !== null) {
    const name = symbolic[1] ?? "";
    return isBranchName(name) ? { kind: "branch", name } : null;
  }
  // A detached HEAD holds the commit's id: SHA-1 (40 hex digits) or SHA-256 (64).
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(line)) return { kind: "detached", commit: line.slice(0, 7) };
  return null;
}

/**
 * `git status --short --branch` run in the sandbox (read-only, no network) with the system's git, its first
 * `maxLines` lines kept; null when there is no git. Never throws.
 */
export async function readGitStatus(
  options: Omit<RepositoryStateOptions, "gitRoot">,
): Promise<GitStatusSummary | null> {
  const git = options.sandbox.helpers.git;
  if (git === null) return null;
  const timeoutMs = options.timeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS;
  // --no-optional-locks: no index refresh written back. core.fsmonitor off: no hook command at all (the
  // sandbox would contain it, but it need not run). core.quotePath: control characters in names escaped.
  const command = `${shellQuote(git)} --no-optional-locks -c core.fsmonitor=false -c core.quotePath=true ` +
    "-c color.status=false status --short --branch";
  const result = await options.sandbox.runCommand(command, {
    mode: "read-only",
    timeoutMs,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  switch (result.status) {
    case "failed":
      return { kind: "unavailable", reason: `the sandbox cannot run git: ${clip(result.message)}` };
    case "timed-out":
      return { kind: "unavailable", reason: `git status took longer than ${timeoutMs / 1000} s` };
    case "exited": {
      if (result.code !== 0) {
        const detail = firstLine(result.stderr.trim());
        return {
          kind: "unavailable",
          reason: `git status failed with exit code ${result.code}${
            detail === "" ? "" : `: ${clip(detail)}`
          }`,
        };
      }
      const lines = result.stdout.split("\n").filter((line) => line !== "").map(clean);
      const maxLines = options.maxLines ?? DEFAULT_STATUS_LINES;
      return { kind: "ok", lines: lines.slice(0, maxLines), more: Math.max(0, lines.length - maxLines) };
    }
    default:
      return assertNever(result);
  }
}

/** Everything the system prompt needs about the workspace beyond the session's own options. */
export interface PromptContext {
  repository: RepositoryState;
  memory: ProjectMemory;
}

/** Options of `gatherPromptContext`. */
export interface GatherPromptContextOptions {
  /** Real path of the workspace root. */
  root: string;
  /** mewcode's state directory (`$MEWCODE_HOME`), for the user-level AGENTS.md; null for none. */
  home: string | null;
  /** Where `git status` runs; null: it does not (the prompt says the status was not gathered). */
  sandbox: GitStatusSandbox | null;
  signal?: AbortSignal;
}

/** Why a session's prompt has no git status when it was opened without a sandbox for it. */
export const STATUS_NOT_GATHERED = "not gathered for a one-shot run";

/** Gathers the repository state and the project memory for a session's system prompt; never throws. */
export async function gatherPromptContext(options: GatherPromptContextOptions): Promise<PromptContext> {
  const gitRoot = findGitRoot(options.root);
  const sandbox = options.sandbox;
  const [repository, memory] = await Promise.all([
    sandbox === null ? readRepositoryHead(gitRoot) : readRepositoryState(options.root, {
      sandbox,
      gitRoot,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    }),
    loadProjectMemory({ root: options.root, home: options.home, gitRoot }),
  ]);
  return { repository, memory };
}

/** The repository's root and HEAD without its status (see STATUS_NOT_GATHERED). */
async function readRepositoryHead(gitRoot: string | null): Promise<RepositoryState> {
  if (gitRoot === null) return { gitRoot: null, head: null, status: null };
  const status = { kind: "unavailable" as const, reason: STATUS_NOT_GATHERED };
  return { gitRoot, head: await readGitHead(gitRoot), status };
}

/** The git directory a `.git` entry names: itself when a directory, its `gitdir:` when a file. */
async function resolveGitDirectory(dotGit: string): Promise<string | null> {
  const info = statSyncOrNull(dotGit);
  if (info === null) return null;
  if (info.isDirectory) return dotGit;
  if (!info.isFile) return null;
  const file = await readTextPrefix(dotGit, MAX_POINTER_BYTES);
  if (!file.ok || file.truncated) return null;
  const line = firstLine(file.text);
  if (!line.startsWith("gitdir:")) return null;
  const target = line.slice("gitdir:".length).trim();
  if (target === "") return null;
  // A relative gitdir is relative to the directory holding the `.git` file, as git reads it.
  const directory = resolve(dirname(dotGit), target);
  return (statSyncOrNull(directory))?.isDirectory ? directory : null;
}

/** A branch name git could have written: no control characters, spaces or `~^:?*[\`, no "..". */
function isBranchName(name: string): boolean {
  // deno-lint-ignore no-control-regex -- refusing control characters is the point
  return name.length <= 200 && !name.includes("..") && !/[\u0000-\u0020\u007f~^:?*[\\]/.test(name);
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").replace(/\r$/, "");
}

/** A line of git's output made safe to show: control characters replaced, length bounded. */
function clean(line: string): string {
  // deno-lint-ignore no-control-regex -- replacing control characters is the point
  const visible = line.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, "?");
  return visible.length > MAX_LINE_CHARS ? `${visible.slice(0, MAX_LINE_CHARS)}…` : visible;
}

function clip(text: string): string {
  const line = clean(text);
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS)}…` : line;
}
