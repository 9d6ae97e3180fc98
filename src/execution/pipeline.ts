/**
 * The call pipeline: every tool call passes these gates in order, and any gate may end it with an
 * error result that tells the model what to change, and a typed outcome that says where and why.
 *
 *   lookup → schema → tool.validateInput → PreToolUse hooks → permission → executor
 *
 * @module
 */
import type { Approver, PermissionPolicy } from "../permissions/decision.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { assertNever } from "../common/errors.ts";
import { type AnyTool, errorResult, type ProtectedPath, type ShellPlan } from "../tools/tool.ts";
import { parseInput } from "./_input_check.ts";
import type { CallOutcome, CallResult, CallStatus, Denial, PipelineGate } from "./call_outcome.ts";
import { abortedExecution, type Execution, type ToolExecutor } from "./executor.ts";
import type { FileRecordStore } from "./file_records.ts";

/** A call as the model made it: the input is untrusted JSON. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** Where the shell tool's plan comes from: decided again before each call of a destructive tool. */
export interface ShellProvider {
  /** The plan as of the start of the session, for the other tools' context and the worker profiles. */
  readonly plan: ShellPlan;
  /** The plan of one call; `finish` runs after it and returns notes for the model (and the user). */
  prepareCall(): Promise<{ plan: ShellPlan; finish(): Promise<string[]> }>;
}

/** The parts the pipeline is assembled from. */
export interface PipelineOptions {
  registry: ToolRegistry;
  executor: ToolExecutor;
  policy: PermissionPolicy;
  /** Answers "ask" decisions; without one, "ask" is a denial. */
  approver?: Approver;
  hooks?: readonly PreToolUseHook[];
  files: FileRecordStore;
  /** Real path of the workspace root. */
  root: string;
  strictLinks: boolean;
  shell: ShellProvider;
  /** Whether writers require a prior read of an existing file (default true; see ToolCallContext). */
  requireRead?: boolean;
  /** Other names of the root (see ToolCallContext). */
  rootAliases?: readonly string[];
  /** Real paths the tools treat as outside the workspace (see ToolCallContext). */
  excludedPaths?: readonly string[];
  /** What writers refuse to change; default PROTECTED_PATHS (see ToolCallContext). */
  protectedPaths?: readonly ProtectedPath[];
}

/** A call resolved and validated, or its result and outcome if a gate ended it. */
export type PreparedCall =
  | { ok: true; tool: AnyTool; input: unknown }
  | { ok: false; tool?: AnyTool; ended: CallResult };

/** Runs tool calls through the gates. Never throws for bad input; only system faults propagate. */
export class ToolPipeline {
  #options: PipelineOptions;

  constructor(options: PipelineOptions) {
    this.#options = options;
  }

  /** The registry whose enabled tools this pipeline runs. */
  get registry(): ToolRegistry {
    return this.#options.registry;
  }

  /** Resolves a call's tool and validates its input without running it: for the scheduler. */
  prepare(call: ToolCall): PreparedCall {
    const { registry, root } = this.#options;
    const tool = registry.get(call.name);
    if (tool === undefined) {
      const available = registry.enabledNames();
      return {
        ok: false,
        ended: ended(
          "invalid",
          "lookup",
          `Unknown tool "${call.name}". Available tools: ${
            available.length ? available.join(", ") : "(none)"
          }`,
        ),
      };
    }
    const parsed = parseInput(tool, call.input);
    if (!parsed.ok) return { ok: false, tool, ended: ended("invalid", "schema", parsed.message) };
    const invalid = tool.validateInput(parsed.input, { root });
    if (invalid !== null) return { ok: false, tool, ended: ended("invalid", "validate", invalid) };
    return { ok: true, tool, input: parsed.input };
  }

  /** Runs one call through every gate. */
  async run(call: ToolCall, options: { signal: AbortSignal }): Promise<CallResult> {
    const prepared = this.prepare(call);
    if (!prepared.ok) return prepared.ended;
    return await this.runPrepared(call, prepared, options);
  }

  /** Runs the gates after validation (hooks, permission, execution) for a prepared call. */
  async runPrepared(
    call: ToolCall,
    prepared: PreparedCall & { ok: true },
    options: { signal: AbortSignal },
  ): Promise<CallResult> {
    const { tool } = prepared;
    const hooked = await this.#runHooks(call, tool, prepared.input, options);
    if (!hooked.ok) return hooked.ended;
    const input = hooked.input;
    const permitted = await this.#decide(call, tool, input);
    if (permitted !== null) return permitted;
    if (options.signal.aborted) return executed(abortedExecution(tool.name));
    return await this.#execute(tool, input, options);
  }

