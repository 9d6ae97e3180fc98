import { deepStrictEqual, equal, throws } from "node:assert/strict";
import { z } from "zod";
import { DEFAULT_TOOL_TIMEOUT_MS, defineTool, errorResult, textResult } from "../../src/tools/tool.ts";
import { echoTool, hangingTool, noteTool, nukeTool } from "../_fakes/sample_tools.ts";

Deno.test("defineTool fills conservative defaults for a tool that declares nothing", () => {
  const tool = defineTool({
    name: "Plain",
    description: "A tool.",
    category: "other",
    inputSchema: z.object({ a: z.string() }).strict(),
    execute: () => Promise.resolve(textResult("ok")),
  });
  equal(tool.isReadOnly(), false);
  equal(tool.isDestructive(), true);
  equal(tool.isConcurrencySafe({ a: "x" }), false);
  equal(tool.validateInput({ a: "x" }, { root: "/ws" }), null);
  equal(tool.timeoutMs({ a: "x" }), DEFAULT_TOOL_TIMEOUT_MS);
});

Deno.test("defineTool makes read-only tools non-destructive, and concurrency-safe only when they say so", () => {
  equal(echoTool.isReadOnly(), true);
  equal(echoTool.isDestructive(), false);
  equal(echoTool.isConcurrencySafe({ text: "x" }), true);
  equal(hangingTool.isReadOnly(), true);
  equal(hangingTool.isConcurrencySafe({}), false);
  equal(noteTool.isDestructive(), false);
  equal(noteTool.isConcurrencySafe({ note: "x" }), false);
  equal(nukeTool.isDestructive(), true);
});

Deno.test("defineTool keeps an explicit isConcurrencySafe that looks at the input", () => {
  const tool = defineTool({
    name: "Picky",
    description: "A tool.",
    category: "other",
    inputSchema: z.object({ safe: z.boolean() }).strict(),
    isConcurrencySafe: (input) => input.safe,
    execute: () => Promise.resolve(textResult("ok")),
  });
  equal(tool.isConcurrencySafe({ safe: true }), true);
  equal(tool.isConcurrencySafe({ safe: false }), false);
});

Deno.test("defineTool derives an API JSON Schema with type, properties, required and descriptions", () => {
  deepStrictEqual(echoTool.jsonSchema.type, "object");
  deepStrictEqual(echoTool.jsonSchema.required, ["text"]);
  deepStrictEqual(Object.keys(echoTool.jsonSchema.properties), ["text", "times"]);
  deepStrictEqual(
    (echoTool.jsonSchema.properties.text as { description: string }).description,
    "Text to echo",
  );
  equal(echoTool.jsonSchema.additionalProperties, false);
  equal("$schema" in echoTool.jsonSchema, false);
});

Deno.test("defineTool leaves out zod's safe-integer bounds but keeps real ones", () => {
  const times = echoTool.jsonSchema.properties.times as Record<string, unknown>;
  equal(times.type, "integer");
  equal(times.exclusiveMinimum, 0);
  equal("maximum" in times, false);
});

Deno.test("defineTool rejects invalid definitions at definition time", async (t) => {
  const base = {
    description: "d",
    category: "other" as const,
    inputSchema: z.object({}).strict(),
    execute: () => Promise.resolve(textResult("")),
  };
  await t.step("a name with spaces", () => {
    throws(() => defineTool({ ...base, name: "Bad name" }), TypeError);
  });
  await t.step("an empty description", () => {
    throws(() => defineTool({ ...base, name: "Empty", description: "  " }), TypeError);
  });
  await t.step("a schema that is not an object", () => {
    throws(() => defineTool({ ...base, name: "NotObject", inputSchema: z.string() }), /must be a zod object/);
  });
  await t.step("read-only and destructive at once", () => {
    throws(() => defineTool({ ...base, name: "Both", isReadOnly: true, isDestructive: true }), TypeError);
  });
});

Deno.test("textResult and errorResult build plain ToolResults", () => {
  deepStrictEqual(textResult("a"), { content: "a", isError: false, metadata: {} });
  deepStrictEqual(errorResult("b", { x: 1 }), { content: "b", isError: true, metadata: { x: 1 } });
});
