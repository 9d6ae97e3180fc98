import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { z } from "zod";
import { Conversation, validateConversation } from "../../src/agent/conversation.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runAgent, type RunAgentOptions } from "../../src/agent/loop.ts";
import { readTranscript, Transcript } from "../../src/session/transcript.ts";
import type { ContentBlock, Message, ModelRequest } from "../../src/llm/provider.ts";
import { policyForMode } from "../../src/permissions/modes.ts";
import { type AnyTool, defineTool, textResult } from "../../src/tools/tool.ts";
import { probePipeline, Probes } from "../_fakes/probe_tools.ts";
import {
  messageEnd,
  messageStart,
  ScriptedProvider,
  type ScriptedTurn,
  textTurn,
  toolTurn,
} from "../_fakes/scripted_provider.ts";

interface Harness {
  probes: Probes;
  provider: ScriptedProvider;
  events: AgentEvent[];
  conversation: Conversation;
}

async function run(
  turns: ScriptedTurn[],
  options: Partial<RunAgentOptions> & {
    tools?: AnyTool[];
    repeatLast?: boolean;
    probes?: Probes;
    /** Records every event, as the session does. */
    transcript?: Transcript;
  } = {},
): Promise<Harness> {
  const probes = options.probes ?? new Probes();
  const provider = new ScriptedProvider(turns, { repeatLast: options.repeatLast ?? false });
  const conversation = options.conversation ?? new Conversation();
  const { tools, repeatLast: _repeatLast, probes: _probes, transcript, ...rest } = options;
  const recorded = runAgent({
    provider,
    pipeline: probePipeline([...probes.tools, ...(tools ?? [])]),
    prompt: "do the thing",
    model: "claude-test",
    maxTokens: 1000,
    system: "You are a test.",
    signal: new AbortController().signal,
    resultDir: null,
    ...rest,
    conversation,
  });
  const events: AgentEvent[] = [];
  for await (const event of recorded) {
    transcript?.record(event);
    events.push(event);
  }
  return { probes, provider, events, conversation };
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

function userBlocks(request: ModelRequest | undefined): ContentBlock[] {
  const last = request?.messages.at(-1);
  ok(
    last?.role === "user" && Array.isArray(last.content),
    "the request ends with a user message with blocks",
  );
  return last.content;
}

function assertValid(messages: Message[]): void {
  deepStrictEqual(validateConversation(messages), []);
}

const read = (id: string, label = id, extra: Record<string, string> = {}) => ({
  id,
  name: "ProbeRead",
  input: { label, ...extra },
});
const write = (id: string, label = id) => ({ id, name: "ProbeWrite", input: { label } });

Deno.test("runAgent ends after a text answer with end_turn, the text and usage totals", async () => {
  const { events, provider } = await run([textTurn("All done.")]);
  equal(provider.requests.length, 1);
  deepStrictEqual(provider.requests[0]?.messages, [{
    role: "user",
    content: [{ type: "text", text: "do the thing" }],
  }]);
  deepStrictEqual(ofType(events, "text-delta").map((event) => event.text), ["All done."]);
  const end = turnEnd(events);
  equal(end.reason, "end_turn");
  equal(end.text, "All done.");
  equal(end.turns, 1);
  deepStrictEqual(end.totals, {
    inputTokens: 10,
    outputTokens: 5,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    requests: 1,
  });
});

Deno.test("runAgent runs two tool calls and sends one user message with both results in order, ids paired", async () => {
  const { events, provider, probes } = await run([
    toolTurn([read("toolu_a", "a"), write("toolu_b", "b")], { text: "Let me look." }),
    textTurn("Finished."),
  ]);
  equal(provider.requests.length, 2);
  const second = provider.requests[1];
  ok(second);
  assertValid(second.messages);
  deepStrictEqual(second.messages[1], {
    role: "assistant",
    content: [
      { type: "text", text: "Let me look." },
      { type: "tool-use", id: "toolu_a", name: "ProbeRead", input: { label: "a" } },
      { type: "tool-use", id: "toolu_b", name: "ProbeWrite", input: { label: "b" } },
    ],
  });
  deepStrictEqual(second.messages[2], {
    role: "user",
    content: [
      { type: "tool-result", toolUseId: "toolu_a", content: "done a", isError: false },
      { type: "tool-result", toolUseId: "toolu_b", content: "done b", isError: false },
    ],
  });
  deepStrictEqual(probes.log, ["start a", "end a", "start b", "end b"]);
  deepStrictEqual(ofType(events, "tool-call-end").map((event) => [event.id, event.outcome.status]), [
    ["toolu_a", "completed"],
    ["toolu_b", "completed"],
  ]);
  equal(turnEnd(events).text, "Finished.");
});

Deno.test("runAgent answers a tool_use with malformed JSON with an is_error result and continues", async () => {
  const { provider, probes, events } = await run([
    [
      messageStart(),
      {
        type: "tool-call-invalid",
        index: 0,
        id: "toolu_bad",
        name: "ProbeRead",
        rawInput: '{"label": "x',
        error: "Unterminated string",
      },
      messageEnd([{ type: "tool-use", id: "toolu_bad", name: "ProbeRead", input: {} }], "tool_use"),
    ],
    textTurn("Sorry."),
  ]);
  equal(provider.requests.length, 2);
  const [result] = userBlocks(provider.requests[1]);
  ok(result?.type === "tool-result");
  equal(result.toolUseId, "toolu_bad");
  equal(result.isError, true);
  match(result.content, /not valid JSON \(Unterminated string\)/);
  deepStrictEqual(probes.log, []);
  deepStrictEqual(ofType(events, "tool-call-end")[0]?.outcome, { status: "invalid", gate: "json" });
  equal(turnEnd(events).reason, "end_turn");
});

Deno.test("runAgent feeds gate errors back: unknown tool and invalid input become is_error results", async () => {
  const { provider } = await run([
    toolTurn([{ id: "t1", name: "Nope", input: {} }, { id: "t2", name: "ProbeRead", input: { label: 3 } }]),
    textTurn("ok"),
  ]);
  const [first, second] = userBlocks(provider.requests[1]);
  ok(first?.type === "tool-result" && second?.type === "tool-result");
  match(first.content, /Unknown tool "Nope"\. Available tools: ProbeRead, ProbeWrite/);
  match(second.content, /field "label" must be string/);
  equal(first.isError, true);
  equal(second.isError, true);
});

Deno.test("runAgent refuses the third identical call in a row without running it", async () => {
  const same = (id: string) => toolTurn([read(id, "same")]);
  const { provider, probes } = await run([same("t1"), same("t2"), same("t3"), textTurn("ok")]);
  equal(probes.log.filter((line) => line === "start same").length, 2);
  const [result] = userBlocks(provider.requests[3]);
  ok(result?.type === "tool-result");
  equal(result.isError, true);
  match(result.content, /3rd identical ProbeRead call in a row/);
});

Deno.test("runAgent does not count calls with different inputs as repeats", async () => {
  const { probes } = await run([
    toolTurn([read("t1", "a")]),
    toolTurn([read("t2", "b")]),
    toolTurn([read("t3", "a")]),
    textTurn("ok"),
  ]);
  equal(probes.log.filter((line) => line.startsWith("start")).length, 3);
});

const bigTool = defineTool({
  name: "Big",
  description: "Returns a long text. Test tool.",
  category: "other",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  execute: () => Promise.resolve(textResult(`HEAD${"x".repeat(40_000)}TAIL`)),
});
const readFileLike = defineTool({
  name: "ReadFile",
  description: "Returns a long text, like a large page of a file. Test tool.",
  category: "file",
  inputSchema: z.object({}).strict(),
  isReadOnly: true,
  execute: () => Promise.resolve(textResult("y".repeat(40_000))),
});

Deno.test("runAgent saves a result above the size limit to the session folder and sends a preview with the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { provider, events } = await run(
      [
        toolTurn([{ id: "toolu_big", name: "Big", input: {} }, {
          id: "toolu_rf",
          name: "ReadFile",
          input: {},
        }]),
        textTurn("ok"),
      ],
      { tools: [bigTool, readFileLike], resultDir: dir },
    );
    const [big, page] = userBlocks(provider.requests[1]);
    ok(big?.type === "tool-result" && page?.type === "tool-result");
    ok(big.content.length < 10_000, `preview is short (${big.content.length})`);
    ok(big.content.startsWith("HEAD") && big.content.includes("TAIL"), "the preview keeps head and tail");
    const savedPath = `${dir}/tool-results/toolu_big.txt`;
    ok(big.content.includes(savedPath), big.content.slice(-400));
    match(big.content, /40008 characters, above the 30000-character limit/);
    equal(await Deno.readTextFile(savedPath), `HEAD${"x".repeat(40_000)}TAIL`);
    equal(page.content.length, 40_000, "ReadFile pages itself and is exempt");
    const end = ofType(events, "tool-call-end").find((event) => event.id === "toolu_big");
    equal(end?.result.metadata.savedPath, savedPath);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runAgent stops at maxTurns when the model keeps asking for tools", async () => {
  let count = 0;
  const { provider, events } = await run(
    [() => toolTurn([read(`t${++count}`, `call ${count}`)])],
    { repeatLast: true, maxTurns: 2 },
  );
  equal(provider.requests.length, 2);
  const end = turnEnd(events);
  equal(end.reason, "max_turns");
  equal(end.turns, 2);
  match(end.message ?? "", /Stopped after 2 model requests: the limit of 2 was reached/);
});

