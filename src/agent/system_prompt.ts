/**
 * The system prompt: who the agent is, where it works (the tools need absolute paths), the repository's
 * state, the limits it works under (sandbox, permissions, whether anyone is there to answer), how to use
 * the tools it has, and the project memory files.
 *
 * Pure: the data comes in (gathered by src/session/repo_context.ts and src/config/memory.ts), a string goes
 * out.
 *
 * @module
 */
import { join } from "../common/path.ts";
import { assertNever } from "../common/errors.ts";
import type { ProjectMemory } from "../config/memory.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { SandboxMode, ToolInfo } from "../tools/tool.ts";

/** The workspace's git HEAD: a branch, or a detached commit (abbreviated). */
export type GitHead = { kind: "branch"; name: string } | { kind: "detached"; commit: string };

/** `git status --short --branch`, shortened to its first lines, or why it is not known. */
export type GitStatusSummary =
  | {
    kind: "ok";
    /** The first lines ("## main...origin/main", then one per changed path). */
    lines: string[];
    /** Lines left out after them. */
    more: number;
  }
  | { kind: "unavailable"; reason: string };

/** The git repository the workspace is in. */
export interface RepositoryState {
  /** The nearest ancestor of the workspace (or the workspace) holding `.git`; null outside any repository. */
  gitRoot: string | null;
  /** null when there is no repository or its HEAD cannot be read. */
  head: GitHead | null;
  /** null when there is no repository or no git to ask. */
  status: GitStatusSummary | null;
}

/** What the system prompt is built from. */
export interface SystemPromptOptions {
  /** Real path of the workspace root. */
  root: string;
  /** `Deno.build.os` and `Deno.build.arch`, e.g. "linux x86_64". */
  platform: string;
  /** Today's date; only the day is used. */
  date: Date;
  /** The tools offered in this session. */
  tools: readonly ToolInfo[];
  /** "plan" adds that no changes may be made; absent, the mode is not mentioned. */
  permissionMode?: PermissionMode;
  /** The shell's sandbox; said when Bash is offered. */
  sandbox?: SandboxMode;
  /** Whether the sandboxed shell may use the network (`--sandbox-network`). */
  sandboxNetwork?: boolean;
  /** No one is at the terminal (one-shot mode): no question can be answered, nothing can be approved. */
  headless?: boolean;
  /** Branch and short status; absent, nothing is said about git. */
  repository?: RepositoryState;
  /** AGENTS.md / CLAUDE.md sections and the notices about files left out. */
  memory?: ProjectMemory;
  /** Directories outside the workspace the tools may also use (`--add-dir`), real paths. */
  additionalDirectories?: readonly string[];
}

/** Builds the system prompt. */
export function buildSystemPrompt(options: SystemPromptOptions): string {
  const names = new Set(options.tools.map((tool) => tool.name));
  const guidance = TOOL_GUIDANCE.filter(([name]) => names.has(name)).map(([, text]) => `- ${text}`);
  const readOnly = options.tools.filter((tool) => tool.isReadOnly()).map((tool) => tool.name);
  const writers = options.tools.filter((tool) => !tool.isReadOnly()).map((tool) => tool.name);
  const environment = [
    "# Environment",
    `- Workspace root: ${options.root}`,
    `- Platform: ${options.platform}`,
    `- Date: ${options.date.toISOString().slice(0, 10)}`,
    "- Every path you give a tool must be absolute and inside the workspace root, for example " +
    `${join(options.root, "src", "main.ts")}. Paths outside it are refused.`,
  ];
  const added = options.additionalDirectories ?? [];
  if (added.length > 0) {
    environment.push(
      `- The user also gave you these directories, which the tools may use like the workspace: ${
        added.join(", ")
      }`,
    );
  }
  if (options.repository !== undefined) {
    environment.push(...repositoryLines(options.repository, options.root));
  }
  if (options.sandbox !== undefined && names.has("Bash")) {
    environment.push(`- Shell: ${sandboxText(options.sandbox, options.sandboxNetwork ?? false)}`);
  }
  if (options.permissionMode !== undefined) {
    environment.push(
      `- Permission mode: ${permissionText(options.permissionMode, options.headless ?? false)}`,
    );
  }
  const sections = [
    "You are mewcode, a coding agent working in the user's workspace through tools. Do what the user asks, " +
    "completely, then answer briefly: say what you did and what you found. Be direct; do not pad.",
    environment.join("\n"),
  ];
  const status = options.repository?.status;
  if (status?.kind === "ok" && status.lines.length > 0) {
    const more = status.more > 0 ? [`  … ${status.more} more`] : [];
    sections.push(
      [
        "# Git status at the start of this task (git status --short --branch; it may have changed since)",
        ...status.lines.map((line) => `  ${line}`),
        ...more,
      ].join("\n"),
    );
  }
  sections.push(
    [
      "# Using the tools",
      `- Tools you have: ${[...readOnly, ...writers].join(", ") || "none"}.`,
      "- Independent read-only calls (reading, searching) can be made together in one response; they run in " +
      "parallel. Calls that change things run one at a time, in the order you give them.",
      "- A tool result with an error tells you what to change: fix the call instead of repeating it unchanged.",
      ...guidance,
    ].join("\n"),
  );
  if (options.permissionMode === "plan") {
    sections.push(
      "# Plan mode\nYou may only read and search. Investigate, then present a concrete plan; make no changes.",
    );
  }
  if (options.headless === true) {
    sections.push(
      "# Headless\nYou run without a person at the terminal: no one can answer a question or approve a " +
        "call during this task. Do not ask and do not wait for confirmation. Finish the task with what you " +
        "have; if you cannot, end by saying exactly what is missing (which file, permission, credential or " +
        "decision) and what you did so far.",
    );
  }
  if (options.memory !== undefined) {
    const memory = memorySection(options.memory);
    if (memory !== null) sections.push(memory);
  }
  return sections.join("\n\n");
}

