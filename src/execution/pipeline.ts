/**
 * The call pipeline: every tool call passes these gates in order, and any gate may end it with an
 * error result that tells the model what to change.
 *
 *   lookup → schema → tool.validateInput → PreToolUse hooks → permission → executor
 *
 * @module
 */
import type { z } from "zod";
import type { Approver, PermissionPolicy } from "../permissions/decision.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import {
  type AnyTool,
  errorResult,
  type ProtectedPath,
  type ShellPlan,
  type ToolResult,
} from "../tools/tool.ts";
import { abortedResult, type ToolExecutor } from "./executor.ts";
import type { FileRecordStore } from "./file_records.ts";

/** A call as the model made it: the input is untrusted JSON. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** The gate that ended a call, recorded in `metadata.gate`. */
export type PipelineGate = "lookup" | "schema" | "validate" | "hook" | "permission" | "execute";

/** Where the shell tool's plan comes from: decided again before each call of a destructive tool. */
export interface ShellProvider {
  /** The plan as of the start of the session, for the other tools' context and the worker profiles. */
  readonly plan: ShellPlan;
  /** The plan of one call; `finish` runs after it and returns notes for the model (and the user). */
  prepareCall(): Promise<{ plan: ShellPlan; finish(): Promise<string[]> }>;
}