Deno.test("runAgent does not run a tool_use cut off by max_tokens, tells the model, and continues", async () => {
  const { provider, probes, events } = await run([
    [
      messageStart(),
      { type: "tool-call", index: 0, id: "t_ok", name: "ProbeRead", input: { label: "complete" } },
      {
        type: "tool-call-invalid",
        index: 1,
        id: "t_cut",
        name: "ProbeWrite",
        rawInput: '{"label": "hal',
        error: "Unexpected end of JSON input",
      },
      messageEnd([
        { type: "tool-use", id: "t_ok", name: "ProbeRead", input: { label: "complete" } },
        { type: "tool-use", id: "t_cut", name: "ProbeWrite", input: {} },
      ], "max_tokens"),
    ],
    textTurn("ok"),
  ]);
  deepStrictEqual(probes.log, ["start complete", "end complete"]);
  const blocks = userBlocks(provider.requests[1]);
  ok(blocks[0]?.type === "tool-result" && blocks[1]?.type === "tool-result" && blocks[2]?.type === "text");
  equal(blocks[0].content, "done complete");
  equal(blocks[1].isError, true);
  match(blocks[1].content, /ProbeWrite was not run: your response hit the max_tokens limit \(1000 tokens\)/);
  match(blocks[2].text, /cut off at the max_tokens limit/);
  assertValid(provider.requests[1]?.messages ?? []);
  equal(turnEnd(events).reason, "end_turn");
});

