/**
 * A session's tool runtime for tests: real workers and the real sandbox, every call allowed.
 *
 * @module
 */
import { createToolRuntime, type RuntimeOptions, type ToolRuntime } from "../../src/execution/runtime.ts";
import { ALLOW_ALL } from "./pipeline.ts";

/** `createToolRuntime` for `root` in workspace-write, without network, allowing every call; `overrides` win. */
export function testRuntime(root: string, overrides: Partial<RuntimeOptions> = {}): Promise<ToolRuntime> {
  return createToolRuntime({
    root,
    readOnly: false,
    sandbox: "workspace-write",
    sandboxNetwork: false,
    strictLinks: false,
    policy: ALLOW_ALL,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    ...overrides,
  });
}
