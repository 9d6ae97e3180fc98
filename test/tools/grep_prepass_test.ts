import { equal } from "node:assert/strict";
import { EXTENDED_BUDGET_FACTOR, WalkRecorder } from "../../src/tools/_grep_prepass.ts";

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
