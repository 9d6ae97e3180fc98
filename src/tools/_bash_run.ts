/**
 * What a Bash call does, without its input schema: the tool worker loads this (and no zod), the definition
 * in `bash.ts` offers it to the model.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { Output } from "./_shell_output.ts";
import { BASH_DEFAULT_TIMEOUT_MS } from "./_shared.ts";
import { runShell, type ShellRun } from "./_shell_run.ts";
import { errorResult, stoppedResult, textResult } from "./results.ts";
import type { ToolContext, ToolResult, ToolRunner } from "./tool.ts";
import type { BashInput } from "./bash.ts";

/** Bash's call: runs a shell command in the workspace under the session's sandbox. */
export const bashRunner: ToolRunner<BashInput> = {
  name: "Bash",
  async execute(context: ToolContext, input: BashInput): Promise<ToolResult> {
    if (context.shell.unavailable !== null) {
      return errorResult(context.shell.unavailable, { process: "unavailable" });
    }
    if (context.signal.aborted) {
      return stoppedResult(cancelledMessage(""), "cancelled", { process: "not-started" });
    }
    const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;
    const options = { timeoutMs, signal: context.signal };
    const plan = context.shell;
    const kept = plan.persistent !== undefined && context.shellRunner !== undefined;
    const run = kept
      ? await context.shellRunner!.run({ ...plan, persistent: plan.persistent! }, input.command, options)
      : await runShell(plan, context.root, input.command, options);
    const result = shellResult(run, timeoutMs);
    // The session keeps the kept sandbox's placeholder folders while it lives (src/sandbox/shell_sandbox.ts).
    return { ...result, metadata: { ...result.metadata, keptSandbox: kept } };
  },
};

function shellResult(run: ShellRun, timeoutMs: number): ToolResult {
  switch (run.status) {
    case "spawn-failed":
      return errorResult(`Cannot run Bash command: ${run.message}`, { process: "spawn-failed" });
    case "exited":
      return textResult(`${wrapOutput(run.output)}\n<exit_code>${run.code}</exit_code>`, {
        process: "exited",
        exitCode: run.code,
        durationMs: run.durationMs,
        charactersCut: run.output.cut,
      });
    case "timed-out":
      return stoppedResult(
        `Bash command timed out after ${timeoutMs} ms and was killed with every process it started; ` +
          `output so far:\n${wrapOutput(run.output)}`,
        "timed-out",
        { process: "timed-out", durationMs: run.durationMs, charactersCut: run.output.cut },
      );
    case "cancelled":
      return stoppedResult(cancelledMessage(wrapOutput(run.output)), "cancelled", {
        process: "cancelled",
        durationMs: run.durationMs,
        charactersCut: run.output.cut,
      });
    default:
      return assertNever(run);
  }
}

function cancelledMessage(output: string): string {
  // Why (the user, a broken response, closed output) is added by the pipeline, which knows (withCancelReason).
  const base = "Bash command was cancelled before it finished";
  return output === "" ? base : `${base}; output so far:\n${output}`;
}

function wrapOutput(output: Output): string {
  return `<output>${output.text.replace(/\n$/, "")}</output>`;
}
