import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import {
  ANTHROPIC_VERSION,
  AnthropicHttpClient,
  MAX_ERROR_BODY_BYTES,
} from "../../src/llm/anthropic_http.ts";
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  OverloadedError,
  RateLimitError,
  ServerError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";
import { toWireRequest } from "../../src/llm/anthropic_wire.ts";
import type { ModelRequest } from "../../src/llm/provider.ts";
import { type FakeAnthropic, httpError, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";

const REQUEST: ModelRequest = {
  model: "claude-test-1",
  maxTokens: 256,
  system: "You are a test.",
  messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }],
  tools: [],
};

function clientFor(
  server: { url: string; apiKey?: string },
  options: { idleTimeoutMs?: number; apiKey?: string } = {},
) {
  return new AnthropicHttpClient({
    apiKey: options.apiKey ?? server.apiKey ?? "sk-ant-fake-test-key",
    baseUrl: server.url,
    idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
  });
}

const signal = () => new AbortController().signal;

/** The payloads of one streamed request, or the error that ended it. */
async function streamOnce(
  server: FakeAnthropic,
  options: { idleTimeoutMs?: number; apiKey?: string } = {},
): Promise<{ payloads: unknown[]; error: unknown }> {
  const payloads: unknown[] = [];
  try {
    const stream = await clientFor(server, options).streamMessage(toWireRequest(REQUEST), {
      signal: signal(),
    });
    for await (const payload of stream) payloads.push(payload);
  } catch (error) {
    return { payloads, error };
  }
  return { payloads, error: null };
}

function typesOf(payloads: unknown[]): unknown[] {
  return payloads.map((payload) => (payload as { type?: unknown }).type);
}

Deno.test("AnthropicHttpClient yields each event's parsed data and skips pings", async () => {
  await using server = await startFakeAnthropic([turn().ping().text("Hi").ping().stop("end_turn")]);
  const { payloads, error } = await streamOnce(server);
  equal(error, null);
  deepStrictEqual(typesOf(payloads), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  deepStrictEqual((payloads[2] as { delta: unknown }).delta, { type: "text_delta", text: "Hi" });
});

Deno.test("AnthropicHttpClient sends the wire request as its JSON, with the version, key and user agent", async () => {
  let received: { headers: Headers; body: string } | null = null;
  const events = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    received = { headers: request.headers, body: await request.text() };
    return new Response(events, { headers: { "content-type": "text/event-stream" } });
  });
  const wire = toWireRequest(REQUEST);
  const client = new AnthropicHttpClient({
    apiKey: "sk-ant-exact",
    baseUrl: `http://127.0.0.1:${server.addr.port}/`,
    idleTimeoutMs: 10_000,
  });
  const payloads: unknown[] = [];
  for await (const payload of await client.streamMessage(wire, { signal: signal() })) payloads.push(payload);
  deepStrictEqual(payloads, [{ type: "message_stop" }]);
  const sent = received as { headers: Headers; body: string } | null;
  equal(sent?.body, JSON.stringify(wire));
  equal(sent?.headers.get("authorization"), "Bearer sk-ant-exact");
  equal(sent?.headers.get("anthropic-version"), ANTHROPIC_VERSION);
  equal(sent?.headers.get("content-type"), "application/json");
  equal(sent?.headers.get("user-agent"), `mewcode/${denoConfig.version}`);
});

Deno.test("AnthropicHttpClient turns error responses into ApiErrors with the headers the retry policy reads", async (t) => {
  await t.step("529 with x-should-retry: false", async () => {
    await using server = await startFakeAnthropic([
      httpError(529, "overloaded_error", "Overloaded", { headers: { "x-should-retry": "false" } }),
    ]);
    const { error } = await streamOnce(server);
    ok(error instanceof OverloadedError);
    deepStrictEqual([error.message, error.status, error.errorType, error.isRetryable, error.requestId], [
      "Overloaded",
      529,
      "overloaded_error",
      false,
      "req_fake_1",
    ]);
  });
  await t.step("429 with retry-after-ms", async () => {
    await using server = await startFakeAnthropic([
      httpError(429, "rate_limit_error", "Slow down", { headers: { "retry-after-ms": "1500" } }),
    ]);
    const { error } = await streamOnce(server);
    ok(error instanceof RateLimitError);
    deepStrictEqual([error.message, error.retryAfterMs, error.isRetryable], ["Slow down", 1500, true]);
  });
  await t.step("401 for a wrong key", async () => {
    await using server = await startFakeAnthropic([turn().text("never sent")], { apiKey: "sk-ant-right" });
    const { error } = await streamOnce(server, { apiKey: "sk-ant-wrong" });
    ok(error instanceof AuthenticationError);
    equal(error.message, "invalid x-api-key");
  });
  await t.step("502 with a body that is not JSON", async () => {
    await using server = await startFakeAnthropic([
      httpError(502, "api_error", "", { rawBody: "<html>Bad gateway</html>" }),
    ]);
    const { error } = await streamOnce(server);
    ok(error instanceof ServerError);
    equal(error.message, "The API answered with status 502: <html>Bad gateway</html>");
  });
  await t.step("500 with a body larger than the limit", async () => {
    const rawBody = "x".repeat(MAX_ERROR_BODY_BYTES * 3);
    await using server = await startFakeAnthropic([httpError(500, "api_error", "", { rawBody })]);
    const { error } = await streamOnce(server);
    ok(error instanceof ServerError);
    equal(error.message, `The API answered with status 500: ${"x".repeat(300)}…`);
  });
});

