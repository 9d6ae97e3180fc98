/**
 * The call pipeline: every tool call passes these gates in order, and any gate may end it with an
 * error result that tells the model what to change, and a typed outcome that says where and why.
 *
 *   lookup → schema → tool.validateInput → PreToolUse hooks → permission → executor
 *
 * @module
 */
import type { Approver, PermissionDecision, PermissionPolicy } from "../permissions/decision.ts";
import type { HookPermissionDecision, PreToolUseHook } from "../permissions/hooks.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { assertNever } from "../common/errors.ts";
import { type AnyTool, errorResult, type ProtectedPath, type ShellPlan } from "../tools/tool.ts";
import { parseInput } from "./_input_check.ts";
import { type CallOutcome, type CallResult, type Denial, ended, type PipelineGate } from "./call_outcome.ts";
import {
  abortedExecution,
  type Execution,
  type ExecutionRequest,
  type ToolExecutor,
  withCancelReason,
} from "./executor.ts";
import type { FileRecordStore } from "./file_records.ts";
import type { Rule } from "../permissions/rules.ts";
import type { DeniedReads } from "../tools/tool.ts";
import { realFolder } from "../permissions/real_paths.ts";
import { lazyImport } from "../common/lazy_import.ts";

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
  /**
   * The plan of one call; `finish` runs after it (told whether the call ran in the sandbox kept across
   * calls) and returns notes for the model (and the user).
   */
  prepareCall(): Promise<{ plan: ShellPlan; finish(ran?: { keptSandbox: boolean }): Promise<string[]> }>;
  /**
   * Runs before each call of a tool that writes files (WriteFile, EditFile): the first takes the snapshot of
   * the git metadata that the end of the session compares with, as the first shell call does.
   */
  beforeWrite?(): Promise<void>;
}

/**
 * Runs some calls by other means than the executor, with the same result (Grep through ripgrep in the
 * read-only shell sandbox: `src/tools/grep_ripgrep.ts`).
 */
export interface CallAccelerator {
  /** The call's execution, or null when the executor should run it. */
  run(request: ExecutionRequest, options: { signal: AbortSignal }): Promise<Execution | null>;
  /** Told after each call of a tool that may change files. */
  changed(): void;
  /** Finishes what it still does in the background (keeping a walk); the runtime awaits it when closing. */
  close?(): Promise<void>;
  /**
   * Loads what its first call needs, for a call that is about to come (its input streams); resolves when
   * done, never rejects (a failure is the call's to report).
   */
  prepare?(): Promise<void>;
}

/** The parts the pipeline is assembled from. */
export interface PipelineOptions {
  registry: ToolRegistry;
  executor: ToolExecutor;
  /** Runs some calls faster than the executor would; default none. */
  accelerator?: CallAccelerator;
  /**
   * Decides each call. A policy that shows its rules (a RulePolicy, a session's live one) also has its deny
   * rules with a path applied by the search tools to each file they would list or search
   * (`ToolCallContext.deniedReads`): the policy decides only on the path a search starts from.
   */
  policy: SearchedPolicy;
  /** The user's home folder, where "~/" of the deny rules the searches apply starts; default "/". */
  home?: string;
  /** Answers "ask" decisions; without one, "ask" is a denial. */
  approver?: Approver;
  hooks?: readonly PreToolUseHook[];
  /**
   * Runs after a call ran (PostToolUse): the feedback it returns (a hook that exited 2) is added to the
   * result the model receives.
   */
  afterCall?: (call: ToolCall, input: unknown, result: CallResult) => Promise<string | null>;
  files: FileRecordStore;
  /** Real path of the workspace root. */
  root: string;
  strictLinks: boolean;
  shell: ShellProvider;
  /** Whether writers require a prior read of an existing file (default true; see ToolCallContext). */
  requireRead?: boolean;
  /** Other names of the root (see ToolCallContext). */
  rootAliases?: readonly string[];
  /** Real paths of the folders added to the workspace (`--add-dir`; see ToolCallContext). */
  additionalRoots?: readonly string[];
  /** Real paths the tools treat as outside the workspace (see ToolCallContext). */
  excludedPaths?: readonly string[];
  /** What writers refuse to change; default PROTECTED_PATHS (see ToolCallContext). */
  protectedPaths?: readonly ProtectedPath[];
}

/** A permission policy, with its rules when it shows them (see `PipelineOptions.policy`). */
export type SearchedPolicy = PermissionPolicy & { readonly rules?: readonly Rule[] };

/** A call resolved and validated, or its result and outcome if a gate ended it. */
export type PreparedCall =
  | { ok: true; tool: AnyTool; input: unknown }
  | { ok: false; tool?: AnyTool; ended: CallResult };

/** Runs tool calls through the gates. Never throws for bad input; only system faults propagate. */
export class ToolPipeline {
  #options: PipelineOptions;
  /** The deny rules each search tool applies, for the rules they were derived from (replaced on a change). */
  #denials: { rules: readonly Rule[]; byTool: Map<string, DeniedReads | null> } | null = null;
  #home: Promise<string> | null = null;

