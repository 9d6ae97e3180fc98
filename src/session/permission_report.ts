/**
 * The permission policy a session would use, for `mewcode permissions test`: the decision for one call and
 * every step that led to it, without opening a session (no workers, no sandbox, no transcript).
 *
 * @module
 */
import { sessionRegistry } from "../execution/runtime.ts";
import { explainDecision, type PermissionQuery } from "../permissions/explain.ts";
import { createPolicy } from "../permissions/policy.ts";
import type { Result } from "../permissions/rules.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { SessionOptions } from "./session.ts";
import { loadShellParser } from "../permissions/shell_parser.ts";

export type { PermissionQuery };

/** The lines that explain what a session with these options decides for the call, or why it cannot. */
export async function explainPermission(
  options: SessionOptions,
  query: PermissionQuery,
): Promise<Result<string[]>> {
  const home = options.env.HOME ?? "/";
  if ((options.rules ?? []).length > 0) await loadShellParser();
  const policy = createPolicy({
    mode: options.permissionMode,
    rules: options.rules ?? [],
    root: options.workspace.root,
    rootAliases: options.workspace.aliases,
    home,
    additionalDirectories: options.additionalDirectories ?? [],
    protectedPaths: options.protectedPaths ?? PROTECTED_PATHS,
  });
  const registry = sessionRegistry({ readOnly: options.readOnly });
  return await explainDecision(query, {
    policy,
    tools: registry,
    root: options.workspace.root,
    home,
  });
}
