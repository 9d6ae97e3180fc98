/**
 * The executor: the one boundary where a tool runs and where anything it throws becomes an error result,
 * with how the run ended as a typed status beside it.
 *
 * @module
 */
import { type AnyTool, errorResult, type ToolCallContext, type ToolResult } from "../tools/tool.ts";
import { type CallProgress, checkResult, thrownResult } from "../tools/worker_protocol.ts";
import { cancelReason } from "./call_outcome.ts";

/** One validated, permitted call, ready to run. */
export interface ExecutionRequest {
  tool: AnyTool;
  input: unknown;
  context: ToolCallContext;
}

/** How a call runs: the caller's signal, and who hears the call's news before its result (see `CallProgress`). */
export interface ExecutionOptions {
  signal: AbortSignal;
  progress?: ((progress: CallProgress) => void) | undefined;
}

/** How a run ended, from the executor's view. */
export type ExecutionStatus = "completed" | "failed" | "timed-out" | "aborted";

/** A tool's result and how its run ended. */
export interface Execution {
  result: ToolResult;
  status: ExecutionStatus;
}

/**
 * Runs tool calls. Implementations never throw for a tool's failure, a timeout or an abort: those are
 * results with their status. They throw only for system faults (a broken worker pool, out of memory).
 */
export interface ToolExecutor {
  execute(request: ExecutionRequest, options: ExecutionOptions): Promise<Execution>;
  /** Releases workers and other resources; the executor is unusable afterwards. */
  close(): Promise<void>;
}

/** Runs tools in this process, with the same time limit and error boundary as the sandboxed executor. */
export class DirectExecutor implements ToolExecutor {
  async execute(request: ExecutionRequest, options: ExecutionOptions): Promise<Execution> {
    const { tool, input, context } = request;
    if (options.signal.aborted) return abortedExecution(tool.name);
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = new Promise<Execution>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new DOMException("timed out", "TimeoutError"));
        resolve(timeoutExecution(tool.name, context.timeoutMs));
      }, context.timeoutMs);
      controller.signal.addEventListener("abort", () => {
        if (options.signal.aborted) resolve(abortedExecution(tool.name));
      }, { once: true });
    });
    try {
      const running = (async (): Promise<Execution> => {
        try {
          const progress = options.progress === undefined ? {} : { progress: options.progress };
          return finished(
            checkResult(await tool.execute({ ...context, signal: controller.signal, ...progress }, input)),
          );
        } catch (error) {
          return { result: thrownResult(tool.name, error), status: "failed" };
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

/** The execution of a result the tool returned: its own stop (Bash's time limit) or error decides. */
export function finished(result: ToolResult): Execution {
  if (result.stop === "timed-out") return { result, status: "timed-out" };
  if (result.stop === "cancelled") return { result, status: "aborted" };
  return { result, status: result.isError ? "failed" : "completed" };
}

/**
 * A call stopped before it finished, by an abort: the user (a signal, Esc), the loop (a broken response, the
 * turn's end) or closed standard output. Why is added by `withCancelReason`, which knows the signal.
 */
export function abortedExecution(toolName: string): Execution {
  return { result: errorResult(`${toolName} ${CANCELLED}`), status: "aborted" };
}

/** The words every cancelled call's result starts with after its subject (Bash's own result too). */
const CANCELLED = "was cancelled before it finished";

/**
 * An aborted call's result saying why it was stopped: ": <why>" after its first words "… was cancelled
 * before it finished" (abortedExecution's and Bash's own), so no call reads "the user interrupted" when
 * no one did. Other executions, and an abort that gave no reason, are returned as they are.
 */
export function withCancelReason(execution: Execution, reason: unknown): Execution {
  const why = cancelReason(reason);
  if (execution.status !== "aborted" || why === null) return execution;
  const { content } = execution.result;
  const at = content.indexOf(CANCELLED);
  const firstLine = content.indexOf("\n");
  if (at === -1 || (firstLine !== -1 && at > firstLine)) return execution;
  const end = at + CANCELLED.length;
  if (content.startsWith(":", end)) return execution;
  return {
    ...execution,
    result: { ...execution.result, content: `${content.slice(0, end)}: ${why}${content.slice(end)}` },
  };
}

/** A call stopped at its hard time limit. */
export function timeoutExecution(toolName: string, timeoutMs: number): Execution {
  return {
    result: errorResult(
      `${toolName} did not finish within ${timeoutMs} ms and was stopped: narrow the request or split it`,
    ),
    status: "timed-out",
  };
}
