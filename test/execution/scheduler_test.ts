import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import type { ToolCall } from "../../src/execution/pipeline.ts";
import { type ExecutionMode, type ScheduledOutcome, ToolScheduler } from "../../src/execution/scheduler.ts";
import { probePipeline, Probes } from "../_fakes/probe_tools.ts";

function read(id: string, extra: Record<string, string> = {}): ToolCall {
  return { id, name: "ProbeRead", input: { label: id, ...extra } };
}
function write(id: string, extra: Record<string, string> = {}): ToolCall {
  return { id, name: "ProbeWrite", input: { label: id, ...extra } };
}

function setup(mode: ExecutionMode = "streaming", concurrency?: number) {
  const probes = new Probes();
  const started: string[] = [];
  const ended: ScheduledOutcome[] = [];
  const controller = new AbortController();
  const scheduler = new ToolScheduler(probePipeline(probes.tools), {
    signal: controller.signal,
    mode,
    ...(concurrency ? { concurrency } : {}),
    onStart: (call) => started.push(call.id),
    onEnd: (outcome) => ended.push(outcome),
  });
  return { probes, scheduler, started, ended, controller };
}

Deno.test("ToolScheduler runs consecutive safe calls in parallel and an unsafe call alone, in order", async () => {
  const { probes, scheduler } = setup("batched");
  // r1 holds until r2 has started: it can only finish if both run at once.
  scheduler.add(read("r1", { hold: "r2-started" }));
  scheduler.add(read("r2"));
  scheduler.add(write("w"));
  scheduler.add(read("r3"));
  scheduler.close();
  probes.started("r2").then(() => probes.release("r2-started"));
  const outcomes = await scheduler.settled();
  deepStrictEqual(probes.log.slice(0, 2).sort(), ["start r1", "start r2"]);
  deepStrictEqual(probes.log.slice(4), ["start w", "end w", "start r3", "end r3"]);
  deepStrictEqual([...outcomes.keys()].sort(), ["r1", "r2", "r3", "w"]);
  for (const outcome of outcomes.values()) equal(outcome.result.isError, false, outcome.result.content);
  equal(outcomes.get("w")?.result.content, "done w");
});

Deno.test("ToolScheduler splits ReadFile-WriteFile-ReadFile into three batches in order", async () => {
  const { probes, scheduler } = setup("streaming");
  scheduler.add(read("a"));
  scheduler.add(write("b"));
  scheduler.add(read("c"));
  scheduler.close();
  await scheduler.settled();
  deepStrictEqual(probes.log, ["start a", "end a", "start b", "end b", "start c", "end c"]);
});

Deno.test("ToolScheduler starts a safe call while the stream is still open", async () => {
  const { probes, scheduler, started } = setup("streaming");
  scheduler.add(read("r1", { hold: "go" }));
  await probes.started("r1");
  deepStrictEqual(started, ["r1"]);
  scheduler.add(read("r2", { hold: "go" }));
  await probes.started("r2");
  probes.release("go");
  scheduler.close();
  await scheduler.settled();
  equal(probes.maxRunning, 2);
});

Deno.test("ToolScheduler holds an unsafe call, and safe calls after it, until the stream ends", async () => {
  const { probes, scheduler, started } = setup("streaming");
  scheduler.add(read("r1"));
  scheduler.add(write("w"));
  scheduler.add(read("r2"));
  await probes.started("r1");
  // Let r1 finish: w still must not start before close().
  while (!scheduler.outcomes.has("r1")) await new Promise((resolve) => setTimeout(resolve, 0));
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(started, ["r1"]);
  scheduler.close();
  await scheduler.settled();
  deepStrictEqual(probes.log, ["start r1", "end r1", "start w", "end w", "start r2", "end r2"]);
});

