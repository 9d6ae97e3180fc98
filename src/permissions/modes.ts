/**
 * The permission modes: the policy each `--permission-mode` applies, derived from the tools' metadata.
 *
 *   read-only tools            always allowed
 *   non-destructive writers    default: ask · acceptEdits: allow · plan: deny · bypassPermissions: allow
 *   destructive tools (shell)  default: ask · acceptEdits: ask   · plan: deny · bypassPermissions: allow
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { PermissionDecision, PermissionPolicy, PermissionRequest } from "./decision.ts";

/** The permission modes of the agent loop. */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;
/** One of PERMISSION_MODES. */
export type PermissionMode = typeof PERMISSION_MODES[number];

/** The policy of a permission mode. Pure: the decision depends only on the mode and the tool's metadata. */
export function policyForMode(mode: PermissionMode): PermissionPolicy {
  return { decide: (request) => decideForMode(mode, request) };
}

function decideForMode(mode: PermissionMode, request: PermissionRequest): PermissionDecision {
  const { tool } = request;
  const decidedBy = { kind: "mode", mode } as const;
  if (tool.isReadOnly()) return { behavior: "allow", reason: `${tool.name} only reads`, decidedBy };
  const destructive = tool.isDestructive();
  const what = destructive
    ? `${tool.name} can run commands that change anything in the workspace`
    : `${tool.name} changes files in the workspace`;
  switch (mode) {
    case "default":
      return {
        behavior: "ask",
        reason: `${what}, which needs the user's approval in the default permission mode`,
        decidedBy,
      };
    case "acceptEdits":
      if (!destructive) {
        return { behavior: "allow", reason: "file edits are accepted in acceptEdits mode", decidedBy };
      }
      return {
        behavior: "ask",
        reason: `${what}, which needs the user's approval even in acceptEdits mode`,
        decidedBy,
      };
    case "plan":
      return {
        behavior: "deny",
        reason: `plan mode allows only read-only tools and ${what}: ` +
          "investigate with the read-only tools and present your plan instead of making changes",
        decidedBy,
      };
    case "bypassPermissions":
      return { behavior: "allow", reason: "every tool is allowed in bypassPermissions mode", decidedBy };
    default:
      return assertNever(mode);
  }
}
