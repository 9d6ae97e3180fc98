/**
 * Hooks that run before a tool call: the interface the pipeline calls. Command hooks from the settings
 * (command_hooks.ts) implement it.
 *
 * @module
 */

/** What a PreToolUse hook sees. */
export interface PreToolUseEvent {
  toolName: string;
  callId: string;
  input: unknown;
}

/** A hook's say on the permission question (Claude Code's `permissionDecision`), with its reason. */
export interface HookPermissionDecision {
  behavior: "allow" | "deny" | "ask";
  reason: string;
}

/**
 * A hook lets the call continue (optionally with a changed input, which the pipeline validates again, and a
 * permission decision) or blocks it with a reason for the model. `notices` are lines for the user (a hook
 * that failed or was stopped), never sent to the model.
 */
export type PreToolUseOutcome =
  | { action: "continue"; input?: unknown; decision?: HookPermissionDecision; notices?: string[] }
  | { action: "block"; reason: string };

/** A hook run after validation and before the permission decision. */
export interface PreToolUseHook {
  readonly name: string;
  run(event: PreToolUseEvent, options: { signal: AbortSignal }): Promise<PreToolUseOutcome>;
}
