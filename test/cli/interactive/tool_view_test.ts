import { deepEqual, equal, match, ok } from "node:assert/strict";
import { displayWidth } from "../../../src/cli/_terminal_text.ts";
import { createStyle } from "../../../src/cli/interactive/style.ts";
import {
  type FinishedCall,
  finishedToolLines,
  formatDuration,
  runningToolLine,
} from "../../../src/cli/interactive/tool_view.ts";
import type { CallOutcome } from "../../../src/agent/events.ts";

const ROOT = "/work/project";
const PLAIN = { style: createStyle({ colors: false }), width: 60, root: ROOT };
const COLORS = { ...PLAIN, style: createStyle({ colors: true }) };
const COMPLETED: CallOutcome = { status: "completed", gate: "execute" };

function call(name: string, input: unknown, overrides: Partial<FinishedCall> = {}): FinishedCall {
  return {
    name,
    input,
    result: { content: "ok", isError: false, metadata: {} },
    outcome: COMPLETED,
    durationMs: 12,
    ...overrides,
  };
}

function bashResult(output: string, exitCode: number): FinishedCall["result"] {
  return {
    content: `<output>${output}</output>\n<exit_code>${exitCode}</exit_code>`,
    isError: false,
    metadata: { exitCode },
  };
}

Deno.test("runningToolLine shows a spinner, the tool, its key argument and the elapsed time", () => {
  const started = 1_700_000_000_000;
  const bash = { name: "Bash", input: { command: "npm test" }, startedAt: started };
  equal(runningToolLine(bash, started + 2_400, PLAIN), "⠋ Bash npm test 2.4 s");
  equal(runningToolLine(bash, started + 2_480, PLAIN), "⠙ Bash npm test 2.4 s");
  equal(runningToolLine(bash, started + 75_000, PLAIN), "⠧ Bash npm test 1m 15s");
  const read = { name: "ReadFile", input: { path: `${ROOT}/src/a.ts` }, startedAt: started };
  equal(runningToolLine(read, started, PLAIN), "⠋ ReadFile src/a.ts 0.0 s");
});

Deno.test("finishedToolLines gives each outcome its glyph and words", async (t) => {
  const denial = {
    reason: 'Bash "rm -rf build" is denied by rule Bash(rm *)',
    decidedBy: { kind: "user" as const },
    hint: null,
  };
  const cases: { outcome: CallOutcome; result?: FinishedCall["result"]; expected: string[] }[] = [
    { outcome: COMPLETED, expected: ["✓ Glob **/*.ts (12 ms)"] },
    {
      outcome: { status: "failed", gate: "execute" },
      result: { content: "Cannot search: boom", isError: true, metadata: {} },
      expected: ["✗ Glob **/*.ts (12 ms)", "  Cannot search: boom"],
    },
    {
      outcome: { status: "invalid", gate: "schema" },
      result: { content: "pattern: expected string", isError: true, metadata: {} },
      expected: ["✗ Glob **/*.ts — invalid input", "  pattern: expected string"],
    },
    {
      outcome: { status: "denied", gate: "permission", denial },
      result: { content: "denied", isError: true, metadata: {} },
      expected: ["⊘ Glob **/*.ts — denied", '  Bash "rm -rf build" is denied by rule Bash(rm *)'],
    },
    { outcome: { status: "cancelled", gate: "permission" }, expected: ["○ Glob **/*.ts — cancelled"] },
    { outcome: { status: "aborted", gate: "execute" }, expected: ["■ Glob **/*.ts — interrupted (12 ms)"] },
    {
      outcome: { status: "timed-out", gate: "execute" },
      result: { content: "Glob stopped at its time limit", isError: true, metadata: {} },
      expected: ["✗ Glob **/*.ts — timed out (12 ms)", "  Glob stopped at its time limit"],
    },
  ];
  for (const { outcome, result, expected } of cases) {
    await t.step(outcome.status, () => {
      const lines = finishedToolLines(
        call("Glob", { pattern: "**/*.ts" }, { outcome, ...(result ? { result } : {}) }),
        PLAIN,
      );
      deepEqual(lines, expected);
    });
  }
});

Deno.test("finishedToolLines shows a denial's hint", () => {
  const outcome: CallOutcome = {
    status: "denied",
    gate: "permission",
    denial: {
      reason: "not allowed in plan mode",
      decidedBy: { kind: "mode", mode: "plan" },
      hint: '--allowedTools "Bash(ls)"',
    },
  };
  deepEqual(finishedToolLines(call("Bash", { command: "ls" }, { outcome }), PLAIN), [
    "⊘ Bash ls — denied",
    "  not allowed in plan mode",
    '  run with --allowedTools "Bash(ls)"',
  ]);
});

