/**
 * Assembles what runs tool calls for one session: registry, shell plan, executor and pipeline.
 *
 * @module
 */
import { assertNever } from "../tools/errors.ts";
import type { Approver, PermissionPolicy } from "../permissions/decision.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import { BUILTIN_TOOLS } from "../tools/mod.ts";
import { createRegistry, type ToolRegistry } from "../tools/registry.ts";
import type { AnyTool, SandboxMode, ShellPlan } from "../tools/tool.ts";
import { DirectExecutor, type ToolExecutor } from "./executor.ts";
import { FileRecordStore } from "./file_records.ts";
import { planShell } from "./os_sandbox.ts";
import { ToolPipeline } from "./pipeline.ts";
import { profilesForTools } from "./profiles.ts";
import { WorkerExecutor, type WorkerExecutorOptions } from "./worker_executor.ts";

/** Where tool calls run: permission-scoped workers (the sandbox), or in-process for benchmarks. */
export type ExecutorKind = "worker" | "direct";

/** How a session's tools are set up. */
export interface RuntimeOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Offer no writers and no shell. */
  readOnly: boolean;
  sandbox: SandboxMode;
  sandboxNetwork: boolean;
  strictLinks: boolean;
  policy: PermissionPolicy;
  approver?: Approver;
  hooks?: readonly PreToolUseHook[];
  /** The environment the shell's allowlist is taken from. */
  env: Record<string, string>;
  /** Defaults to BUILTIN_TOOLS. Tools other than the built-in ones also need a `worker.workerUrl` that loads them. */
  tools?: readonly AnyTool[];
  /** Default "worker": every call runs in a worker whose permissions follow the tool's metadata. */
  executor?: ExecutorKind;
  /** Options of the worker pool (worker entry point, bounds, grace period). */
  worker?: WorkerExecutorOptions;
  /** Whether writers require a prior read of an existing file; default true (false for calls a person typed). */
  requireRead?: boolean;
}

/** The running tool side of a session. */
export interface ToolRuntime extends AsyncDisposable {
  registry: ToolRegistry;
  pipeline: ToolPipeline;
  executor: ToolExecutor;
  shell: ShellPlan;
  files: FileRecordStore;
  close(): Promise<void>;
}

/** The tools a session offers: everything, or only the read-only tools with `readOnly`. */
export function sessionRegistry(options: { readOnly: boolean; tools?: readonly AnyTool[] }): ToolRegistry {
  return createRegistry(options.tools ?? BUILTIN_TOOLS, {
    allowWrite: !options.readOnly,
    allowBash: !options.readOnly,
  });
}

/** Builds the registry, plans the shell sandbox, starts the executor and assembles the pipeline. */
export async function createToolRuntime(options: RuntimeOptions): Promise<ToolRuntime> {
  const registry = sessionRegistry(options);
  const shell = await planShell({
    root: options.root,
    mode: options.sandbox,
    network: options.sandboxNetwork,
    home: options.env.HOME,
    env: options.env,
  });
  const executor = createExecutor(options);
  if (executor instanceof WorkerExecutor) {
    // Not awaited: the workers start while the caller goes on (for the agent, its first API request).
    void executor.prewarm(profilesForTools(registry.listEnabled(), { root: options.root, shell }));
  }
  const files = new FileRecordStore();
  const pipeline = new ToolPipeline({
    registry,
    executor,
    policy: options.policy,
    files,
    root: options.root,
    strictLinks: options.strictLinks,
    shell,
    requireRead: options.requireRead ?? true,
    ...(options.approver ? { approver: options.approver } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  const close = () => executor.close();
  return { registry, pipeline, executor, shell, files, close, [Symbol.asyncDispose]: close };
}

function createExecutor(options: RuntimeOptions): ToolExecutor {
  const kind = options.executor ?? "worker";
  switch (kind) {
    case "worker":
      return new WorkerExecutor(options.worker ?? {});
    case "direct":
      return new DirectExecutor();
    default:
      return assertNever(kind);
  }
}
