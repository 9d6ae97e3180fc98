/**
 * The sandboxed executor: each call runs in a pooled Deno worker whose permissions are derived from the
 * tool's metadata (profiles.ts). This is the one boundary where a throw, a crash, a timeout or an abort
 * becomes an error result.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { errorResult } from "../tools/tool.ts";
import { checkResult, thrownResult } from "../tools/worker_protocol.ts";
import {
  abortedExecution,
  type Execution,
  type ExecutionOptions,
  type ExecutionRequest,
  finished,
  timeoutExecution,
  type ToolExecutor,
} from "./executor.ts";
import { type PermissionProfile, profileFor } from "./profiles.ts";
import { type PoolStats, WorkerPool, type WorkerPoolOptions } from "./worker_pool.ts";
import type { GrepWalkReport } from "../tools/_grep_prepass.ts";
import type { PrewalkRequest } from "../tools/_prewalk.ts";

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

  /**
   * Has the worker the profile's next call gets walk the workspace meanwhile (`src/tools/_prewalk.ts`);
   * `onWalked` hears the walk's report if the worker sends it.
   */
  prewalk(
    profile: PermissionProfile,
    request: PrewalkRequest,
    onWalked?: (report: GrepWalkReport) => void,
  ): void {
    this.#pool.prewalk(profile, request, onWalked);
  }

  /** The pool's current counts. */
  stats(): PoolStats {
    return this.#pool.stats();
  }

  async execute(request: ExecutionRequest, options: ExecutionOptions): Promise<Execution> {
    const { tool, input, context } = request;
    if (options.signal.aborted) return abortedExecution(tool.name);
    // From the call's own context: the worker may reach exactly the folders the tool's checks accept.
    const profile = profileFor(tool, {
      root: context.root,
      additionalRoots: context.additionalRoots,
      shell: context.shell,
    });
    const outcome = await this.#pool.run(
      profile,
      { callId: crypto.randomUUID(), toolName: tool.name, input, context },
      { signal: options.signal, timeoutMs: context.timeoutMs, progress: options.progress },
    );
    const failed = (content: string): Execution => ({ result: errorResult(content), status: "failed" });
    switch (outcome.type) {
      case "result":
        try {
          return finished(checkResult(outcome.result));
        } catch (error) {
          return { result: thrownResult(tool.name, error), status: "failed" };
        }
      case "run-error":
        return failed(`Cannot run ${tool.name}: ${outcome.message}`);
      case "crash":
        return failed(
          `${tool.name} failed: its worker stopped unexpectedly (${outcome.message}); the worker was replaced`,
        );
      case "timeout":
        return timeoutExecution(tool.name, context.timeoutMs);
      case "aborted":
        return abortedExecution(tool.name);
      case "start-failed":
        return failed(
          `Cannot run ${tool.name}: its sandboxed worker could not start: ${outcome.message}: ` +
            'run "mewcode doctor" to check the sandbox',
        );
      case "closed":
        return {
          result: errorResult(`${tool.name} was stopped before it finished: the session is shutting down`),
          status: "aborted",
        };
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
