/**
 * Paths the file tools never write unless the user explicitly allowed them: what the user's own programs
 * (git, editors, shells, mewcode itself) later read as configuration or run as code, outside any sandbox.
 * The shell sandbox binds the same paths read-only (src/sandbox/).
 *
 * @module
 */
import { SHELL_STARTUP_FILES } from "../common/home_credentials.ts";
import { isWithinRoot, relativeToRoot, safePath, type SafePathResult } from "./_paths.ts";
import type { ProtectedPath, ToolCallContext } from "./tool.ts";

const GIT_REASON = "it is git metadata (config, hooks, the gitdir pointer), which the user's own git runs " +
  "outside any sandbox; writing it is refused. Ask the user to make this change";
const EDITOR_REASON = "editor settings can run commands when the user opens the folder; writing them is " +
  "refused. Ask the user to make this change";
const AGENT_REASON = "it holds another coding agent's project settings (hooks, plugins, MCP servers, lint " +
  "and test commands it runs), which run outside any sandbox when the user next works here with that " +
  "agent; writing it is refused. Ask the user to make this change";
const DEV_CONTAINER_REASON = "a dev container's settings run commands on the user's machine " +
  "(initializeCommand) when the folder is opened in one; writing them is refused. Ask the user to make " +
  "this change";
const WORKSPACE_FILE_REASON = "it is a VS Code workspace file, whose tasks and settings can run commands " +
  "when the user opens it; writing it is refused. Ask the user to make this change";
const DIRENV_REASON = "direnv runs it in the user's shell, outside any sandbox, when the user next enters " +
  "that folder (an .envrc that direnv allowed runs .envrc.local unchecked); writing it is refused. Ask the " +
  "user to make this change";
const MISE_REASON = "mise runs what it holds ([hooks], [env] _.source, templates) in the user's shell, " +
  "outside any sandbox, when the user next enters that folder with mise activated (mise trusts a file by " +
  "its path, not its content); writing it is refused. Ask the user to make this change";
const SHELL_REASON =
  "it is a shell start-up file that runs in the user's next shell; writing it is refused. " +
  "Ask the user to make this change";

// Other coding agents' project settings that run commands: opencode's plugins and MCP servers, aider's
// lint-cmd and test-cmd, Windsurf's and Kiro's hooks, Continue's MCP servers (.continuerc.json is merged
// into its config.json, MCP servers included), Crush's hooks, MCP servers, language servers and `$(…)`
// values (crush.json and .crush.json; crushrc and .crushrc are Bash it runs at start).
const AGENT_FOLDERS = [".opencode", ".windsurf", ".continue", ".kiro"];
const AGENT_FILES = [
  "opencode.json",
  "opencode.jsonc",
  ".aider.conf.yml",
  ".continuerc.json",
  "crush.json",
  ".crush.json",
  "crushrc",
  ".crushrc",
];
// Editors whose project settings name the language servers and formatters they start.
const EDITOR_FOLDERS = [".zed", ".helix"];
const MISE_FOLDERS = [".mise"];
// .rtx.toml and .rtx.local.toml: rtx's names, which mise still reads.
const MISE_FILES = [
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
  ".rtx.toml",
  ".rtx.local.toml",
];

/** Other coding agents' project settings that run commands (above), protected at any depth. */
export const AGENT_SETTINGS: readonly string[] = [...AGENT_FOLDERS, ...AGENT_FILES];

/**
 * What mise reads from a folder, protected at any depth: its folders and files (above), the MISE_ENV forms,
 * and names in a row (see PROTECTED_PATHS).
 */
export const MISE_CONFIG: readonly string[] = [
  ...MISE_FOLDERS,
  ...MISE_FILES,
  "mise.*.toml",
  ".mise.*.toml",
  "mise/config.toml",
  "mise/config.*.toml",
  ".config/mise/conf.d",
];

/** The reason of a name of the lists above. */
function reasonFor(path: string): string {
  if (EDITOR_FOLDERS.includes(path)) return EDITOR_REASON;
  return MISE_FOLDERS.includes(path) || MISE_FILES.includes(path) ? MISE_REASON : AGENT_REASON;
}

