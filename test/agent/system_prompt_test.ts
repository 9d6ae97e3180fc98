import { ok } from "node:assert/strict";
import { z } from "zod";
import { buildSystemPrompt } from "../../src/agent/system_prompt.ts";
import { defineTool, textResult } from "../../src/tools/tool.ts";

const readFile = defineTool({
  name: "ReadFile",
  description: "Reads. Test tool.",
  category: "file",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  execute: () => Promise.resolve(textResult("")),
});

Deno.test("buildSystemPrompt states the workspace root, absolute paths, platform, date and tool guidance", () => {
  const prompt = buildSystemPrompt({
    root: "/home/ada/app",
    platform: "linux x86_64",
    date: new Date("2026-03-04T12:00:00Z"),
    tools: [readFile],
  });
  for (
    const text of [
      "Workspace root: /home/ada/app",
      "must be absolute",
      "linux x86_64",
      "2026-03-04",
      "ReadFile reads",
    ]
  ) {
    ok(prompt.includes(text), `mentions ${text}`);
  }
  ok(!prompt.includes("Bash runs"), "guidance only for the tools offered");
  ok(!prompt.includes("Plan mode"));
});

Deno.test("buildSystemPrompt in plan mode says to make no changes", () => {
  const prompt = buildSystemPrompt({
    root: "/w",
    platform: "linux",
    date: new Date(),
    tools: [],
    permissionMode: "plan",
  });
  ok(prompt.includes("make no changes"));
});
