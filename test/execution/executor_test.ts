import { equal, match } from "node:assert/strict";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { defineTool } from "../../src/tools/tool.ts";
import { z } from "zod";
import { hangingTool } from "../_fakes/sample_tools.ts";
import { NO_SHELL } from "../_fakes/pipeline.ts";

const context = { root: "/ws", timeoutMs: 200, fileRecords: {}, strictLinks: false, shell: NO_SHELL };

Deno.test("DirectExecutor stops a call at its time limit and aborts the tool's signal", async () => {
  const executor = new DirectExecutor();
  const { result, status } = await executor.execute({ tool: hangingTool, input: {}, context }, {
    signal: new AbortController().signal,
  });
  equal(result.isError, true);
  equal(status, "timed-out");
  match(result.content, /Hang did not finish within 200 ms/);
});

Deno.test("DirectExecutor returns a cancelled result when the caller aborts", async () => {
  const executor = new DirectExecutor();
  const controller = new AbortController();
  const running = executor.execute({
    tool: hangingTool,
    input: {},
    context: { ...context, timeoutMs: 10_000 },
  }, {
    signal: controller.signal,
  });
  controller.abort();
  const { result, status } = await running;
  equal(status, "aborted");
  match(result.content, /cancelled/);
});

Deno.test("DirectExecutor turns a malformed tool result into an error result", async () => {
  const liar = defineTool({
    name: "Liar",
    description: "Returns garbage. Test tool.",
    category: "other",
    inputSchema: z.object({}).strict(),
    isReadOnly: true,
    // deno-lint-ignore no-explicit-any -- deliberately breaking the contract
    execute: () => Promise.resolve({ content: 42 } as any),
  });
  const { result } = await new DirectExecutor().execute({ tool: liar, input: {}, context }, {
    signal: new AbortController().signal,
  });
  equal(result.isError, true);
  match(result.content, /Liar failed: TypeError: the tool returned something that is not a ToolResult/);
});
