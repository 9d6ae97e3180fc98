import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import {
  accumulateMessage,
  assembleStream,
  createSnapshot,
  type MessageSnapshot,
} from "../../src/llm/anthropic_stream.ts";
import {
  ConnectionError,
  MAX_RESPONSE_CHARACTERS,
  OverloadedError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";
import type { ProviderEvent } from "../../src/llm/provider.ts";
import { parseRawEvent, type RawStreamEvent, type RawUsage } from "../../src/llm/anthropic_wire.ts";
import { splitFragments } from "../fake_anthropic/script.ts";

// Raw event builders, in the API's shapes.
const messageStart = (usage: RawUsage = { input_tokens: 12, output_tokens: 1 }): RawStreamEvent => ({
  type: "message_start",
  message: { id: "msg_1", model: "claude-test", usage },
});
const textStart = (index: number): RawStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "text", text: "" },
});
const toolStart = (index: number, id = `toolu_${index}`, name = "ReadFile"): RawStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name, input: {} },
});
const thinkingStart = (index: number): RawStreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "thinking", thinking: "", signature: "" },
});
const text = (index: number, value: string): RawStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "text_delta", text: value },
});
const json = (index: number, partial: string): RawStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "input_json_delta", partial_json: partial },
});
const thinking = (index: number, value: string): RawStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "thinking_delta", thinking: value },
});
const signature = (index: number, value: string): RawStreamEvent => ({
  type: "content_block_delta",
  index,
  delta: { type: "signature_delta", signature: value },
});
const stop = (index: number): RawStreamEvent => ({ type: "content_block_stop", index });
const messageDelta = (stopReason: string | null, outputTokens = 30): RawStreamEvent => ({
  type: "message_delta",
  delta: { stop_reason: stopReason },
  usage: { output_tokens: outputTokens },
});
const messageStop: RawStreamEvent = { type: "message_stop" };

function fold(events: RawStreamEvent[]): { snapshot: MessageSnapshot; events: ProviderEvent[] } {
  let snapshot = createSnapshot();
  const out: ProviderEvent[] = [];
  for (const event of events) {
    const result = accumulateMessage(snapshot, event);
    snapshot = result.snapshot;
    out.push(...result.events);
  }
  return { snapshot, events: out };
}

function toolTurn(fragments: string[]): RawStreamEvent[] {
  return [
    messageStart(),
    toolStart(0),
    ...fragments.map((part) => json(0, part)),
    stop(0),
    messageDelta("tool_use"),
    messageStop,
  ];
}

const TRICKY_INPUT = {
  path: "/work/dir with spaces/naïve café.ts",
  old_string: 'say "hi"\\n\tand \\ backslash\nnewline',
  new_string: "emoji 😀🐈‍⬛ and 漢字 and \u0000 nul",
  nested: { list: [1, 2.5, -3e2, true, null], empty: {} },
};

Deno.test("accumulateMessage assembles tool input split at every single position", () => {
  for (const jsonText of [JSON.stringify(TRICKY_INPUT), asciiEscaped(JSON.stringify(TRICKY_INPUT))]) {
    for (let cut = 0; cut <= jsonText.length; cut++) {
      const { events } = fold(toolTurn([jsonText.slice(0, cut), jsonText.slice(cut)]));
      assertEquals(events.filter((event) => event.type === "tool-call"), [
        { type: "tool-call", index: 0, id: "toolu_0", name: "ReadFile", input: TRICKY_INPUT },
      ]);
    }
  }
});

Deno.test("accumulateMessage assembles tool input streamed in 1-3 unit fragments inside escapes and surrogates", () => {
  const jsonText = asciiEscaped(JSON.stringify(TRICKY_INPUT));
  for (let seed = 1; seed <= 50; seed++) {
    const fragments = splitFragments(jsonText, [1, 3], seed);
    const { events, snapshot } = fold(toolTurn(fragments));
    const end = events.at(-1);
    assertEquals(end?.type === "message-end" ? end.content : null, [
      { type: "tool-use", id: "toolu_0", name: "ReadFile", input: TRICKY_INPUT },
    ]);
    assertEquals(snapshot.status, "stopped");
  }
});