/** The protected paths of every session: git metadata anywhere, mewcode's settings, editor and shell files. */
export const PROTECTED_PATHS: readonly ProtectedPath[] = [
  { path: ".git", anyDepth: true, reason: GIT_REASON },
  {
    path: ".mewcode",
    anyDepth: false,
    folder: true,
    reason: "it holds mewcode's own settings and permissions, which the agent may not change; writing it " +
      "is refused. Ask the user to make this change",
  },
  {
    path: ".gitmodules",
    anyDepth: false,
    reason:
      "it tells git which repositories to clone as submodules; writing it is refused. Ask the user to " +
      "make this change",
  },
  { path: ".vscode", anyDepth: false, folder: true, reason: EDITOR_REASON },
  { path: ".idea", anyDepth: false, folder: true, reason: EDITOR_REASON },
  ...[".claude", ".gemini", ".codex", ".cursor"].map((path) => ({
    path,
    anyDepth: false,
    folder: true,
    reason: AGENT_REASON,
  })),
  { path: ".mcp.json", anyDepth: false, reason: AGENT_REASON },
  { path: ".devcontainer", anyDepth: false, folder: true, reason: DEV_CONTAINER_REASON },
  { path: ".devcontainer.json", anyDepth: false, reason: DEV_CONTAINER_REASON },
  ...[...AGENT_FOLDERS, ...EDITOR_FOLDERS, ...MISE_FOLDERS].map((path) => ({
    path,
    anyDepth: false,
    folder: true,
    reason: reasonFor(path),
  })),
  ...[...AGENT_FILES, ...MISE_FILES].map((path) => ({ path, anyDepth: false, reason: reasonFor(path) })),
  // Each is read from the folder the tool is opened or started in, and a monorepo's subfolder is often
  // that folder: an editor opened on "api/" (trusted with its parent) runs api/.vscode's tasks, an agent
  // started in "api/" its api/.claude hooks, the dev container CLI api/.devcontainer's initializeCommand.
  // The entries above plan the top level (placeholders); these cover every depth.
  ...[".vscode", ".idea"].map((path) => ({ path, anyDepth: true, reason: EDITOR_REASON })),
  ...[".claude", ".gemini", ".codex", ".cursor", ".mcp.json"].map((path) => ({
    path,
    anyDepth: true,
    reason: AGENT_REASON,
  })),
  ...[".devcontainer", ".devcontainer.json"].map((path) => ({
    path,
    anyDepth: true,
    reason: DEV_CONTAINER_REASON,
  })),
  // Read from the folder the agent or editor is started in and each above it (opencode up to the git
  // root, aider the git root and the current folder; Zed and Helix take a subfolder's settings too).
  ...[...AGENT_SETTINGS, ...EDITOR_FOLDERS].map((path) => ({
    path,
    anyDepth: true,
    reason: reasonFor(path),
  })),
  // mise loads the config files of the folder the user enters and of every folder above it (its
  // LOCAL_CONFIG_FILENAMES): names in a row cover mise/config.toml and .config/mise/config.toml with their
  // local and MISE_ENV forms (config.local.toml, config.production.toml), and .config/mise/conf.d/*.toml;
  // mise.toml covers .config/mise.toml and .config/mise/mise.toml, and the patterns the MISE_ENV files
  // (mise.production.toml, mise.production.local.toml). The rest of a folder named mise is not mise's, and
  // a .tool-versions only pins versions: neither runs anything.
  ...MISE_CONFIG.map((path) => ({ path, anyDepth: true, reason: MISE_REASON })),
  // Opened by name (`code api.code-workspace`), anywhere: its "tasks" run as a .vscode's do.
  { path: "*.code-workspace", anyDepth: true, reason: WORKSPACE_FILE_REASON },
  // direnv runs the .envrc of the folder the user enters or of the nearest above it. It checks the .envrc
  // against the hash the user allowed, but not what that sources: `source_env_if_exists .envrc.local` is
  // the common idiom for an unchecked companion.
  ...[".envrc", ".envrc.local"].map((path) => ({ path, anyDepth: true, reason: DIRENV_REASON })),
  ...[...SHELL_STARTUP_FILES, ".config/fish"].map((path) => ({
    path,
    anyDepth: false,
    reason: SHELL_REASON,
  })),
];

const HOOKS_REASON =
  "it holds the repository's git hooks (its core.hooksPath), which the user's own git runs outside " +
  "any sandbox; writing it is refused. Ask the user to make this change";

/**
 * The protection of a folder a repository's `core.hooksPath` names (relative to the root `within`, e.g.
 * `.husky/_`): the user's git runs what it holds as hooks, as it runs `.git/hooks`.
 */
