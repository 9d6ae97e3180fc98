import { equal, match, ok, throws } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { formatDuration, StatusLine, type StatusLineOptions } from "../../src/cli/status_line.ts";

const ERASE = "\r\x1b[2K";
const START = 1_700_000_000_000;

/** A status line on a fake terminal: everything written, a clock the test moves, a width it sets. */
function fakeTerminal(options: Partial<StatusLineOptions> = {}) {
  const writes: string[] = [];
  let now = START;
  let columns = 200;
  const line = new StatusLine({
    write: (text) => writes.push(text),
    columns: () => columns,
    now: () => now,
    // Long enough that the real timer never fires during a test; tests redraw by hand.
    intervalMs: 60_000,
    ...options,
  });
  return {
    line,
    writes,
    output: () => writes.join(""),
    /** What the terminal's last line shows now: the text after the last erase. */
    shown: () => writes.join("").split(ERASE).at(-1) ?? "",
    advance(ms: number) {
      now += ms;
      line.redraw();
    },
    setColumns(value: number) {
      columns = value;
    },
    [Symbol.dispose]() {
      line.stop();
    },
  };
}

function requestStart(turn: number): AgentEvent {
  return {
    type: "request-start",
    turn,
    model: "claude-test",
    maxTokens: 1024,
    system: "You are a test.",
    messageCount: 1,
    tools: ["ReadFile", "Bash"],
  };
}

function toolStart(id: string, name: string, input: unknown): AgentEvent {
  return { type: "tool-call-start", turn: 1, id, name, input, startedAt: START };
}

function toolEnd(id: string, name: string, input: unknown): AgentEvent {
  return {
    type: "tool-call-end",
    turn: 1,
    id,
    name,
    input,
    result: { content: "ok", isError: false, metadata: {} },
    outcome: { status: "completed", gate: "execute" },
    startedAt: START,
    endedAt: START + 5,
    durationMs: 5,
  };
}

function retry(attempt: number, delayMs: number): AgentEvent {
  return { type: "retry", turn: 1, attempt, delayMs, reason: "Overloaded (529 overloaded_error)" };
}

function turnEnd(): AgentEvent {
  const totals = {
    inputTokens: 10,
    outputTokens: 5,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    requests: 1,
  };
  return {
    type: "turn-end",
    reason: "end_turn",
    turns: 1,
    text: "done",
    message: null,
    totals,
    costUsd: null,
    durationMs: 9,
  };
}

/** Cells a terminal uses for the text: two for each CJK ideograph of the tests, one for anything else. */
function cells(text: string): number {
  return [...text].reduce((sum, char) => sum + (/\p{Script=Han}/u.test(char) ? 2 : 1), 0);
}

Deno.test("StatusLine shows the running tool and its key argument", async (t) => {
  const cases: [string, unknown, string][] = [
    ["ReadFile", { path: "/work/src/main.ts", offset: 3 }, "ReadFile /work/src/main.ts"],
    ["WriteFile", { path: "/work/notes.md", content: "secret body" }, "WriteFile /work/notes.md"],
    ["EditFile", { path: "/work/a.ts", old_string: "x", new_string: "y" }, "EditFile /work/a.ts"],
    ["Bash", { command: "npm test\nnpm run lint" }, "Bash npm test …"],
    ["Glob", { pattern: "src/**/*.ts" }, "Glob src/**/*.ts"],
    ["Grep", { pattern: "TODO|FIXME", path: "/work" }, "Grep TODO|FIXME"],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => {
      using terminal = fakeTerminal();
      terminal.line.report(toolStart("call-1", name, input));
      ok(terminal.shown().includes(expected), terminal.shown());
      ok(!terminal.shown().includes("secret body"), terminal.shown());
      ok(!terminal.shown().includes("npm run lint"), terminal.shown());
    });
  }
  await t.step("an unknown tool shows its name only", () => {
    using terminal = fakeTerminal();
    terminal.line.report(toolStart("call-1", "WebFetch", { url: "https://example.com/" }));
    ok(terminal.shown().includes("WebFetch"), terminal.shown());
    ok(!terminal.shown().includes("example.com"), terminal.shown());
  });
});

Deno.test("StatusLine shows the latest started of concurrent calls and how many others run", () => {
  using terminal = fakeTerminal();
  terminal.line.report(toolStart("a", "ReadFile", { path: "/work/a.ts" }));
  terminal.line.report(toolStart("b", "Glob", { pattern: "*.md" }));
  terminal.line.report(toolStart("c", "Grep", { pattern: "needle" }));
  ok(terminal.shown().includes("Grep needle +2 more"), terminal.shown());
  terminal.line.report(toolEnd("c", "Grep", { pattern: "needle" }));
  ok(terminal.shown().includes("Glob *.md +1 more"), terminal.shown());
  terminal.line.report(toolEnd("a", "ReadFile", { path: "/work/a.ts" }));
  ok(terminal.shown().includes("Glob *.md"), terminal.shown());
  ok(!terminal.shown().includes("more"), terminal.shown());
  terminal.line.report(toolEnd("b", "Glob", { pattern: "*.md" }));
  ok(!terminal.shown().includes("Glob"), terminal.shown());
  ok(terminal.shown().includes("3 tool calls"), terminal.shown());
});