Deno.test("accumulateMessage keeps text, thinking with signature and tool calls in order", () => {
  const { events } = fold([
    messageStart(),
    thinkingStart(0),
    thinking(0, "Let me "),
    thinking(0, "think."),
    signature(0, "sig-part-1"),
    signature(0, "-part-2"),
    stop(0),
    textStart(1),
    text(1, "Reading "),
    text(1, "two files."),
    stop(1),
    toolStart(2, "toolu_a"),
    json(2, '{"path":'),
    json(2, '"/a"}'),
    stop(2),
    toolStart(3, "toolu_b", "Grep"),
    json(3, '{"pattern":"x"}'),
    stop(3),
    messageDelta("tool_use"),
    messageStop,
  ]);
  assertEquals(events.slice(1), [
    { type: "thinking-delta", index: 0, thinking: "Let me " },
    { type: "thinking-delta", index: 0, thinking: "think." },
    { type: "text-delta", index: 1, text: "Reading " },
    { type: "text-delta", index: 1, text: "two files." },
    // Each call is announced when its block starts, while its input streams.
    { type: "tool-call-begin", index: 2, id: "toolu_a", name: "ReadFile" },
    { type: "tool-call", index: 2, id: "toolu_a", name: "ReadFile", input: { path: "/a" } },
    { type: "tool-call-begin", index: 3, id: "toolu_b", name: "Grep" },
    { type: "tool-call", index: 3, id: "toolu_b", name: "Grep", input: { pattern: "x" } },
    {
      type: "message-end",
      stopReason: "tool_use",
      usage: { inputTokens: 12, outputTokens: 30, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      content: [
        { type: "thinking", thinking: "Let me think.", signature: "sig-part-1-part-2" },
        { type: "text", text: "Reading two files." },
        { type: "tool-use", id: "toolu_a", name: "ReadFile", input: { path: "/a" } },
        { type: "tool-use", id: "toolu_b", name: "Grep", input: { pattern: "x" } },
      ],
    },
  ]);
});

Deno.test("accumulateMessage reports malformed, truncated or non-object tool input as tool-call-invalid", async (t) => {
  const cases: [string, string[]][] = [
    ["malformed", ['{"path": /a}']],
    ["truncated", ['{"path": "/a', "/b"]],
    ["an array", ["[1, 2]"]],
    ["a string", ['"just text"']],
  ];
  for (const [name, fragments] of cases) {
    await t.step(name, () => {
      const { events } = fold(toolTurn(fragments));
      const invalid = events.find((event) => event.type === "tool-call-invalid");
      assertEquals(invalid?.type === "tool-call-invalid" ? invalid.rawInput : null, fragments.join(""));
      assertEquals(
        invalid?.type === "tool-call-invalid" &&
          invalid.error.startsWith('Input for tool "ReadFile" is not valid JSON: '),
        true,
      );
      assertEquals(events.some((event) => event.type === "tool-call"), false);
      const end = events.at(-1);
      assertEquals(end?.type === "message-end" ? end.content : null, [
        { type: "tool-use", id: "toolu_0", name: "ReadFile", input: {} },
      ]);
    });
  }
});

Deno.test("accumulateMessage gives an empty input buffer the input {}", () => {
  const { events } = fold(toolTurn([]));
  assertEquals(events[1], { type: "tool-call-begin", index: 0, id: "toolu_0", name: "ReadFile" });
  assertEquals(events[2], { type: "tool-call", index: 0, id: "toolu_0", name: "ReadFile", input: {} });
});

Deno.test("accumulateMessage merges usage from message_start and message_delta and keeps the stop reason", () => {
  const { snapshot, events } = fold([
    messageStart({ input_tokens: 50, output_tokens: 1, cache_read_input_tokens: 7 }),
    textStart(0),
    text(0, "Hi"),
    stop(0),
    {
      type: "message_delta",
      delta: { stop_reason: "max_tokens" },
      usage: { output_tokens: 99, input_tokens: null },
    },
    messageStop,
  ]);
  assertEquals(events[0], {
    type: "message-start",
    messageId: "msg_1",
    model: "claude-test",
    usage: { inputTokens: 50, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 7 },
  });
  const end = events.at(-1);
  assertEquals(end?.type === "message-end" ? [end.stopReason, end.usage] : null, [
    "max_tokens",
    { inputTokens: 50, outputTokens: 99, cacheCreationInputTokens: 0, cacheReadInputTokens: 7 },
  ]);
  assertEquals(snapshot.stopReason, "max_tokens");
});

Deno.test("accumulateMessage drops empty text blocks from the content and keeps redacted thinking", () => {
  const { events } = fold([
    messageStart(),
    { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "opaque" } },
    stop(0),
    textStart(1),
    stop(1),
    messageDelta("end_turn"),
    messageStop,
  ]);
  const end = events.at(-1);
  assertEquals(end?.type === "message-end" ? end.content : null, [{
    type: "redacted-thinking",
    data: "opaque",
  }]);
});