function repositoryLines(repository: RepositoryState, root: string): string[] {
  if (repository.gitRoot === null) return ["- Git: the workspace is not in a git repository"];
  const lines: string[] = [];
  if (repository.gitRoot !== root) lines.push(`- Git repository root: ${repository.gitRoot}`);
  lines.push(`- Git HEAD: ${headText(repository.head)}`);
  const status = repository.status;
  if (status === null) return lines;
  switch (status.kind) {
    case "ok":
      if (status.lines.length === 0) lines.push("- Git status: unavailable (git printed nothing)");
      return lines;
    case "unavailable":
      lines.push(`- Git status: unavailable (${status.reason})`);
      return lines;
    default:
      return assertNever(status);
  }
}

function headText(head: GitHead | null): string {
  if (head === null) return "unknown (HEAD could not be read)";
  switch (head.kind) {
    case "branch":
      return `branch ${head.name}`;
    case "detached":
      return `detached at commit ${head.commit}`;
    default:
      return assertNever(head);
  }
}

function sandboxText(mode: SandboxMode, network: boolean): string {
  const networkText = network
    ? "the network is allowed"
    : "the network is off, so downloads and package installs fail: say what you would need instead of retrying";
  switch (mode) {
    case "read-only":
      return `Bash runs in a read-only sandbox: commands can read the workspace but not change it; ${networkText}`;
    case "workspace-write":
      return "Bash runs in a sandbox: commands can change files only inside the workspace (.git's config and " +
        `hooks are read-only), and your home folder looks empty; ${networkText}`;
    case "danger-full-access":
      return "Bash runs without a sandbox (danger-full-access): commands can change anything the user can, " +
        "network included; take extra care";
    default:
      return assertNever(mode);
  }
}

function permissionText(mode: PermissionMode, headless: boolean): string {
  const approval = headless
    ? "are denied, since no one can approve them: do the task with the calls that are allowed"
    : "ask the user first; a denied call says why";
  // The user's permission rules come before the mode, so each text says what holds when no rule decides.
  switch (mode) {
    case "default":
      return `default. Reading and searching are allowed; file changes and shell commands ${approval}`;
    case "acceptEdits":
      return `acceptEdits. Reading, searching and file edits are allowed; shell commands ${approval}`;
    case "plan":
      return "plan. Only reading and searching are allowed";
    case "dontAsk":
      return "dontAsk. Reading and searching are allowed; file changes and shell commands are denied unless " +
        "the user's rules allow them, and no one is asked";
    case "bypassPermissions":
      return "bypassPermissions. Every tool call is allowed without asking";
    default:
      return assertNever(mode);
  }
}

function memorySection(memory: ProjectMemory): string | null {
  if (memory.sections.length === 0 && memory.notices.length === 0) return null;
  const parts = [
    "# Project memory\nInstructions from the user's and the project's memory files (AGENTS.md, CLAUDE.md): " +
    "follow them. They come from the user's own file first, then from the repository root down to the " +
    "workspace; where they disagree, the later, more specific file wins, and the user's request wins over all.",
  ];
  for (const section of memory.sections) {
    const heading = section.scope === "user" ? `## ${section.path} (user's own)` : `## ${section.path}`;
    const content = section.content.trimEnd();
    parts.push([heading, content, ...(section.cut === null ? [] : [section.cut])].join("\n"));
  }
  if (memory.notices.length > 0) {
    parts.push(["## Memory files left out", ...memory.notices.map((notice) => `- ${notice}`)].join("\n"));
  }
  return parts.join("\n\n");
}

const TOOL_GUIDANCE: readonly (readonly [string, string])[] = [
  ["ReadFile", "ReadFile reads a file (long files in pages). Read a file before you edit or overwrite it."],
  ["Glob", "Glob finds files by name pattern; use it instead of listing directories with a shell."],
  ["Grep", "Grep searches file contents by regular expression; use it instead of grep in a shell."],
  [
    "EditFile",
    "EditFile replaces an exact string in a file you have read; prefer it to rewriting whole files. If the file " +
    "changed since you read it, read it again first.",
  ],
  ["WriteFile", "WriteFile creates a file or replaces all of an existing file you have read."],
  [
    "Bash",
    "Bash runs a shell command in a sandbox (for builds, tests, git); do not use it to read, search or edit " +
    "files when a dedicated tool can.",
  ],
];
