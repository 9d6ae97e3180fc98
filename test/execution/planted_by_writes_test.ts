/**
 * A session whose model only writes files (no shell call) can still lay a folder out as a git directory
 * whose config runs a command when the user's git is used there: the end of the session reports it, as
 * it reports what a shell call planted.
 */
import { equal, match } from "node:assert/strict";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function call(runtime: ToolRuntime, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run({ id: `plant_${crypto.randomUUID()}`, name, input }, {
    signal: new AbortController().signal,
  });
  return result;
}

Deno.test("a git directory planted with WriteFile alone is reported at the end of the session", async () => {
  await using workspace = await createTempWorkspace("mewcode-write-plant-");
  const root = workspace.root;
  await Deno.writeTextFile(`${root}/README.md`, "hello\n");
  await using runtime = await testRuntime(root, { env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } });
  const files: Record<string, string> = {
    "docs/HEAD": "ref: refs/heads/main\n",
    "docs/objects/info/packs": "",
    "docs/refs/heads/.keep": "",
    "docs/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n" +
      "\tfsmonitor = touch /tmp/planted-by-writes\n",
  };
  for (const [path, content] of Object.entries(files)) {
    const written = await call(runtime, "WriteFile", { path: `${root}/${path}`, content });
    equal(written.isError, false, `${path}: ${written.content}`);
  }
  const report = (await runtime.sandbox.endOfSession()).join("\n");
  match(report, /docs/);
  match(report, /fsmonitor/);
});
