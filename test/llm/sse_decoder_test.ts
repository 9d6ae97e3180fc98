import { deepStrictEqual, equal, throws } from "node:assert/strict";
import { StreamProtocolError } from "../../src/llm/errors.ts";
import { parseSse, SseDecoder, type SseEvent } from "../../src/llm/sse_decoder.ts";

const encoder = new TextEncoder();

/** A Messages API stream as the API writes it: pings, multi-byte text, a tool call, usage, stop. */
const RECORDED = [
  "event: message_start",
  'data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":' +
  '"claude-test-1","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}',
  "",
  "event: content_block_start",
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  "",
  "event: ping",
  'data: {"type": "ping"}',
  "",
  "event: content_block_delta",
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"naïve 😀 漢字"}}',
  "",
  "event: content_block_stop",
  'data: {"type":"content_block_stop","index":0}',
  "",
  "event: content_block_start",
  'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1",' +
  '"name":"ReadFile","input":{}}}',
  "",
  "event: content_block_delta",
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":' +
  '"{\\"path\\": \\"/é/😀\\"}"}}',
  "",
  "event: content_block_stop",
  'data: {"type":"content_block_stop","index":1}',
  "",
  "event: message_delta",
  'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":15}}',
  "",
  "event: message_stop",
  'data: {"type":"message_stop"}',
  "",
  "",
].join("\n");

/** The names and parsed data the recorded stream holds, in order. */
const RECORDED_NAMES = [
  "message_start",
  "content_block_start",
  "ping",
  "content_block_delta",
  "content_block_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
];

/** Decodes `chunks` in order, then ends the body. */
function decodeChunks(chunks: readonly Uint8Array[]): SseEvent[] {
  const decoder = new SseDecoder();
  return [...chunks.flatMap((chunk) => decoder.push(chunk)), ...decoder.end()];
}

function decodeText(text: string): SseEvent[] {
  return decodeChunks([encoder.encode(text)]);
}

Deno.test("SseDecoder decodes a recorded Messages stream into its named events with their JSON data", () => {
  const events = decodeText(RECORDED);
  deepStrictEqual(events.map((event) => event.event), RECORDED_NAMES);
  deepStrictEqual(JSON.parse(events[3]?.data ?? ""), {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: "naïve 😀 漢字" },
  });
  const toolInput = JSON.parse(events[6]?.data ?? "").delta.partial_json;
  deepStrictEqual(JSON.parse(toolInput), { path: "/é/😀" });
});

Deno.test("SseDecoder gives the same events when the recorded stream is split in two at every byte boundary", () => {
  for (const lineEnd of ["\n", "\r\n", "\r"]) {
    const bytes = encoder.encode(RECORDED.replaceAll("\n", lineEnd));
    const expected = decodeChunks([bytes]);
    deepStrictEqual(expected.map((event) => event.event), RECORDED_NAMES);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const events = decodeChunks([bytes.subarray(0, cut), bytes.subarray(cut)]);
      deepStrictEqual(events, expected, `line end ${JSON.stringify(lineEnd)}, split at byte ${cut}`);
    }
  }
});

Deno.test("SseDecoder gives the same events when the recorded stream arrives one byte at a time", () => {
  for (const lineEnd of ["\n", "\r\n", "\r"]) {
    const bytes = encoder.encode(RECORDED.replaceAll("\n", lineEnd));
    const oneByOne = Array.from(bytes, (_, index) => bytes.subarray(index, index + 1));
    deepStrictEqual(decodeChunks(oneByOne), decodeChunks([bytes]), `line end ${JSON.stringify(lineEnd)}`);
  }
});

Deno.test("SseDecoder treats CRLF, LF and a lone CR as one line end each, even mixed in one stream", () => {
  const events = decodeText("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n");
  deepStrictEqual(events, [
    { event: "a", data: "1" },
    { event: "b", data: "2" },
    { event: "c", data: "3" },
  ]);
});