Deno.test("AnthropicHttpClient throws the ApiError an error event describes", async () => {
  await using server = await startFakeAnthropic([
    turn().text("Partial").errorEvent("overloaded_error", "Overloaded"),
  ]);
  const { payloads, error } = await streamOnce(server);
  ok(error instanceof OverloadedError);
  deepStrictEqual([error.message, error.status, error.isRetryable], ["Overloaded", 529, true]);
  deepStrictEqual(typesOf(payloads), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
  ]);
});

Deno.test("AnthropicHttpClient reports data that is not JSON as a StreamProtocolError", async () => {
  await using server = await startFakeAnthropic([turn().event("content_block_delta", "{not json")]);
  const { error } = await streamOnce(server);
  ok(error instanceof StreamProtocolError);
  match(error.message, /^Cannot parse a stream event from the API: /);
});

Deno.test("AnthropicHttpClient reports a connection dropped mid-stream as a ConnectionError", async () => {
  await using server = await startFakeAnthropic([turn().text("Partial").drop()]);
  const { payloads, error } = await streamOnce(server);
  ok(error instanceof ConnectionError, String(error));
  match(error.message, new RegExp(`^Connection to the API at "${server.url}" failed while streaming: .+`));
  ok(payloads.length > 0);
});

Deno.test("AnthropicHttpClient reports an unreachable server as a ConnectionError naming the base URL", async () => {
  const server = await startFakeAnthropic([]);
  await server.close();
  const { error } = await streamOnce(server);
  ok(error instanceof ConnectionError, String(error));
  match(error.message, new RegExp(`^Cannot reach the API at "${server.url}": .+`));
});

Deno.test("AnthropicHttpClient never writes the API key into the error for a key fetch rejects", async (t) => {
  // A line break in the key would end the header and start another: refused before anything is sent, by the
  // sockets (naming the header, not its value) and by Deno's fetch (quoting the value, masked here).
  const cases: [via: string, reason: RegExp][] = [
    ["sockets", /The "authorization" header's value holds a line break/],
    ["Deno's fetch", /<the API key>/],
  ];
  for (const [via, reason] of cases) {
    await t.step(via, async () => {
      await using server = await startFakeAnthropic([]);
      const client = new AnthropicHttpClient({
        apiKey: "sk-ant-secret-1234\nX-Injected: 1",
        baseUrl: server.url,
        idleTimeoutMs: 10_000,
        ...(via === "sockets" ? {} : { fetch }),
      });
      const sent = client.streamMessage(toWireRequest(REQUEST), { signal: signal() });
      const error = await sent.then(() => null, (caught: unknown) => caught);
      ok(error instanceof ConnectionError, String(error));
      match(error.message, new RegExp(`^Cannot reach the API at "${server.url}": .*${reason.source}`));
      ok(!error.message.includes("sk-ant-secret-1234"), error.message);
      equal(server.requests.length, 0);
    });
  }
});

Deno.test("AnthropicHttpClient does not follow a redirect, which would take the key elsewhere", async () => {
  await using elsewhere = await startFakeAnthropic([turn().text("never sent")]);
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(null, { status: 307, headers: { location: `${elsewhere.url}/v1/messages` } }),
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  const error = await clientFor({ url }).streamMessage(toWireRequest(REQUEST), { signal: signal() })
    .then(() => null, (thrown: unknown) => thrown);
  ok(error instanceof ApiError, String(error));
  deepStrictEqual([error.status, error.isRetryable], [307, false]);
  equal(
    error.message,
    `Cannot use the API at "${url}": it redirects to "${elsewhere.url}/v1/messages"; ` +
      "set ANTHROPIC_BASE_URL to the address it redirects to",
  );
  equal(elsewhere.requests.length, 0);
});

/** Streams from `url` with a 0.1 s idle timeout and expects the silence's ConnectionError. */
async function assertGivesUpAfterSilence(url: string): Promise<void> {
  const error = await clientFor({ url }, { idleTimeoutMs: 100 })
    .streamMessage(toWireRequest(REQUEST), { signal: signal() })
    .then(() => null, (thrown: unknown) => thrown);
  ok(error instanceof ConnectionError, String(error));
  equal(error.message, `The API at "${url}" sent nothing for 0.1 s`);
}

Deno.test("AnthropicHttpClient gives up on a server that sends no headers within the idle timeout", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const connection of listener) accepted.push(connection);
  })();
  try {
    await assertGivesUpAfterSilence(`http://127.0.0.1:${listener.addr.port}`);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const connection of accepted) connection.close();
  }
});

