/**
 * Hooks that run before a tool call. This is the interface; user-configured hooks plug in here.
 *
 * @module
 */

/** What a PreToolUse hook sees. */
export interface PreToolUseEvent {
  toolName: string;
  callId: string;
  input: unknown;
}

/** A hook lets the call continue (optionally with a changed input) or blocks it with a reason for the model. */
export type PreToolUseOutcome =
  | { action: "continue"; input?: unknown }
  | { action: "block"; reason: string };

/** A hook run after validation and before the permission decision. */
export interface PreToolUseHook {
  readonly name: string;
  run(event: PreToolUseEvent, options: { signal: AbortSignal }): Promise<PreToolUseOutcome>;
}