Deno.test("SseDecoder does not take a CRLF split across two chunks for two line ends", () => {
  const events = decodeChunks([
    encoder.encode("event: a\r"),
    encoder.encode("\ndata: 1\r"),
    encoder.encode("\n\r\n"),
  ]);
  deepStrictEqual(events, [{ event: "a", data: "1" }]);
});

Deno.test("SseDecoder joins multi-line data with newlines and drops only one space after the colon", () => {
  const events = decodeText("event: multi\ndata: first\ndata:second\ndata:  third\ndata\n\n");
  deepStrictEqual(events, [{ event: "multi", data: "first\nsecond\n third\n" }]);
});

Deno.test("SseDecoder skips comments and ignores id, retry and unknown fields", () => {
  const events = decodeText(
    ": keep-alive\nevent: a\n: a comment inside an event\nid: 7\nretry: 1000\nfoo: bar\ndata: {}\n\n:\n\n",
  );
  deepStrictEqual(events, [{ event: "a", data: "{}" }]);
});

Deno.test("SseDecoder dispatches nothing for blank lines alone, and an event without data with empty data", () => {
  deepStrictEqual(decodeText("\n\n\r\n\n"), []);
  deepStrictEqual(decodeText("event: ping\n\n"), [{ event: "ping", data: "" }]);
  deepStrictEqual(decodeText("data: no name\n\n"), [{ event: null, data: "no name" }]);
});

Deno.test("SseDecoder dispatches a final event whose blank line, or last line end, is missing", () => {
  deepStrictEqual(decodeText("event: a\ndata: 1\n\nevent: b\ndata: 2\n"), [
    { event: "a", data: "1" },
    { event: "b", data: "2" },
  ]);
  deepStrictEqual(decodeText("event: a\ndata: 1\n\nevent: b\ndata: 2"), [
    { event: "a", data: "1" },
    { event: "b", data: "2" },
  ]);
  deepStrictEqual(decodeText("event: b\r\ndata: 2\r"), [{ event: "b", data: "2" }]);
});

Deno.test("SseDecoder drops a leading byte-order mark, even split across chunks", () => {
  const bytes = encoder.encode("\ufeffevent: a\ndata: 1\n\n");
  deepStrictEqual(decodeChunks([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)]), [
    { event: "a", data: "1" },
  ]);
});

Deno.test("SseDecoder keeps a multi-byte character split between chunks whole", () => {
  const bytes = encoder.encode("event: a\ndata: 😀\n\n");
  const start = bytes.indexOf(0xf0);
  const events = decodeChunks([
    bytes.subarray(0, start + 1),
    bytes.subarray(start + 1, start + 3),
    bytes.subarray(start + 3),
  ]);
  deepStrictEqual(events, [{ event: "a", data: "😀" }]);
});

Deno.test("parseSse yields the events of a body as its chunks arrive", async () => {
  const bytes = encoder.encode(RECORDED.replaceAll("\n", "\r\n"));
  const body = ReadableStream.from([bytes.subarray(0, 100), bytes.subarray(100, 101), bytes.subarray(101)]);
  const names: (string | null)[] = [];
  for await (const event of parseSse(body)) names.push(event.event);
  deepStrictEqual(names, RECORDED_NAMES);
});

Deno.test("parseSse cancels the body when the consumer stops early", async () => {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode("event: a\ndata: 1\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  for await (const event of parseSse(body)) {
    equal(event.event, "a");
    break;
  }
  equal(cancelled, true);
});

Deno.test("SseDecoder throws StreamProtocolError when an event grows past maxEventLength", () => {
  const oneLine = new SseDecoder({ maxEventLength: 10 });
  deepStrictEqual(oneLine.push(encoder.encode("data: 123456789\n\n")), [{ event: null, data: "123456789" }]);
  throws(() => oneLine.push(encoder.encode("data: 12345")), StreamProtocolError);
  const manyLines = new SseDecoder({ maxEventLength: 10 });
  throws(
    () => manyLines.push(encoder.encode("data: 1234\ndata: 1234\ndata: 1234\n")),
    /^StreamProtocolError: Cannot read the event stream: an event is longer than 10 characters$/,
  );
});
