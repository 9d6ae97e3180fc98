/**
 * The loop sends a request again when its response breaks off mid-way with nothing of side effects
 * started: against the fake Anthropic server over real HTTP, with the real ReadFile, WriteFile and Bash
 * tools in a temp workspace (run in-process).
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { Conversation, validateConversation } from "../../src/agent/conversation.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runAgent, type RunAgentOptions } from "../../src/agent/loop.ts";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { FileRecordStore } from "../../src/execution/file_records.ts";
import { ToolPipeline } from "../../src/execution/pipeline.ts";
import { AnthropicProvider } from "../../src/llm/anthropic_provider.ts";
import { OverloadedError, StreamInterruptedError } from "../../src/llm/errors.ts";
import type { RetryOptions, Sleep } from "../../src/llm/retry.ts";
import { loadSession } from "../../src/session/load_session.ts";
import { readTranscript, Transcript } from "../../src/session/transcript.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import { type FakeAnthropic, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { ALLOW_ALL, fixedShell, NO_SHELL } from "../_fakes/pipeline.ts";
import { probePipeline, Probes } from "../_fakes/probe_tools.ts";
import { messageStart, ScriptedProvider, textTurn, toolTurn } from "../_fakes/scripted_provider.ts";
import { createTempWorkspace, type TempWorkspace } from "../_fakes/tool_context.ts";

/** Waits no time and records the delays asked for. */
function instantSleep(delays: number[]): Sleep {
  return (ms) => {
    delays.push(ms);
    return Promise.resolve();
  };
}

interface HttpRun {
  events: AgentEvent[];
  conversation: Conversation;
  /** When the consumer saw each event (ms since the epoch), in order. */
  times: number[];
}

/** Runs the agent against the server with the file tools and Bash over the workspace. */
async function runOverHttp(
  server: FakeAnthropic,
  workspace: TempWorkspace,
  options: {
    retry?: RetryOptions;
    signal?: AbortSignal;
    transcript?: Transcript;
    onEvent?: (event: AgentEvent) => void;
  } = {},
): Promise<HttpRun> {
  const registry = new ToolRegistry();
  for (const tool of [readFileTool, writeFileTool, bashTool]) registry.register(tool);
  const pipeline = new ToolPipeline({
    registry,
    executor: new DirectExecutor(),
    policy: ALLOW_ALL,
    files: new FileRecordStore(),
    root: workspace.root,
    strictLinks: false,
    shell: fixedShell(NO_SHELL),
  });
  const provider = new AnthropicProvider({
    apiKey: server.apiKey,
    baseUrl: server.url,
    retry: { random: () => 0 },
  });
  const conversation = new Conversation();
  const agentOptions: RunAgentOptions = {
    provider,
    pipeline,
    prompt: "Look at the file",
    model: "claude-test",
    maxTokens: 1000,
    system: "You are a test.",
    signal: options.signal ?? new AbortController().signal,
    conversation,
    retry: options.retry ?? { sleep: instantSleep([]) },
  };
  const events: AgentEvent[] = [];
  const times: number[] = [];
  for await (const event of runAgent(agentOptions)) {
    options.transcript?.record(event);
    options.onEvent?.(event);
    events.push(event);
    times.push(Date.now());
  }
  return { events, conversation, times };
}

function ofType<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
}

function turnEnd(events: AgentEvent[]): Extract<AgentEvent, { type: "turn-end" }> {
  const last = events.at(-1);
  ok(last?.type === "turn-end", `the last event is turn-end, got ${JSON.stringify(last)}`);
  return last;
}

/** The `messages` of the server's recorded request `number` (1-based). */
function wireMessages(server: FakeAnthropic, number: number): { role: string; content: unknown }[] {
  const body = server.requests[number - 1]?.body as { messages?: { role: string; content: unknown }[] };
  ok(Array.isArray(body?.messages), `request ${number} has messages`);
  return body.messages;
}

