/**
 * Each permission profile, proven at run time: a test-only tool of each class runs in a real worker with the
 * profile derived from its metadata and tries what its class must not do. The probes call Deno's APIs
 * directly, so every refusal asserted here comes from Deno (`NotCapable`), not from our own checks.
 */
import { equal, match } from "node:assert/strict";
import { WorkerExecutor } from "../../src/execution/worker_executor.ts";
import type { AnyTool, ShellPlan } from "../../src/tools/tool.ts";
import {
  type Attempt,
  ATTEMPTS,
  probeReadOnlyTool,
  probeShellTool,
  probeWriterTool,
  SANDBOX_PROBE_WORKER_URL,
} from "../_fakes/sandbox_probes.ts";
import { parseToolOutput, runMewcode } from "../_fakes/run_cli.ts";
import { createTempWorkspace, TEST_SHELL_PLAN } from "../_fakes/tool_context.ts";
import { exists } from "../_fakes/exists.ts";

const BWRAP_PLAN: ShellPlan = { ...TEST_SHELL_PLAN, mode: "workspace-write", wrapper: ["bwrap"] };

/** danger-full-access names the shell by the path PATH resolves `bash` to, as the runtime flags do. */
async function directPlan(): Promise<ShellPlan> {
  for (const directory of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    const candidate = `${directory}/bash`;
    try {
      if ((await Deno.stat(candidate)).isFile) return { ...TEST_SHELL_PLAN, shell: candidate };
    } catch {
      continue;
    }
  }
  throw new Error("bash is not on PATH");
}

interface ClassCase {
  tool: AnyTool;
  shell: ShellPlan;
  /** What the class may do; every other attempt must be refused by Deno. */
  allowed: readonly Attempt[];
}

async function checkClass(t: Deno.TestContext, { tool, shell, allowed }: ClassCase): Promise<void> {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  await Deno.writeTextFile(`${workspace.root}/inside.txt`, "inside");
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const outsideFile = `${outside.root}/written-from-worker.txt`;
  await using executor = new WorkerExecutor({ workerUrl: SANDBOX_PROBE_WORKER_URL });
  for (const attempt of ATTEMPTS) {
    const expected = allowed.includes(attempt) ? "ok" : "NotCapable";
    await t.step(`${tool.name} ${attempt}: ${expected}`, async () => {
      const input: Record<string, unknown> = { attempt, port: listener.addr.port };
      if (attempt === "write-outside") input.path = outsideFile;
      const { result } = await executor.execute({
        tool,
        input,
        context: { root: workspace.root, timeoutMs: 20_000, fileRecords: {}, strictLinks: false, shell },
      }, { signal: new AbortController().signal });
      equal(result.isError, false, result.content);
      equal(result.metadata.outcome, expected, result.content);
    });
  }
  equal(await exists(`${workspace.root}/written-by-probe.txt`), allowed.includes("write-inside"));
  equal(await exists(outsideFile), false);
}

Deno.test("a read-only tool's worker may read the workspace and nothing else", async (t) => {
  await checkClass(t, { tool: probeReadOnlyTool, shell: BWRAP_PLAN, allowed: ["read-inside"] });
});

Deno.test("a writer's worker may read and write the workspace and nothing else", async (t) => {
  await checkClass(t, { tool: probeWriterTool, shell: BWRAP_PLAN, allowed: ["read-inside", "write-inside"] });
});

Deno.test("a destructive tool's worker may spawn bubblewrap and nothing else, not even bash", async (t) => {
  await checkClass(t, { tool: probeShellTool, shell: BWRAP_PLAN, allowed: ["spawn-bwrap"] });
});

Deno.test("a destructive tool's worker in danger-full-access may spawn bash and nothing else", async (t) => {
  await checkClass(t, { tool: probeShellTool, shell: await directPlan(), allowed: ["spawn-bash"] });
});

Deno.test("under the shipped runtime flags, Bash's worker may spawn what each sandbox mode needs", async (t) => {
  await using workspace = await createTempWorkspace();
  for (const mode of ["workspace-write", "read-only", "danger-full-access"]) {
    await t.step(mode, async () => {
      const run = await runMewcode(["tool", "Bash", '{"command": "echo ok from $0"}', "--sandbox", mode], {
        cwd: workspace.root,
      });
      equal(run.code, 0, run.stdout + run.stderr);
      const output = parseToolOutput(run);
      equal(output.is_error, false, output.content);
      match(output.content, /<output>ok from \/\S*(bash|sh)<\/output>/);
    });
  }
});
