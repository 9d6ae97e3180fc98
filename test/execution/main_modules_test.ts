/**
 * What the main process loads to run tools: the runtime (pipeline, sandbox, worker pool, tool definitions)
 * and Grep's ripgrep path, but no tool runner and no `node:` module. The runners run in the workers, which
 * load them; a runner loads node:fs, and the first `node:` module a process imports starts Deno's Node
 * compatibility layer: measured, ~10 MB and ~50 ms in the main process, paid by every session that uses a
 * tool (the runtime loads while the model's first answer streams).
 */
import { ok } from "node:assert/strict";
import { staticModuleGraph } from "../_fakes/module_graph.ts";

const ENTRIES = [
  "../../src/execution/runtime.ts",
  "../../src/tools/grep_ripgrep.ts",
  "../../src/sandbox/ripgrep_command.ts",
  "../../src/execution/walk_store.ts",
];

/** What stays in the workers. */
const WORKER_ONLY = [/\/src\/tools\/_[a-z_]+_run\.ts$/, /\/src\/tools\/runners\.ts$/, /^node:/];

for (const entry of ENTRIES) {
  Deno.test(`${entry.slice(6)} loads no tool runner and no node: module`, async () => {
    const graph = await staticModuleGraph(new URL(entry, import.meta.url));
    ok(graph.some((specifier) => specifier.endsWith(entry.slice(5))), graph.join("\n"));
    const loaded = graph.filter((specifier) => WORKER_ONLY.some((pattern) => pattern.test(specifier)));
    ok(loaded.length === 0, `the main process would load:\n${loaded.join("\n")}`);
  });
}
