/**
 * What each hook event carries, what a command hook reads on its standard input (Claude Code's JSON,
 * snake_case as on the wire), and what running an event's hooks reports back.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { HookEvent, HookOrigin } from "./hook_config.ts";
import type { HookPermissionDecision } from "./hooks.ts";

/** The data of each event. */
export interface HookPayloads {
  PreToolUse: { toolName: string; toolInput: unknown; toolUseId: string };
  PostToolUse: { toolName: string; toolInput: unknown; toolUseId: string; toolResponse: unknown };
  UserPromptSubmit: { prompt: string };
  /** `stopHookActive`: the agent is already continuing because a Stop hook blocked it once. */
  Stop: { stopHookActive: boolean };
  SessionStart: { source: "startup" | "resume" | "clear" | "compact" };
}

/** The session a hook runs in. */
export interface HookSessionInfo {
  sessionId: string;
  /** The session's transcript, or null when it is not persisted. */
  transcriptPath: string | null;
}

/** How one hook ended, as the contract reads it. */
export interface HookResult {
  /** The hook's command, shortened, for messages. */
  hook: string;
  origin: HookOrigin;
  /** `blocked`: exit code 2 or a JSON block; `error`: another exit code; `failed`: it could not start. */
  status: "success" | "blocked" | "error" | "timed-out" | "failed";
  exitCode: number | null;
  durationMs: number | null;
  /** Why it blocked: standard error of exit code 2, or the reason in its JSON. */
  blockReason: string | null;
  /** PreToolUse: its permission decision (a "deny" is reported as `blocked`). */
  decision: HookPermissionDecision | null;
  /** PreToolUse: the input it wants the call to use instead. */
  updatedInput: Record<string, unknown> | null;
  /** Text for the model's context (UserPromptSubmit and SessionStart output, `additionalContext`). */
  context: string[];
  /** Lines for the user: failures, timeouts, `systemMessage`. */
  notices: string[];
  /** Set when the hook printed `"continue": false`: mewcode should stop, for this reason. */
  stopReason: string | null;
}

/** What running an event's hooks gave: each result, and what they mean together. */
export interface HookRunReport {
  results: HookResult[];
  /**
   * The hooks that blocked, reasons joined. PostToolUse and Stop: tell the model (Stop: the agent goes on);
   * UserPromptSubmit: the prompt is not sent, tell the user; PreToolUse: the call does not run.
   */
  blocked: { hooks: string[]; reason: string } | null;
  context: string[];
  notices: string[];
  stop: { hooks: string[]; reason: string } | null;
}

/** Runs the command hooks configured for an event. */
export interface HookRunner {
  /** Whether any hook is configured for `event`, so callers can skip building its payload. */
  has(event: HookEvent): boolean;
  run<E extends HookEvent>(
    event: E,
    payload: HookPayloads[E],
    options: { signal?: AbortSignal },
  ): Promise<HookRunReport>;
}

/** The JSON a command hook reads on its standard input. */
export function hookInput<E extends HookEvent>(
  event: E,
  payload: HookPayloads[E],
  context: HookSessionInfo & { cwd: string },
): Record<string, unknown> {
  const common = {
    session_id: context.sessionId,
    transcript_path: context.transcriptPath,
    cwd: context.cwd,
    hook_event_name: event,
  };
  const typed = { event, payload } as HookEventData;
  switch (typed.event) {
    case "PreToolUse":
      return {
        ...common,
        tool_name: typed.payload.toolName,
        tool_input: typed.payload.toolInput,
        tool_use_id: typed.payload.toolUseId,
      };
    case "PostToolUse":
      return {
        ...common,
        tool_name: typed.payload.toolName,
        tool_input: typed.payload.toolInput,
        tool_use_id: typed.payload.toolUseId,
        tool_response: typed.payload.toolResponse,
      };
    case "UserPromptSubmit":
      return { ...common, prompt: typed.payload.prompt };
    case "Stop":
      return { ...common, stop_hook_active: typed.payload.stopHookActive };
    case "SessionStart":
      return { ...common, source: typed.payload.source };
    default:
      return assertNever(typed);
  }
}

/** The value an event's matchers test: the tool name, the SessionStart source, or nothing. */
export function matchValue<E extends HookEvent>(event: E, payload: HookPayloads[E]): string | null {
  const typed = { event, payload } as HookEventData;
  switch (typed.event) {
    case "PreToolUse":
    case "PostToolUse":
      return typed.payload.toolName;
    case "SessionStart":
      return typed.payload.source;
    case "UserPromptSubmit":
    case "Stop":
      return null;
    default:
      return assertNever(typed);
  }
}

/** An event with its payload, as a union that narrows in a switch. */
type HookEventData = { [E in HookEvent]: { event: E; payload: HookPayloads[E] } }[HookEvent];
