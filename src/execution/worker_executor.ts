/**
 * The sandboxed executor: each call runs in a pooled Deno worker whose permissions are derived from the
 * tool's metadata (profiles.ts). This is the one boundary where a throw, a crash, a timeout or an abort
 * becomes an error result.
 *
 * @module
 */
import { assertNever } from "../tools/errors.ts";
import { errorResult, type ToolResult } from "../tools/tool.ts";
import {
  abortedResult,
  checkResult,
  type ExecutionRequest,
  thrownResult,
  timeoutResult,
  type ToolExecutor,
} from "./executor.ts";
import { type PermissionProfile, profileFor } from "./profiles.ts";
import { type PoolStats, WorkerPool, type WorkerPoolOptions } from "./worker_pool.ts";

/** How the worker executor is set up: the pool's options. */
export type WorkerExecutorOptions = WorkerPoolOptions;

/** Runs every tool call in a permission-scoped worker from a warm pool. */
export class WorkerExecutor implements ToolExecutor {
  #pool: WorkerPool;

  constructor(options: WorkerExecutorOptions = {}) {
    this.#pool = new WorkerPool(options);
  }

  /** Starts one worker per profile now, so the first calls find them warm; never rejects. */
  prewarm(profiles: readonly PermissionProfile[]): Promise<void> {
    return this.#pool.prewarm(profiles);
  }

  /** The pool's current counts. */
  stats(): PoolStats {
    return this.#pool.stats();
  }

  async execute(request: ExecutionRequest, options: { signal: AbortSignal }): Promise<ToolResult> {
    const { tool, input, context } = request;
    if (options.signal.aborted) return abortedResult(tool.name);
    const profile = profileFor(tool, { root: context.root, shell: context.shell });
    const outcome = await this.#pool.run(
      profile,
      { callId: crypto.randomUUID(), toolName: tool.name, input, context },
      { signal: options.signal, timeoutMs: context.timeoutMs },
    );
    switch (outcome.type) {
      case "result":
        try {
          return checkResult(outcome.result);
        } catch (error) {
          return thrownResult(tool.name, error);
        }
      case "run-error":
        return errorResult(`Cannot run ${tool.name}: ${outcome.message}`, { status: "failed" });
      case "crash":
        return errorResult(
          `${tool.name} failed: its worker stopped unexpectedly (${outcome.message}); the worker was replaced`,
          { status: "failed" },
        );
      case "timeout":
        return timeoutResult(tool.name, context.timeoutMs);
      case "aborted":
        return abortedResult(tool.name);
      case "start-failed":
        return errorResult(
          `Cannot run ${tool.name}: its sandboxed worker could not start: ${outcome.message}: ` +
            'run "mewcode doctor" to check the sandbox',
          { status: "failed" },
        );
      case "closed":
        return errorResult(`${tool.name} was stopped before it finished: the session is shutting down`, {
          status: "cancelled",
        });
      default:
        return assertNever(outcome);
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  /** Closes the executor (`await using`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
