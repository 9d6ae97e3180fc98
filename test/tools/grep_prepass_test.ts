import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { PACE_AFTER_FILES, PACE_AFTER_MS, PACE_MARGIN, WalkRecorder } from "../../src/tools/_grep_prepass.ts";
import { EXTEND_FROM_FULLNESS, EXTENDED_BUDGET_FACTOR, GREP_PREPASS } from "../../src/tools/_shared.ts";
import type { Walker } from "../../src/tools/_walk.ts";
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

Deno.test("a search that expects more files than its pace can reach gives up before its budget is spent", () => {
  const budgetMs = 100;
  const walker = { ignoredFiles: 0, ignoredDirectories: 0 } as Walker;
  // A recorder `elapsedMs` into its search, which has searched `searched` files (and records one more).
  const recorder = (elapsedMs: number, searched: number, expectedFiles?: number) => {
    const recorder = new WalkRecorder(
      { budgetMs, prefilter: null, walk: false, ...(expectedFiles === undefined ? {} : { expectedFiles }) },
      performance.now() - elapsedMs,
    );
    for (let file = 0; file <= searched; file++) recorder.record(`f${file}.txt`, walker);
    return recorder;
  };
  // Each case leaves a wide margin to its boundary: the recorder's clock runs on while the test does.
  const elapsedMs = PACE_AFTER_MS + 5;
  const searched = PACE_AFTER_FILES;
  // At this pace, every file takes (elapsedMs / searched) ms: this many files take PACE_MARGIN budgets.
  const reachable = Math.floor(PACE_MARGIN * budgetMs * searched / elapsedMs);
  equal(recorder(elapsedMs, searched, reachable * 10).overBudget(0, 0), true);
  // Nothing expected, or well within what the pace can reach: the budget decides, as before.
  equal(recorder(elapsedMs, searched).overBudget(0, 0), false);
  equal(recorder(elapsedMs, searched, Math.floor(reachable / 2)).overBudget(0, 0), false);
  // Too early to judge the pace: by time, or by files.
  equal(recorder(PACE_AFTER_MS / 2, searched, reachable * 10).overBudget(0, 0), false);
  equal(recorder(elapsedMs, PACE_AFTER_FILES - 1, reachable * 10).overBudget(0, 0), false);
  // Finding enough to earn more time by the budget's end: it goes on.
  const earning = (EXTEND_FROM_FULLNESS / PACE_MARGIN) * elapsedMs / budgetMs;
  equal(recorder(elapsedMs, searched, reachable * 10).overBudget(0, earning * 2), false);
  equal(recorder(elapsedMs, searched, reachable * 10).overBudget(0, earning / 2), true);
  // Time spent confirming matches does not count toward the pace either.
  equal(recorder(elapsedMs, searched, reachable * 10).overBudget(elapsedMs - PACE_AFTER_MS / 2, 0), false);
});

Deno.test("Grep's budgeted search gives up at once, by its pace, in a tree far larger than its budget", async () => {
  await using workspace = await createTempWorkspace();
  // Enough files that searching them all takes well past PACE_AFTER_MS (measured: ~80 ms), in a budget of a
  // minute.
  const FILES = 600;
  for (let file = 0; file < FILES; file++) {
    await Deno.writeTextFile(join(workspace.root, `f${file}.txt`), "nothing to see\n".repeat(20));
  }
  const run = async (expectedFiles?: number) => {
    const heard: string[] = [];
    const prepass = {
      budgetMs: 60_000,
      prefilter: null,
      walk: false,
      ...(expectedFiles ? { expectedFiles } : {}),
    };
    const result = await grepTool.execute(
      toolContext(workspace.root, { progress: (progress) => heard.push(progress) }),
      { pattern: "match", [GREP_PREPASS]: prepass } as GrepInput,
    );
    return { heard, ended: result.metadata.prepass ?? "answered" };
  };
  // Told to expect a billion files, it gives up long before its minute.
  deepEqual(await run(1e9), { heard: ["budget-spent"], ended: "budget-spent" });
  // Told nothing, or the real number, it searches every file within the minute and answers.
  deepEqual(await run(), { heard: [], ended: "answered" });
  deepEqual(await run(FILES), { heard: [], ended: "answered" });
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