Deno.test("runAgent ends with a clear message when a text answer is cut off by max_tokens", async () => {
  const { events } = await run([textTurn("The answer is", "max_tokens")]);
  const end = turnEnd(events);
  equal(end.reason, "max_tokens");
  match(end.message ?? "", /cut off at the max_tokens limit \(1000 tokens\)/);
  equal(ofType(events, "warning").length, 1);
});

Deno.test("runAgent continues after pause_turn without adding a user message", async () => {
  const { provider, events } = await run([textTurn("Working", "pause_turn"), textTurn(" on it.")]);
  equal(provider.requests.length, 2);
  deepStrictEqual(provider.requests[1]?.messages.at(-1), {
    role: "assistant",
    content: [{ type: "text", text: "Working" }],
  });
  equal(turnEnd(events).reason, "end_turn");
});

Deno.test("runAgent ends on refusal with a message and runs no tool of that turn", async () => {
  const { probes, events, conversation } = await run([toolTurn([write("t1")], { stopReason: "refusal" })]);
  deepStrictEqual(probes.log, []);
  const end = turnEnd(events);
  equal(end.reason, "refusal");
  match(end.message ?? "", /declined to continue/);
  assertValid(conversation.messages);
  deepStrictEqual(conversation.pendingToolUses(), []);
});