Deno.test("accumulateMessage does not modify the snapshot it is given", () => {
  const { snapshot } = fold([messageStart(), textStart(0), text(0, "a")]);
  const copy = structuredClone(snapshot);
  accumulateMessage(snapshot, text(0, "b"));
  accumulateMessage(snapshot, stop(0));
  assertEquals(snapshot, copy);
});

Deno.test("accumulateMessage ignores ping and throws the ApiError of an error event", () => {
  const { events } = fold([{ type: "ping" }, messageStart(), { type: "ping" }, textStart(0), {
    type: "ping",
  }]);
  assertEquals(events.length, 1);
  const error = assertThrows(() =>
    fold([messageStart(), { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }])
  );
  assertInstanceOf(error, OverloadedError);
  assertEquals([error.message, error.status, error.isRetryable], ["Overloaded", 529, true]);
});

Deno.test("accumulateMessage throws StreamProtocolError for events out of order", async (t) => {
  const cases: [string, RawStreamEvent[], string][] = [
    ["a block before message_start", [textStart(0)], "Unexpected content_block_start: before message_start"],
    ["a second message_start", [messageStart(), messageStart()], "the message already started"],
    [
      "a delta for an unknown index",
      [messageStart(), textStart(0), text(1, "x")],
      "no block started at index 1",
    ],
    ["a stop before its start", [messageStart(), stop(0)], "no block started at index 0"],
    [
      "a delta after its stop",
      [messageStart(), textStart(0), stop(0), text(0, "x")],
      "block 0 already stopped",
    ],
    ["a skipped index", [messageStart(), textStart(1)], "index 1 given, 0 expected"],
    ["a start while a block is open", [messageStart(), textStart(0), textStart(1)], "block 0 is still open"],
    [
      "text_delta for a tool_use block",
      [messageStart(), toolStart(0), text(0, "x")],
      "text_delta for a tool_use block",
    ],
    [
      "input_json_delta for a text block",
      [messageStart(), textStart(0), json(0, "{")],
      "input_json_delta for a text block",
    ],
    [
      "signature_delta for a text block",
      [messageStart(), textStart(0), signature(0, "s")],
      "signature_delta for a text block",
    ],
    [
      "message_delta with an open block",
      [messageStart(), textStart(0), messageDelta("end_turn")],
      "block 0 is still open",
    ],
    ["message_stop without message_delta", [messageStart(), messageStop], "no message_delta arrived"],
    [
      "a tool_use block that reuses an earlier block's id",
      [messageStart(), toolStart(0, "toolu_a"), stop(0), textStart(1), stop(1), toolStart(2, "toolu_a")],
      'tool_use block 2 reuses the id "toolu_a"',
    ],
    [
      "a block after message_delta",
      [messageStart(), messageDelta("end_turn"), textStart(0)],
      "after message_delta",
    ],
    [
      "an event after message_stop",
      [messageStart(), messageDelta("end_turn"), messageStop, textStart(0)],
      "after message_stop",
    ],
  ];
  for (const [name, events, expected] of cases) {
    await t.step(name, () => {
      const error = assertThrows(() => fold(events));
      assertInstanceOf(error, StreamProtocolError);
      assertEquals(error.message.includes(expected), true, error.message);
    });
  }
});

