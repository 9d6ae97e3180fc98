/**
 * What each tool worker loads when it starts: the code that runs its own profile's calls, and not the
 * tools' definitions, zod, or any `node:` module but node:fs (the only way to open a file without following
 * a symlink or blocking on a FIFO); nor another profile's tools: a read-only worker none of the writers' or
 * the shell's code, which every worker of a parallel batch of searches would hold. Measured: zod cost a
 * worker ~45 ms and ~4 MB of heap to load.
 */
import { ok } from "node:assert/strict";
import { TOOL_WORKER_URLS } from "../../src/execution/worker_pool.ts";
import { profileKind } from "../../src/execution/profiles.ts";
import type { ProfileKind } from "../../src/execution/profiles.ts";
import { staticModuleGraph } from "../_fakes/module_graph.ts";

/** Modules no worker may load: the main process validates inputs and offers the tools. */
const NOT_IN_WORKER = [
  /\/src\/tools\/(read_file|write_file|edit_file|glob|grep|bash|mod|tool|catalog)\.ts$/,
  /^npm:.*zod/,
  /^node:(?!fs$|fs\/promises$)/,
];

/** Each built-in tool's runner module, by tool name. */
const RUNNER_MODULES: Record<string, string> = {
  ReadFile: "/src/tools/_read_file_run.ts",
  Glob: "/src/tools/_glob_run.ts",
  Grep: "/src/tools/_grep_run.ts",
  WriteFile: "/src/tools/_write_file_run.ts",
  EditFile: "/src/tools/_edit_file_run.ts",
  Bash: "/src/tools/_bash_run.ts",
};

/** What only the shell's worker runs: its kept sandbox. */
const SHELL_ONLY = ["/src/tools/_shell_host.ts", "/src/sandbox/bubblewrap.ts"];

Deno.test("each profile's worker loads its own tools' runners, and no other tool's code, zod or node: module", async (t) => {
  const { BUILTIN_TOOLS } = await import("../../src/tools/mod.ts");
  for (const [kind, url] of Object.entries(TOOL_WORKER_URLS) as [ProfileKind, URL][]) {
    await t.step(kind, async () => {
      const graph = await staticModuleGraph(url);
      const has = (module: string) => graph.some((specifier) => specifier.endsWith(module));
      for (const tool of BUILTIN_TOOLS) {
        const ours = profileKind(tool) === kind;
        ok(
          has(RUNNER_MODULES[tool.name]!) === ours,
          `${tool.name}'s runner ${ours ? "missing from" : "in"} ${url}`,
        );
      }
      for (const module of SHELL_ONLY) {
        ok(has(module) === (kind === "shell"), `${module} in ${url}: ${has(module)}`);
      }
      const loaded = graph.filter((specifier) => NOT_IN_WORKER.some((pattern) => pattern.test(specifier)));
      ok(loaded.length === 0, `${url} loads:\n${loaded.join("\n")}`);
    });
  }
});

Deno.test("every built-in tool's runner module exports its runner under the tool's name", async () => {
  const { BUILTIN_TOOLS } = await import("../../src/tools/mod.ts");
  for (const tool of BUILTIN_TOOLS) {
    const module = await import(new URL(`../..${RUNNER_MODULES[tool.name]}`, import.meta.url).href);
    const runners = Object.values(module as Record<string, unknown>).filter((
      value,
    ): value is { name: unknown } =>
      typeof value === "object" && value !== null && "execute" in value && "name" in value
    );
    ok(
      runners.some((runner) => runner.name === tool.name),
      `${RUNNER_MODULES[tool.name]} has no ${tool.name}`,
    );
  }
});
