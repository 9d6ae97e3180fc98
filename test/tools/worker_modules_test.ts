/**
 * What the tool worker loads when it starts: the code that runs the calls (`src/tools/runners.ts`), and not
 * the tools' definitions, zod, or any `node:` module but node:fs (the only way to open a file without
 * following a symlink or blocking on a FIFO). Measured: zod cost a worker ~45 ms and ~4 MB of heap to load.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { staticModuleGraph } from "../_fakes/module_graph.ts";

/** Modules the worker must not load: the main process validates inputs and offers the tools. */
const NOT_IN_WORKER = [
  /\/src\/tools\/(read_file|write_file|edit_file|glob|grep|bash|mod|tool|catalog)\.ts$/,
  /^npm:.*zod/,
  /^node:(?!fs$|fs\/promises$)/,
];

Deno.test("the tool worker loads the tools' runners, not their schemas, zod or node: modules beyond node:fs", async () => {
  const graph = await staticModuleGraph(new URL("../../workers/tool_worker.ts", import.meta.url));
  ok(graph.some((specifier) => specifier.endsWith("/src/tools/runners.ts")), graph.join("\n"));
  ok(graph.some((specifier) => specifier.endsWith("/src/tools/_grep_run.ts")), graph.join("\n"));
  const loaded = graph.filter((specifier) => NOT_IN_WORKER.some((pattern) => pattern.test(specifier)));
  ok(loaded.length === 0, `the tool worker loads:\n${loaded.join("\n")}`);
});

Deno.test("every built-in tool has its runner in the worker, under the same name", async () => {
  const { BUILTIN_TOOLS } = await import("../../src/tools/mod.ts");
  const { TOOL_RUNNERS } = await import("../../src/tools/runners.ts");
  deepStrictEqual(TOOL_RUNNERS.map((runner) => runner.name), BUILTIN_TOOLS.map((tool) => tool.name));
});