Deno.test("StatusLine shows waiting, thinking and writing as a request streams", () => {
  using terminal = fakeTerminal();
  terminal.line.report({ type: "user-message", text: "hello" });
  terminal.line.report(requestStart(2));
  match(terminal.shown(), /waiting for the model · turn 2$/);
  terminal.line.report({ type: "thinking-delta", turn: 2, thinking: "hmm" });
  match(terminal.shown(), /thinking · turn 2$/);
  terminal.line.report({ type: "text-delta", turn: 2, text: "Here" });
  match(terminal.shown(), /writing · turn 2$/);
  terminal.line.report({ type: "request-end", turn: 2, stopReason: "tool_use", content: [], partial: false });
  match(terminal.shown(), /working · turn 2$/);
});

Deno.test("StatusLine does not rewrite a line that did not change", () => {
  using terminal = fakeTerminal();
  terminal.line.report({ type: "text-delta", turn: 1, text: "a" });
  const count = terminal.writes.length;
  terminal.line.report({ type: "text-delta", turn: 1, text: "b" });
  terminal.line.report({ type: "text-delta", turn: 1, text: "c" });
  equal(terminal.writes.length, count);
});

Deno.test("StatusLine counts a retry's wait down as the clock advances", () => {
  using terminal = fakeTerminal();
  terminal.line.report(requestStart(1));
  terminal.line.report(retry(1, 4000));
  ok(
    terminal.shown().includes("Overloaded (529 overloaded_error) — retrying in 4s (attempt 2)"),
    terminal.shown(),
  );
  terminal.advance(1500);
  ok(terminal.shown().includes("retrying in 3s (attempt 2)"), terminal.shown());
  terminal.advance(2000);
  ok(terminal.shown().includes("retrying in 1s (attempt 2)"), terminal.shown());
  terminal.advance(600);
  ok(terminal.shown().includes("waiting for the model (attempt 2)"), terminal.shown());
  ok(!terminal.shown().includes("retrying"), terminal.shown());
  terminal.line.report({ type: "text-delta", turn: 1, text: "Hi" });
  ok(!terminal.shown().includes("attempt"), terminal.shown());
});

Deno.test("StatusLine shows a retry's countdown instead of the calls of the discarded response", () => {
  using terminal = fakeTerminal();
  terminal.line.report(toolStart("a", "Glob", { pattern: "*.ts" }));
  terminal.line.report(retry(1, 2000));
  ok(terminal.shown().includes("retrying in 2s (attempt 2)"), terminal.shown());
  ok(!terminal.shown().includes("Glob"), terminal.shown());
});

Deno.test("StatusLine shows a long retry wait in minutes", () => {
  using terminal = fakeTerminal();
  terminal.line.report(retry(3, 90_000));
  ok(terminal.shown().includes("retrying in 1m30s (attempt 4)"), terminal.shown());
});

Deno.test("StatusLine shows the time elapsed since it started on the injected clock", () => {
  using terminal = fakeTerminal();
  match(terminal.shown(), /^. 0s · /);
  terminal.advance(12_400);
  match(terminal.shown(), /^. 12s · /);
  terminal.advance(52_600);
  match(terminal.shown(), /^. 1m05s · /);
});

Deno.test("formatDuration writes seconds, then minutes and seconds, then hours and minutes", async (t) => {
  const cases: [number, string][] = [
    [0, "0s"],
    [999, "0s"],
    [12_000, "12s"],
    [59_999, "59s"],
    [60_000, "1m00s"],
    [65_000, "1m05s"],
    [3_599_999, "59m59s"],
    [3_600_000, "1h00m"],
    [3_725_000, "1h02m"],
    [-5, "0s"],
  ];
  for (const [ms, expected] of cases) {
    await t.step(`${ms} ms`, () => equal(formatDuration(ms), expected));
  }
});

Deno.test("StatusLine cuts a long line to the terminal width", async (t) => {
  await t.step("a long command keeps its start, the elapsed time and the counts", () => {
    using terminal = fakeTerminal();
    terminal.setColumns(60);
    terminal.line.report(requestStart(3));
    terminal.line.report(toolStart("a", "Bash", { command: `echo ${"x".repeat(300)} END` }));
    const shown = terminal.shown();
    ok([...shown].length <= 59, shown);
    match(shown, /^. 0s · Bash echo x+… · turn 3$/);
  });
  await t.step("a long path keeps its end", () => {
    using terminal = fakeTerminal();
    terminal.setColumns(50);
    terminal.line.report(toolStart("a", "ReadFile", { path: `/work/${"deep/".repeat(40)}main.ts` }));
    const shown = terminal.shown();
    ok([...shown].length <= 49, shown);
    match(shown, /ReadFile …[a-z/]*main\.ts$/);
  });
  await t.step("wide characters count two cells", () => {
    using terminal = fakeTerminal();
    terminal.setColumns(40);
    terminal.line.report(toolStart("a", "Grep", { pattern: "漢".repeat(100) }));
    const shown = terminal.shown();
    ok(cells(shown) <= 39, shown);
    ok(shown.includes("漢…"), shown);
  });
  await t.step("a terminal too narrow for the fixed parts cuts the end of the line", () => {
    using terminal = fakeTerminal();
    terminal.setColumns(20);
    terminal.line.report(retry(1, 4000));
    const shown = terminal.shown();
    ok([...shown].length <= 19, shown);
    ok(shown.endsWith("…"), shown);
  });
  await t.step("the width is asked again at each redraw", () => {
    using terminal = fakeTerminal();
    terminal.line.report(toolStart("a", "Glob", { pattern: "p".repeat(150) }));
    ok([...terminal.shown()].length > 100, terminal.shown());
    terminal.setColumns(30);
    terminal.advance(1000);
    ok([...terminal.shown()].length <= 29, terminal.shown());
  });
});

