/**
 * Helpers for the shell sandbox tests: open a ShellSandbox the way a session does, and run Bash calls
 * through it the way the pipeline does (plan prepared before the call, checks after it).
 *
 * @module
 */
import { ok } from "node:assert/strict";
import { defaultLimits, type ResourceLimits } from "../../src/sandbox/limits.ts";
import { ShellSandbox, type ShellSandboxOptions } from "../../src/sandbox/shell_sandbox.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import type { SandboxMode, ShellRunner, ToolResult } from "../../src/tools/tool.ts";
import { toolContext } from "../_fakes/tool_context.ts";

/**
 * A command printing when the sandbox's process 1 started (clock ticks since boot): equal for commands run in
 * the same sandbox, so a test tells a kept sandbox from a new one.
 */
export const SANDBOX_ID = "cut -d' ' -f22 /proc/1/stat";

/** A secret a user might have in the environment; it must never reach a command. */
export const SECRET = "sk-ant-mewcode-test-secret";

/** Opens a sandbox for `root` from this process's environment plus secrets; close it with `await using`. */
export async function openSandbox(
  root: string,
  mode: SandboxMode,
  options: Partial<Omit<ShellSandboxOptions, "root" | "mode">> & { limits?: ResourceLimits } = {},
): Promise<ShellSandbox & AsyncDisposable> {
  const sandbox = await ShellSandbox.open({
    root,
    mode,
    network: false,
    env: {
      ...Deno.env.toObject(),
      ANTHROPIC_API_KEY: SECRET,
      GITHUB_TOKEN: SECRET,
      AWS_SECRET_ACCESS_KEY: SECRET,
    },
    limits: defaultLimits(),
    excluded: [],
    protectedPaths: PROTECTED_PATHS,
    ...options,
  });
  return Object.assign(sandbox, { [Symbol.asyncDispose]: () => sandbox.close() });
}

/** What one call through the sandbox gave: the tool's result and the sandbox's notes after it. */
export interface SandboxedRun {
  result: ToolResult;
  notes: string[];
}

/**
 * Runs one Bash call as the pipeline does: the call's plan, the tool, then the sandbox's checks. With
 * `runner` (a ShellHost, as a tool worker has), in the sandbox it keeps across calls.
 */
export async function runIn(
  sandbox: ShellSandbox,
  command: string,
  options: { timeout?: number; runner?: ShellRunner; signal?: AbortSignal } = {},
): Promise<SandboxedRun> {
  const call = await sandbox.prepareCall();
  const context = toolContext(sandbox.root, { shell: call.plan });
  const result = await bashTool.execute(
    {
      ...context,
      ...(options.runner === undefined ? {} : { shellRunner: options.runner }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
    { command, timeout: options.timeout ?? 20_000 },
  );
  return { result, notes: await call.finish({ keptSandbox: result.metadata.keptSandbox === true }) };
}

/** The text between <output> and </output>. */
export function outputOf(result: ToolResult): string {
  const match = /<output>([\s\S]*)<\/output>/.exec(result.content);
  ok(match !== null, `no <output> in ${JSON.stringify(result.content)}`);
  return match[1] ?? "";
}

/** The exit code Bash reported. */
export function exitCodeOf(result: ToolResult): number {
  const match = /<exit_code>(-?\d+)<\/exit_code>/.exec(result.content);
  ok(match !== null, `no <exit_code> in ${JSON.stringify(result.content)}`);
  return Number(match[1]);
}

export { exists } from "../_fakes/exists.ts";

/** A directory outside /tmp (which the sandbox replaces with its own), removed by `await using`. */
export async function hostDirectory(prefix: string): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix }));
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => undefined) };
}
