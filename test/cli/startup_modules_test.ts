/**
 * What a one-shot run loads before its first model request (main.ts, then print_mode.ts and its static
 * imports): no tool code, no worker code, no zod, no shell parser, no permission evaluation, and no `node:`
 * module, whose compatibility layer alone costs more start-up time than the rest. The tools and the policy
 * load when the model begins its first call.
 */
import { ok } from "node:assert/strict";
import { staticModuleGraph } from "../_fakes/module_graph.ts";

const ENTRIES = ["../../main.ts", "../../src/cli/print_mode.ts"];

/** Modules that must wait for the model's first tool call. */
const LATER = [
  /\/src\/tools\/(read_file|write_file|edit_file|glob|grep|grep_ripgrep|bash|mod|tool)\.ts$/,
  /\/src\/execution\/(runtime|pipeline|worker_executor|worker_pool|executor)\.ts$/,
  /\/src\/sandbox\/shell_sandbox\.ts$/,
  /\/workers\//,
  /^npm:.*zod/,
  // The shell parser: for Bash calls and Bash rules only (src/permissions/shell_parser.ts).
  /^npm:.*unbash/,
  // How a call is described and decided (~4.5 ms): the first decision loads it (session_permissions.ts).
  /\/src\/permissions\/(policy|access|evaluate|evaluate_command|evaluate_file|shell_commands|_wrappers)\.ts$/,
  /^node:/,
];

for (const entry of ENTRIES) {
  Deno.test(`${entry.slice(6)} loads no tool, worker, zod, shell parser, policy or node: module before the first request`, async () => {
    const graph = await staticModuleGraph(new URL(entry, import.meta.url));
    ok(graph.some((specifier) => specifier.endsWith(entry.slice(5))), graph.join("\n"));
    const early = graph.filter((specifier) => LATER.some((pattern) => pattern.test(specifier)));
    ok(early.length === 0, `loaded before the first request:\n${early.join("\n")}`);
  });
}
