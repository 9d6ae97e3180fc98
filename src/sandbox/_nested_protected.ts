/**
 * What the user is told about the protected names that apply at any depth (`api/.vscode`, `api/.claude`):
 * the shell sandbox cannot keep a command from making one in a subfolder, so it sets aside those made and
 * says why each matters.
 *
 * @module
 */
import { basename } from "../common/path.ts";

const EDITOR = "editor settings run commands when that folder is opened on its own";
const AGENT = "another coding agent runs the hooks and MCP servers of its project settings when it is " +
  "started in that folder";
const DEV_CONTAINER = "a dev container's initializeCommand runs on your machine when that folder is " +
  "opened in one";

/** What runs a protected entry's content when its folder is opened, by the entry's name (lower case). */
const RUNS: ReadonlyMap<string, string> = new Map([
  [".vscode", EDITOR],
  [".idea", EDITOR],
  [".claude", AGENT],
  [".gemini", AGENT],
  [".codex", AGENT],
  [".cursor", AGENT],
  [".mcp.json", AGENT],
  [".devcontainer", DEV_CONTAINER],
  [".devcontainer.json", DEV_CONTAINER],
]);

/** Why a protected entry made in a subfolder (`/ws/api/.claude`) was set aside, for the user. */
export function whyNestedMatters(path: string): string {
  const runs = RUNS.get(basename(path).toLowerCase()) ??
    "what it holds can run commands when that folder is opened";
  return `it is a protected path in a subfolder (${runs})`;
}

/**
 * The line that says a walk stopped short of where a command may have made entries of `names`, with the
 * command that finds them (`find . -name .vscode -o -name .idea`).
 */
export function nestedNotLookedFor(names: readonly string[]): string {
  const find = names.map((name) => `-name ${name}`).join(" -o ");
  return `Nor for ${
    names.join(", ")
  } made in a subfolder beyond them (settings an editor, a coding agent or ` +
    `a dev container runs commands from when that folder is opened): look for them before you open a ` +
    `subfolder (find . ${find})`;
}