Deno.test("parseRawEvent rejects unknown block and delta types and skips unknown event types", () => {
  assertEquals(parseRawEvent({ type: "some_future_event", data: 1 }), null);
  const block = assertThrows(() =>
    parseRawEvent({ type: "content_block_start", index: 0, content_block: { type: "server_tool_use" } })
  );
  assertInstanceOf(block, StreamProtocolError);
  const delta = assertThrows(() =>
    parseRawEvent({ type: "content_block_delta", index: 0, delta: { type: "citations_delta" } })
  );
  assertInstanceOf(delta, StreamProtocolError);
  assertInstanceOf(
    assertThrows(() => parseRawEvent({ type: "content_block_stop", index: -1 })),
    StreamProtocolError,
  );
  assertInstanceOf(assertThrows(() => parseRawEvent([1])), StreamProtocolError);
});

Deno.test("assembleStream yields the events of a whole stream and skips unknown event types", async () => {
  const raw = [
    messageStart(),
    { type: "future_event" },
    textStart(0),
    text(0, "Hi"),
    stop(0),
    messageDelta("end_turn"),
    messageStop,
  ];
  const events = await Array.fromAsync(assembleStream(fromArray(raw)));
  assertEquals(events.map((event) => event.type), ["message-start", "text-delta", "message-end"]);
});

Deno.test("assembleStream throws ConnectionError when the stream ends before message_stop", async () => {
  const raw = [messageStart(), textStart(0), text(0, "Hi")];
  const received: ProviderEvent[] = [];
  const error = await assertRejectsWith(async () => {
    for await (const event of assembleStream(fromArray(raw))) received.push(event);
  });
  assertInstanceOf(error, ConnectionError);
  assertEquals(error.message, "Response stream ended before message_stop (1 content block(s) received)");
  assertEquals(received.map((event) => event.type), ["message-start", "text-delta"]);
});

Deno.test("assembleStream stops a response longer than MAX_RESPONSE_CHARACTERS with a StreamProtocolError", async () => {
  // A broken endpoint streaming gigabytes filled the heap, and V8 aborted the whole process.
  const piece = "x".repeat(1024 * 1024);
  async function* endless(): AsyncGenerator<unknown> {
    yield messageStart();
    yield textStart(0);
    for (let sent = 0; sent <= MAX_RESPONSE_CHARACTERS; sent += piece.length) yield text(0, piece);
    yield stop(0);
    yield messageDelta("end_turn");
    yield messageStop;
  }
  const error = await assertRejectsWith(async () => {
    for await (const _ of assembleStream(endless())) {
      // Only the end matters.
    }
  });
  assertInstanceOf(error, StreamProtocolError);
  ok(error.message.includes("is broken or not a model API"), error.message);
});

async function* fromArray(values: unknown[]): AsyncGenerator<unknown> {
  for (const value of values) yield await Promise.resolve(value);
}

function assertThrows(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("Expected a throw");
}

function assertInstanceOf<T>(value: unknown, type: new (...args: never[]) => T): asserts value is T {
  ok(value instanceof type, `Expected a ${type.name}, got ${String(value)}`);
}

async function assertRejectsWith(run: () => Promise<void>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("Expected a rejection");
}

function asciiEscaped(text: string): string {
  return text.replace(
    /[\u007f-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