export function hooksFolderProtection(relative: string, within?: string): ProtectedPath {
  return {
    path: relative.toLowerCase(),
    anyDepth: false,
    folder: true,
    ...(within === undefined ? {} : { within }),
    reason: HOOKS_REASON,
  };
}

/** The git metadata of one root as the shell sandbox pins it (src/sandbox/git_metadata.ts `GitProtection`). */
export interface GitLayoutPaths {
  /** Real path of the root. */
  root: string;
  /** Absolute paths of the metadata files and folders, existing or not (config, hooks, included files…). */
  paths: readonly string[];
  /** Absolute paths of the folders of hooks taken from elsewhere (`core.hooksPath`, `.husky`). */
  hooksFolders: readonly string[];
  /**
   * Which of `paths` are files of the working tree a hook runs, not git metadata, and the hook that runs
   * each (`GitProtection.hookFiles`): their protection says so. Default none.
   */
  hookFiles?: readonly GitHookFile[];
}

/** A file a git hook runs (src/sandbox/_git_hook_scripts.ts `HookFile`). */
export interface GitHookFile {
  /** Absolute path of the file. */
  path: string;
  /** Absolute path of the hook. */
  hook: string;
  /** The hook's commands run it, the hook is a symlink to it, or a hook manager reads its commands from it. */
  kind: "script" | "hook-target" | "config";
}

/**
 * The protections, in `layout.root` alone, of git metadata the names in `base` do not already cover: the
 * git directory a `.git` file points to (a bare repository's config, hooks and info, its worktrees'
 * pointers), the files its config includes, the folders of hooks, and the files of the working tree the
 * hooks run (named as the hook's, not as git metadata, when `layout.hookFiles` says so). Writers then refuse
 * what the shell sandbox binds read-only.
 */
export function gitLayoutProtections(
  layout: GitLayoutPaths,
  base: readonly ProtectedPath[],
): ProtectedPath[] {
  const relative = (path: string): string | null =>
    path !== layout.root && isWithinRoot(layout.root, path) ? relativeToRoot(layout.root, path) : null;
  const protections: ProtectedPath[] = [];
  for (const path of layout.hooksFolders) {
    const inRoot = relative(path);
    if (inRoot !== null) protections.push(hooksFolderProtection(inRoot, layout.root));
  }
  for (const path of layout.paths) {
    const inRoot = relative(path);
    if (inRoot === null || protectionOf(inRoot, entriesIn(layout.root, [...base, ...protections])) !== null) {
      continue;
    }
    const hookFile = layout.hookFiles?.find((file) => file.path === path);
    protections.push({
      path: inRoot.toLowerCase(),
      anyDepth: false,
      within: layout.root,
      reason: hookFile === undefined ? GIT_REASON : hookFileReason(hookFile, layout.root),
    });
  }
  return protections;
}

/** How a git hook runs each kind of file it names, after "the git hook "<hook>"". */
const HOOK_RUNS: Readonly<Record<GitHookFile["kind"], string>> = {
  script: "runs it",
  "hook-target": "is a symlink to it",
  config: "runs the commands a hook manager reads from it",
};

/** Why a file a git hook runs is protected, naming the hook (relative to the root when inside it). */
function hookFileReason(file: GitHookFile, root: string): string {
  const hook = file.hook !== root && isWithinRoot(root, file.hook)
    ? relativeToRoot(root, file.hook)
    : file.hook;
  return `the git hook "${hook}" ${HOOK_RUNS[file.kind]}, and the user's own git runs hooks outside any ` +
    "sandbox; writing it is refused. Ask the user to make this change";
}

/**
 * The protection that applies to a workspace-relative path ("a/b.txt", "." for the root), or null when the
 * path may be written: unprotected, or inside a path the user allowed. Names compare without regard to case,
 * since ".GIT/config" is ".git/config" on case-insensitive file systems (macOS, Windows).
 */
export function protectionOf(
  relative: string,
  protectedPaths: readonly ProtectedPath[],
  allowed: readonly string[] = [],
): ProtectedPath | null {
  if (relative === "." || relative === "") return null;
  const folded = relative.toLowerCase();
  if (allowed.some((path) => isAtOrBelow(folded, path))) return null;
  const segments = folded.split("/");
  for (const entry of protectedPaths) {
    const matches = entry.anyDepth
      ? isAtOrBelowNames(segments, entry.path)
      : isAtOrBelow(folded, entry.path.toLowerCase());
    if (matches) return entry;
  }
  return null;
}

