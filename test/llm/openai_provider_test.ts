import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { serveWebPage } from "../_fakes/web_page_server.ts";
import { createProvider, providerConfigFromEnv } from "../../src/llm/create_provider.ts";
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  RateLimitError,
  ServerError,
  StreamInterruptedError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";
import { OpenAiProvider } from "../../src/llm/openai_provider.ts";
import type { ModelRequest, ProviderEvent } from "../../src/llm/provider.ts";
import { chatError, chatTurn, type FakeOpenAi, startFakeOpenAi } from "../fake_anthropic/openai_server.ts";
import { apiFetch, http1Fetch } from "../../src/llm/http1_fetch.ts";
import { assertKeyHidden, startKeyEchoServer } from "../_fakes/key_echo_server.ts";
import { closedPort } from "../_fakes/closed_port.ts";

const REQUEST: ModelRequest = {
  model: "gpt-test",
  maxTokens: 1024,
  system: "You are a test.",
  messages: [{ role: "user", content: [{ type: "text", text: "Read two files" }] }],
  tools: [{
    name: "ReadFile",
    description: "Reads a file.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  }],
};

/** A provider for the fake server whose backoffs are 0 ms (random() = 0). */
function providerFor(
  server: FakeOpenAi,
  options: { apiKey?: string | null; maxRetries?: number; idleTimeoutMs?: number } = {},
): OpenAiProvider {
  return new OpenAiProvider({
    name: "openai",
    apiKey: options.apiKey === undefined ? server.apiKey : options.apiKey,
    baseUrl: server.baseUrl,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    retry: {
      random: () => 0,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    },
  });
}

async function collect(
  stream: AsyncIterable<ProviderEvent>,
): Promise<{ events: ProviderEvent[]; error: unknown }> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

const signal = () => new AbortController().signal;

function textOf(events: ProviderEvent[]): string {
  return events.map((event) => event.type === "text-delta" ? event.text : "").join("");
}

Deno.test("OpenAiProvider streams text and two parallel calls with fragmented arguments over HTTP", async () => {
  const inputA = { path: '/w/"quoted" naïve 😀.ts' };
  const inputB = { path: "/w/b\\c\n.ts" };
  await using server = await startFakeOpenAi([
    chatTurn({ byteChunks: [1, 3] })
      .text("Reading both.", { chunk: 4 })
      .toolCall("ReadFile", inputA, { id: "call_a", fragment: [1, 3], asciiEscapes: true })
      .toolCall("ReadFile", inputB, { id: "call_b", fragment: [1, 3], seed: 7 })
      .usage({ prompt_tokens: 321, completion_tokens: 54, cached_tokens: 300 }),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  equal(textOf(events), "Reading both.");
  deepStrictEqual(events.at(-1), {
    type: "message-end",
    stopReason: "tool_use",
    usage: { inputTokens: 21, outputTokens: 54, cacheCreationInputTokens: 0, cacheReadInputTokens: 300 },
    content: [
      { type: "text", text: "Reading both." },
      { type: "tool-use", id: "call_a", name: "ReadFile", input: inputA },
      { type: "tool-use", id: "call_b", name: "ReadFile", input: inputB },
    ],
  });
});

Deno.test("OpenAiProvider sends the chat completions request with the bearer key and max_tokens", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Hi")], { apiKey: "sk-exact" });
  const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  const [request] = server.requests;
  equal(request?.path, "/v1/chat/completions");
  equal(request?.headers.authorization, "Bearer sk-exact");
  // Sent by mewcode's HTTP/1.1 client (src/llm/http1_fetch.ts), which asks for no compression, unless this
  // process's environment names a proxy (then by Deno's fetch, which asks for gzip and br).
  equal(request?.headers["accept-encoding"] === "identity", apiFetch() === http1Fetch);
  deepStrictEqual(request?.body, {
    model: "gpt-test",
    messages: [{ role: "system", content: "You are a test." }, { role: "user", content: "Read two files" }],
    stream: true,
    stream_options: { include_usage: true },
    tools: [{
      type: "function",
      function: { name: "ReadFile", description: "Reads a file.", parameters: REQUEST.tools[0]?.inputSchema },
    }],
    max_tokens: 1024,
  });
});

Deno.test("OpenAiProvider without a key sends the placeholder a keyless server expects", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Hi")], { apiKey: null });
  const provider = new OpenAiProvider({ name: "ollama", apiKey: null, baseUrl: `${server.baseUrl}/` });
  equal(provider.baseUrl, server.baseUrl, "a trailing slash is dropped");
  const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  equal(error, null);
  equal(textOf(events), "Hi");
  equal(server.requests[0]?.headers.authorization, "Bearer ollama");
});

Deno.test("OpenAiProvider retries a 429 after its retry-after and a 503, then yields the answer", async () => {
  await using server = await startFakeOpenAi([
    chatError(429, "Rate limit reached", { type: "requests", headers: { "retry-after": "1" } }),
    chatError(503, "Service unavailable"),
    chatTurn().text("After the waits."),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  const retries = events.filter((event) => event.type === "retry");
  deepStrictEqual(retries.map((event) => event.type === "retry" && [event.attempt, event.delayMs]), [
    [1, 1000],
    [2, 0],
  ]);
  match(retries[0]?.type === "retry" ? retries[0].reason : "", /Rate limit reached \(429 requests\)/);
  equal(textOf(events), "After the waits.");
  const [first, second] = server.requests;
  ok(first && second && second.receivedAt - first.receivedAt >= 1000);
});

Deno.test("OpenAiProvider does not retry 400, 401 and 403 and keeps the API's message", async (t) => {
  const cases = [
    [400, "Invalid 'messages'", InvalidRequestError],
    [401, "Incorrect API key provided", AuthenticationError],
    [403, "Country not supported", AuthenticationError],
  ] as const;
  for (const [status, message, kind] of cases) {
    await t.step(String(status), async () => {
      await using server = await startFakeOpenAi([chatError(status, message), chatTurn().text("never")]);
      const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
      ok(error instanceof kind, String(error));
      equal(error.message, message);
      equal(error.status, status);
      equal(error.requestId, `req_fake_${status}`);
      equal(events.length, 0);
      equal(server.requests.length, 1);
    });
  }
});

Deno.test("OpenAiProvider is refused by a server that wants another key", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("never")], { apiKey: "sk-right" });
  const { error } = await collect(
    providerFor(server, { apiKey: "sk-wrong" }).stream(REQUEST, { signal: signal() }),
  );
  ok(error instanceof AuthenticationError);
  match(error.message, /Incorrect API key/);
});

Deno.test("OpenAiProvider describes an error response that is not JSON", async () => {
  await using server = await startFakeOpenAi(
    [chatError(502, "", { rawBody: "<html>Bad gateway</html>" })],
    {},
  );
  const { error } = await collect(
    providerFor(server, { maxRetries: 0 }).stream(REQUEST, { signal: signal() }),
  );
  ok(error instanceof ServerError);
  match(error.message, /Bad gateway/);
});

Deno.test("OpenAiProvider throws StreamInterruptedError for a connection dropped after content, keeping the text", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().text("Partial").toolCall("ReadFile", { path: "/w/a" }, { fragment: 3 }).drop(),
    chatTurn().text("never"),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamInterruptedError, String(error));
  ok(error.cause instanceof ConnectionError);
  equal(textOf(events), "Partial");
  equal(events.some((event) => event.type === "tool-call"), false, "no call of the broken message");
  equal(server.requests.length, 1);
});