Deno.test("StatusLine never writes control characters from model text", () => {
  using terminal = fakeTerminal();
  const command = "echo \x1b]0;pwned\x07 \x1b[31mred\r\x9b2J\u202edone\x7f";
  terminal.line.report(toolStart("a", "Bash", { command }));
  terminal.line.report(toolStart("b", "ReadFile", { path: "/work/a\nb\r\x1b[2Kc.ts" }));
  terminal.line.report(toolStart("c", "Evil\x1b[2J", {}));
  terminal.line.report({ type: "retry", turn: 1, attempt: 1, delayMs: 1000, reason: "Bad\x1b[Hgateway\n" });
  terminal.line.report(toolEnd("c", "Evil\x1b[2J", {}));
  terminal.line.report(toolEnd("b", "ReadFile", {}));
  terminal.line.report(toolEnd("a", "Bash", {}));
  const text = terminal.output().replaceAll(ERASE, "");
  const controls = [...text].filter((char) => /[\p{Cc}\u202a-\u202e]/u.test(char));
  equal(controls.length, 0, JSON.stringify(text));
  ok(text.includes("Bash echo ␛]0;pwned␇ ␛[31mred␍\ufffd2J\ufffddone␡"), text);
  ok(text.includes("ReadFile /work/a␊b␍␛[2Kc.ts"), text);
  ok(text.includes("Evil␛[2J"), text);
  ok(text.includes("Bad␛[Hgateway␊"), text);
});

Deno.test("StatusLine printAbove erases the line, writes the text and redraws the line", () => {
  using terminal = fakeTerminal();
  terminal.line.report(toolStart("a", "Glob", { pattern: "*.ts" }));
  const before = terminal.shown();
  const count = terminal.writes.length;
  terminal.line.printAbove("mewcode: warning: sandbox undid a write\n");
  terminal.line.printAbove("mewcode: no newline");
  equal(
    terminal.writes.slice(count).join(""),
    `${ERASE}mewcode: warning: sandbox undid a write\n${ERASE}${before}` +
      `${ERASE}mewcode: no newline\n${ERASE}${before}`,
  );
  terminal.line.stop();
  const stopped = terminal.writes.length;
  terminal.line.printAbove("mewcode: after the end\n");
  equal(terminal.writes.slice(stopped).join(""), "mewcode: after the end\n");
});

Deno.test("StatusLine stop erases the line once and later calls write nothing", () => {
  using terminal = fakeTerminal();
  terminal.line.report(requestStart(1));
  ok(terminal.shown().length > 0);
  const count = terminal.writes.length;
  terminal.line.stop();
  terminal.line.stop();
  equal(terminal.writes.slice(count).join(""), ERASE);
  terminal.line.report(toolStart("a", "Bash", { command: "ls" }));
  terminal.advance(5000);
  equal(terminal.writes.slice(count).join(""), ERASE);
});

Deno.test("StatusLine stops at turn-end", () => {
  using terminal = fakeTerminal();
  terminal.line.report(requestStart(1));
  terminal.line.report(turnEnd());
  ok(terminal.output().endsWith(ERASE), JSON.stringify(terminal.output()));
  const count = terminal.writes.length;
  terminal.line.report(requestStart(2));
  terminal.advance(5000);
  equal(terminal.writes.length, count);
});

Deno.test("StatusLine redraws on its own timer", async () => {
  const writes: string[] = [];
  let now = START;
  const { promise, resolve } = Promise.withResolvers<void>();
  using _line = new StatusLine({
    write: (text) => {
      writes.push(text);
      if (text.includes(" 3s · ")) resolve();
    },
    columns: () => 80,
    now: () => now,
    intervalMs: 5,
  });
  now += 3000;
  const timeout = setTimeout(resolve, 2000);
  await promise;
  clearTimeout(timeout);
  ok(writes.at(-1)?.includes(" 3s · "), JSON.stringify(writes));
});

Deno.test("StatusLine rejects an interval that is not a positive number", () => {
  for (const intervalMs of [0, -1, Number.NaN, Infinity]) {
    throws(() => new StatusLine({ write: () => {}, intervalMs }), RangeError);
  }
});
