/**
 * The messages between the executor and a tool worker. Only structured-cloneable data crosses: the
 * validated input, the plain call context (no AbortSignal: the worker builds its own) and the result.
 *
 *   main → worker   run-request, cancel-request
 *   worker → main   ready (once, after the tools loaded), run-result, run-error, worker-error
 *
 * A worker runs one call at a time; the executor never sends a second run-request before the first
 * one's run-result or run-error.
 *
 * @module
 */
import type { ToolCallContext, ToolResult } from "../tools/tool.ts";
import { PERMISSION_NAMES, type PermissionName } from "./profiles.ts";

/** What the main process sends to a tool worker. */
export type ToWorker =
  | { type: "run-request"; callId: string; toolName: string; input: unknown; context: ToolCallContext }
  | { type: "cancel-request"; callId: string };

/** What a tool worker sends to the main process. */
export type FromWorker =
  | {
    type: "ready";
    /** The tools this worker can run. */
    tools: string[];
    /** The worker's own view of its permissions (`Deno.permissions.querySync` without a path or host). */
    permissions: Record<PermissionName, Deno.PermissionState>;
  }
  | { type: "run-result"; callId: string; result: ToolResult }
  /** The call could not be run at all (for example, this worker has no tool by that name). */
  | { type: "run-error"; callId: string; message: string }
  /** Something in the worker threw outside any call's control (an uncaught error or rejection): replace it. */
  | { type: "worker-error"; message: string };

/** Whether a message from a worker has one of the FromWorker shapes; anything else is a broken worker. */
export function isFromWorker(value: unknown): value is FromWorker {
  if (typeof value !== "object" || value === null) return false;
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case "ready":
      return Array.isArray(message.tools) && isPermissionStates(message.permissions);
    case "run-result":
      return typeof message.callId === "string" && typeof message.result === "object" &&
        message.result !== null;
    case "run-error":
      return typeof message.callId === "string" && typeof message.message === "string";
    case "worker-error":
      return typeof message.message === "string";
    default:
      return false;
  }
}

function isPermissionStates(value: unknown): value is Record<PermissionName, Deno.PermissionState> {
  if (typeof value !== "object" || value === null) return false;
  const states = value as Record<string, unknown>;
  return PERMISSION_NAMES.every((name) => typeof states[name] === "string");
}
