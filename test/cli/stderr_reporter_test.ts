import { deepStrictEqual } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { StderrReporter } from "../../src/cli/stderr_reporter.ts";

/** The verbose lines a reporter writes for these events. */
function verboseLines(events: AgentEvent[]): string[] {
  const lines: string[] = [];
  const reporter = new StderrReporter(true, (text) => lines.push(text));
  for (const event of events) reporter.report(event);
  return lines;
}

function bashEnd(content: string, exitCode: number, isError = false): AgentEvent {
  return {
    type: "tool-call-end",
    turn: 1,
    id: "toolu_1",
    name: "Bash",
    input: { command: "make" },
    result: { content, isError, metadata: { exitCode } },
    outcome: { status: "completed", gate: "execute" },
    startedAt: 1000,
    endedAt: 1114,
    durationMs: 114,
  };
}

Deno.test("StderrReporter --verbose gives a command that exits non-zero its exit code instead of ok", () => {
  deepStrictEqual(verboseLines([bashEnd("<output>hi</output>\n<exit_code>3</exit_code>", 3)]), [
    "[tool] Bash completed in 114 ms: exit code 3\n",
  ]);
});

Deno.test("StderrReporter --verbose says ok for a call that succeeded, and the error's first line for one that failed", async (t) => {
  await t.step("exit code 0", () => {
    deepStrictEqual(verboseLines([bashEnd("<output>hi</output>", 0)]), [
      "[tool] Bash completed in 114 ms: ok\n",
    ]);
  });
  await t.step("an error result", () => {
    deepStrictEqual(verboseLines([bashEnd("Cannot run Bash: no sandbox\nmore", 0, true)]), [
      "[tool] Bash completed in 114 ms: error: Cannot run Bash: no sandbox\n",
    ]);
  });
});
