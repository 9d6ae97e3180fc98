/**
 * The permission modes: what each `--permission-mode` decides when no rule does, by kind of access.
 *
 *                        read    edit    command
 *   default              allow   ask     ask
 *   acceptEdits          allow   allow   ask
 *   plan                 allow   deny    deny
 *   dontAsk              allow   deny    deny
 *   bypassPermissions    allow   allow   allow
 *
 * read: read-only tools; edit: writers that are not destructive (WriteFile, EditFile); command:
 * destructive tools (Bash). `policyForMode` applies the table from the tools' metadata alone;
 * `createPolicy` (policy.ts) puts rules, locations and protected paths before it.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { PermissionDecision, PermissionPolicy, PermissionRequest } from "./decision.ts";
import type { ToolInfo } from "../tools/tool.ts";

/** The permission modes of the agent loop. */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"] as const;
/** One of PERMISSION_MODES. */
export type PermissionMode = typeof PERMISSION_MODES[number];

/** What a call does, as far as the modes care. */
export type AccessKind = "read" | "edit" | "command";

/** The three answers of a policy. */
export type Behavior = PermissionDecision["behavior"];

/** The table above, as data. */
export const MODE_TABLE: Readonly<Record<PermissionMode, Readonly<Record<AccessKind, Behavior>>>> = {
  default: { read: "allow", edit: "ask", command: "ask" },
  acceptEdits: { read: "allow", edit: "allow", command: "ask" },
  plan: { read: "allow", edit: "deny", command: "deny" },
  dontAsk: { read: "allow", edit: "deny", command: "deny" },
  bypassPermissions: { read: "allow", edit: "allow", command: "allow" },
};

/** The kind of access of a tool, from its metadata (never its name). */
export function accessOf(tool: ToolInfo): AccessKind {
  if (tool.isReadOnly()) return "read";
  return tool.isDestructive() ? "command" : "edit";
}

/** The policy of a permission mode. Pure: the decision depends only on the mode and the tool's metadata. */
export function policyForMode(mode: PermissionMode): PermissionPolicy {
  return { decide: (request) => Promise.resolve(decideForMode(mode, request)) };
}

function decideForMode(mode: PermissionMode, request: PermissionRequest): PermissionDecision {
  const { tool } = request;
  const access = accessOf(tool);
  const what = access === "read"
    ? `${tool.name} only reads`
    : access === "command"
    ? `${tool.name} can run commands that change anything in the workspace`
    : `${tool.name} changes files in the workspace`;
  return modeDecision(mode, { access, what });
}

/**
 * The mode's decision for one kind of access; `what` describes the call ("Bash can run commands that …",
 * "EditFile changes \"src/a.ts\"") and starts the reason.
 */
export function modeDecision(
  mode: PermissionMode,
  { access, what }: { access: AccessKind; what: string },
): PermissionDecision {
  const decidedBy = { kind: "mode", mode } as const;
  const behavior = MODE_TABLE[mode][access];
  if (access === "read") return { behavior: "allow", reason: what, decidedBy };
  switch (mode) {
    case "default":
      return {
        behavior: "ask",
        reason: `${what}, which needs the user's approval in the default permission mode`,
        decidedBy,
      };
    case "acceptEdits":
      if (behavior === "allow") {
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
    case "dontAsk":
      return {
        behavior: "deny",
        reason: `${what}, and dontAsk mode denies without asking whatever no rule allows`,
        decidedBy,
      };
    case "bypassPermissions":
      return { behavior: "allow", reason: "every tool is allowed in bypassPermissions mode", decidedBy };
    default:
      return assertNever(mode);
  }
}
