/**
 * A session's options for tests: a read-only session of the workspace at `root` whose tools run in this
 * process (`executor: "direct"`), with the defaults of the command line; `overrides` changes any of them.
 *
 * @module
 */
import type { SessionOptions } from "../../src/session/session.ts";

export function testSessionOptions(
  root: string,
  env: Record<string, string>,
  overrides: Partial<SessionOptions> = {},
): SessionOptions {
  return {
    workspace: { root, aliases: [] },
    env,
    model: "claude-sonnet-5-5",
    maxTokens: 1000,
    maxTurns: null,
    permissionMode: "default",
    readOnly: true,
    sandbox: "workspace-write",
    sandboxNetwork: false,
    strictLinks: false,
    executor: "direct",
    ...overrides,
  };
}
