/**
 * Builds a ToolPipeline over test tools with recording gates, to observe which gates ran.
 *
 * @module
 */
import {
  DirectExecutor,
  type Execution,
  type ExecutionRequest,
  type ToolExecutor,
} from "../../src/execution/executor.ts";
import { FileRecordStore } from "../../src/execution/file_records.ts";
import { type ShellProvider, ToolPipeline } from "../../src/execution/pipeline.ts";
import type {
  Approval,
  Approver,
  PermissionDecision,
  PermissionPolicy,
} from "../../src/permissions/decision.ts";
import type { PreToolUseHook, PreToolUseOutcome } from "../../src/permissions/hooks.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import type { AnyTool, ShellPlan } from "../../src/tools/tool.ts";

/** A shell plan that cannot run anything: for tests that never use Bash. */
export const NO_SHELL: ShellPlan = {
  mode: "read-only",
  network: false,
  wrapper: [],
  shell: "/bin/sh",
  env: {},
  prologue: [],
  seccomp: null,
  unavailable: "no shell in this test",
};

/** A ShellProvider that always gives the same plan, with nothing to check after a call. */
export function fixedShell(plan: ShellPlan): ShellProvider {
  return { plan, prepareCall: () => Promise.resolve({ plan, finish: () => Promise.resolve([]) }) };
}

/** A policy that allows everything; the sandbox still applies. */
export const ALLOW_ALL: PermissionPolicy = { decide: () => Promise.resolve({ behavior: "allow" }) };

/** What each gate saw, in order. */
export type GateLog = string[];

/** Options for a recording pipeline. */
export interface RecordingPipelineOptions {
  tools: AnyTool[];
  hook?: PreToolUseOutcome;
  decision?: PermissionDecision;
  approval?: boolean;
  /** The approver's whole answer, instead of `approval` with the feedback "use Echo instead". */
  answer?: Approval;
  withApprover?: boolean;
}

/** A pipeline whose hook, policy, approver and executor log what reached them. */
export function recordingPipeline(
  options: RecordingPipelineOptions,
): { pipeline: ToolPipeline; log: GateLog } {
  const log: GateLog = [];
  const registry = new ToolRegistry();
  for (const tool of options.tools) registry.register(tool);
  const hook: PreToolUseHook = {
    name: "recording",
    run: (event) => {
      log.push(`hook:${event.toolName}`);
      return Promise.resolve(options.hook ?? { action: "continue" });
    },
  };
  const policy: PermissionPolicy = {
    decide: (request) => {
      log.push(`permission:${request.tool.name}`);
      return Promise.resolve(options.decision ?? { behavior: "allow" });
    },
  };
  const approver: Approver = {
    approve: (request) => {
      log.push(`approve:${request.tool.name}`);
      return Promise.resolve(
        options.answer ?? { approved: options.approval ?? true, feedback: "use Echo instead" },
      );
    },
  };
  const direct = new DirectExecutor();
  const executor: ToolExecutor = {
    execute: (request: ExecutionRequest, executeOptions): Promise<Execution> => {
      log.push(`execute:${request.tool.name}`);
      return direct.execute(request, executeOptions);
    },
    close: () => direct.close(),
  };
  const pipeline = new ToolPipeline({
    registry,
    executor,
    policy,
    hooks: [hook],
    files: new FileRecordStore(),
    root: "/ws",
    strictLinks: false,
    shell: fixedShell(NO_SHELL),
    ...(options.withApprover === false ? {} : { approver }),
  });
  return { pipeline, log };
}