  constructor(options: PipelineOptions) {
    this.#options = options;
  }

  /** The registry whose enabled tools this pipeline runs. */
  get registry(): ToolRegistry {
    return this.#options.registry;
  }

  /** A pipeline is its own ToolSource: loaded already. */
  load(): Promise<ToolPipeline> {
    return Promise.resolve(this);
  }

  /** A pipeline is its own ToolSource: nothing to get ready. */
  expect(_name?: string): void {}

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
    const permitted = await this.#decide(call, tool, input, hooked.decision);
    if (!permitted.ok) return permitted.ended;
    if (options.signal.aborted) {
      return executed(withCancelReason(abortedExecution(tool.name), options.signal.reason));
    }
    const result = await this.#execute(tool, input, permitted.protectedPaths, options);
    const feedback = await this.#options.afterCall?.(call, input, result) ?? null;
    if (feedback === null) return result;
    return { ...result, result: { ...result.result, content: `${result.result.content}\n\n${feedback}` } };
  }

  async #runHooks(
    call: ToolCall,
    tool: AnyTool,
    input: unknown,
    options: { signal: AbortSignal },
  ): Promise<
    { ok: true; input: unknown; decision: HookDecision | null } | { ok: false; ended: CallResult }
  > {
    let decision: HookDecision | null = null;
    for (const hook of this.#options.hooks ?? []) {
      if (options.signal.aborted) {
        return {
          ok: false,
          ended: executed(withCancelReason(abortedExecution(tool.name), options.signal.reason)),
        };
      }
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
      // The strictest answer of the hooks counts: "ask" over "allow" (a "deny" blocks above).
      if (outcome.decision !== undefined && (decision === null || outcome.decision.behavior === "ask")) {
        decision = { ...outcome.decision, hook: hook.name };
      }
    }
    return { ok: true, input, decision };
  }

  /**
   * The permission gate: whether the call may run, with the protected paths the decision (or the user's
   * approval of it) lets it write, else how it ended.
   */
  async #decide(
    call: ToolCall,
    tool: AnyTool,
    input: unknown,
    hook: HookDecision | null,
  ): Promise<{ ok: true; protectedPaths: readonly string[] } | { ok: false; ended: CallResult }> {
    const { policy, approver } = this.#options;
    const request = { tool, input, callId: call.id };
    const decision = withHookDecision(await policy.decide(request), hook);
    switch (decision.behavior) {
      case "allow":
        return { ok: true, protectedPaths: decision.grants?.protectedPaths ?? [] };
      case "deny":
        return {
          ok: false,
          ended: denied(
            "permission",
            `Permission to use ${tool.name} was denied: ${decision.reason}`,
            decision.decidedBy,
            decision.hint,
          ),
        };
      case "ask": {
        if (approver === undefined) {
          return {
            ok: false,
            ended: denied(
              "permission",
              `Permission to use ${tool.name} was denied: ${decision.reason}, and no one is present to approve it`,
              decision.decidedBy,
              decision.hint,
              true,
            ),
          };
        }
        const approval = await approver.approve(request, decision.reason, { rules: decision.rules ?? [] });
        if (approval.approved) return { ok: true, protectedPaths: decision.grants?.protectedPaths ?? [] };
        if (approval.failure !== undefined) {
          // No one said no: an approval that could not be had is a denial no one could answer (exit 55).
          // No hint: the rule that would allow such calls is not what needs fixing.
          return {
            ok: false,
            ended: denied(
              "permission",
              `Cannot get approval to use ${tool.name}: ${approval.failure.message}; the call is denied ` +
                "because the approval failed, not by the user's choice",
              approval.failure.decidedBy,
              undefined,
              true,
            ),
          };
        }
        const feedback = approval.feedback ? `: ${approval.feedback}` : "";
        return {
          ok: false,
          ended: denied("permission", `The user denied permission to use ${tool.name}${feedback}`, {
            kind: "user",
          }),
        };
      }
      default:
        return assertNever(decision);
    }
  }

  /**
   * The deny and ask rules a search tool (category "search": Glob, Grep) applies file by file, from the policy's
   * rules as they are now: rules added or removed during the session count from the next call. Null for
   * other tools and without such rules. The rules' module loads here, not with the pipeline: it is loaded
   * by the time a call runs, since the policy decided it.
   */
  async #deniedReads(tool: AnyTool): Promise<DeniedReads | null> {
    const rules = this.#options.policy.rules;
    if (tool.category !== "search" || rules === undefined) return null;
    if (!rules.some((rule) => rule.action !== "allow" && rule.specifier !== undefined)) return null;
    if (this.#denials?.rules !== rules) this.#denials = { rules, byTool: new Map() };
    const { byTool } = this.#denials;
    if (!byTool.has(tool.name)) {
      const { searchDenials } = await lazyImport<typeof import("../permissions/evaluate_file.ts")>(
        new URL("../permissions/evaluate_file.ts", import.meta.url),
      );
      const denials = searchDenials(rules, tool.name);
      // "~/" patterns start from the home's real path, as the policy resolves it.
      const home = await (this.#home ??= realFolder(this.#options.home ?? "/"));
      byTool.set(tool.name, denials.length === 0 ? null : { home, rules: denials });
    }
    return byTool.get(tool.name) ?? null;
  }

  async #execute(
    tool: AnyTool,
    input: unknown,
    allowedProtectedPaths: readonly string[],
    options: { signal: AbortSignal },
  ): Promise<CallResult> {
    const { executor, files } = this.#options;
    // The shell's plan is decided right before its call: protected paths may have appeared since.
    const shellCall = tool.isDestructive() ? await this.#options.shell.prepareCall() : null;
    const deniedReads = await this.#deniedReads(tool);
    if (!tool.isReadOnly() && shellCall === null) await this.#options.shell.beforeWrite?.();
    let execution: Execution;
    let notes: string[] = [];
    let keptSandbox = false;
    try {
      const request: ExecutionRequest = {
        tool,
        input,
        context: {
          root: this.#options.root,
          timeoutMs: tool.timeoutMs(input),
          fileRecords: files.snapshot(),
          strictLinks: this.#options.strictLinks,
          shell: shellCall?.plan ?? withoutCommandLine(this.#options.shell.plan),
          requireRead: this.#options.requireRead ?? true,
          rootAliases: this.#options.rootAliases ?? [],
          additionalRoots: this.#options.additionalRoots ?? [],
          excludedPaths: this.#options.excludedPaths ?? [],
          ...(deniedReads === null ? {} : { deniedReads }),
          // Only the file tools that write read these (about 22 KB of each call's message, ~0.1-0.3 ms to
          // copy to the worker): others get the default. The shell never reads them: its sandbox's mounts
          // protect the same paths (`prepareCall`).
          ...(tool.isReadOnly() || tool.category === "shell" ? {} : {
            protectedPaths: this.#options.protectedPaths ?? PROTECTED_PATHS,
            allowedProtectedPaths,
          }),
        },
      };
      execution = withCancelReason(
        await this.#options.accelerator?.run(request, options) ?? await executor.execute(request, options),
        options.signal.reason,
      );
      keptSandbox = execution.result.metadata.keptSandbox === true;
    } finally {
      if (shellCall !== null) notes = await shellCall.finish({ keptSandbox });
      if (!tool.isReadOnly()) this.#options.accelerator?.changed();
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

// Re-exported: the gates' results are built where the light modules (the loop, the scheduler) find them.
export { ended };

/**
 * The shell's plan for the calls of tools other than Bash, which never read it: without the command lines
 * (bubblewrap's arguments, twice with the kept sandbox's), the shell's environment and the seccomp program.
 * A worker gets what its tool uses; these made up about 10 KB of each call's message (no speed-up measured:
 * the agent-time benchmark's A/B runs differed by less than their order did).
 */
function withoutCommandLine(plan: ShellPlan): ShellPlan {
  const { persistent: _kept, ...rest } = plan;
  return { ...rest, wrapper: [], env: {}, prologue: [], seccomp: null };
}

/** A PreToolUse hook's say on the permission question, and which hook said it. */
type HookDecision = HookPermissionDecision & { hook: string };

/**
 * The permission decision once a hook has had its say: a deny (a rule, the mode) stands whatever the hook
 * says; a hook's "ask" makes the call ask; a hook's "allow" allows what the policy would otherwise ask about.
 */
function withHookDecision(decision: PermissionDecision, hook: HookDecision | null): PermissionDecision {
  if (hook === null || decision.behavior === "deny" || hook.behavior === "deny") return decision;
  const decidedBy = { kind: "hook", hook: hook.hook } as const;
  if (hook.behavior === "ask") {
    if (decision.behavior === "ask") return decision;
    return { behavior: "ask", reason: `the ${hook.hook} hook asks: ${hook.reason}`, decidedBy };
  }
  if (decision.behavior === "allow") return decision;
  return { behavior: "allow", reason: `the ${hook.hook} hook allowed it: ${hook.reason}`, decidedBy };
}

function denied(
  gate: PipelineGate,
  reason: string,
  decidedBy: Denial["decidedBy"],
  hint?: string,
  unanswered = false,
): CallResult {
  const denial: Denial = { reason, decidedBy, hint: hint ?? null, ...(unanswered ? { unanswered } : {}) };
  const outcome: CallOutcome = { status: "denied", gate, denial };
  return { result: errorResult(reason), outcome };
}

function executed(execution: Execution): CallResult {
  return { result: execution.result, outcome: { status: execution.status, gate: "execute" } };
}