Deno.test("runAgent sends the request again when the stream breaks with an overloaded error after a text block and a ReadFile call, keeping only the second response", async () => {
  await using workspace = await createTempWorkspace();
  const home = await Deno.makeTempDir();
  const transcript = await Transcript.create({ home, root: workspace.root });
  try {
    const path = join(workspace.root, "notes.txt");
    await Deno.writeTextFile(path, "hello from the file\n");
    await using server = await startFakeAnthropic([
      // The read finishes during the pause, before the stream breaks.
      turn().text("Let me read it.").toolUse("ReadFile", { path }, { id: "toolu_first" }).delay(200)
        .errorEvent("overloaded_error", "Overloaded"),
      turn().text("Let me read it.").toolUse("ReadFile", { path }, { id: "toolu_second" }),
      turn().text("The file says hello.").stop("end_turn"),
    ]);
    const delays: number[] = [];
    const { events, conversation } = await runOverHttp(server, workspace, {
      retry: { sleep: instantSleep(delays), random: () => 0.5 },
      transcript,
    });

    const end = turnEnd(events);
    equal(end.reason, "end_turn");
    equal(end.text, "The file says hello.");
    equal(end.turns, 2, "the discarded response is not a turn");
    equal(server.requests.length, 3);
    equal(server.remaining, 0);
    deepStrictEqual(server.requests[1]?.body, server.requests[0]?.body, "the same request was sent again");

    deepStrictEqual(ofType(events, "retry").map(({ turn, attempt, delayMs }) => [turn, attempt, delayMs]), [
      [1, 1, 500],
    ]);
    match(
      ofType(events, "retry")[0]?.reason ?? "",
      /^Response stream broke off after content arrived: Overloaded \(529 overloaded_error\)$/,
    );
    deepStrictEqual(delays, [500], "waited as DEFAULT_RETRY_POLICY says for a first retry");
    deepStrictEqual(
      ofType(events, "request-end").map((event) => [event.turn, event.partial]),
      [[1, false], [2, false]],
      "no request-end for the discarded response",
    );
    equal(ofType(events, "error").length, 0);
    const first = ofType(events, "tool-call-end").filter((event) => event.id === "toolu_first");
    equal(first.length, 1, "the discarded read still reports its end");

    const third = wireMessages(server, 3);
    deepStrictEqual(third, [
      { role: "user", content: [{ type: "text", text: "Look at the file" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me read it." },
          { type: "tool_use", id: "toolu_second", name: "ReadFile", input: { path } },
        ],
      },
      third[2],
    ]);
    const results = third[2]?.content;
    ok(Array.isArray(results));
    equal(results.length, 1, "one tool_result: the discarded read's is not sent");
    equal(results[0]?.tool_use_id, "toolu_second");
    match(String(JSON.stringify(results[0]?.content)), /hello from the file/);
    ok(!JSON.stringify(server.requests[2]?.body).includes("toolu_first"));

    equal(conversation.messages.length, 4);
    deepStrictEqual(validateConversation(conversation.messages), []);
    ok(!JSON.stringify(conversation.messages).includes("toolu_first"));

    // Usage: three requests, the broken one with what it reported at its start.
    equal(end.totals.requests, 3);
    equal(end.totals.inputTokens, 300);
    equal(end.totals.outputTokens, 20 + 1 + 20);

    transcript.close();
    const loaded = await loadSession(transcript.path);
    deepStrictEqual(loaded.messages, conversation.messages, "the transcript rebuilds the same conversation");
    equal(loaded.turns, 2);
    equal(loaded.notice, null);
  } finally {
    transcript.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runAgent sends the request again when the connection drops mid-stream", async () => {
  await using workspace = await createTempWorkspace();
  await using server = await startFakeAnthropic([
    turn().text("Half an ans").drop(),
    turn().text("A whole answer.").stop("end_turn"),
  ]);
  const { events, conversation } = await runOverHttp(server, workspace);
  const end = turnEnd(events);
  equal(end.reason, "end_turn");
  equal(end.text, "A whole answer.");
  equal(server.requests.length, 2);
  const [retry] = ofType(events, "retry");
  match(retry?.reason ?? "", /^Response stream broke off after content arrived: .*\(connection\)$/);
  deepStrictEqual(conversation.messages, [
    { role: "user", content: [{ type: "text", text: "Look at the file" }] },
    { role: "assistant", content: [{ type: "text", text: "A whole answer." }] },
  ]);
});

Deno.test("runAgent does not send the request again when the stream breaks after a call with side effects, and ends with an error", async (t) => {
  const cases: [string, (root: string) => unknown][] = [
    ["WriteFile", (root) => ({ path: join(root, "out.txt"), content: "written" })],
    ["Bash", (root) => ({ command: `touch ${join(root, "out.txt")}` })],
  ];
  for (const [tool, input] of cases) {
    await t.step(tool, async () => {
      await using workspace = await createTempWorkspace();
      await using server = await startFakeAnthropic([
        turn().text("Making the change.").toolUse(tool, input(workspace.root), { id: "toolu_change" }).delay(
          50,
        )
          .errorEvent("overloaded_error", "Overloaded"),
        turn().text("Not expected.").stop("end_turn"),
      ]);
      const { events, conversation } = await runOverHttp(server, workspace);
      equal(server.requests.length, 1, "not sent again");
      equal(ofType(events, "retry").length, 0);
      const [error] = ofType(events, "error");
      ok(error?.error instanceof StreamInterruptedError);
      equal(error.category, "unavailable");
      match(error.message, /Response stream interrupted after content arrived: Overloaded/);
      const end = turnEnd(events);
      equal(end.reason, "error");
      equal(end.text, "Making the change.");
      deepStrictEqual(
        ofType(events, "request-end").map((event) => [event.partial, event.content]),
        [[true, [{ type: "text", text: "Making the change." }]]],
      );
      deepStrictEqual(conversation.messages.at(-1), {
        role: "assistant",
        content: [{ type: "text", text: "Making the change." }],
      });
      deepStrictEqual(validateConversation(conversation.messages), []);
      deepStrictEqual(conversation.pendingToolUses(), []);
      deepStrictEqual(
        ofType(events, "tool-call-end").map((event) => [event.id, event.outcome.status]),
        [["toolu_change", "cancelled"]],
      );
      equal(await Deno.stat(join(workspace.root, "out.txt")).then(() => true, () => false), false);
    });
  }
});

Deno.test("runAgent does not send the request again after a mid-stream error that is not retryable, and records its category", async () => {
  await using workspace = await createTempWorkspace();
  const home = await Deno.makeTempDir();
  const transcript = await Transcript.create({ home, root: workspace.root });
  try {
    await using server = await startFakeAnthropic([
      turn().text("Starting").errorEvent("invalid_request_error", "Something about the request"),
    ]);
    const { events } = await runOverHttp(server, workspace, { transcript });
    equal(server.requests.length, 1);
    equal(ofType(events, "retry").length, 0);
    equal(ofType(events, "error")[0]?.category, "api");
    equal(turnEnd(events).reason, "error");
    transcript.close();
    const { records } = await readTranscript(transcript.path);
    const error = records.find((record) => record.type === "error");
    ok(error?.type === "error");
    deepStrictEqual([error.name, error.category], ["StreamInterruptedError", "api"]);
  } finally {
    transcript.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runAgent ends with an error when the stream still breaks after DEFAULT_RETRY_POLICY's retries", async () => {
  await using workspace = await createTempWorkspace();
  const broken = (attempt: number) =>
    turn().text(`Attempt ${attempt}`).errorEvent("overloaded_error", "Overloaded");
  await using server = await startFakeAnthropic([1, 2, 3, 4, 5].map(broken));
  const delays: number[] = [];
  const { events, conversation } = await runOverHttp(server, workspace, {
    retry: { sleep: instantSleep(delays), random: () => 0.5 },
  });
  equal(server.requests.length, 5, "the first request and 4 retries");
  equal(server.remaining, 0);
  deepStrictEqual(ofType(events, "retry").map((event) => event.attempt), [1, 2, 3, 4]);
  deepStrictEqual(delays, [500, 1000, 2000, 4000]);
  const [error] = ofType(events, "error");
  equal(error?.category, "unavailable");
  const end = turnEnd(events);
  equal(end.reason, "error");
  equal(end.turns, 1);
  equal(end.totals.requests, 5);
  deepStrictEqual(conversation.messages, [
    { role: "user", content: [{ type: "text", text: "Look at the file" }] },
    { role: "assistant", content: [{ type: "text", text: "Attempt 5" }] },
  ]);
});

Deno.test("runAgent stops promptly with reason aborted when the signal aborts while it waits to retry a broken stream", async () => {
  await using workspace = await createTempWorkspace();
  await using server = await startFakeAnthropic([
    turn().text("Partial").errorEvent("overloaded_error", "Overloaded"),
    turn().text("Not expected.").stop("end_turn"),
  ]);
  const controller = new AbortController();
  let abortedAt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const { events, conversation, times } = await runOverHttp(server, workspace, {
    // A wait of about a minute: only the abort can end it in time.
    retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 0.99 },
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type !== "retry") return;
      timer = setTimeout(() => {
        abortedAt = Date.now();
        controller.abort();
      }, 50);
    },
  });
  clearTimeout(timer);
  const [retry] = ofType(events, "retry");
  ok((retry?.delayMs ?? 0) > 50_000, `a long wait was chosen (${retry?.delayMs} ms)`);
  const end = turnEnd(events);
  equal(end.reason, "aborted");
  ok(abortedAt > 0);
  const endedAfter = (times.at(-1) ?? 0) - abortedAt;
  ok(endedAfter < 1_000, `ended ${endedAfter} ms after the abort`);
  equal(server.requests.length, 1);
  equal(ofType(events, "error").length, 0);
  deepStrictEqual(conversation.messages, [
    { role: "user", content: [{ type: "text", text: "Look at the file" }] },
  ], "the discarded response is not in the conversation");
});

