/**
 * Reads how a command hook ended, with Claude Code's contract:
 *
 *   exit 0        proceed; standard output may be JSON: `continue`, `stopReason`, `systemMessage`,
 *                 `decision: "block"` with `reason`, and `hookSpecificOutput` (`permissionDecision`
 *                 "allow" | "deny" | "ask" with `permissionDecisionReason`, `updatedInput`,
 *                 `additionalContext`); plain text output is context for UserPromptSubmit and SessionStart
 *   exit 2        block: standard error is the reason (for SessionStart only shown to the user)
 *   other codes   a non-blocking error shown to the user; so are a timeout and a hook that cannot start
 *
 * @module
 */
import { z } from "zod";
import { checkJsonBounds } from "../common/json_bounds.ts";
import { isRecord } from "../common/values.ts";
import type { HookEvent, HookOrigin } from "./hook_config.ts";
import type { HookResult } from "./hook_events.ts";
import type { ProcessResult } from "./host_command.ts";

/** The hook whose result is read. */
export interface HookIdentity {
  /** Its command, shortened (hookName). */
  name: string;
  origin: HookOrigin;
  timeoutMs: number;
}

const HookJsonOutput = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  systemMessage: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  decision: z.enum(["block", "approve"]).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z.looseObject({
    hookEventName: z.string().optional(),
    permissionDecision: z.enum(["allow", "deny", "ask"]).optional(),
    permissionDecisionReason: z.string().optional(),
    updatedInput: z.record(z.string(), z.unknown()).optional(),
    additionalContext: z.string().optional(),
  }).optional(),
});

const MAX_SHOWN_STDERR = 2_000;

/** What one hook's process result means for `event`. */
export function interpretHookResult(
  event: HookEvent,
  hook: HookIdentity,
  result: ProcessResult,
): HookResult {
  const base: HookResult = {
    hook: hook.name,
    origin: hook.origin,
    status: "success",
    exitCode: null,
    durationMs: null,
    blockReason: null,
    decision: null,
    updatedInput: null,
    context: [],
    notices: [],
    stopReason: null,
  };
  const what = `The ${event} hook ${hook.name}`;
  if (result.status === "failed") {
    return { ...base, status: "failed", notices: [`${what} could not run: ${result.message}`] };
  }
  base.durationMs = result.durationMs;
  if (result.status === "timed-out") {
    return {
      ...base,
      status: "timed-out",
      notices: [`${what} was stopped after ${hook.timeoutMs / 1000} s (its timeout); the call went on`],
    };
  }
  base.exitCode = result.code;
  const stderr = shorten(result.stderr.trim());
  if (result.code === 2) {
    if (event === "SessionStart") {
      return { ...base, status: "error", notices: [`${what} exited with code 2: ${stderr || "no message"}`] };
    }
    return {
      ...base,
      status: "blocked",
      blockReason: stderr || `the hook exited with code 2 without a message`,
    };
  }
  if (result.code !== 0) {
    const detail = stderr === "" ? "" : `: ${stderr}`;
    return { ...base, status: "error", notices: [`${what} failed with exit code ${result.code}${detail}`] };
  }
  const stdout = result.stdout.trim();
  if (!stdout.startsWith("{")) {
    if (stdout !== "" && (event === "UserPromptSubmit" || event === "SessionStart")) {
      base.context.push(stdout);
    }
    return base;
  }
  const parsed = parseJsonOutput(stdout);
  if (!parsed.ok) {
    base.notices.push(
      `${what} printed output that is not valid hook JSON, which was ignored: ${parsed.error}`,
    );
    return base;
  }
  return applyJsonOutput(event, base, parsed.value);
}

function applyJsonOutput(
  event: HookEvent,
  result: HookResult,
  output: z.infer<typeof HookJsonOutput>,
): HookResult {
  if (output.systemMessage !== undefined) result.notices.push(output.systemMessage);
  const specific = output.hookSpecificOutput;
  if (specific?.additionalContext !== undefined) result.context.push(specific.additionalContext);
  const block = (reason: string): void => {
    result.status = "blocked";
    result.blockReason ??= reason;
  };
  if (output.continue === false) {
    result.stopReason = output.stopReason ?? "a hook asked to stop";
    // Nothing more may run: for a tool call that means it does not run.
    if (event === "PreToolUse") block(result.stopReason);
  }
  if (event === "PreToolUse") {
    const decision = specific?.permissionDecision ??
      (output.decision === "approve" ? "allow" : output.decision === "block" ? "deny" : undefined);
    const reason = specific?.permissionDecisionReason ?? output.reason ?? "";
    if (decision === "deny") block(reason || "the hook denied the call");
    else if (decision !== undefined) result.decision = { behavior: decision, reason };
    if (specific?.updatedInput !== undefined && result.status !== "blocked") {
      result.updatedInput = specific.updatedInput;
    }
    return result;
  }
  if (output.decision === "block" && event !== "SessionStart") block(output.reason ?? "blocked by the hook");
  return result;
}

function parseJsonOutput(
  text: string,
): { ok: true; value: z.infer<typeof HookJsonOutput> } | { ok: false; error: string } {
  const refused = checkJsonBounds(text);
  if (refused !== null) return { ok: false, error: refused };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  if (!isRecord(value)) return { ok: false, error: "it is not a JSON object" };
  const parsed = HookJsonOutput.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue?.path.join(".") || "output"}: ${issue?.message ?? "unexpected"}` };
  }
  return { ok: true, value: parsed.data };
}

function shorten(text: string): string {
  return text.length > MAX_SHOWN_STDERR ? `${text.slice(0, MAX_SHOWN_STDERR)}…` : text;
}
