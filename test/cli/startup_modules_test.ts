/**
 * What a one-shot run loads before its first model request (main.ts, then print_mode.ts and its static
 * imports): no tool code, no worker code, no zod, no shell parser, no permission evaluation, no rule parser
 * without rules, no agent loop, no output code, no protected paths or resource limits, and no `node:` module,
 * whose compatibility layer alone costs more start-up time than the rest. The loop loads while the first
 * request is on its way (src/llm/started_request.ts); the tools and the policy when the model begins its
 * first call. Loading costs by the byte (~0.08 ms a kilobyte of source here): each module kept off the way
 * is time the request saves.
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
  // The agent loop: it takes the request already sent (open_session.ts, StartedRequest).
  /\/src\/agent\/(loop|_turn|compaction|guards|stop_reasons|_queue|_summary_prompt)\.ts$/,
  /\/src\/execution\/scheduler\.ts$/,
  // Rules, with their pattern compilers and glob and regular-expression translators: for sessions with rules.
  /\/src\/permissions\/(rules|command_pattern|path_pattern)\.ts$/,
  /\/src\/common\/(glob|regex|regex_parse|regex_cursor)\.ts$/,
  // What reports the run (print_mode.ts loads it once the request is on its way; stream-json's first line
  // excepted, which is written before the request).
  /\/src\/cli\/(_print_run|output_format|status_line|stderr_reporter|run_summary|call_label|_terminal_text)\.ts$/,
  // The protected paths (gathered with the tools: session.ts) and the shell's resource limits (runtime.ts).
  /\/src\/tools\/(protected_paths|_paths)\.ts$/,
  /\/src\/(common\/home_credentials|config\/command_scripts|sandbox\/limits)\.ts$/,
  // What reads the model's answer: it loads once the response began (anthropic_provider.ts).
  /\/src\/llm\/(anthropic_stream|_sdk_stream|sse_decoder)\.ts$/,
  // The screen of a repository's settings files: for a workspace that has one (settings.ts).
  /\/src\/config\/repository_screen\.ts$/,
];

for (const entry of ENTRIES) {
  Deno.test(`${entry.slice(6)} loads no tool, worker, zod, shell parser, policy, rule, loop, output, protection or node: module before the first request`, async () => {
    const graph = await staticModuleGraph(new URL(entry, import.meta.url));
    ok(graph.some((specifier) => specifier.endsWith(entry.slice(5))), graph.join("\n"));
    const early = graph.filter((specifier) => LATER.some((pattern) => pattern.test(specifier)));
    ok(early.length === 0, `loaded before the first request:\n${early.join("\n")}`);
  });
}