Deno.test("runAgent ends with a warning on an unknown stop reason", async () => {
  const { events } = await run([textTurn("hm", "weird")]);
  equal(turnEnd(events).reason, "unknown_stop_reason");
  match(ofType(events, "warning")[0]?.message ?? "", /a reason this version does not know \("weird"\)/);
});

Deno.test("runAgent ends when the context window is full and runs no tool of that turn", async () => {
  const { probes, events, conversation } = await run([
    toolTurn([write("t1")], { stopReason: "model_context_window_exceeded" }),
  ]);
  deepStrictEqual(probes.log, []);
  const end = turnEnd(events);
  equal(end.reason, "model_context_window_exceeded");
  match(end.message ?? "", /filled the model's context window; compact it/);
  assertValid(conversation.messages);
  deepStrictEqual(conversation.pendingToolUses(), []);
});

Deno.test("runAgent ends a broken stream with an error, keeps the partial text and runs no call from it", async () => {
  const home = await Deno.makeTempDir();
  const transcript = await Transcript.create({ home, root: "/ws" });
  try {
    const probes = new Probes();
    const { events, conversation } = await run([
      [
        messageStart(),
        { type: "text-delta", index: 0, text: "I will write " },
        { type: "tool-call", index: 1, id: "t_r", name: "ProbeRead", input: { label: "r", hold: "never" } },
        { type: "tool-call", index: 2, id: "t_w", name: "ProbeWrite", input: { label: "w" } },
        { type: "wait", until: probes.started("r") },
        { type: "throw", error: new Error("Connection dropped mid-stream") },
      ],
    ], { transcript, probes });
    deepStrictEqual(
      probes.log,
      ["start r", "end r"],
      "the streamed safe call was aborted; the writer never ran",
    );
    equal(ofType(events, "error")[0]?.message, "Connection dropped mid-stream");
    const end = turnEnd(events);
    equal(end.reason, "error");
    equal(end.text, "I will write ");
    deepStrictEqual(conversation.messages.at(-1), {
      role: "assistant",
      content: [{ type: "text", text: "I will write " }],
    });
    assertValid(conversation.messages);
    transcript.close();
    const { records, torn } = await readTranscript(transcript.path);
    equal(torn, false);
    const partial = records.find((record) => record.type === "assistant-message");
    ok(partial?.type === "assistant-message" && partial.partial);
    deepStrictEqual(partial.content, [{ type: "text", text: "I will write " }]);
    const ends = records.flatMap((record) =>
      record.type === "tool-call-end" ? [[record.id, record.outcome.status]] : []
    );
    deepStrictEqual(ends.sort(), [["t_r", "cancelled"], ["t_w", "cancelled"]]);
    ok(
      records.some((record) => record.type === "error" && record.message === "Connection dropped mid-stream"),
    );
    equal(records.at(-1)?.type, "turn-end");
  } finally {
    transcript.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runAgent starts a safe call before the model's stream ends", async () => {
  const probes = new Probes();
  const { events } = await run([
    toolTurn([read("t1", "early")], { beforeEnd: [{ type: "wait", until: probes.started("early") }] }),
    textTurn("ok"),
  ], { probes });
  const order = events.map((event) => event.type).filter((type) =>
    type === "tool-call-start" || type === "request-end"
  );
  deepStrictEqual(order.slice(0, 2), ["tool-call-start", "request-end"]);
});

Deno.test("runAgent in batched mode starts tools only after the stream ends", async () => {
  const { events } = await run([toolTurn([read("t1")]), textTurn("ok")], { execution: "batched" });
  const order = events.map((event) => event.type).filter((type) =>
    type === "tool-call-start" || type === "request-end"
  );
  deepStrictEqual(order.slice(0, 2), ["request-end", "tool-call-start"]);
});

Deno.test("runAgent without an approver turns an ask into a denial the model sees, with the reason", async () => {
  const probes = new Probes();
  const provider = new ScriptedProvider([toolTurn([write("t1")]), textTurn("ok")]);
  const events = await Array.fromAsync(runAgent({
    provider,
    pipeline: probePipeline(probes.tools, policyForMode("default")),
    prompt: "write",
    model: "m",
    maxTokens: 100,
    system: "s",
    signal: new AbortController().signal,
  }));
  const [result] = userBlocks(provider.requests[1]);
  ok(result?.type === "tool-result");
  equal(result.isError, true);
  match(
    result.content,
    /Permission to use ProbeWrite was denied: .*default permission mode.*no one is present/,
  );
  equal(ofType(events, "tool-call-end")[0]?.outcome.status, "denied");
  deepStrictEqual(probes.log, []);
});

Deno.test("runAgent ends with reason aborted when the signal aborts during a tool call, leaving a valid conversation", async () => {
  const probes = new Probes();
  const controller = new AbortController();
  probes.started("held").then(() => controller.abort());
  const { events, conversation } = await run([toolTurn([read("t1", "held", { hold: "never" })])], {
    probes,
    signal: controller.signal,
  });
  equal(turnEnd(events).reason, "aborted");
  equal(ofType(events, "tool-call-end")[0]?.outcome.status, "aborted");
  assertValid(conversation.messages);
  deepStrictEqual(conversation.pendingToolUses(), []);
});

Deno.test("runAgent writes requests, messages, timed tool calls and usage totals to the transcript", async () => {
  const home = await Deno.makeTempDir();
  const transcript = await Transcript.create({ home, root: "/ws" });
  try {
    await run([toolTurn([read("t1", "a"), read("t2", "b")]), textTurn("done")], { transcript });
    transcript.close();
    const { records } = await readTranscript(transcript.path);
    deepStrictEqual(records.map((record) => record.type).filter((type) => !type.startsWith("tool-call-")), [
      "user-message",
      "request",
      "usage",
      "assistant-message",
      "tool-results",
      "request",
      "usage",
      "assistant-message",
      "turn-end",
    ]);
    for (const id of ["t1", "t2"]) {
      const lines = records.flatMap((record, index) =>
        (record.type === "tool-call-start" || record.type === "tool-call-end") && record.id === id
          ? [[record.type, index]]
          : []
      );
      deepStrictEqual(lines.map(([type]) => type), ["tool-call-start", "tool-call-end"]);
    }
    for (const record of records) {
      if (record.type !== "tool-call-end") continue;
      ok(record.startedAt > 1_600_000_000_000 && record.endedAt >= record.startedAt);
      equal(record.durationMs, record.endedAt - record.startedAt);
      equal(record.isError, false);
    }
    const requests = records.filter((record) => record.type === "request");
    deepStrictEqual(requests.map((record) => record.type === "request" && record.system), [
      "You are a test.",
      undefined,
    ]);
    const last = records.at(-1);
    ok(last?.type === "turn-end");
    equal(last.totals.requests, 2);
    equal(last.totals.outputTokens, 10);
  } finally {
    transcript.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runAgent ends when two responses in a row are cut off by max_tokens", async () => {
  const cut = (id: string) => [
    messageStart(),
    {
      type: "tool-call-invalid" as const,
      index: 0,
      id,
      name: "ProbeWrite",
      rawInput: "{",
      error: "Unexpected end",
    },
    messageEnd([{ type: "tool-use", id, name: "ProbeWrite", input: {} }], "max_tokens"),
  ];
  const { provider, events, conversation } = await run([cut("t1"), cut("t2")]);
  equal(provider.requests.length, 2);
  equal(turnEnd(events).reason, "max_tokens");
  assertValid(conversation.messages);
  deepStrictEqual(conversation.pendingToolUses(), []);
});

Deno.test("runAgent cleans up the stream and running calls when the consumer stops early", async () => {
  const probes = new Probes();
  const provider = new ScriptedProvider([
    toolTurn([read("t1", "held", { hold: "never" })], {
      beforeEnd: [{ type: "wait", until: new Promise(() => {}) }],
    }),
  ]);
  for await (
    const event of runAgent({
      provider,
      pipeline: probePipeline(probes.tools),
      prompt: "go",
      model: "m",
      maxTokens: 100,
      system: "s",
      signal: new AbortController().signal,
    })
  ) {
    if (event.type === "tool-call-start") break;
  }
  deepStrictEqual(probes.log, ["start held", "end held"], "the held call was aborted");
});
