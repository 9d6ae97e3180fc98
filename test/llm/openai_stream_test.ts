import { deepStrictEqual, equal, match, ok, rejects, throws } from "node:assert/strict";
import { MAX_TOOL_INPUT_DEPTH } from "../../src/common/json_bounds.ts";
import { ConnectionError, MAX_RESPONSE_CHARACTERS, StreamProtocolError } from "../../src/llm/errors.ts";
import { accumulateChunk, assembleChatStream, createChatSnapshot } from "../../src/llm/openai_stream.ts";
import { parseChunk } from "../../src/llm/openai_wire.ts";
import type { ProviderEvent } from "../../src/llm/provider.ts";

/** A chunk with one choice carrying `delta` (and a finish reason). */
function delta(fields: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "m",
    choices: [{ index: 0, delta: fields, finish_reason: finishReason }],
  };
}

function finish(reason: string): Record<string, unknown> {
  return delta({}, reason);
}

function usage(prompt: number, completion: number, cached = 0): Record<string, unknown> {
  return {
    id: "chatcmpl-1",
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      prompt_tokens_details: { cached_tokens: cached },
    },
  };
}

/** The first fragment of tool call `index`: id and name, no arguments. */
function callStart(index: number, id: string, name: string, args = ""): Record<string, unknown> {
  return delta({ tool_calls: [{ index, id, type: "function", function: { name, arguments: args } }] });
}

function callArgs(index: number, args: string): Record<string, unknown> {
  return delta({ tool_calls: [{ index, function: { arguments: args } }] });
}

/** Splits text into pieces of `size` code units. */
function pieces(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) parts.push(text.slice(offset, offset + size));
  return parts;
}