  async #runHooks(
    call: ToolCall,
    tool: AnyTool,
    input: unknown,
    options: { signal: AbortSignal },
  ): Promise<{ ok: true; input: unknown } | { ok: false; ended: CallResult }> {
    for (const hook of this.#options.hooks ?? []) {
      if (options.signal.aborted) return { ok: false, ended: executed(abortedExecution(tool.name)) };
      const outcome = await hook.run({ toolName: tool.name, callId: call.id, input }, options);
      if (outcome.action === "block") {
        const reason = `The ${hook.name} hook blocked ${tool.name}: ${outcome.reason}`;
        return { ok: false, ended: denied("hook", reason, { kind: "hook", hook: hook.name }) };
      }
      if (outcome.input !== undefined) {
        const reparsed = parseInput(tool, outcome.input);
        if (!reparsed.ok) {
          return {
            ok: false,
            ended: ended(
              "invalid",
              "hook",
              `The ${hook.name} hook changed the input into an invalid one: ${reparsed.message}`,
            ),
          };
        }
        input = reparsed.input;
      }
    }
    return { ok: true, input };
  }

  /** The permission gate: null when the call may run, else how it ended. */
  async #decide(call: ToolCall, tool: AnyTool, input: unknown): Promise<CallResult | null> {
    const { policy, approver } = this.#options;
    const request = { tool, input, callId: call.id };
    const decision = policy.decide(request);
    switch (decision.behavior) {
      case "allow":
        return null;
      case "deny":
        return denied(
          "permission",
          `Permission to use ${tool.name} was denied: ${decision.reason}`,
          decision.decidedBy,
        );
      case "ask": {
        if (approver === undefined) {
          return denied(
            "permission",
            `Permission to use ${tool.name} was denied: ${decision.reason}, and no one is present to approve it`,
            decision.decidedBy,
          );
        }
        const approval = await approver.approve(request, decision.reason);
        if (approval.approved) return null;
        const feedback = approval.feedback ? `: ${approval.feedback}` : "";
        return denied("permission", `The user denied permission to use ${tool.name}${feedback}`, {
          kind: "user",
        });
      }
      default:
        return assertNever(decision);
    }
  }

  async #execute(tool: AnyTool, input: unknown, options: { signal: AbortSignal }): Promise<CallResult> {
    const { executor, files } = this.#options;
    // The shell's plan is decided right before its call: protected paths may have appeared since.
    const shellCall = tool.isDestructive() ? await this.#options.shell.prepareCall() : null;
    let execution: Execution;
    let notes: string[] = [];
    try {
      execution = await executor.execute({
        tool,
        input,
        context: {
          root: this.#options.root,
          timeoutMs: tool.timeoutMs(input),
          fileRecords: files.snapshot(),
          strictLinks: this.#options.strictLinks,
          shell: shellCall?.plan ?? this.#options.shell.plan,
          requireRead: this.#options.requireRead ?? true,
          rootAliases: this.#options.rootAliases ?? [],
          excludedPaths: this.#options.excludedPaths ?? [],
          protectedPaths: this.#options.protectedPaths ?? PROTECTED_PATHS,
        },
      }, options);
    } finally {
      if (shellCall !== null) notes = await shellCall.finish();
    }
    files.recordFrom(execution.result);
    if (notes.length === 0) return executed(execution);
    const { result } = execution;
    return executed({
      status: execution.status,
      result: {
        ...result,
        content: `${result.content}\n\n${notes.map((note) => `Note from the sandbox: ${note}`).join("\n")}`,
        metadata: { ...result.metadata, sandboxNotes: notes },
      },
    });
  }
}

/** A call that a gate ended, with its message for the model. */
export function ended(status: CallStatus, gate: PipelineGate, message: string): CallResult {
  return { result: errorResult(message), outcome: { status, gate } };
}

function denied(gate: PipelineGate, reason: string, decidedBy: Denial["decidedBy"]): CallResult {
  const outcome: CallOutcome = { status: "denied", gate, denial: { reason, decidedBy, hint: null } };
  return { result: errorResult(reason), outcome };
}

function executed(execution: Execution): CallResult {
  return { result: execution.result, outcome: { status: execution.status, gate: "execute" } };
}