Deno.test("OpenAiProvider throws StreamInterruptedError for a body that ends without a finish_reason after content", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Half").cut()]);
  const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamInterruptedError);
  match(error.message, /ended before a finish_reason/);
});

Deno.test("OpenAiProvider turns an error payload in the stream into a retryable error the loop can act on", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().text("Some").errorChunk("Provider returned error", { code: 502 }),
  ]);
  const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamInterruptedError);
  ok(error.cause instanceof ServerError);
  equal(error.cause.isRetryable, true);
  match(error.message, /Provider returned error/);
});

Deno.test("OpenAiProvider retries a stream that fails before any content", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().errorChunk("Rate limited upstream", { code: "rate_limit_exceeded" }),
    chatTurn().drop(),
    chatTurn().text("Third time."),
  ]);
  const { events, error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  equal(error, null);
  equal(events.filter((event) => event.type === "retry").length, 2);
  equal(textOf(events), "Third time.");
  equal(
    events.filter((event) => event.type === "message-start").length,
    1,
    "only the answered attempt's start",
  );
});

Deno.test("OpenAiProvider reports a chunk that breaks the protocol as StreamProtocolError, unretried", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().chunk({
      id: "x",
      choices: [{ index: 0, delta: { tool_calls: [{ index: 2, id: "c", function: { name: "G" } }] } }],
    }),
    chatTurn().text("never"),
  ]);
  const { error } = await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  ok(error instanceof StreamProtocolError, String(error));
  match(error.message, /tool call 2 started before tool call 0/);
  equal(server.requests.length, 1);
});

