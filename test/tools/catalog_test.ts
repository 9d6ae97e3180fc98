/**
 * The catalog a session offers before the tools load says exactly what the tools say, and loading it loads
 * no tool code.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { BUILTIN_TOOL_INFO, catalogEntry } from "../../src/tools/catalog.ts";
import { BUILTIN_TOOLS } from "../../src/tools/mod.ts";
import { createRegistry } from "../../src/tools/registry.ts";
import { CATALOG_FILE, catalogText } from "../../scripts/tool_catalog.ts";
import { staticModuleGraph } from "../_fakes/module_graph.ts";

Deno.test("the committed src/tools/catalog.json is the one the tools generate", async () => {
  equal(
    await Deno.readTextFile(CATALOG_FILE),
    catalogText(),
    "src/tools/catalog.json is stale: run deno task catalog",
  );
});

Deno.test("the catalog offers what the tools offer, in every tool setup", () => {
  deepEqual(BUILTIN_TOOL_INFO.map(catalogEntry), BUILTIN_TOOLS.map(catalogEntry));
  for (
    const setup of [
      { allowWrite: true, allowBash: true },
      { allowWrite: false, allowBash: false },
      { allowWrite: true, allowBash: false },
    ]
  ) {
    const described = createRegistry(BUILTIN_TOOL_INFO, setup);
    const whole = createRegistry(BUILTIN_TOOLS, setup);
    deepEqual(described.toolSpecs(), whole.toolSpecs());
    deepEqual(
      described.listEnabled().map((tool) => [tool.isReadOnly(), tool.isDestructive()]),
      whole.listEnabled().map((tool) => [tool.isReadOnly(), tool.isDestructive()]),
    );
  }
});

Deno.test("loading the catalog loads neither a tool's module nor zod", async () => {
  const graph = await staticModuleGraph(new URL("../../src/tools/catalog.ts", import.meta.url));
  ok(graph.some((specifier) => specifier.endsWith("/src/tools/catalog.json")), graph.join("\n"));
  ok(
    graph.every((specifier) => !specifier.includes("zod") && !specifier.endsWith("/tools/tool.ts")),
    graph.join("\n"),
  );
});
