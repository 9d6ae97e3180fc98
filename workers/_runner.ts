/**
 * The body of every tool worker: receives run requests, runs the tool with its own AbortController,
 * turns anything thrown into an error result, and posts the result back. The entry points (one per
 * permission profile: `tool_worker.ts` for the read-only tools, `writer_worker.ts`, `shell_worker.ts`; and
 * test-only entries) only choose the tools, and what the worker does besides.
 *
 * @module
 */
import { assertNever, describeError } from "../src/common/errors.ts";
import type { ShellRunner, ToolResult, ToolRunner } from "../src/tools/tool.ts";
import type { PrewalkRequest } from "../src/tools/_prewalk.ts";
import {
  type CallProgress,
  checkResult,
  type FromWorker,
  PERMISSION_NAMES,
  type PermissionName,
  thrownResult,
  type ToWorker,
} from "../src/tools/worker_protocol.ts";

/** The part of a dedicated worker's global scope the runner uses. */
export interface WorkerScope {
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker): void;
  addEventListener(type: "error", listener: (event: ErrorEvent) => void): void;
  addEventListener(type: "unhandledrejection", listener: (event: PromiseRejectionEvent) => void): void;
}

/**
 * What a worker does between calls; `busy` tells such work when a call has come. The entry points choose.
 */
export interface BetweenCalls {
  /** Runs once a call's result is sent and no other call runs. */
  idle?(busy: () => boolean): void;
  /** Runs as a call arrives, before it starts: work between calls stops here. */
  beforeCall?(): void;
  /** Starts the walk ahead of the searches (`src/tools/_prewalk.ts`); without it the request is ignored. */
  prewalk?(request: PrewalkRequest, busy: () => boolean): void;
  /**
   * What runs the shell's commands in a sandbox kept for as long as the worker lives (`ShellHost`): the
   * shell's entry gives one; the others load none of its code.
   */
  shellRunner?: ShellRunner;
}

/**
 * Serves tool calls on `scope`. Registers `onmessage` synchronously (messages that arrive while the
 * worker is still starting are not lost), then announces `ready` with the worker's permissions.
 */
export function serveTools(
  scope: WorkerScope,
  // deno-lint-ignore no-explicit-any -- each runner takes its own tool's (validated) input
  tools: readonly ToolRunner<any>[],
  between: BetweenCalls = {},
): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const running = new Map<string, AbortController>();
  const shellRunner = between.shellRunner;

  scope.onmessage = (event) => {
    const message = event.data;
    switch (message.type) {
      case "run-request":
        void run(message);
        return;
      case "cancel-request":
        running.get(message.callId)?.abort(new DOMException("the call was cancelled", "AbortError"));
        return;
      case "prewalk":
        between.prewalk?.(message.request, busy);
        return;
      default:
        assertNever(message);
    }
  };

  async function run(request: ToWorker & { type: "run-request" }): Promise<void> {
    const tool = byName.get(request.toolName);
    if (tool === undefined) {
      scope.postMessage({
        type: "run-error",
        callId: request.callId,
        message: `this worker has no tool "${request.toolName}" (it has ${[...byName.keys()].join(", ")})`,
      });
      return;
    }
    const controller = new AbortController();
    running.set(request.callId, controller);
    between.beforeCall?.();
    const progress = (news: CallProgress): void => {
      if (running.has(request.callId)) {
        scope.postMessage({ type: "run-progress", callId: request.callId, progress: news });
      }
    };
    let result: ToolResult;
    try {
      result = checkResult(
        await tool.execute(
          {
            ...request.context,
            signal: controller.signal,
            ...(shellRunner === undefined ? {} : { shellRunner }),
            progress,
          },
          request.input,
        ),
      );
    } catch (error) {
      result = thrownResult(tool.name, error);
    } finally {
      running.delete(request.callId);
    }
    post(scope, tool.name, request.callId, result);
    if (running.size === 0) between.idle?.(busy);
  }

  function busy(): boolean {
    return running.size > 0;
  }

  // A tool that throws from a timer or leaves a rejected promise behind has left the worker in an unknown
  // state: report it (instead of letting the runtime print it) so the executor replaces the worker.
  scope.addEventListener("error", (event) => {
    event.preventDefault();
    scope.postMessage({ type: "worker-error", message: describeError(event.error ?? event.message) });
  });
  scope.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    scope.postMessage({
      type: "worker-error",
      message: `unhandled rejection: ${describeError(event.reason)}`,
    });
  });

  scope.postMessage({ type: "ready", tools: [...byName.keys()], permissions: queryPermissions() });
}

function post(scope: WorkerScope, toolName: string, callId: string, result: ToolResult): void {
  try {
    scope.postMessage({ type: "run-result", callId, result });
  } catch (error) {
    // Metadata that cannot be cloned (a function, a class instance with private state) is a tool bug.
    const reason = error instanceof Error ? error.message : String(error);
    scope.postMessage({
      type: "run-result",
      callId,
      result: thrownResult(toolName, new TypeError(`the result cannot be sent from its worker: ${reason}`)),
    });
  }
}

function queryPermissions(): Record<PermissionName, Deno.PermissionState> {
  const states = {} as Record<PermissionName, Deno.PermissionState>;
  for (const name of PERMISSION_NAMES) states[name] = Deno.permissions.querySync({ name }).state;
  return states;
}