Deno.test("OpenAiProvider treats a silent stream as a dropped connection", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().delay(2_000).text("late"),
    chatTurn().text("Quick."),
  ]);
  const { events, error } = await collect(
    providerFor(server, { idleTimeoutMs: 300 }).stream(REQUEST, { signal: signal() }),
  );
  equal(error, null);
  const retry = events.find((event) => event.type === "retry");
  ok(retry?.type === "retry");
  match(retry.reason, /sent nothing for 0\.3 s/);
  equal(textOf(events), "Quick.");
});

Deno.test("OpenAiProvider gives up on an unreachable server after maxRetries with a ConnectionError", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const provider = new OpenAiProvider({
    name: "openai",
    apiKey: "k",
    baseUrl: `http://127.0.0.1:${port}/v1`,
    retry: { random: () => 0, maxRetries: 2 },
  });
  const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ConnectionError, String(error));
  match(error.message, /Cannot reach the API at "http:\/\/127\.0\.0\.1:\d+\/v1"/);
  equal(events.filter((event) => event.type === "retry").length, 2);
});

Deno.test("OpenAiProvider stops promptly with the abort reason when aborted mid-stream", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Start").delay(5_000).text("never")]);
  const controller = new AbortController();
  const started = Date.now();
  const events: ProviderEvent[] = [];
  let caught: unknown = null;
  try {
    for await (const event of providerFor(server).stream(REQUEST, { signal: controller.signal })) {
      events.push(event);
      if (event.type === "text-delta") controller.abort(new DOMException("stop", "AbortError"));
    }
  } catch (error) {
    caught = error;
  }
  ok(caught instanceof DOMException && caught.message === "stop", String(caught));
  ok(Date.now() - started < 2_000);
});

Deno.test("OpenAiProvider lists the server's models", async () => {
  await using server = await startFakeOpenAi([], { models: ["qwen3-coder", "llama3.3"] });
  deepStrictEqual(await providerFor(server).listModels({ signal: signal() }), ["qwen3-coder", "llama3.3"]);
  equal(server.remaining, 0);
});

Deno.test("createProvider builds the openai provider from OPENAI_BASE_URL and OPENAI_API_KEY", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Via env.")], { apiKey: "sk-env" });
  const config = providerConfigFromEnv(
    new Map(Object.entries({ ...server.env(), OPENAI_API_KEY: "sk-env" })),
    {
      kind: "openai",
    },
  );
  const provider = await createProvider(config);
  equal(provider.name, "openai");
  const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  equal(error, null);
  equal(textOf(events), "Via env.");
});

Deno.test("OpenAiProvider sends max_completion_tokens to OpenAI's own API and max_tokens elsewhere", async () => {
  await using server = await startFakeOpenAi([chatTurn().text("Hi"), chatTurn().text("Hi")]);
  // OpenAI's host, redirected to the fake: the request is the one OpenAI would receive.
  const redirect: typeof fetch = (input, init) =>
    fetch(
      String(input instanceof Request ? input.url : input).replace("https://api.openai.com", server.url),
      init,
    );
  const official = new OpenAiProvider({
    name: "openai",
    apiKey: server.apiKey,
    baseUrl: "https://api.openai.com/v1",
    fetch: redirect,
  });
  equal((await collect(official.stream(REQUEST, { signal: signal() }))).error, null);
  await collect(providerFor(server).stream(REQUEST, { signal: signal() }));
  const [toOpenAi, toOther] = server.requests.map((request) => request.body as Record<string, unknown>);
  equal(toOpenAi?.max_completion_tokens, 1024);
  equal(toOpenAi?.max_tokens, undefined);
  equal(toOther?.max_tokens, 1024);
  equal(toOther?.max_completion_tokens, undefined);
});

Deno.test("a rate limit that outlasts the retries ends as RateLimitError", async () => {
  await using server = await startFakeOpenAi([chatError(429, "Slow down"), chatError(429, "Slow down")]);
  const { error } = await collect(
    providerFor(server, { maxRetries: 1 }).stream(REQUEST, { signal: signal() }),
  );
  ok(error instanceof RateLimitError);
  equal(server.requests.length, 2);
});

