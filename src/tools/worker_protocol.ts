/**
 * The boundary between the executor (main process) and a tool worker: the messages they exchange, the
 * permission names a worker reports, and the checks both sides apply to a tool's result. It lives with
 * the tools so that the worker entry points import only src/tools. Only structured-cloneable data
 * crosses: the validated input, the plain call context (no AbortSignal: the worker builds its own) and
 * the result.
 *
 *   main → worker   run-request, cancel-request, prewalk (once: the workspace to walk while idle)
 *   worker → main   ready (once, after the tools loaded), run-progress, run-result, run-error, worker-error,
 *                   prewalk-end (once: the walk ahead's report, sent while idle)
 *
 * A worker runs one call at a time; the executor never sends a second run-request before the first
 * one's run-result or run-error.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import { errorResult } from "./results.ts";
import type { GrepWalkReport } from "./_grep_prepass.ts";
import type { PrewalkRequest } from "./_prewalk.ts";
import type { ToolCallContext, ToolResult } from "./tool.ts";

/** The permission names a worker is checked for, in the order of a worker's permission options. */
export const PERMISSION_NAMES = ["env", "net", "sys", "ffi", "import", "read", "write", "run"] as const;

/** One of PERMISSION_NAMES. */
export type PermissionName = typeof PERMISSION_NAMES[number];

/**
 * What a running call tells its caller before its result. "budget-spent": Grep's budgeted search
 * (`_grep_prepass.ts`) gave up searching and walks on, so ripgrep should search now (see
 * `src/tools/grep_ripgrep.ts`). It is news only: a caller that ignores it gets the same result.
 */
export const CALL_PROGRESS = ["budget-spent"] as const;

/** One of CALL_PROGRESS. */
export type CallProgress = typeof CALL_PROGRESS[number];

/** What the main process sends to a tool worker. */
export type ToWorker =
  | { type: "run-request"; callId: string; toolName: string; input: unknown; context: ToolCallContext }
  | { type: "cancel-request"; callId: string }
  /** Walk the workspace while no call runs, ahead of the session's searches (`_prewalk.ts`). */
  | { type: "prewalk"; request: PrewalkRequest };

/** What a tool worker sends to the main process. */
export type FromWorker =
  | {
    type: "ready";
    /** The tools this worker can run. */
    tools: string[];
    /** The worker's own view of its permissions (`Deno.permissions.querySync` without a path or host). */
    permissions: Record<PermissionName, Deno.PermissionState>;
  }
  /** A running call's news for its caller, before its result (see `CallProgress`). */
  | { type: "run-progress"; callId: string; progress: CallProgress }
  | { type: "run-result"; callId: string; result: ToolResult }
  /** The call could not be run at all (for example, this worker has no tool by that name). */
  | { type: "run-error"; callId: string; message: string }
  /** Something in the worker threw outside any call's control (an uncaught error or rejection): replace it. */
  | { type: "worker-error"; message: string }
  /**
   * The walk ahead of the calls ended with a report (`_prewalk.ts`), sent while no call runs: Grep's runtime
   * keeps it as a recent walk, so the session's first Grep does not wait for it to cross (see
   * `RipgrepGrep.walkedAhead`).
   */
  | { type: "prewalk-end"; report: GrepWalkReport };

/** Whether a message from a worker has one of the FromWorker shapes; anything else is a broken worker. */
export function isFromWorker(value: unknown): value is FromWorker {
  if (typeof value !== "object" || value === null) return false;
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case "ready":
      return Array.isArray(message.tools) && isPermissionStates(message.permissions);
    case "run-progress":
      return typeof message.callId === "string" && CALL_PROGRESS.includes(message.progress as CallProgress);
    case "run-result":
      return typeof message.callId === "string" && typeof message.result === "object" &&
        message.result !== null;
    case "run-error":
      return typeof message.callId === "string" && typeof message.message === "string";
    case "worker-error":
      return typeof message.message === "string";
    case "prewalk-end":
      return typeof message.report === "object" && message.report !== null;
    default:
      return false;
  }
}

function isPermissionStates(value: unknown): value is Record<PermissionName, Deno.PermissionState> {
  if (typeof value !== "object" || value === null) return false;
  const states = value as Record<string, unknown>;
  return PERMISSION_NAMES.every((name) => typeof states[name] === "string");
}

/** Turns anything a tool threw into an error result carrying its message. */
export function thrownResult(toolName: string, error: unknown): ToolResult {
  return errorResult(`${toolName} failed: ${describeError(error)}`);
}

/** Checks that a tool returned a well-formed ToolResult, throwing a TypeError otherwise. */
export function checkResult(result: ToolResult): ToolResult {
  if (
    typeof result !== "object" || result === null || typeof result.content !== "string" ||
    typeof result.isError !== "boolean"
  ) {
    throw new TypeError("the tool returned something that is not a ToolResult");
  }
  const stop = result.stop === "timed-out" || result.stop === "cancelled" ? result.stop : undefined;
  return {
    content: result.content,
    isError: result.isError,
    metadata: result.metadata ?? {},
    ...(stop === undefined ? {} : { stop }),
  };
}

/** One operation `mewcode doctor`'s probe worker tries with Deno's own APIs (workers/permission_check_worker.ts). */
export type PermissionCheck =
  | { kind: "read-file"; path: string }
  | { kind: "read-dir"; path: string }
  | { kind: "spawn"; program: string; args: string[] };

/** How a probe's operation went: "ok", or the name and message of the error Deno threw. */
export type PermissionCheckOutcome = { ok: true } | { ok: false; name: string; message: string };
