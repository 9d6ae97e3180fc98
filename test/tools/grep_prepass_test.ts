import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { WalkRecorder } from "../../src/tools/_grep_prepass.ts";
import { EXTENDED_BUDGET_FACTOR, GREP_PREPASS } from "../../src/tools/_shared.ts";
import { type GrepInput, grepTool } from "../../src/tools/grep.ts";
import { createTempWorkspace, toolContext } from "../_fakes/tool_context.ts";

Deno.test("a search past its budget goes on while it has found half of what it may show, up to a limit", () => {
  const budgetMs = 100;
  const recorder = (elapsedMs: number) =>
    new WalkRecorder({ budgetMs, prefilter: null, walk: true }, performance.now() - elapsedMs);
  // Within the budget: never over it.
  equal(recorder(50).overBudget(0, 0), false);
  // Past it: over, unless half the results are found.
  const past = recorder(150);
  equal(past.overBudget(0, 0), true);
  equal(past.overBudget(0, 0.49), true);
  equal(past.overBudget(0, 0.5), false);
  equal(past.overBudget(0, 1), false);
  // Time spent confirming matches does not count.
  equal(past.overBudget(100, 0), false);
  // Past the extended budget: over, however much is found.
  equal(recorder(budgetMs * EXTENDED_BUDGET_FACTOR + 50).overBudget(0, 0.9), true);
});

Deno.test("Grep's budgeted search tells its caller once when it gives up searching", async () => {
  await using workspace = await createTempWorkspace();
  for (const name of ["a.txt", "b.txt", "c/d.txt"]) {
    await Deno.mkdir(join(workspace.root, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(workspace.root, name), "match\n");
  }
  const run = async (budgetMs: number, walk = true) => {
    const heard: string[] = [];
    const input = { pattern: "match", [GREP_PREPASS]: { budgetMs, prefilter: null, walk } };
    const result = await grepTool.execute(
      toolContext(workspace.root, { progress: (progress) => heard.push(progress) }),
      input as GrepInput,
    );
    return {
      heard,
      ended: result.metadata.walk !== undefined ? "walked" : result.metadata.prepass ?? "answered",
    };
  };
  // A budget spent before the first file: it says so, then walks on and reports the walk.
  deepEqual(await run(1e-9), { heard: ["budget-spent"], ended: "walked" });
  // Without the walk it says so too, before its result (which may first check a recent walk's stamps).
  deepEqual(await run(1e-9, false), { heard: ["budget-spent"], ended: "budget-spent" });
  // Answered within its budget: nothing to say.
  deepEqual(await run(60_000), { heard: [], ended: "answered" });
});