/** A ShellProvider that always gives the same plan, with nothing to check after a call. */
export function fixedShell(plan: ShellPlan): ShellProvider {
  return { plan, prepareCall: () => Promise.resolve({ plan, finish: () => Promise.resolve([]) }) };
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
        result: stopped(
          "lookup",
          `Unknown tool "${call.name}". Available tools: ${
            available.length ? available.join(", ") : "(none)"
          }`,
        ),
      };
    }
    const parsed = parseInput(tool, call.input);
    if (!parsed.ok) return { ok: false, tool, result: stopped("schema", parsed.message) };
    const invalid = tool.validateInput(parsed.input, { root });
    if (invalid !== null) return { ok: false, tool, result: stopped("validate", invalid) };
    return { ok: true, tool, input: parsed.input };
  }

  /** Runs one call through every gate and returns its result. */
  async run(call: ToolCall, options: { signal: AbortSignal }): Promise<ToolResult> {
    const prepared = this.prepare(call);
    if (!prepared.ok) return prepared.result;
    return await this.runPrepared(call, prepared, options);
  }

  /** Runs the gates after validation (hooks, permission, execution) for a prepared call. */
  async runPrepared(
    call: ToolCall,
    prepared: PreparedCall & { ok: true },
    options: { signal: AbortSignal },
  ): Promise<ToolResult> {
    const { executor, policy, approver, hooks = [], files } = this.#options;
    const { tool } = prepared;
    let input = prepared.input;
    for (const hook of hooks) {
      if (options.signal.aborted) return abortedResult(tool.name);
      const outcome = await hook.run({ toolName: tool.name, callId: call.id, input }, options);
      if (outcome.action === "block") {
        return stopped("hook", `The ${hook.name} hook blocked ${tool.name}: ${outcome.reason}`);
      }
      if (outcome.input !== undefined) {
        const reparsed = parseInput(tool, outcome.input);
        if (!reparsed.ok) {
          return stopped(
            "hook",
            `The ${hook.name} hook changed the input into an invalid one: ${reparsed.message}`,
          );
        }
        input = reparsed.input;
      }
    }
    const request = { tool, input, callId: call.id };
    const decision = policy.decide(request);
    if (decision.behavior === "deny") {
      return stopped("permission", `Permission to use ${tool.name} was denied: ${decision.reason}`, {
        status: "denied",
      });
    }
    if (decision.behavior === "ask") {
      if (approver === undefined) {
        return stopped(
          "permission",
          `Permission to use ${tool.name} was denied: ${decision.reason}, and no one is present to approve it`,
          { status: "denied" },
        );
      }
      const approval = await approver.approve(request, decision.reason);
      if (!approval.approved) {
        const feedback = approval.feedback ? `: ${approval.feedback}` : "";
        return stopped("permission", `The user denied permission to use ${tool.name}${feedback}`, {
          status: "denied",
        });
      }
    }
    if (options.signal.aborted) return abortedResult(tool.name);
    // The shell's plan is decided right before its call: protected paths may have appeared since.
    const shellCall = tool.isDestructive() ? await this.#options.shell.prepareCall() : null;
    let result: ToolResult;
    let notes: string[] = [];
    try {
      result = await executor.execute({
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
    files.recordFrom(result);
    const metadata = { ...result.metadata, gate: "execute" satisfies PipelineGate };
    if (notes.length === 0) return { ...result, metadata };
    return {
      ...result,
      content: `${result.content}\n\n${notes.map((note) => `Note from the sandbox: ${note}`).join("\n")}`,
      metadata: { ...metadata, sandboxNotes: notes },
    };
  }
}

/** A call resolved and validated, or the error result that ended it. */
export type PreparedCall =
  | { ok: true; tool: AnyTool; input: unknown }
  | { ok: false; tool?: AnyTool; result: ToolResult };

function stopped(gate: PipelineGate, message: string, metadata: Record<string, unknown> = {}): ToolResult {
  return errorResult(message, { ...metadata, gate });
}

type Parsed = { ok: true; input: unknown } | { ok: false; message: string };

function parseInput(tool: AnyTool, input: unknown): Parsed {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return {
      ok: false,
      message: `Invalid input for ${tool.name}: expected a JSON object, received ${describeValue(input)}`,
    };
  }
  const parsed = tool.inputSchema.safeParse(input, { reportInput: true });
  if (parsed.success) return { ok: true, input: parsed.data };
  const problems = parsed.error.issues.map((issue) => describeIssue(tool, issue));
  return {
    ok: false,
    message: `Invalid input for ${tool.name}: ${problems.join("; ")}. Fix ${
      problems.length > 1 ? "these fields" : "this field"
    } and call ${tool.name} again`,
  };
}

function describeIssue(tool: AnyTool, issue: z.core.$ZodIssue): string {
  const field = issue.path.length ? `"${issue.path.join(".")}"` : "the input";
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) {
        return `missing required field ${field} (expected ${issue.expected}${fieldHint(tool, issue.path)})`;
      }
      return `field ${field} must be ${issue.expected}${fieldHint(tool, issue.path)}, received ${
        describeValue(issue.input)
      }`;
    case "unrecognized_keys": {
      const allowed = Object.keys(tool.jsonSchema.properties).join(", ");
      const keys = issue.keys.map((key) => `"${key}"`).join(", ");
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${keys} (allowed fields: ${allowed})`;
    }
    case "invalid_value":
      return `field ${field} must be one of ${
        issue.values.map((value) => JSON.stringify(value)).join(", ")
      }, received ${describeValue(issue.input)}`;
    default:
      return `field ${field}: ${issue.message}${
        issue.input === undefined ? "" : `, received ${describeValue(issue.input)}`
      }`;
  }
}

function fieldHint(tool: AnyTool, path: readonly PropertyKey[]): string {
  if (path.length !== 1) return "";
  const property = tool.jsonSchema.properties[String(path[0])];
  if (typeof property !== "object" || property === null) return "";
  const description = (property as Record<string, unknown>).description;
  return typeof description === "string" ? `: ${description}` : "";
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array (${truncate(JSON.stringify(value))})`;
  switch (typeof value) {
    case "string":
      return `a string (${truncate(JSON.stringify(value))})`;
    case "number":
      return `a number (${value})`;
    case "boolean":
      return `a boolean (${value})`;
    case "object":
      return `an object (${truncate(JSON.stringify(value))})`;
    default:
      return typeof value;
  }
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
