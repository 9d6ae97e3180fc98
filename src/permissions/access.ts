/**
 * What a call touches, found before any rule is consulted: the real path a file tool reads or writes, or
 * the commands and redirections of a Bash command line. This is the policy's only I/O (resolving paths).
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { isRecord } from "../common/values.ts";
import type { PermissionRequest } from "./decision.ts";
import { type AccessKind, accessOf } from "./modes.ts";
import { type ResolvedPath, resolvePath } from "./real_paths.ts";
import { analyzeCommand, type CommandAnalysis, type RedirectWrite } from "./shell_commands.ts";

/** A redirection's write, with where it leads (null when that is only known at run time). */
export interface RedirectAccess {
  write: RedirectWrite;
  path: ResolvedPath | null;
}

/** What one call touches. */
export type Access =
  | { kind: "read"; tool: string; path: ResolvedPath }
  | { kind: "write"; tool: string; path: ResolvedPath }
  | { kind: "command"; tool: string; command: string; analysis: CommandAnalysis; writes: RedirectAccess[] }
  | { kind: "call"; tool: string; access: AccessKind };

/** The folders paths are resolved against: real paths, except the aliases. */
export interface AccessContext {
  workspace: string;
  aliases: readonly string[];
  home: string;
}

const FILE_READERS: ReadonlySet<string> = new Set(["ReadFile"]);
const SEARCHES: ReadonlySet<string> = new Set(["Glob", "Grep"]);
const FILE_WRITERS: ReadonlySet<string> = new Set(["WriteFile", "EditFile"]);

/**
 * What a request touches. A tool is read by its name only when its metadata agrees (a read-only ReadFile, a
 * destructive Bash); anything else is a plain call, decided by name and metadata.
 */
export function describeAccess(request: PermissionRequest, context: AccessContext): Access {
  const { tool } = request;
  const access = accessOf(tool);
  const input = isRecord(request.input) ? request.input : {};
  const resolve = (path: string) =>
    resolvePath(path, { workspace: context.workspace, aliases: context.aliases });
  if (access === "read" && FILE_READERS.has(tool.name) && typeof input.path === "string") {
    return { kind: "read", tool: tool.name, path: resolve(input.path) };
  }
  if (access === "read" && SEARCHES.has(tool.name)) {
    const path = typeof input.path === "string" ? input.path : context.workspace;
    return { kind: "read", tool: tool.name, path: resolve(path) };
  }
  if (access === "edit" && FILE_WRITERS.has(tool.name) && typeof input.path === "string") {
    return { kind: "write", tool: tool.name, path: resolve(input.path) };
  }
  if (access === "command" && tool.name === "Bash" && typeof input.command === "string") {
    const analysis = analyzeCommand(input.command);
    const writes: RedirectAccess[] = [];
    for (const write of analysis.ok ? analysis.writes : []) {
      const target = write.target;
      const unknown = target === null ||
        (analysis.ok && analysis.changesDirectory && !isAbsoluteTarget(target));
      const path = unknown ? null : target.fromHome ? posix.join(context.home, target.path) : target.path;
      writes.push({ write, path: path === null ? null : resolve(path) });
    }
    return { kind: "command", tool: tool.name, command: input.command, analysis, writes };
  }
  return { kind: "call", tool: tool.name, access };
}

function isAbsoluteTarget(target: { path: string; fromHome: boolean }): boolean {
  return target.fromHome || posix.isAbsolute(target.path);
}
