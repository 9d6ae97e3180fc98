/**
 * The slash commands of the interactive session: their names and help, and reading one from a line.
 * What each does lives in the session loop (interactive_session.ts); this module only says what was asked.
 *
 * @module
 */
import { closest } from "../args.ts";

/** One slash command. */
export interface SlashCommandSpec {
  name: string;
  /** The argument it takes, for /help. */
  usage: string;
  description: string;
}

/** Every slash command, in the order /help lists them. */
export const SLASH_COMMANDS: readonly SlashCommandSpec[] = [
  { name: "help", usage: "/help", description: "this list" },
  {
    name: "clear",
    usage: "/clear",
    description: "start a new conversation (the old one stays in its transcript)",
  },
  { name: "resume", usage: "/resume [ID]", description: "continue another session of this workspace" },
  { name: "model", usage: "/model [NAME]", description: "show or change the model" },
  {
    name: "permissions",
    usage: "/permissions [allow|deny|ask RULE | remove RULE | mode MODE]",
    description:
      "show the rules and mode; add a rule to .mewcode/settings.local.json, remove one, or switch mode",
  },
  { name: "cost", usage: "/cost", description: "tokens and cost of this session" },
  { name: "compact", usage: "/compact", description: "summarise older turns to free context" },
  { name: "init", usage: "/init", description: "draft an AGENTS.md for this repository" },
  { name: "exit", usage: "/exit", description: "leave (also Ctrl-D on an empty line)" },
];

/** What a line that starts with "/" asks for. */
export type SlashCommand =
  | { kind: "command"; name: string; argument: string }
  | { kind: "unknown"; name: string; suggestion: string | null };

/** Reads a slash command from a submitted line; null when the line is not one (a prompt). */
export function parseSlashCommand(line: string): SlashCommand | null {
  const trimmed = line.trim();
  // "/" alone, or a path such as /etc/hosts written as a prompt, is not a command.
  const match = /^\/([a-z][a-z-]*)(?:\s+([\s\S]*))?$/i.exec(trimmed);
  if (match === null) return null;
  const name = (match[1] ?? "").toLowerCase();
  const argument = (match[2] ?? "").trim();
  if (SLASH_COMMANDS.some((command) => command.name === name)) return { kind: "command", name, argument };
  return { kind: "unknown", name, suggestion: closest(name, SLASH_COMMANDS.map((command) => command.name)) };
}

/** The /help text. */
export function slashHelp(): string {
  const width = Math.max(...SLASH_COMMANDS.map((command) => command.usage.length)) + 2;
  return SLASH_COMMANDS.map((command) => `  ${command.usage.padEnd(width)}${command.description}`).join("\n");
}