Deno.test("ToolScheduler in batched mode starts nothing before the stream ends", async () => {
  const { scheduler, started } = setup("batched");
  scheduler.add(read("r1"));
  scheduler.add(read("r2"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(started, []);
  scheduler.close();
  await scheduler.settled();
  deepStrictEqual(started, ["r1", "r2"]);
});

Deno.test("ToolScheduler in sequential mode runs one call at a time", async () => {
  const { probes, scheduler } = setup("sequential");
  for (const id of ["r1", "r2", "r3"]) scheduler.add(read(id));
  scheduler.close();
  await scheduler.settled();
  equal(probes.maxRunning, 1);
  deepStrictEqual(probes.log, ["start r1", "end r1", "start r2", "end r2", "start r3", "end r3"]);
});

Deno.test("ToolScheduler bounds a batch at its concurrency and keeps results for every call", async () => {
  const { probes, scheduler } = setup("streaming", 3);
  for (let index = 0; index < 7; index++) scheduler.add(read(`r${index}`, { hold: "go" }));
  await probes.started("r2");
  await new Promise((resolve) => setTimeout(resolve, 0));
  equal(probes.running, 3);
  probes.release("go");
  scheduler.close();
  const outcomes = await scheduler.settled();
  equal(probes.maxRunning, 3);
  equal(outcomes.size, 7);
  deepStrictEqual(
    probes.log.filter((line) => line.startsWith("start")),
    [0, 1, 2, 3, 4, 5, 6].map((i) => `start r${i}`),
  );
});

Deno.test("ToolScheduler answers calls that fail prepare without running them or blocking others", async () => {
  const { probes, scheduler, ended } = setup("streaming");
  scheduler.add({ id: "x", name: "NoSuchTool", input: {} });
  scheduler.add({ id: "y", name: "ProbeRead", input: { label: 7 } });
  scheduler.add(read("r1"));
  scheduler.close();
  const outcomes = await scheduler.settled();
  match(outcomes.get("x")?.result.content ?? "", /Unknown tool "NoSuchTool"/);
  equal(outcomes.get("x")?.outcome.gate, "lookup");
  equal(outcomes.get("y")?.outcome.gate, "schema");
  equal(outcomes.get("r1")?.result.isError, false);
  deepStrictEqual(probes.log, ["start r1", "end r1"]);
  deepStrictEqual(ended.slice(0, 2).map((outcome) => outcome.call.id), ["x", "y"]);
});

Deno.test("ToolScheduler gives a preset result without running the call", async () => {
  const { probes, scheduler } = setup("streaming");
  scheduler.add(read("r1"), {
    ended: {
      result: { content: "you repeat yourself", isError: true, metadata: {} },
      outcome: { status: "cancelled", gate: "guard" },
    },
  });
  scheduler.close();
  const outcomes = await scheduler.settled();
  equal(outcomes.get("r1")?.result.content, "you repeat yourself");
  deepStrictEqual(probes.log, []);
});

Deno.test("ToolScheduler cancel aborts running calls and answers pending ones without running them", async () => {
  const { probes, scheduler } = setup("streaming");
  scheduler.add(read("r1", { hold: "never" }));
  scheduler.add(write("w"));
  await probes.started("r1");
  scheduler.cancel("the stream failed");
  scheduler.add(read("late"));
  const outcomes = await scheduler.settled();
  equal(outcomes.get("r1")?.outcome.status, "cancelled");
  equal(outcomes.get("w")?.result.content, "ProbeWrite was not run: the stream failed");
  equal(outcomes.get("late")?.result.isError, true);
  deepStrictEqual(probes.log, ["start r1", "end r1"]);
});

Deno.test("ToolScheduler reports timings with the end never before the start", async () => {
  const { scheduler } = setup("streaming");
  scheduler.add(read("r1"));
  scheduler.close();
  const outcome = (await scheduler.settled()).get("r1");
  ok(outcome);
  ok(outcome.timing.endedAt >= outcome.timing.startedAt);
  equal(outcome.timing.durationMs, outcome.timing.endedAt - outcome.timing.startedAt);
  ok(outcome.timing.startedAt > 1_600_000_000_000, "ms since the epoch");
});
