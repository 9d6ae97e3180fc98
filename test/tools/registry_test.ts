import { deepStrictEqual, equal, throws } from "node:assert/strict";
import { createRegistry, ToolRegistry } from "../../src/tools/registry.ts";
import { echoTool, noteTool, nukeTool } from "../_fakes/sample_tools.ts";

const ALL = [echoTool, noteTool, nukeTool];

Deno.test("ToolRegistry registers, gets and lists tools in registration order", () => {
  const registry = new ToolRegistry();
  registry.register(echoTool);
  registry.register(noteTool);
  equal(registry.get("Echo"), echoTool);
  equal(registry.get("Nope"), undefined);
  deepStrictEqual(registry.enabledNames(), ["Echo", "Note"]);
});

Deno.test("ToolRegistry refuses a second tool with the same name", () => {
  const registry = new ToolRegistry();
  registry.register(echoTool);
  throws(() => registry.register(echoTool), /already registered/);
});

Deno.test("ToolRegistry hides a disabled tool from get, list and the API until re-enabled", () => {
  const registry = new ToolRegistry();
  registry.register(echoTool);
  registry.register(noteTool);
  equal(registry.disable("Echo"), true);
  equal(registry.get("Echo"), undefined);
  equal(registry.isEnabled("Echo"), false);
  deepStrictEqual(registry.enabledNames(), ["Note"]);
  deepStrictEqual(registry.toolSpecs().map((tool) => tool.name), ["Note"]);
  equal(registry.enable("Echo"), true);
  deepStrictEqual(registry.enabledNames(), ["Echo", "Note"]);
  equal(registry.disable("Missing"), false);
  equal(registry.enable("Missing"), false);
});

Deno.test("ToolRegistry.toolSpecs gives name, description and input schema per enabled tool", () => {
  const registry = new ToolRegistry();
  registry.register(echoTool);
  deepStrictEqual(registry.toolSpecs(), [{
    name: "Echo",
    description: echoTool.description,
    inputSchema: echoTool.jsonSchema,
  }]);
});

Deno.test("createRegistry registers tools by class according to the setup", async (t) => {
  const cases = [
    { setup: { allowWrite: false, allowBash: false }, names: ["Echo"] },
    { setup: { allowWrite: true, allowBash: false }, names: ["Echo", "Note"] },
    { setup: { allowWrite: false, allowBash: true }, names: ["Echo", "Nuke"] },
    { setup: { allowWrite: true, allowBash: true }, names: ["Echo", "Note", "Nuke"] },
  ];
  for (const { setup, names } of cases) {
    await t.step(JSON.stringify(setup), () => {
      deepStrictEqual(createRegistry(ALL, setup).enabledNames(), names);
    });
  }
});
