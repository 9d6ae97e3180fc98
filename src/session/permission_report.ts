/**
 * The permission policy a session would use, for `mewcode permissions test`: the decision for one call and
 * every step that led to it, without opening a session (no workers, no sandbox, no transcript).
 *
 * @module
 */
import { resolveAdditionalDirectories } from "../execution/additional_roots.ts";
import { runtimeProtections, sessionRegistry } from "../execution/runtime.ts";
import { explainDecision, type PermissionQuery } from "../permissions/explain.ts";
import { createPolicy } from "../permissions/policy.ts";
import type { Result } from "../permissions/rules.ts";
import { type SessionOptions, sessionProtectedPaths } from "./session.ts";
import { loadShellParser } from "../permissions/shell_parser.ts";

export type { PermissionQuery };

/** The lines that explain what a session with these options decides for the call, or why it cannot. */
export async function explainPermission(
  options: SessionOptions,
  query: PermissionQuery,
): Promise<Result<string[]>> {
  const home = options.env.HOME ?? "/";
  if ((options.rules ?? []).length > 0) await loadShellParser();
  // What the session protects: its own paths (the scripts its hooks run), then what its runtime finds.
  const base = await sessionProtectedPaths(options);
  const roots = [options.workspace.root, ...await realAdditionalRoots(options)];
  const { gitMetadata, homeCode } = await runtimeProtections(roots, options.env, base);
  const policy = createPolicy({
    mode: options.permissionMode,
    rules: options.rules ?? [],
    root: options.workspace.root,
    rootAliases: options.workspace.aliases,
    home,
    additionalDirectories: options.additionalDirectories ?? [],
    protectedPaths: [...base, ...gitMetadata, ...homeCode],
  });
  const registry = sessionRegistry({ readOnly: options.readOnly });
  return await explainDecision(query, {
    policy,
    tools: registry,
    root: options.workspace.root,
    home,
  });
}

/** The session's added folders as real paths; a folder that cannot be added is left out (the session says why). */
async function realAdditionalRoots(options: SessionOptions): Promise<string[]> {
  try {
    return await resolveAdditionalDirectories(options.additionalDirectories ?? [], options.workspace.root);
  } catch {
    return [];
  }
}
