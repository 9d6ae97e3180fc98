/** How the one-shot front end shows a compaction: stderr, stream-json, the status line, the run summary. */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { OutputWriter } from "../../src/cli/output_format.ts";
import { emptyRunSummary, foldRun } from "../../src/cli/run_summary.ts";
import { StatusLine } from "../../src/cli/status_line.ts";
import { StderrReporter } from "../../src/cli/stderr_reporter.ts";

const SUMMARY_USAGE = {
  inputTokens: 3000,
  outputTokens: 200,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};

const START: AgentEvent = { type: "compaction-start", turn: 4, trigger: "auto", messageCount: 7 };

const COMPACTION: AgentEvent = {
  type: "compaction",
  turn: 4,
  trigger: "auto",
  removedMessages: 5,
  keptMessages: 2,
  summary: "The user wants the tests fixed.",
  messages: [
    { role: "user", content: [{ type: "text", text: "[Summary of the earlier conversation] …" }] },
    { role: "assistant", content: [{ type: "text", text: "Reading." }] },
    { role: "user", content: [{ type: "text", text: "go on" }] },
  ],
  usage: SUMMARY_USAGE,
};

Deno.test("StderrReporter always says how many earlier messages a compaction summarised, even without --verbose", () => {
  for (const verbose of [false, true]) {
    const lines: string[] = [];
    const reporter = new StderrReporter(verbose, (text) => lines.push(text));
    reporter.report(START);
    reporter.report(COMPACTION);
    deepStrictEqual(lines, ["mewcode: compacted 5 earlier messages into a summary\n"]);
  }
});

Deno.test("OutputWriter writes one compaction line in stream-json, and none for its start", () => {
  const written: string[] = [];
  const writer = new OutputWriter("stream-json", {
    includePartialMessages: false,
    write: (text) => written.push(text),
  });
  writer.event(START);
  writer.event(COMPACTION);
  equal(written.length, 1);
  deepStrictEqual(JSON.parse(written[0] ?? ""), {
    type: "compaction",
    schema_version: 1,
    session_id: "",
    turn: 4,
    trigger: "auto",
    removed_messages: 5,
    kept_messages: 2,
    summary: "The user wants the tests fixed.",
    usage: {
      input_tokens: 3000,
      output_tokens: 200,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  });
  const text: string[] = [];
  const plain = new OutputWriter("text", { includePartialMessages: false, write: (line) => text.push(line) });
  plain.event(COMPACTION);
  deepStrictEqual(text, []);
});

Deno.test("StatusLine shows the conversation being compacted until the compaction ends", () => {
  const writes: string[] = [];
  using line = new StatusLine({ write: (text) => writes.push(text), columns: () => 200, intervalMs: 60_000 });
  line.report(START);
  const during = writes.join("").split("\r\x1b[2K").at(-1) ?? "";
  ok(during.includes("compacting the conversation"), during);
  line.report(COMPACTION);
  const after = writes.join("").split("\r\x1b[2K").at(-1) ?? "";
  ok(!after.includes("compacting"), after);
});

Deno.test("foldRun leaves the run summary to the usage event that carries a compaction's totals", () => {
  const before = emptyRunSummary();
  deepStrictEqual(foldRun(foldRun(before, START, 10), COMPACTION, 20), before);
  const totals = { ...SUMMARY_USAGE, requests: 5 };
  const after = foldRun(before, { type: "usage", turn: 4, usage: SUMMARY_USAGE, totals });
  deepStrictEqual(after.usage, totals);
});