Deno.test("OpenAiProvider never shows the API key a server's error repeats", async (t) => {
  const apiKey = "sk-SECRETKEY";
  for (const format of ["json-401", "text-400"] as const) {
    await t.step(format, async () => {
      await using server = startKeyEchoServer(format);
      const provider = new OpenAiProvider({
        name: "openai",
        apiKey,
        baseUrl: `${server.url}/v1`,
        retry: { maxRetries: 0 },
      });
      const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
      const listError = await provider.listModels({ signal: signal() }).then(() => null, (thrown) => thrown);
      assertKeyHidden(format, apiKey, [error, listError]);
    });
  }
});

Deno.test("OpenAiProvider never writes the API key into the error for a key fetch rejects", async (t) => {
  // A line break in the key would end the header and start another: refused before anything is sent, by the
  // sockets (naming the header, not its value) and by Deno's fetch (quoting the value, masked here).
  const cases: [via: string, reason: RegExp][] = [
    ["sockets", /The "authorization" header's value holds a line break/],
    ["Deno's fetch", /<the API key>/],
  ];
  for (const [via, reason] of cases) {
    await t.step(via, async () => {
      await using server = await startFakeOpenAi([chatTurn().text("never sent")]);
      const provider = new OpenAiProvider({
        name: "openai",
        apiKey: "sk-SECRET-1234\nabc",
        baseUrl: server.baseUrl,
        retry: { maxRetries: 0 },
        ...(via === "sockets" ? {} : { fetch }),
      });
      const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
      ok(error instanceof ConnectionError, String(error));
      match(error.message, reason);
      equal(`${error.message}${error.stack}`.includes("sk-SECRET-1234"), false, error.message);
      equal(server.requests.length, 0);
    });
  }
});

Deno.test("OpenAiProvider never shows the password of its base URL in an error", async () => {
  const port = closedPort();
  const provider = new OpenAiProvider({
    name: "ollama",
    apiKey: null,
    baseUrl: `http://user:PASSWORD@127.0.0.1:${port}/v1`,
    retry: { maxRetries: 0 },
  });
  const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ConnectionError, String(error));
  match(
    error.message,
    new RegExp(`^Cannot reach the API at "http://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}/v1": `),
  );
  equal(`${error.message}${error.stack}`.includes("PASSWORD"), false, error.message);
});

Deno.test("OpenAiProvider does not follow a redirect, which would resend the conversation elsewhere", async () => {
  await using elsewhere = await startFakeOpenAi([chatTurn().text("never sent")]);
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(null, { status: 307, headers: { location: `${elsewhere.baseUrl}/chat/completions` } }),
  );
  const url = `http://127.0.0.1:${server.addr.port}/v1`;
  const provider = new OpenAiProvider({ name: "openai", apiKey: "sk-test", baseUrl: url });
  const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ApiError, String(error));
  deepStrictEqual([error.status, error.isRetryable], [307, false]);
  equal(
    error.message,
    `Cannot use the API at "${url}": it redirects to "${elsewhere.baseUrl}/chat/completions"; ` +
      "set OPENAI_BASE_URL (or the baseUrl setting) to the address it redirects to",
  );
  equal(elsewhere.requests.length, 0);
});

Deno.test("OpenAiProvider takes a web page answered with 200 (a captive portal) for what it is, once", async () => {
  await using server = serveWebPage("text/html");
  const provider = new OpenAiProvider({
    name: "openai",
    apiKey: "sk-test",
    baseUrl: `${server.url}/v1`,
    retry: { random: () => 0 },
  });
  const { error } = await collect(provider.stream(REQUEST, { signal: signal() }));
  ok(error instanceof ApiError && !error.isRetryable, String(error));
  match(error.message, /answered with a web page \(text\/html\), not the API/);
  equal(server.requests, 1);
});

Deno.test("OpenAiProvider ends the stream at [DONE], whatever the server sends after it or however long it stays open", async () => {
  const chunk = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
  const base = { id: "c1", object: "chat.completion.chunk", created: 0, model: "m" };
  const held = Promise.withResolvers<void>();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(
          chunk({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Done." } }] }) +
            chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
            "data: [DONE]\n\ndata: not json at all\n\n",
        ));
        // The body stays open until the test ends.
        await held.promise;
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const provider = new OpenAiProvider({
      name: "openai",
      apiKey: "sk-test",
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
      // Past the idle timeout, an open body would be a dropped connection.
      idleTimeoutMs: 2_000,
    });
    const { events, error } = await collect(provider.stream(REQUEST, { signal: signal() }));
    equal(error, null);
    const text = events.flatMap((event) => event.type === "text-delta" ? [event.text] : []).join("");
    equal(text, "Done.");
    equal(events.at(-1)?.type, "message-end");
  } finally {
    held.resolve();
  }
});
