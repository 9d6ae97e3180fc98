import { equal, match } from "node:assert/strict";
import { z } from "zod";
import { PERMISSION_MODES, type PermissionMode } from "../../src/permissions/modes.ts";
import { policyForMode } from "../../src/permissions/modes.ts";
import { type AnyTool, defineTool, textResult } from "../../src/tools/tool.ts";

function fakeTool(name: string, metadata: { isReadOnly: boolean; isDestructive: boolean }): AnyTool {
  return defineTool({
    name,
    description: `${name} for tests`,
    category: "other",
    inputSchema: z.object({}).strict(),
    ...metadata,
    execute: () => Promise.resolve(textResult("ok")),
  });
}

const reader = fakeTool("Reader", { isReadOnly: true, isDestructive: false });
const writer = fakeTool("Writer", { isReadOnly: false, isDestructive: false });
const shell = fakeTool("Shell", { isReadOnly: false, isDestructive: true });

const TABLE: Record<PermissionMode, Record<"reader" | "writer" | "shell", "allow" | "ask" | "deny">> = {
  default: { reader: "allow", writer: "ask", shell: "ask" },
  acceptEdits: { reader: "allow", writer: "allow", shell: "ask" },
  plan: { reader: "allow", writer: "deny", shell: "deny" },
  dontAsk: { reader: "allow", writer: "deny", shell: "deny" },
  bypassPermissions: { reader: "allow", writer: "allow", shell: "allow" },
};

Deno.test("policyForMode decides by tool metadata in every mode", async (t) => {
  for (const mode of PERMISSION_MODES) {
    for (const [kind, tool] of [["reader", reader], ["writer", writer], ["shell", shell]] as const) {
      await t.step(`${mode}: ${kind} → ${TABLE[mode][kind]}`, async () => {
        const decision = await policyForMode(mode).decide({ tool, input: {}, callId: "call_1" });
        equal(decision.behavior, TABLE[mode][kind]);
        if (decision.behavior !== "allow") match(decision.reason, new RegExp(tool.name));
      });
    }
  }
});

Deno.test("policyForMode explains an ask in default mode with the mode's name", async () => {
  const decision = await policyForMode("default").decide({ tool: writer, input: {}, callId: "call_1" });
  equal(decision.behavior, "ask");
  if (decision.behavior === "ask") match(decision.reason, /default permission mode/);
});

Deno.test("policyForMode denies writers in dontAsk mode without asking, and says so", async () => {
  const decision = await policyForMode("dontAsk").decide({ tool: writer, input: {}, callId: "call_1" });
  equal(decision.behavior, "deny");
  if (decision.behavior === "deny") match(decision.reason, /dontAsk mode denies without asking/);
});

Deno.test("policyForMode denies writers in plan mode with a reason that names plan mode", async () => {
  const decision = await policyForMode("plan").decide({ tool: writer, input: {}, callId: "call_1" });
  equal(decision.behavior, "deny");
  if (decision.behavior === "deny") match(decision.reason, /plan mode allows only read-only tools/);
});

Deno.test("policyForMode ignores tool names: a read-only tool named Bash is allowed in plan mode", async () => {
  const namedLikeShell = fakeTool("Bash", { isReadOnly: true, isDestructive: false });
  equal(
    (await policyForMode("plan").decide({ tool: namedLikeShell, input: {}, callId: "c" })).behavior,
    "allow",
  );
  const namedLikeReader = fakeTool("ReadFile", { isReadOnly: false, isDestructive: true });
  equal(
    (await policyForMode("acceptEdits").decide({ tool: namedLikeReader, input: {}, callId: "c" })).behavior,
    "ask",
  );
});
