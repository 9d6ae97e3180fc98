/**
 * The executor: the one boundary where a tool runs and where anything it throws becomes an error result.
 *
 * @module
 */
import { describeError } from "../tools/errors.ts";
import { type AnyTool, errorResult, type ToolCallContext, type ToolResult } from "../tools/tool.ts";

/** One validated, permitted call, ready to run. */
export interface ExecutionRequest {
  tool: AnyTool;
  input: unknown;
  context: ToolCallContext;
}

/**
 * Runs tool calls. Implementations never throw for a tool's failure, a timeout or an abort: those are
 * error results. They throw only for system faults (a broken worker pool, out of memory).
 */
export interface ToolExecutor {
  execute(request: ExecutionRequest, options: { signal: AbortSignal }): Promise<ToolResult>;
  /** Releases workers and other resources; the executor is unusable afterwards. */
  close(): Promise<void>;
}

/** Runs tools in this process, with the same time limit and error boundary as the sandboxed executor. */
export class DirectExecutor implements ToolExecutor {
  async execute(request: ExecutionRequest, options: { signal: AbortSignal }): Promise<ToolResult> {
    const { tool, input, context } = request;
    if (options.signal.aborted) return abortedResult(tool.name);
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new DOMException("timed out", "TimeoutError"));
        resolve(timeoutResult(tool.name, context.timeoutMs));
      }, context.timeoutMs);
      controller.signal.addEventListener("abort", () => {
        if (options.signal.aborted) resolve(abortedResult(tool.name));
      }, { once: true });
    });
    try {
      const running = (async () => {
        try {
          return checkResult(await tool.execute({ ...context, signal: controller.signal }, input));
        } catch (error) {
          return thrownResult(tool.name, error);
        }
      })();
      return await Promise.race([running, stopped]);
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The result of a call the user or the loop cancelled. */
export function abortedResult(toolName: string): ToolResult {
  return errorResult(`${toolName} was cancelled before it finished: the user interrupted the call`, {
    status: "cancelled",
  });
}

/** The result of a call stopped at its hard time limit. */
export function timeoutResult(toolName: string, timeoutMs: number): ToolResult {
  return errorResult(
    `${toolName} did not finish within ${timeoutMs} ms and was stopped: narrow the request or split it`,
    { status: "timeout" },
  );
}

/** Turns anything a tool threw into an error result carrying its message. */
export function thrownResult(toolName: string, error: unknown): ToolResult {
  return errorResult(`${toolName} failed: ${describeError(error)}`, { status: "failed" });
}

/** Checks that a tool returned a well-formed ToolResult, throwing a TypeError otherwise. */
export function checkResult(result: ToolResult): ToolResult {
  if (
    typeof result !== "object" || result === null || typeof result.content !== "string" ||
    typeof result.isError !== "boolean"
  ) {
    throw new TypeError("the tool returned something that is not a ToolResult");
  }
  return { content: result.content, isError: result.isError, metadata: result.metadata ?? {} };
}
