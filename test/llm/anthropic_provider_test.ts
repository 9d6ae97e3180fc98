import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { serveWebPage } from "../_fakes/web_page_server.ts";
import { AnthropicProvider, deprecationWarning } from "../../src/llm/anthropic_provider.ts";
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  MissingApiKeyError,
  OverloadedError,
  ServerError,
  StalledError,
  StreamInterruptedError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";
import type { Message, ModelRequest, ProviderEvent } from "../../src/llm/provider.ts";
import { createProvider, providerConfigFromEnv } from "../../src/llm/create_provider.ts";
import {
  cacheBreakpoints,
  type FakeAnthropic,
  httpError,
  startFakeAnthropic,
  turn,
} from "../fake_anthropic/server.ts";
import { assertKeyHidden, startKeyEchoServer } from "../_fakes/key_echo_server.ts";
import { closedPort } from "../_fakes/closed_port.ts";

const REQUEST: ModelRequest = {
  model: "claude-test-1",
  maxTokens: 1024,
  system: "You are a test. The workspace root is /work.",
  messages: [{ role: "user", content: [{ type: "text", text: "Read two files" }] }],
  tools: [{
    name: "ReadFile",
    description: "Reads a file.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  }],
};

/** A provider for the fake server whose backoffs are 0 ms (random() = 0). */
function providerFor(
  server: FakeAnthropic,
  options: { apiKey?: string; maxRetries?: number; idleTimeoutMs?: number } = {},
) {
  return new AnthropicProvider({
    apiKey: options.apiKey ?? server.apiKey,
    baseUrl: server.url,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    retry: {
      random: () => 0,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    },
  });
}

async function collect(
  stream: AsyncIterable<ProviderEvent>,
  onEvent: (event: ProviderEvent) => void = () => {},
): Promise<{ events: ProviderEvent[]; error: unknown }> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent(event);
    }
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

const signal = () => new AbortController().signal;

Deno.test("AnthropicProvider streams a turn with text and two fragmented tool calls over HTTP", async () => {
  const inputA = { path: '/work/"quoted" naïve 😀.ts' };
  const inputB = { path: "/work/b\\c\n.ts" };
  await using server = await startFakeAnthropic([
    turn()
      .text("Reading both.", { chunk: 4 })
      .toolUse("ReadFile", inputA, { id: "toolu_a", fragment: [1, 3], asciiEscapes: true })
      .toolUse("ReadFile", inputB, { id: "toolu_b", fragment: [1, 3], seed: 7 })
      .usage({ input_tokens: 321, output_tokens: 54 })
      .stop("tool_use"),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(events.filter((event) => event.type === "tool-call"), [
    { type: "tool-call", index: 1, id: "toolu_a", name: "ReadFile", input: inputA },
    { type: "tool-call", index: 2, id: "toolu_b", name: "ReadFile", input: inputB },
  ]);
  const text = events.map((event) => event.type === "text-delta" ? event.text : "").join("");
  equal(text, "Reading both.");
  deepStrictEqual(events.at(-1), {
    type: "message-end",
    stopReason: "tool_use",
    usage: { inputTokens: 321, outputTokens: 54, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
    content: [
      { type: "text", text: "Reading both." },
      { type: "tool-use", id: "toolu_a", name: "ReadFile", input: inputA },
      { type: "tool-use", id: "toolu_b", name: "ReadFile", input: inputB },
    ],
  });
});

Deno.test("AnthropicProvider decodes multi-byte characters split across 1-3 byte writes", async () => {
  await using server = await startFakeAnthropic([
    turn({ byteChunks: [1, 3] }).text("naïve 😀 漢字").toolUse("ReadFile", { path: "/é/😀" }, {
      id: "toolu_1",
    }),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  const end = events.at(-1);
  deepStrictEqual(end?.type === "message-end" ? end.content : null, [
    { type: "text", text: "naïve 😀 漢字" },
    { type: "tool-use", id: "toolu_1", name: "ReadFile", input: { path: "/é/😀" } },
  ]);
});

Deno.test("AnthropicProvider sends model, system, tools, messages, max_tokens and stream with the key", async () => {
  await using server = await startFakeAnthropic([turn().text("Hi")], { apiKey: "sk-ant-exact" });
  await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  const [request] = server.requests;
  deepStrictEqual(request?.body, {
    model: "claude-test-1",
    max_tokens: 1024,
    messages: [{
      role: "user",
      content: [{ type: "text", text: "Read two files", cache_control: { type: "ephemeral" } }],
    }],
    stream: true,
    system: [{
      type: "text",
      text: "You are a test. The workspace root is /work.",
      cache_control: { type: "ephemeral" },
    }],
    tools: [{
      name: "ReadFile",
      description: "Reads a file.",
      input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      cache_control: { type: "ephemeral" },
    }],
  });
  equal(request?.path, "/v1/messages");
  equal(request?.headers.authorization, "Bearer sk-ant-exact");
  ok(request?.headers["anthropic-version"]);
});

const GREP_TOOL = {
  name: "Grep",
  description: "Searches files.",
  inputSchema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
};

/** A request after one tool round: thinking, text and two tool calls, then their two results. */
const MULTI_TURN_REQUEST: ModelRequest = {
  ...REQUEST,
  tools: [...REQUEST.tools, GREP_TOOL],
  messages: [
    ...REQUEST.messages,
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Both files, in parallel.", signature: "sig_1" },
        { type: "text", text: "Reading both." },
        { type: "tool-use", id: "toolu_a", name: "ReadFile", input: { path: "/work/a.ts" } },
        { type: "tool-use", id: "toolu_b", name: "ReadFile", input: { path: "/work/b.ts" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool-result", toolUseId: "toolu_a", content: "export const a = 1;", isError: false },
        {
          type: "tool-result",
          toolUseId: "toolu_b",
          content: "Cannot read file: no such file",
          isError: true,
        },
      ],
    },
  ],
};

Deno.test("AnthropicProvider puts cache breakpoints on the last tool, the system prompt and the last message block of a multi-turn request", async () => {
  await using server = await startFakeAnthropic([turn().text("Done")]);
  const { error } = await collect(providerFor(server).stream(MULTI_TURN_REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(server.requests[0]?.body, {
    model: "claude-test-1",
    max_tokens: 1024,
    stream: true,
    system: [{
      type: "text",
      text: "You are a test. The workspace root is /work.",
      cache_control: { type: "ephemeral" },
    }],
    tools: [
      {
        name: "ReadFile",
        description: "Reads a file.",
        input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
      {
        name: "Grep",
        description: "Searches files.",
        input_schema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
        cache_control: { type: "ephemeral" },
      },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "Read two files" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Both files, in parallel.", signature: "sig_1" },
          { type: "text", text: "Reading both." },
          { type: "tool_use", id: "toolu_a", name: "ReadFile", input: { path: "/work/a.ts" } },
          { type: "tool_use", id: "toolu_b", name: "ReadFile", input: { path: "/work/b.ts" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "export const a = 1;" },
          {
            type: "tool_result",
            tool_use_id: "toolu_b",
            content: "Cannot read file: no such file",
            is_error: true,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ],
  });
});

Deno.test("AnthropicProvider sends no cache_control and a string system prompt when caching is off", async () => {
  await using server = await startFakeAnthropic([turn().text("Done")]);
  const request: ModelRequest = { ...MULTI_TURN_REQUEST, cache: false };
  const { error } = await collect(providerFor(server).stream(request, { signal: signal() }));
  equal(error, null);
  const body = server.requests[0]?.body;
  deepStrictEqual(cacheBreakpoints(body), []);
  ok(!JSON.stringify(body).includes("cache_control"));
  equal((body as { system?: unknown }).system, "You are a test. The workspace root is /work.");
});

Deno.test("AnthropicProvider moves the conversation breakpoint to the newest message on every turn of a 20-turn session, keeping the prefix byte-identical", async () => {
  const turns = 20;
  await using server = await startFakeAnthropic(Array.from({ length: turns }, () => turn().text("ok")));
  const provider = providerFor(server);
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Read every file" }] }];
  for (let index = 1; index <= turns; index++) {
    const { error } = await collect(
      provider.stream({ ...REQUEST, tools: [...REQUEST.tools, GREP_TOOL], messages }, { signal: signal() }),
    );
    equal(error, null);
    messages.push(
      {
        role: "assistant",
        content: [
          { type: "text", text: `Reading file ${index}.` },
          { type: "tool-use", id: `toolu_${index}`, name: "ReadFile", input: { path: `/work/${index}.ts` } },
        ],
      },
      {
        role: "user",
        content: [{
          type: "tool-result",
          toolUseId: `toolu_${index}`,
          content: `file ${index}`,
          isError: false,
        }],
      },
    );
  }
  equal(server.requests.length, turns);
  for (const [index, request] of server.requests.entries()) {
    const last = index * 2;
    deepStrictEqual(cacheBreakpoints(request.body), ["tools.1", "system.0", `messages.${last}.content.0`]);
    const next = server.requests[index + 1];
    if (next === undefined) continue;
    // What the API caches for this request must be exactly the start of the next one.
    const sent = withoutCacheControl(messagesOf(request.body));
    deepStrictEqual(withoutCacheControl(messagesOf(next.body)).slice(0, sent.length), sent);
  }
});

function messagesOf(body: unknown): unknown[] {
  const messages = (body as { messages?: unknown }).messages;
  ok(Array.isArray(messages));
  return messages;
}

function withoutCacheControl(messages: unknown[]): unknown[] {
  return JSON.parse(JSON.stringify(messages, (key, item) => key === "cache_control" ? undefined : item));
}

Deno.test("AnthropicProvider reports the cache write and read tokens of a turn as camelCase usage", async () => {
  await using server = await startFakeAnthropic([
    turn().text("Cached").usage({
      input_tokens: 12,
      output_tokens: 34,
      cache_creation_input_tokens: 1_500,
      cache_read_input_tokens: 48_000,
    }),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  const usage = {
    inputTokens: 12,
    outputTokens: 34,
    cacheCreationInputTokens: 1_500,
    cacheReadInputTokens: 48_000,
  };
  const start = events[0];
  deepStrictEqual(start?.type === "message-start" ? start.usage : null, { ...usage, outputTokens: 1 });
  const end = events.at(-1);
  deepStrictEqual(end?.type === "message-end" ? end.usage : null, usage);
});

Deno.test("AnthropicProvider retries a 529 once and then yields the answer", async () => {
  await using server = await startFakeAnthropic([
    httpError(529, "overloaded_error", "Overloaded"),
    turn().text("Answer after retry"),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(events.filter((event) => event.type === "retry"), [
    { type: "retry", attempt: 1, delayMs: 0, reason: "Overloaded (529 overloaded_error)" },
  ]);
  equal(events.at(-1)?.type, "message-end");
  equal(server.requests.length, 2);
});

Deno.test("AnthropicProvider honours a retry-after of 1 second", async () => {
  await using server = await startFakeAnthropic([
    httpError(429, "rate_limit_error", "Number of requests has exceeded your rate limit", {
      headers: { "retry-after": "1" },
    }),
    turn().text("Done"),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(events[0], {
    type: "retry",
    attempt: 1,
    delayMs: 1000,
    reason: "Number of requests has exceeded your rate limit (429 rate_limit_error)",
  });
  const [first, second] = server.requests;
  ok(first && second && second.receivedAt - first.receivedAt >= 990, "the second request came too early");
});

Deno.test("AnthropicProvider does not retry 400 and 401 and keeps the API's message", async (t) => {
  await t.step("400", async () => {
    await using server = await startFakeAnthropic([
      httpError(400, "invalid_request_error", "max_tokens: 999999 > 64000, the maximum for this model"),
      turn().text("never sent"),
    ]);
    const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
    ok(error instanceof InvalidRequestError);
    equal(error.message, "max_tokens: 999999 > 64000, the maximum for this model");
    equal(server.requests.length, 1);
  });
  await t.step("401", async () => {
    await using server = await startFakeAnthropic([turn().text("never sent")], { apiKey: "sk-ant-right" });
    const { error } = await collect(
      providerFor(server, { apiKey: "sk-ant-wrong" }).stream(REQUEST, { signal: signal() }),
    );
    ok(error instanceof AuthenticationError);
    equal(error.message, "invalid x-api-key");
    deepStrictEqual([error.status, server.requests.length], [401, 1]);
  });
});

Deno.test("AnthropicProvider describes an error response that is not JSON", async () => {
  await using server = await startFakeAnthropic([
    httpError(502, "api_error", "", { rawBody: "<html>Bad gateway</html>" }),
  ]);
  const { error } = await collect(
    providerFor(server, { maxRetries: 0 }).stream(REQUEST, { signal: signal() }),
  );
  ok(error instanceof ServerError);
  equal(error.message, "The API answered with status 502: <html>Bad gateway</html>");
});

Deno.test("AnthropicProvider reports events out of order or unparseable as StreamProtocolError, unretried", async (t) => {
  await t.step("out of order", async () => {
    await using server = await startFakeAnthropic([
      turn().event("content_block_delta", {
        type: "content_block_delta",
        index: 4,
        delta: { type: "text_delta", text: "x" },
      }),
      turn().text("never sent"),
    ]);
    const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
    ok(error instanceof StreamProtocolError);
    equal(
      error.message,
      'Unexpected content_block_delta in message "msg_fake_1": no block started at index 4',
    );
    equal(server.requests.length, 1);
  });
  await t.step("unparseable", async () => {
    await using server = await startFakeAnthropic([turn().event("content_block_delta", "{not json")]);
    const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
    ok(error instanceof StreamProtocolError);
    match(error.message, /^Cannot parse a stream event from the API: /);
  });
});

Deno.test("AnthropicProvider ends with a clear error on a mid-stream error event, keeping the text", async () => {
  await using server = await startFakeAnthropic([
    turn().text("Partial answer").errorEvent("overloaded_error", "Overloaded"),
    turn().text("never sent"),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamInterruptedError);
  equal(error.message, "Response stream interrupted after content arrived: Overloaded");
  ok(error.cause instanceof OverloadedError);
  deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta"]);
  equal(server.requests.length, 1);
});

Deno.test("AnthropicProvider yields no tool call from a stream dropped inside a tool_use block", async () => {
  await using server = await startFakeAnthropic([
    turn()
      .text("Let me edit.")
      .event("content_block_start", {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_x", name: "EditFile", input: {} },
      })
      .event("content_block_delta", {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: '{"path": "/work/a' },
      })
      .drop(),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamInterruptedError, String(error));
  ok(error.cause instanceof ConnectionError);
  match(
    error.message,
    /^Response stream interrupted after content arrived: Connection to the API at ".*" failed/,
  );
  // The call began, but its input never completed: no tool-call.
  deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta", "tool-call-begin"]);
  equal(server.requests.length, 1);
});

Deno.test("AnthropicProvider retries a connection dropped before any content", async () => {
  await using server = await startFakeAnthropic([turn().drop(), turn().cut(), turn().text("Recovered")]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(events.map((event) => event.type), [
    "retry",
    "retry",
    "message-start",
    "text-delta",
    "message-end",
  ]);
  match(events[1]?.type === "retry" ? events[1].reason : "", /ended before message_stop/);
  equal(server.requests.length, 3);
});

Deno.test("AnthropicProvider treats a silent stream as a dropped connection", async (t) => {
  await t.step("retried when no content had arrived", async () => {
    await using server = await startFakeAnthropic([turn().delay(5_000).text("late"), turn().text("On time")]);
    const { events, error } = await collect(
      providerFor(server, { idleTimeoutMs: 100 }).stream(REQUEST, { signal: signal() }),
    );
    equal(error, null);
    deepStrictEqual(events[0], {
      type: "retry",
      attempt: 1,
      delayMs: 0,
      reason: `The API at "${server.url}" sent nothing for 0.1 s (connection)`,
    });
    deepStrictEqual(events[2], { type: "text-delta", index: 0, text: "On time" });
  });
  await t.step("sent again once only: each attempt costs the whole idle timeout", async () => {
    await using server = await startFakeAnthropic([
      turn().delay(5_000).text("late"),
      turn().delay(5_000).text("late"),
      turn().text("too late to be asked for"),
    ]);
    const { events, error } = await collect(
      providerFor(server, { idleTimeoutMs: 100 }).stream(REQUEST, { signal: signal() }),
    );
    ok(error instanceof StalledError, String(error));
    deepStrictEqual(events.map((event) => event.type), ["retry"]);
    equal(server.requests.length, 2);
  });
  await t.step("interrupted after content", async () => {
    await using server = await startFakeAnthropic([turn().text("Early").delay(5_000).text("late")]);
    const { events, error } = await collect(
      providerFor(server, { idleTimeoutMs: 100 }).stream(REQUEST, { signal: signal() }),
    );
    ok(error instanceof StreamInterruptedError);
    match(error.message, /sent nothing for 0\.1 s$/);
    deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta"]);
  });
});

Deno.test("AnthropicProvider gives up on an unreachable server after maxRetries", async () => {
  const server = await startFakeAnthropic([]);
  const provider = providerFor(server, { maxRetries: 2 });
  await server.close();
  const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ConnectionError, String(error));
  match(error.message, new RegExp(`^Cannot reach the API at "${server.url}"`));
  deepStrictEqual(events.map((event) => event.type), ["retry", "retry"]);
});

Deno.test("AnthropicProvider stops promptly with the abort reason when aborted mid-stream", async () => {
  await using server = await startFakeAnthropic([turn().text("First").delay(30_000).text("never")]);
  const controller = new AbortController();
  const reason = new DOMException("Interrupted by the user", "AbortError");
  const { events, error } = await collect(
    providerFor(server).stream(REQUEST, { signal: controller.signal }),
    (event) => event.type === "text-delta" && controller.abort(reason),
  );
  equal(error, reason);
  deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta"]);
});

Deno.test("providerConfigFromEnv throws MissingApiKeyError before any request", async () => {
  await using server = await startFakeAnthropic([turn().text("never sent")]);
  for (
    const env of [{ ANTHROPIC_BASE_URL: server.url }, {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: " ",
    }]
  ) {
    let error: unknown = null;
    try {
      await createProvider(providerConfigFromEnv(new Map(Object.entries(env))));
    } catch (thrown) {
      error = thrown;
    }
    ok(error instanceof MissingApiKeyError);
    match(error.message, /ANTHROPIC_API_KEY/);
  }
  equal(server.requests.length, 0);
});

Deno.test("createProvider honours ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY", async () => {
  await using server = await startFakeAnthropic([turn().text("Hello from the proxy")], {
    apiKey: "sk-ant-env",
  });
  const config = providerConfigFromEnv(new Map(Object.entries(server.env())));
  const provider = await createProvider({ ...config, retry: { maxRetries: 0 } });
  ok(provider instanceof AnthropicProvider);
  equal(provider.baseUrl, server.url);
  const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  equal(error, null);
  deepStrictEqual(events[1], { type: "text-delta", index: 0, text: "Hello from the proxy" });
  equal(server.requests[0]?.headers.authorization, "Bearer sk-ant-env");
});

Deno.test("AnthropicProvider says once, as an event, that a model is deprecated, and never writes to the console", async () => {
  await using server = await startFakeAnthropic([
    turn().text("one").stop("end_turn"),
    turn().text("two").stop("end_turn"),
  ]);
  const provider = providerFor(server);
  const written: unknown[][] = [];
  const original = console.warn;
  console.warn = (...data: unknown[]) => void written.push(data);
  try {
    // The provider's list of deprecated models (DEPRECATED_MODELS, from the SDK's data) has this one.
    const request = { ...REQUEST, model: "claude-sonnet-4-5" };
    const first = await collect(provider.stream(request, { signal: signal() }));
    const second = await collect(provider.stream(request, { signal: signal() }));
    equal(first.error, null);
    equal(second.error, null);
    const warnings = (events: ProviderEvent[]) => events.filter((event) => event.type === "warning");
    equal(warnings(first.events).length, 1);
    match((warnings(first.events)[0] as { message: string }).message, /claude-sonnet-4-5' is deprecated/);
    equal(warnings(second.events).length, 0);
    deepStrictEqual(written, []);
  } finally {
    console.warn = original;
  }
});

Deno.test("AnthropicProvider sends a deprecated model's request before it says so, and still retries its overload", async () => {
  await using server = await startFakeAnthropic([
    httpError(529, "overloaded_error", "Overloaded"),
    turn().text("answer").stop("end_turn"),
  ]);
  const provider = new AnthropicProvider({
    apiKey: "sk-test",
    baseUrl: server.url,
    retry: { sleep: () => Promise.resolve(), random: () => 0 },
  });
  const stream = provider.stream({ ...REQUEST, model: "claude-sonnet-4-5" }, { signal: signal() });
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  // The first event (the retry of the overloaded attempt, then the warning) comes after a request went out.
  ok(server.requests.length >= 1, "no request was sent before the first event");
  const events = [first.value as ProviderEvent];
  for (let step = await iterator.next(); !step.done; step = await iterator.next()) events.push(step.value);
  equal(server.requests.length, 2, "the overloaded attempt was retried");
  equal(events.filter((event) => event.type === "warning").length, 1);
  deepStrictEqual(events.filter((event) => event.type === "text-delta"), [{
    type: "text-delta",
    index: 0,
    text: "answer",
  }]);
});

Deno.test("deprecationWarning says a model will reach its end, then that it has reached it", () => {
  match(
    deprecationWarning("claude-sonnet-4-5", new Date("2026-11-01T00:00:00Z"))!,
    /will reach end-of-life on November 30, 2026/,
  );
  match(
    deprecationWarning("claude-sonnet-4-5", new Date("2026-12-03T00:00:00Z"))!,
    /reached end-of-life on November 30, 2026/,
  );
  equal(deprecationWarning("claude-sonnet-5", new Date()), null);
});

Deno.test("AnthropicProvider sends nothing and retries nothing for a conversation it cannot build", async () => {
  // A resumed transcript holding a content block mewcode does not know: a local fault, not a network one.
  await using server = await startFakeAnthropic([turn().text("unused").stop("end_turn")]);
  const provider = providerFor(server);
  const request = {
    ...REQUEST,
    messages: [{ role: "user", content: [{ type: "weird" }] }],
  } as unknown as ModelRequest;
  const { error } = await collect(provider.stream(request, { signal: signal() }));
  ok(error instanceof Error && !(error instanceof ConnectionError), String(error));
  equal(server.requests.length, 0);
});

Deno.test("AnthropicProvider never shows the API key a server's error repeats", async (t) => {
  const apiKey = "sk-ant-SECRETKEY";
  for (const format of ["json-401", "text-400"] as const) {
    await t.step(format, async () => {
      await using server = startKeyEchoServer(format);
      const provider = new AnthropicProvider({ apiKey, baseUrl: server.url, retry: { maxRetries: 0 } });
      const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
      const listError = await provider.listModels({ signal: signal() }).then(() => null, (thrown) => thrown);
      assertKeyHidden(format, apiKey, [error, listError]);
    });
  }
});

Deno.test("AnthropicProvider never shows the password of its base URL in an error", async () => {
  const port = closedPort();
  const provider = new AnthropicProvider({
    apiKey: "sk-ant-test",
    baseUrl: `http://user:PASSWORD@127.0.0.1:${port}`,
    retry: { maxRetries: 0 },
  });
  const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ConnectionError, String(error));
  match(
    error.message,
    new RegExp(`^Cannot reach the API at "http://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}": `),
  );
  equal(`${error.message}${error.stack}`.includes("PASSWORD"), false, error.message);
});

Deno.test("AnthropicProvider takes a web page answered with 200 (a captive portal) for what it is, once", async () => {
  await using server = serveWebPage();
  const provider = new AnthropicProvider({
    apiKey: "sk-ant-test",
    baseUrl: server.url,
    retry: { random: () => 0 },
  });
  const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ApiError && !error.isRetryable, String(error));
  match(error.message, /answered with a web page \(text\/html\), not the API/);
  equal(server.requests, 1);
});
