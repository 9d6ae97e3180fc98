/**
 * The protected names that apply at any depth (`api/.vscode`, `api/.claude`, `*.code-workspace`) in the
 * shell sandbox: which of their entries the top-level plan already covers, and what the user is told about
 * one a command made, which the sandbox sets aside at the session's end (no mount can stand in every folder
 * a command might make).
 *
 * @module
 */
import { basename, dirname } from "../common/path.ts";
import { AGENT_SETTINGS, isNamesEnd, MISE_CONFIG } from "../tools/protected_paths.ts";
import type { ProtectedPath } from "../tools/tool.ts";

const EDITOR = "editor settings run commands when that folder is opened on its own";
const AGENT = "another coding agent runs the hooks and MCP servers of its project settings when it is " +
  "started in that folder";
const DEV_CONTAINER = "a dev container's initializeCommand runs on your machine when that folder is " +
  "opened in one";
const WORKSPACE_FILE = "VS Code runs the tasks of a workspace file when it is opened";
const AGENT_COMMANDS = "another coding agent runs the plugins, hooks, MCP servers or lint and test " +
  "commands of its project settings when it is started in that folder";
const LANGUAGE_SERVERS = "an editor starts the language servers and formatters its project settings name " +
  "when that folder is opened";
const MISE = "mise runs its hooks and env sources in your shell when you enter that folder, trusting the " +
  "file by its path";
const DIRENV = "direnv runs it in your shell when you enter that folder: an .envrc once you allow it, what " +
  "that sources without asking";

/**
 * What runs a protected entry's content, by the entry's name or name pattern (see `isProtectedName`), or
 * names in a row (`mise/config.toml`, see `isNamesEnd`).
 */
const RUNS: readonly (readonly [string, string])[] = [
  [".vscode", EDITOR],
  [".idea", EDITOR],
  [".claude", AGENT],
  [".gemini", AGENT],
  [".codex", AGENT],
  [".cursor", AGENT],
  [".mcp.json", AGENT],
  [".devcontainer", DEV_CONTAINER],
  [".devcontainer.json", DEV_CONTAINER],
  ["*.code-workspace", WORKSPACE_FILE],
  [".envrc", DIRENV],
  [".envrc.local", DIRENV],
  ...AGENT_SETTINGS.map((name) => [name, AGENT_COMMANDS] as const),
  [".zed", LANGUAGE_SERVERS],
  [".helix", LANGUAGE_SERVERS],
  ...MISE_CONFIG.map((name) => [name, MISE] as const),
];

/**
 * Whether an entry of an any-depth name lies at the top of a root where an entry of the top level protects
 * the same name (`<root>/.vscode`: planned as a placeholder, `<root>/.mcp.json`: removed after each call),
 * so the any-depth handling leaves it alone. `<root>/app.code-workspace` has no such entry: it is handled as
 * one in a subfolder is.
 */
export function plannedAtTop(
  path: string,
  options: { roots: readonly string[]; protectedPaths: readonly ProtectedPath[] },
): boolean {
  const root = options.roots.find((folder) => dirname(path) === folder);
  if (root === undefined) return false;
  const name = basename(path).toLowerCase();
  return options.protectedPaths.some((entry) =>
    !entry.anyDepth && (entry.within === undefined || entry.within === root) &&
    entry.path.toLowerCase() === name
  );
}

/** Why a protected entry a command made (`/ws/api/.claude`) was set aside, for the user. */
export function whyNestedMatters(path: string, options: { atTop: boolean }): string {
  const segments = path.split("/").filter((part) => part !== "");
  const runs = RUNS.find(([pattern]) => isNamesEnd(segments, pattern))?.[1] ??
    "what it holds can run commands when that folder is opened";
  return `it is a protected path${options.atTop ? "" : " in a subfolder"} (${runs})`;
}

/**
 * The line that says a walk stopped short of where a command may have made entries of `names`, with the
 * command that finds them (`find . -name .vscode -o -name '*.code-workspace'`).
 */
export function nestedNotLookedFor(names: readonly string[]): string {
  const find = names.map((name) =>
    name.includes("/") ? `-path '*/${name}'` : `-name ${name.includes("*") ? `'${name}'` : name}`
  ).join(" -o ");
  const runs = "settings an editor, a coding agent, a dev container, direnv or mise runs commands from " +
    "when that folder is opened";
  return `Nor for ${names.join(", ")} made in a subfolder beyond them (${runs}): look for them before you ` +
    `open a subfolder (find . ${find})`;
}
