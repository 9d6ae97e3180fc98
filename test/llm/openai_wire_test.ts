import { deepStrictEqual, equal, ok } from "node:assert/strict";
import {
  ApiError,
  AuthenticationError,
  InvalidRequestError,
  RateLimitError,
  ServerError,
} from "../../src/llm/errors.ts";
import {
  streamErrorFromWire,
  toWireMessages,
  toWireRequest,
  toWireTools,
} from "../../src/llm/openai_wire.ts";
import type { Message, ModelRequest } from "../../src/llm/provider.ts";
import { checkChatRequest } from "../fake_anthropic/openai_rules.ts";

const READ_FILE = {
  name: "ReadFile",
  description: "Reads a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** A conversation after one round of two parallel calls, with thinking from an Anthropic model. */
const HISTORY: Message[] = [
  { role: "user", content: [{ type: "text", text: "Read a and b" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Both, in parallel.", signature: "sig" },
      { type: "text", text: "Reading both." },
      { type: "tool-use", id: "toolu_a", name: "ReadFile", input: { path: "/w/a" } },
      { type: "tool-use", id: "toolu_b", name: "ReadFile", input: { path: "/w/b" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool-result", toolUseId: "toolu_a", content: "alpha", isError: false },
      { type: "tool-result", toolUseId: "toolu_b", content: "Cannot read file: no such file", isError: true },
      { type: "text", text: "Your last response was cut off." },
    ],
  },
];

Deno.test("toWireMessages sends the system prompt first, tool calls on the assistant and results as tool messages in order", () => {
  deepStrictEqual(toWireMessages("You are a test.", HISTORY), [
    { role: "system", content: "You are a test." },
    { role: "user", content: "Read a and b" },
    {
      role: "assistant",
      content: "Reading both.",
      tool_calls: [
        { id: "toolu_a", type: "function", function: { name: "ReadFile", arguments: '{"path":"/w/a"}' } },
        { id: "toolu_b", type: "function", function: { name: "ReadFile", arguments: '{"path":"/w/b"}' } },
      ],
    },
    { role: "tool", tool_call_id: "toolu_a", content: "alpha" },
    { role: "tool", tool_call_id: "toolu_b", content: "Error: Cannot read file: no such file" },
    { role: "user", content: "Your last response was cut off." },
  ]);
});

Deno.test("toWireMessages leaves out an assistant message that only held thinking, and an empty system prompt", () => {
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "Hi" }] },
    { role: "assistant", content: [{ type: "redacted-thinking", data: "xyz" }] },
    { role: "user", content: [{ type: "text", text: "Again" }] },
    { role: "assistant", content: [{ type: "tool-use", id: "c1", name: "Glob", input: "not an object" }] },
    { role: "user", content: [{ type: "tool-result", toolUseId: "c1", content: "", isError: false }] },
  ];
  deepStrictEqual(toWireMessages("", messages), [
    { role: "user", content: "Hi" },
    { role: "user", content: "Again" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "Glob", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c1", content: "" },
  ]);
});

Deno.test("toWireRequest streams with usage, offers tools as functions and names the token limit field asked for", () => {
  const request: ModelRequest = {
    model: "gpt-test",
    maxTokens: 512,
    system: "S",
    messages: HISTORY,
    tools: [READ_FILE],
  };
  const body = toWireRequest(request);
  equal(body.stream, true);
  deepStrictEqual(body.stream_options, { include_usage: true });
  equal(body.max_tokens, 512);
  equal(body.max_completion_tokens, undefined);
  deepStrictEqual(body.tools, [{
    type: "function",
    function: { name: "ReadFile", description: "Reads a file.", parameters: READ_FILE.inputSchema },
  }]);
  equal(checkChatRequest(body), null, "the fake server's rules accept it");
  const newer = toWireRequest(request, { tokenLimitField: "max_completion_tokens" });
  equal(newer.max_completion_tokens, 512);
  equal("max_tokens" in newer, false);
  equal("tools" in toWireRequest({ ...request, tools: [] }), false);
});

Deno.test("toWireTools gives a schema without a type the object type", () => {
  deepStrictEqual(
    toWireTools([{ name: "T", description: "d", inputSchema: { properties: {} } }])[0]?.function,
    {
      name: "T",
      description: "d",
      parameters: { properties: {}, type: "object" },
    },
  );
});

Deno.test("streamErrorFromWire classifies a mid-stream error by its numeric code, type or code name", async (t) => {
  const cases: [string, unknown, (error: ApiError) => boolean, number | null, boolean][] = [
    [
      "OpenRouter's numeric code 502",
      { error: { message: "Upstream failed", code: 502 } },
      (e) => e instanceof ServerError,
      502,
      true,
    ],
    [
      "a type server_error",
      { error: { message: "Oops", type: "server_error" } },
      (e) => e instanceof ServerError,
      500,
      true,
    ],
    [
      "a code rate_limit_exceeded",
      { error: { message: "Slow", code: "rate_limit_exceeded" } },
      (e) => e instanceof RateLimitError,
      429,
      true,
    ],
    [
      "a code invalid_api_key",
      { error: { message: "Bad key", code: "invalid_api_key" } },
      (e) => e instanceof AuthenticationError,
      401,
      false,
    ],
    [
      "a type invalid_request_error",
      { error: { message: "Bad", type: "invalid_request_error" } },
      (e) => e instanceof InvalidRequestError,
      400,
      false,
    ],
    [
      "an unknown kind",
      { error: { message: "Strange", type: "weird" } },
      (e) => e.constructor === ApiError,
      null,
      false,
    ],
  ];
  for (const [name, payload, isClass, status, retryable] of cases) {
    await t.step(name, () => {
      const error = streamErrorFromWire(payload);
      ok(isClass(error), error.constructor.name);
      equal(error.status, status);
      equal(error.isRetryable, retryable);
    });
  }
  equal(streamErrorFromWire({ error: { message: "Upstream failed", code: 502 } }).message, "Upstream failed");
});