Deno.test("runAgent cancels a broken response's running read-only call and does not count it as a repeat", async () => {
  const probes = new Probes();
  // The same input both times; the gate opens only once the first call was given up.
  const input = { label: "same", hold: "gate" };
  const provider = new ScriptedProvider([
    [
      messageStart(),
      { type: "tool-call", index: 0, id: "t_held", name: "ProbeRead", input },
      { type: "wait", until: probes.started("same") },
      {
        type: "throw",
        error: new StreamInterruptedError(
          new OverloadedError("Overloaded", {
            status: 529,
            errorType: "overloaded_error",
            isRetryable: true,
          }),
        ),
      },
    ],
    toolTurn([{ id: "t_again", name: "ProbeRead", input }]),
    textTurn("Done."),
  ]);
  const events: AgentEvent[] = [];
  const run = runAgent({
    provider,
    pipeline: probePipeline(probes.tools),
    prompt: "go",
    model: "m",
    maxTokens: 100,
    system: "s",
    signal: new AbortController().signal,
    repeatLimit: 2,
    retry: { sleep: instantSleep([]) },
  });
  for await (const event of run) {
    if (event.type === "retry") probes.release("gate");
    events.push(event);
  }
  equal(turnEnd(events).reason, "end_turn");
  deepStrictEqual(
    ofType(events, "tool-call-end").map((event) => [event.id, event.outcome.status]),
    [["t_held", "cancelled"], ["t_again", "completed"]],
  );
  // No one interrupted anything: the result says what happened.
  equal(
    ofType(events, "tool-call-end")[0]?.result.content,
    "ProbeRead was cancelled before it finished: the model's response broke off before it was complete",
  );
  deepStrictEqual(probes.log, ["start same", "end same", "start same", "end same"]);
  const last = provider.requests[2]?.messages.at(-1);
  deepStrictEqual(last?.content, [
    { type: "tool-result", toolUseId: "t_again", content: "done same", isError: false },
  ]);
});