Deno.test("finishedToolLines summarises what read and search calls found", () => {
  const read = call("ReadFile", { path: `${ROOT}/src/a.ts` }, {
    result: { content: "", isError: false, metadata: { totalLines: 120 } },
  });
  deepEqual(finishedToolLines(read, PLAIN), ["✓ ReadFile src/a.ts · 120 lines (12 ms)"]);
  const page = call("ReadFile", { path: "/elsewhere/b.ts" }, {
    result: {
      content: "",
      isError: false,
      metadata: { totalLines: 900, startLine: 1, endLine: 200, truncated: true },
    },
  });
  deepEqual(finishedToolLines(page, PLAIN), ["✓ ReadFile /elsewhere/b.ts · lines 1-200 of 900 (12 ms)"]);
  const grep = call("Grep", { pattern: "TODO" }, {
    result: { content: "", isError: false, metadata: { matches: 1, files: 1 } },
    durationMs: 2_345,
  });
  deepEqual(finishedToolLines(grep, PLAIN), ["✓ Grep TODO · 1 match in 1 file (2.3 s)"]);
});

Deno.test("finishedToolLines marks a command that exits non-zero as failed and shows its last output lines", () => {
  const output = Array.from({ length: 8 }, (_, index) => `line ${index + 1}`).join("\n");
  const failed = call("Bash", { command: "npm test" }, {
    result: bashResult(`${output}\n`, 1),
    durationMs: 2_345,
  });
  deepEqual(finishedToolLines(failed, { ...PLAIN, outputLines: 3 }), [
    "✗ Bash npm test — exit code 1 (2.3 s)",
    "  │ … 5 lines above",
    "  │ line 6",
    "  │ line 7",
    "  │ line 8",
  ]);
  const passed = call("Bash", { command: "true" }, { result: bashResult("", 0) });
  deepEqual(finishedToolLines(passed, PLAIN), ["✓ Bash true (12 ms)"]);
});

Deno.test("finishedToolLines shows the output so far of a command that timed out", () => {
  const result = {
    content: "Bash command timed out after 1000 ms; output so far:\n<output>tick\ntock</output>",
    isError: true,
    metadata: {},
  };
  const lines = finishedToolLines(
    call("Bash", { command: "sleep 100" }, {
      result,
      outcome: { status: "timed-out", gate: "execute" },
      durationMs: 61_000,
    }),
    PLAIN,
  );
  deepEqual(lines, ["✗ Bash sleep 100 — timed out (1m 01s)", "  │ tick", "  │ tock"]);
});

Deno.test("finishedToolLines follows a file change with its diff and counts", () => {
  const edit = call("EditFile", { path: `${ROOT}/a.txt`, old_string: "b", new_string: "B" });
  deepEqual(finishedToolLines(edit, { ...PLAIN, diff: { before: "a\nb\n", after: "a\nB\n" } }), [
    "✓ EditFile a.txt · +1 -1 (12 ms)",
    "  1   a",
    "  2 - b",
    "  2 + B",
  ]);
  const created = call("WriteFile", { path: `${ROOT}/new.txt`, content: "x\ny\nz\n" });
  deepEqual(
    finishedToolLines(created, { ...PLAIN, diffLines: 2, diff: { before: null, after: "x\ny\nz\n" } }),
    [
      "✓ WriteFile new.txt · new file +3 (12 ms)",
      "  1 + x",
      "  … 2 more lines",
    ],
  );
});

Deno.test("finishedToolLines shows the first lines of an error in red with colours on", () => {
  const result = { content: "first\nsecond\nthird\nfourth", isError: true, metadata: {} };
  const lines = finishedToolLines(
    call("ReadFile", { path: `${ROOT}/x` }, { result, outcome: { status: "failed", gate: "execute" } }),
    { ...COLORS, errorLines: 2 },
  );
  deepEqual(lines, [
    "\x1b[31m✗\x1b[39m\x1b[1m ReadFile\x1b[22m x\x1b[2m (12 ms)\x1b[22m",
    "  \x1b[31mfirst\x1b[39m",
    "  \x1b[31msecond\x1b[39m",
    "\x1b[2m  …\x1b[22m",
  ]);
});

Deno.test("finishedToolLines cuts lines to the width and makes model and tool text safe", () => {
  const command = `echo \x1b[2J${"x".repeat(200)}`;
  const result = bashResult(`\x1b]0;title\x07${"y".repeat(200)}`, 0);
  const lines = finishedToolLines(call("Bash", { command }, { result }), { ...PLAIN, width: 40 });
  for (const line of lines) {
    ok(displayWidth(line) <= 40, `${line} is wider than 40`);
    ok([...line].every((char) => char >= " " && (char < "\x7f" || char > "\x9f")), `${line} has a control`);
  }
  match(lines[0]!, /^✓ Bash echo ␛\[2Jx+… \(12 ms\)$/);
  const running = runningToolLine({ name: "Bash", input: { command }, startedAt: 0 }, 0, {
    ...PLAIN,
    width: 40,
  });
  ok(displayWidth(running) <= 40);
});

Deno.test("formatDuration shows milliseconds, then tenths of seconds, seconds, and minutes", () => {
  deepEqual([12, 999, 1_000, 2_345, 45_900, 65_000].map(formatDuration), [
    "12 ms",
    "999 ms",
    "1.0 s",
    "2.3 s",
    "45 s",
    "1m 05s",
  ]);
});