/**
 * Whether a path (its names, `a/b/c` as `["a", "b", "c"]`) is at or below an entry matched at any depth:
 * one of its names is the entry's name (`isProtectedName`), or, for an entry of names in a row
 * (`mise/config.toml`, `.config/mise/conf.d`), its names hold them in that order, one after the other.
 */
export function isAtOrBelowNames(segments: readonly string[], entryPath: string): boolean {
  const names = entryPath.split("/");
  for (let start = 0; start + names.length <= segments.length; start++) {
    if (names.every((name, index) => isProtectedName(segments[start + index]!, name))) return true;
  }
  return false;
}

/** Whether a path's names end with those of an entry matched at any depth: the path is that entry. */
export function isNamesEnd(segments: readonly string[], entryPath: string): boolean {
  const names = entryPath.split("/");
  const start = segments.length - names.length;
  return start >= 0 && names.every((name, index) => isProtectedName(segments[start + index]!, name));
}

/**
 * Whether one name (a path segment) is the name of an entry matched at any depth (`ProtectedPath.anyDepth`):
 * the same name, or for a name pattern with one `*` (`*.code-workspace`, `mise.*.toml`) any name that
 * starts and ends as the pattern does with at least one character in place of the `*`, compared without
 * regard to case.
 */
export function isProtectedName(name: string, entryPath: string): boolean {
  const folded = name.toLowerCase();
  const pattern = entryPath.toLowerCase();
  const star = pattern.indexOf("*");
  if (star === -1) return folded === pattern;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  return folded.length > prefix.length + suffix.length && folded.startsWith(prefix) &&
    folded.endsWith(suffix);
}

/**
 * Resolves the file a writer (WriteFile, EditFile) names: inside the workspace, not in a folder the tools
 * treat as outside it, and not protected unless the call's permission allowed it. The message of a failure
 * follows `Cannot <action> "<path>": `.
 */
export async function resolveWritablePath(
  context: Pick<
    ToolCallContext,
    "root" | "rootAliases" | "excludedPaths" | "additionalRoots" | "protectedPaths" | "allowedProtectedPaths"
  >,
  path: string,
): Promise<(SafePathResult & { ok: true }) | { ok: false; reason: string; message: string }> {
  const resolved = await safePath(context.root, path, {
    aliases: context.rootAliases,
    excluded: context.excludedPaths,
    additionalRoots: context.additionalRoots,
  });
  if (!resolved.ok) return resolved;
  const protection = writeProtection(resolved, context);
  return protection === null ? resolved : { ok: false, reason: "protected", message: protection.reason };
}

/**
 * The protection that makes a writer refuse a path resolved by `safePath`, or null. Both where the path
 * really leads (`path`) and how it was named (`named`) are checked, so neither a symlink into `.git` nor a
 * `.git` that is itself a symlink gets through. Each is checked relative to every folder that contains it
 * (`roots`: the workspace root, then the folders added with `--add-dir`), so `<added>/.git/hooks/x` and
 * `<added>/.mewcode` are protected as in the root. What the user allowed (`allowedProtectedPaths`) is
 * relative to the root and applies only there.
 * Defaults: `PROTECTED_PATHS`, nothing allowed.
 */
function writeProtection(
  resolved: { path: string; named: string; roots: readonly string[] },
  context: Pick<ToolCallContext, "protectedPaths" | "allowedProtectedPaths">,
): ProtectedPath | null {
  const protectedPaths = context.protectedPaths ?? PROTECTED_PATHS;
  const allowed = context.allowedProtectedPaths ?? [];
  const roots = resolved.roots;
  for (const path of new Set([resolved.path, resolved.named])) {
    for (const root of roots) {
      if (!isWithinRoot(root, path)) continue;
      const relative = relativeToRoot(root, path);
      const protection = protectionOf(
        relative,
        entriesIn(root, protectedPaths),
        root === roots[0] ? allowed : [],
      );
      if (protection !== null) return protection;
    }
  }
  return null;
}

/** The entries that apply in `root`: those of every root, and those given for it alone. */
export function entriesIn(root: string, entries: readonly ProtectedPath[]): readonly ProtectedPath[] {
  return entries.every((entry) => entry.within === undefined)
    ? entries
    : entries.filter((entry) => entry.within === undefined || entry.within === root);
}

// `relative` must already be lower case.
function isAtOrBelow(relative: string, path: string): boolean {
  const base = path.replace(/^\.\/+/, "").replace(/\/+$/, "").toLowerCase();
  return base !== "" && (relative === base || relative.startsWith(`${base}/`));
}