async function assemble(chunks: unknown[]): Promise<{ events: ProviderEvent[]; error: unknown }> {
  const events: ProviderEvent[] = [];
  async function* source() {
    yield* chunks;
  }
  try {
    for await (const event of assembleChatStream(source())) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

function endOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: "message-end" }> {
  const end = events.at(-1);
  ok(end?.type === "message-end", JSON.stringify(events));
  return end;
}

Deno.test("assembleChatStream joins 1-character argument fragments of two parallel calls, each by its index", async () => {
  const inputA = { path: '/w/"quoted" naïve 😀.ts' };
  const inputB = { pattern: "a\\b\n", path: "/w" };
  const chunks = [
    delta({ role: "assistant", content: "" }),
    delta({ content: "Reading " }),
    delta({ content: "both." }),
    callStart(0, "call_a", "ReadFile"),
    ...pieces(JSON.stringify(inputA), 1).map((piece) => callArgs(0, piece)),
    callStart(1, "call_b", "Grep"),
    ...pieces(JSON.stringify(inputB), 1).map((piece) => callArgs(1, piece)),
    finish("tool_calls"),
    usage(120, 30, 20),
  ];
  const { events, error } = await assemble(chunks);
  equal(error, null);
  deepStrictEqual(events[0], {
    type: "message-start",
    messageId: "chatcmpl-1",
    model: "m",
    usage: { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  });
  deepStrictEqual(events.filter((event) => event.type === "tool-call"), [
    { type: "tool-call", index: 1, id: "call_a", name: "ReadFile", input: inputA },
    { type: "tool-call", index: 2, id: "call_b", name: "Grep", input: inputB },
  ]);
  deepStrictEqual(endOf(events), {
    type: "message-end",
    stopReason: "tool_use",
    usage: { inputTokens: 100, outputTokens: 30, cacheCreationInputTokens: 0, cacheReadInputTokens: 20 },
    content: [
      { type: "text", text: "Reading both." },
      { type: "tool-use", id: "call_a", name: "ReadFile", input: inputA },
      { type: "tool-use", id: "call_b", name: "Grep", input: inputB },
    ],
  });
});

Deno.test("accumulateChunk completes a call as soon as the next one starts, before the stream ends", () => {
  let snapshot = createChatSnapshot();
  const fold = (chunk: unknown) => {
    const result = accumulateChunk(snapshot, parseChunk(chunk));
    snapshot = result.snapshot;
    return result.events;
  };
  fold(delta({ role: "assistant" }));
  deepStrictEqual(fold(callStart(0, "call_1", "ReadFile", '{"path":')), [
    { type: "tool-call-begin", index: 1, id: "call_1", name: "ReadFile" },
  ]);
  deepStrictEqual(fold(callArgs(0, '"/w/a"}')), []);
  deepStrictEqual(fold(callStart(1, "call_2", "ReadFile")), [
    { type: "tool-call", index: 1, id: "call_1", name: "ReadFile", input: { path: "/w/a" } },
    { type: "tool-call-begin", index: 2, id: "call_2", name: "ReadFile" },
  ]);
  deepStrictEqual(fold(finish("tool_calls")), [
    { type: "tool-call", index: 2, id: "call_2", name: "ReadFile", input: {} },
  ]);
});

Deno.test("assembleChatStream turns malformed, non-object, oversized and too deep arguments into tool-call-invalid", async (t) => {
  const cases: [string, string, RegExp][] = [
    ["truncated JSON", '{"path": "/w/a', /not valid JSON/],
    ["an array", "[1, 2]", /expected an object, got an array/],
    ["a string", '"just text"', /expected an object, got string/],
    [
      "too deep",
      `{"a":${"[".repeat(MAX_TOOL_INPUT_DEPTH + 1)}${"]".repeat(MAX_TOOL_INPUT_DEPTH + 1)}}`,
      /nested more than/,
    ],
  ];
  for (const [name, args, pattern] of cases) {
    await t.step(name, async () => {
      const { events, error } = await assemble([
        callStart(0, "call_bad", "ReadFile"),
        ...pieces(args, 3).map((piece) => callArgs(0, piece)),
        callStart(1, "call_good", "ReadFile", '{"path":"/w/b"}'),
        finish("tool_calls"),
      ]);
      equal(error, null);
      const invalid = events.find((event) => event.type === "tool-call-invalid");
      ok(invalid?.type === "tool-call-invalid");
      equal(invalid.id, "call_bad");
      equal(invalid.rawInput, args);
      match(invalid.error, /^Input for tool "ReadFile" is not valid JSON: /);
      match(invalid.error, pattern);
      deepStrictEqual(endOf(events).content, [
        { type: "tool-use", id: "call_bad", name: "ReadFile", input: {} },
        { type: "tool-use", id: "call_good", name: "ReadFile", input: { path: "/w/b" } },
      ]);
    });
  }
});

Deno.test("assembleChatStream refuses arguments above the size limit without parsing them", async () => {
  const huge = `{"content":"${"x".repeat(16 * 1024 * 1024)}"}`;
  const { events, error } = await assemble([
    callStart(0, "call_big", "WriteFile", huge),
    finish("tool_calls"),
  ]);
  equal(error, null);
  const invalid = events.find((event) => event.type === "tool-call-invalid");
  ok(invalid?.type === "tool-call-invalid");
  match(invalid.error, /above the limit/);
});

Deno.test("assembleChatStream maps finish reasons to stop reasons", async (t) => {
  const cases: [string, boolean, string][] = [
    ["tool_calls", true, "tool_use"],
    ["stop", false, "end_turn"],
    ["stop", true, "tool_use"],
    ["length", false, "max_tokens"],
    ["content_filter", false, "refusal"],
    ["function_call", true, "tool_use"],
    ["something_new", false, "something_new"],
  ];
  for (const [reason, withCall, expected] of cases) {
    await t.step(`${reason}${withCall ? " with a tool call" : ""} → ${expected}`, async () => {
      const chunks = withCall
        ? [callStart(0, "call_1", "Glob", '{"pattern":"*"}')]
        : [delta({ content: "Hi" })];
      const { events, error } = await assemble([...chunks, finish(reason)]);
      equal(error, null);
      equal(endOf(events).stopReason, expected);
    });
  }
});

Deno.test("assembleChatStream cuts a call off at length into tool-call-invalid with stop reason max_tokens", async () => {
  const { events, error } = await assemble([
    callStart(0, "call_long", "WriteFile", '{"path":"/w/a","content":"unfinish'),
    finish("length"),
  ]);
  equal(error, null);
  equal(events.filter((event) => event.type === "tool-call-invalid").length, 1);
  equal(endOf(events).stopReason, "max_tokens");
});

Deno.test("assembleChatStream keeps text and a whole tool call sent in one chunk, and tolerates a missing index", async () => {
  const { events, error } = await assemble([
    delta({ content: "Let me look." }),
    delta({
      tool_calls: [{ id: "call_x", type: "function", function: { name: "Glob", arguments: '{"pattern":' } }],
    }),
    delta({ tool_calls: [{ function: { arguments: '"*.ts"}' } }] }),
    delta({ tool_calls: [{ id: "call_y", function: { name: "Glob", arguments: '{"pattern":"*.md"}' } }] }),
    finish("stop"),
  ]);
  equal(error, null);
  deepStrictEqual(endOf(events), {
    type: "message-end",
    stopReason: "tool_use",
    usage: { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
    content: [
      { type: "text", text: "Let me look." },
      { type: "tool-use", id: "call_x", name: "Glob", input: { pattern: "*.ts" } },
      { type: "tool-use", id: "call_y", name: "Glob", input: { pattern: "*.md" } },
    ],
  });
});

Deno.test("assembleChatStream shows reasoning as thinking but keeps it out of the message, and marks a refusal", async () => {
  const { events, error } = await assemble([
    delta({ reasoning_content: "Think" }),
    delta({ reasoning: "ing." }),
    delta({ refusal: "I can't help with that." }),
    finish("stop"),
  ]);
  equal(error, null);
  deepStrictEqual(
    events.filter((event) => event.type === "thinking-delta").map((event) => event.thinking),
    ["Think", "ing."],
  );
  const end = endOf(events);
  equal(end.stopReason, "refusal");
  deepStrictEqual(end.content, [{ type: "text", text: "I can't help with that." }]);
});

Deno.test("assembleChatStream takes the last usage reported, after the finish chunk", async () => {
  const { events } = await assemble([delta({ content: "a" }), usage(5, 1), finish("stop"), usage(50, 7, 60)]);
  // Cached tokens above the prompt count are capped: input never goes negative.
  deepStrictEqual(endOf(events).usage, {
    inputTokens: 0,
    outputTokens: 7,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 50,
  });
});

Deno.test("accumulateChunk throws StreamProtocolError for fragments out of order", async (t) => {
  const cases: [string, unknown[], RegExp][] = [
    ["an index that skips one", [callStart(1, "call_1", "Glob")], /tool call 1 started before tool call 0/],
    [
      "a first fragment without an id",
      [delta({ tool_calls: [{ index: 0, function: { name: "Glob" } }] })],
      /without an id/,
    ],
    [
      "a first fragment without a name",
      [delta({ tool_calls: [{ index: 0, id: "call_1", function: {} }] })],
      /without a function name/,
    ],
    ["arguments for a completed call", [
      callStart(0, "c0", "Glob"),
      callStart(1, "c1", "Glob"),
      callArgs(0, "{}"),
    ], /after a later call started/],
    [
      "a changed id",
      [callStart(0, "c0", "Glob"), delta({ tool_calls: [{ index: 0, id: "c9" }] })],
      /changed its id/,
    ],
    ["a reused id", [callStart(0, "c0", "Glob"), callStart(1, "c0", "Glob")], /reuses the id "c0"/],
    [
      "a second choice",
      [{ id: "x", choices: [{ index: 1, delta: { content: "b" } }] }],
      /mewcode asks for one choice/,
    ],
    [
      "two choices in a chunk",
      [{ id: "x", choices: [{ index: 0, delta: {} }, { index: 1, delta: {} }] }],
      /2 choices/,
    ],
    [
      "text after finish_reason",
      [delta({ content: "a" }, "stop"), delta({ content: "b" })],
      /content after finish_reason "stop"/,
    ],
    ["a second finish_reason", [finish("stop"), finish("stop")], /content after finish_reason/],
    ["arguments that are not text", [
      delta({ tool_calls: [{ index: 0, id: "c", function: { name: "G", arguments: {} } }] }),
    ], /invalid delta\.tool_calls\[\]\.function\.arguments/],
    ["a chunk that is not an object", ["[1]"], /not an object/],
  ];
  for (const [name, chunks, pattern] of cases) {
    await t.step(name, async () => {
      const { error } = await assemble(chunks);
      ok(error instanceof StreamProtocolError, String(error));
      match(error.message, pattern);
    });
  }
});

Deno.test("assembleChatStream throws ConnectionError when the stream ends before a finish_reason", async () => {
  const { events, error } = await assemble([delta({ content: "Partial" })]);
  ok(error instanceof ConnectionError);
  match(error.message, /ended before a finish_reason \(7 characters of text and 0 tool call\(s\) received\)/);
  deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta"]);
  await rejects(assemble([]).then(({ error }) => Promise.reject(error)), /no chunk arrived/);
});

Deno.test("parseChunk reads usage details and refuses a malformed count", () => {
  deepStrictEqual(parseChunk(usage(10, 2, 4)).usage, {
    prompt_tokens: 10,
    completion_tokens: 2,
    cached_tokens: 4,
  });
  throws(() => parseChunk({ choices: [], usage: { prompt_tokens: "many" } }), StreamProtocolError);
});

Deno.test("assembleChatStream stops a response longer than MAX_RESPONSE_CHARACTERS, in text or arguments", async () => {
  const piece = "x".repeat(1024 * 1024);
  for (const fragment of [(text: string) => delta({ content: text }), (text: string) => callArgs(0, text)]) {
    const chunks: unknown[] = [callStart(0, "call_1", "Bash")];
    for (let sent = 0; sent <= MAX_RESPONSE_CHARACTERS; sent += piece.length) chunks.push(fragment(piece));
    chunks.push(finish("stop"));
    const { error } = await assemble(chunks);
    ok(error instanceof StreamProtocolError, String(error));
    match(error.message, /is broken or not a model API/);
  }
});

Deno.test("parseChunk refuses a usage count past 2^53 or fractional, which a budget would trust", () => {
  for (const count of [1e308, 2.5, Number.MAX_SAFE_INTEGER + 2]) {
    throws(() => parseChunk(usage(count, 1)), StreamProtocolError, String(count));
    throws(() => parseChunk(usage(1, count)), StreamProtocolError, String(count));
  }
  equal(parseChunk(usage(7, 3)).usage?.prompt_tokens, 7);
});