Deno.test("AnthropicHttpClient gives up on an error response whose body stops within the idle timeout", async () => {
  // Headers for a 500, then a body that never ends: the answer is read as a dropped connection would be.
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(new TextEncoder().encode('{"type":"error",'));
      },
    });
    return new Response(body, { status: 500, headers: { "content-type": "application/json" } });
  });
  try {
    await assertGivesUpAfterSilence(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
});

Deno.test("AnthropicHttpClient arms no timer until its request is answered", async () => {
  // A process's first setTimeout loads Deno's timer module (~9 ms): armed between the fetch and the
  // request leaving, it delayed every run's first request by that much.
  await using server = await startFakeAnthropic([turn().text("Hi")]);
  const original = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return original(...args);
  }) as typeof setTimeout;
  let stream;
  try {
    stream = await clientFor(server).streamMessage(toWireRequest(REQUEST), { signal: signal() });
  } finally {
    globalThis.setTimeout = original;
  }
  equal(timers, 0);
  equal(server.requests.length, 1);
  deepStrictEqual(typesOf(await Array.fromAsync(stream)).at(-1), "message_stop");
});

Deno.test("AnthropicHttpClient throws the abort reason when aborted while streaming", async () => {
  await using server = await startFakeAnthropic([turn().text("First").delay(30_000).text("never")]);
  const controller = new AbortController();
  const reason = new DOMException("Interrupted by the user", "AbortError");
  let error: unknown = null;
  try {
    const stream = await clientFor(server).streamMessage(toWireRequest(REQUEST), {
      signal: controller.signal,
    });
    for await (const payload of stream) {
      if ((payload as { type: string }).type === "content_block_delta") controller.abort(reason);
    }
  } catch (thrown) {
    error = thrown;
  }
  equal(error, reason);
});

Deno.test("AnthropicHttpClient lists the model ids of GET /v1/models", async () => {
  let path = "";
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    path = new URL(request.url).pathname;
    const page = {
      data: [{ id: "claude-a", type: "model" }, { id: "claude-b", type: "model" }],
      has_more: false,
    };
    return Response.json(page);
  });
  const ids = await clientFor({ url: `http://127.0.0.1:${server.addr.port}` }).listModels({
    signal: signal(),
  });
  deepStrictEqual(ids, ["claude-a", "claude-b"]);
  equal(path, "/v1/models");
});

Deno.test("AnthropicHttpClient reports a model list request the server refuses as an ApiError", async () => {
  // The fake answers only POST /v1/messages: anything else is its 404 not_found_error.
  await using server = await startFakeAnthropic([]);
  const error = await clientFor(server).listModels({ signal: signal() }).then(() => null, (thrown) => thrown);
  ok(error instanceof ApiError);
  deepStrictEqual([error.status, error.errorType, error.message], [
    404,
    "not_found_error",
    "Not found: GET /v1/models",
  ]);
});

Deno.test("AnthropicHttpClient reads an error body that came a byte at a time", async () => {
  // A server (or a proxy) may hand the body on in tiny pieces: hundreds of thousands of them.
  const json = '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}';
  const bytes = new TextEncoder().encode(json + " ".repeat(400_000));
  const client = new AnthropicHttpClient({
    apiKey: "sk-ant-fake-test-key",
    baseUrl: "http://127.0.0.1:9",
    idleTimeoutMs: 10_000,
    fetch: () => {
      let at = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(stream) {
          if (at === bytes.length) stream.close();
          else stream.enqueue(bytes.subarray(at, ++at));
        },
      });
      return Promise.resolve(
        new Response(body, { status: 429, headers: { "content-type": "application/json" } }),
      );
    },
  });
  const error = await client.streamMessage(toWireRequest(REQUEST), { signal: signal() }).then(
    () => null,
    (error: unknown) => error,
  );
  ok(error instanceof RateLimitError, String(error));
  equal(error.message, "Slow down");
});
