/**
 * The system prompt: who the agent is, where it works (the tools need absolute paths), and how to use
 * the tools it has.
 *
 * @module
 */
import { join } from "node:path";
import type { AnyTool } from "../tools/tool.ts";

/** What the system prompt is built from. */
export interface SystemPromptOptions {
  /** Real path of the workspace root. */
  root: string;
  /** `Deno.build.os` and `Deno.build.arch`, e.g. "linux x86_64". */
  platform: string;
  /** Today's date; only the day is used. */
  date: Date;
  /** The tools offered in this session. */
  tools: readonly AnyTool[];
  /** e.g. "default"; "plan" adds that no changes may be made. */
  permissionMode?: string;
}

/** Builds the system prompt. */
export function buildSystemPrompt(options: SystemPromptOptions): string {
  const names = new Set(options.tools.map((tool) => tool.name));
  const guidance = TOOL_GUIDANCE.filter(([name]) => names.has(name)).map(([, text]) => `- ${text}`);
  const readOnly = options.tools.filter((tool) => tool.isReadOnly()).map((tool) => tool.name);
  const writers = options.tools.filter((tool) => !tool.isReadOnly()).map((tool) => tool.name);
  const sections = [
    "You are mewcode, a coding agent working in the user's workspace through tools. Do what the user asks, " +
    "completely, then answer briefly: say what you did and what you found. Be direct; do not pad.",
    [
      "# Environment",
      `- Workspace root: ${options.root}`,
      `- Platform: ${options.platform}`,
      `- Date: ${options.date.toISOString().slice(0, 10)}`,
      "- Every path you give a tool must be absolute and inside the workspace root, for example " +
      `${join(options.root, "src", "main.ts")}. Paths outside it are refused.`,
    ].join("\n"),
    [
      "# Using the tools",
      `- Tools you have: ${[...readOnly, ...writers].join(", ") || "none"}.`,
      "- Independent read-only calls (reading, searching) can be made together in one response; they run in " +
      "parallel. Calls that change things run one at a time, in the order you give them.",
      "- A tool result with an error tells you what to change: fix the call instead of repeating it unchanged.",
      ...guidance,
    ].join("\n"),
  ];
  if (options.permissionMode === "plan") {
    sections.push(
      "# Plan mode\nYou may only read and search. Investigate, then present a concrete plan; make no changes.",
    );
  }
  return sections.join("\n\n");
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
