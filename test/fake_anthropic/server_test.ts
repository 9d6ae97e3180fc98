import { deepStrictEqual, equal, match, ok, rejects } from "node:assert/strict";
import { cacheBreakpoints, checkMessagesRequest } from "./conversation_rules.ts";
import { type FakeAnthropic, httpError, splitFragments, startFakeAnthropic, turn } from "./server.ts";

const HEADERS = {
  "x-api-key": "sk-ant-any",
  "anthropic-version": "2023-06-01",
  "content-type": "application/json",
};
const BODY = {
  model: "claude-test",
  max_tokens: 100,
  stream: true,
  messages: [{ role: "user", content: "Hi" }],
};

function post(server: FakeAnthropic, body: unknown = BODY, headers: Record<string, string> = HEADERS) {
  return fetch(`${server.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(body) });
}

/** Parses an SSE body into `{event, data}` pairs. */
function parseSse(text: string): { event: string; data: Record<string, unknown> }[] {
  return text.split("\n\n").filter((block) => block !== "").map((block) => {
    const event = block.match(/^event: (.*)$/m)?.[1] ?? "";
    const data = JSON.parse(block.match(/^data: (.*)$/m)?.[1] ?? "null");
    return { event, data };
  });
}

function partialJson(events: { data: Record<string, unknown> }[], index: number): string[] {
  const fragments: string[] = [];
  for (const { data } of events) {
    const delta = data.delta as Record<string, unknown> | undefined;
    if (data.index === index && delta?.type === "input_json_delta") {
      fragments.push(String(delta.partial_json));
    }
  }
  return fragments;
}

Deno.test("fake server streams tool input in 1-3 unit fragments that split escapes and surrogates", async () => {
  const input = { path: '/w/"a"\\b\n/é/😀/🐈.ts', text: "ü😀".repeat(10) };
  await using server = await startFakeAnthropic([
    turn().toolUse("ReadFile", input, { id: "toolu_1", fragment: [1, 3], asciiEscapes: true })
      .toolUse("ReadFile", input, { id: "toolu_2", fragment: [1, 3], seed: 3 }),
  ]);
  const events = parseSse(await (await post(server)).text());
  for (const index of [0, 1]) {
    const fragments = partialJson(events, index);
    ok(fragments.every((fragment) => fragment.length >= 1 && fragment.length <= 3));
    deepStrictEqual(JSON.parse(fragments.join("")), input);
  }
  ok(
    partialJson(events, 0).some((fragment) => /\\u[0-9a-f]{0,3}$/.test(fragment)),
    "no split inside a \\u escape",
  );
  ok(partialJson(events, 0).some((fragment) => fragment.endsWith("\\")), "no split right after a backslash");
  ok(
    partialJson(events, 1).some((fragment) => /[\ud800-\udbff]$/.test(fragment)),
    "no split inside a surrogate pair",
  );
  deepStrictEqual(events.map((event) => event.event).slice(0, 2), ["message_start", "content_block_start"]);
  deepStrictEqual(events.slice(-2).map((event) => event.data), [
    {
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 20 },
    },
    { type: "message_stop" },
  ]);
});

Deno.test("fake server keeps multi-byte characters intact when it writes events in 1-3 byte pieces", async () => {
  await using server = await startFakeAnthropic([
    turn({ byteChunks: [1, 3] }).text("naïve 😀 漢字").stop("end_turn"),
  ]);
  const events = parseSse(await (await post(server)).text());
  const delta = events.find((event) => event.event === "content_block_delta")?.data.delta;
  deepStrictEqual(delta, { type: "text_delta", text: "naïve 😀 漢字" });
});

Deno.test("fake server records requests with headers and parsed bodies, accepting x-api-key or a bearer token", async () => {
  await using server = await startFakeAnthropic([turn().text("one"), turn().text("two")], {
    apiKey: "sk-ant-1",
  });
  await (await post(server, BODY, { ...HEADERS, "x-api-key": "sk-ant-1" })).text();
  const { "x-api-key": _, ...withoutKey } = HEADERS;
  await (await post(server, BODY, { ...withoutKey, authorization: "Bearer sk-ant-1" })).text();
  deepStrictEqual(
    server.requests.map((request) => [request.number, request.method, request.path, request.body]),
    [
      [1, "POST", "/v1/messages", BODY],
      [2, "POST", "/v1/messages", BODY],
    ],
  );
  equal(server.requests[0]?.headers["anthropic-version"], "2023-06-01");
  equal(server.remaining, 0);
  deepStrictEqual(server.env(), { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-1" });
});

Deno.test("fake server answers 401 without a valid key and 400 for non-streaming requests, consuming nothing", async () => {
  await using server = await startFakeAnthropic([turn().text("kept")], { apiKey: "sk-ant-1" });
  const { "x-api-key": _, ...withoutKey } = HEADERS;
  const missing = await post(server, BODY, withoutKey);
  deepStrictEqual([missing.status, await missing.json()], [401, {
    type: "error",
    error: { type: "authentication_error", message: "x-api-key header is required" },
    request_id: "req_fake_1",
  }]);
  const wrong = await post(server, BODY, { ...HEADERS, "x-api-key": "sk-ant-2" });
  equal(wrong.status, 401);
  await wrong.body?.cancel();
  const unstreamed = await post(server, { ...BODY, stream: false }, { ...HEADERS, "x-api-key": "sk-ant-1" });
  equal(unstreamed.status, 400);
  await unstreamed.body?.cancel();
  equal(server.remaining, 1);
});

Deno.test("fake server sends scripted HTTP errors with their headers", async () => {
  await using server = await startFakeAnthropic([
    httpError(429, "rate_limit_error", "Slow down", { headers: { "retry-after": "3" } }),
  ]);
  const response = await post(server);
  equal(response.status, 429);
  equal(response.headers.get("retry-after"), "3");
  deepStrictEqual((await response.json()).error, { type: "rate_limit_error", message: "Slow down" });
});

Deno.test("fake server fails loudly with a non-retryable 500 when the script has run out", async () => {
  await using server = await startFakeAnthropic([turn().text("only one")]);
  await (await post(server)).text();
  const response = await post(server);
  equal(response.status, 500);
  equal(response.headers.get("x-should-retry"), "false");
  match((await response.json()).error.message, /no scripted response left for request 2 \(1 scripted\)/);
});

Deno.test("fake server rejects conversations the API would reject", async () => {
  await using server = await startFakeAnthropic([]);
  const messages = [
    { role: "user", content: "Hi" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ReadFile", input: {} }] },
    { role: "user", content: [{ type: "text", text: "and?" }] },
  ];
  const response = await post(server, { ...BODY, messages });
  equal(response.status, 400);
  match(
    (await response.json()).error.message,
    /^messages\.1: `tool_use` ids were found without `tool_result`/,
  );
  equal(server.requests.length, 1);
});

Deno.test("checkMessagesRequest enforces pairing, order and uniqueness of tool results", async (t) => {
  const toolUse = (id: string) => ({ type: "tool_use", id, name: "ReadFile", input: {} });
  const result = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "ok" });
  const request = (...messages: unknown[]) => ({ model: "m", max_tokens: 10, stream: true, messages });
  const user = (content: unknown) => ({ role: "user", content });
  const assistant = (content: unknown) => ({ role: "assistant", content });
  const cases: [string, unknown, RegExp | null][] = [
    [
      "a valid exchange",
      request(user("Hi"), assistant([toolUse("a"), toolUse("b")]), user([result("a"), result("b")])),
      null,
    ],
    [
      "a missing result",
      request(user("Hi"), assistant([toolUse("a"), toolUse("b")]), user([result("a")])),
      /after: b\./,
    ],
    [
      "results after text",
      request(user("Hi"), assistant([toolUse("a")]), user([{ type: "text", text: "x" }, result("a")])),
      /must come first/,
    ],
    ["an unknown result", request(user([result("z")])), /unexpected `tool_use_id`.*: z/],
    [
      "a duplicate result",
      request(user("Hi"), assistant([toolUse("a")]), user([result("a"), result("a")])),
      /duplicate/,
    ],
    [
      "a reused id",
      request(
        user("Hi"),
        assistant([toolUse("a")]),
        user([result("a")]),
        assistant([toolUse("a")]),
        user([result("a")]),
      ),
      /must be unique/,
    ],
    ["a dangling tool_use", request(user("Hi"), assistant([toolUse("a")])), /after: a\./],
    ["an empty text block", request(user([{ type: "text", text: "" }])), /must be non-empty/],
    ["an assistant first", request(assistant("Hi")), /first message/],
    [
      "a bad tool schema",
      { ...request(user("Hi")), tools: [{ name: "T", input_schema: {} }] },
      /input_schema\.type/,
    ],
  ];
  for (const [name, body, expected] of cases) {
    await t.step(name, () => {
      const problem = checkMessagesRequest(body);
      if (expected === null) equal(problem, null);
      else match(problem ?? "", expected);
    });
  }
});

Deno.test("checkMessagesRequest accepts well-formed cache breakpoints and rejects what the API rejects", async (t) => {
  const ephemeral = { type: "ephemeral" };
  const text = (value: string, cacheControl?: unknown) => ({
    type: "text",
    text: value,
    ...(cacheControl === undefined ? {} : { cache_control: cacheControl }),
  });
  const tool = (name: string, cacheControl?: unknown) => ({
    name,
    input_schema: { type: "object" },
    ...(cacheControl === undefined ? {} : { cache_control: cacheControl }),
  });
  const request = (fields: Record<string, unknown>) => ({
    model: "m",
    max_tokens: 10,
    stream: true,
    messages: [{ role: "user", content: [text("Hi", ephemeral)] }],
    ...fields,
  });
  const cases: [string, unknown, RegExp | null][] = [
    [
      "tools, system and the last block",
      request({ tools: [tool("A"), tool("B", ephemeral)], system: [text("Be brief.", ephemeral)] }),
      null,
    ],
    ["a 1h ttl before a 5m one", request({ system: [text("S", { type: "ephemeral", ttl: "1h" })] }), null],
    ["a null cache_control", request({ tools: [tool("A", null)] }), null],
    [
      "a 5th breakpoint",
      request({
        tools: [tool("A", ephemeral), tool("B", ephemeral), tool("C", ephemeral)],
        system: [text("S", ephemeral)],
      }),
      /^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$/,
    ],
    [
      "another type",
      request({ tools: [tool("A", { type: "persistent" })] }),
      /^tools\.0\.cache_control\.type: /,
    ],
    [
      "an unknown key",
      request({ system: [text("S", { type: "ephemeral", scope: "global" })] }),
      /^system\.0\.cache_control\.scope: Extra inputs are not permitted$/,
    ],
    [
      "an unknown ttl",
      request({ tools: [tool("A", { type: "ephemeral", ttl: "1d" })] }),
      /ttl: Input should be/,
    ],
    [
      "a 1h ttl after a 5m one",
      request({ tools: [tool("A", ephemeral)], system: [text("S", { type: "ephemeral", ttl: "1h" })] }),
      /must not come after a ttl='5m'/,
    ],
    [
      "a thinking block",
      request({
        messages: [
          { role: "user", content: "Hi" },
          {
            role: "assistant",
            content: [{ type: "thinking", thinking: "Hm", signature: "s", cache_control: ephemeral }],
          },
        ],
      }),
      /^messages\.1\.content\.0\.thinking\.cache_control: Extra inputs are not permitted$/,
    ],
    ["a system block that is not text", request({ system: [{ type: "image" }] }), /^system\.0\.type: /],
    ["an empty system block", request({ system: [text("")] }), /^system\.0\.text: .*non-empty/],
  ];
  for (const [name, body, expected] of cases) {
    await t.step(name, () => {
      const problem = checkMessagesRequest(body);
      if (expected === null) equal(problem, null);
      else match(problem ?? "", expected);
    });
  }
});

Deno.test("cacheBreakpoints lists where a request carries cache_control, in processing order", () => {
  const ephemeral = { type: "ephemeral" };
  deepStrictEqual(
    cacheBreakpoints({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
        {
          role: "user",
          content: [{ type: "text", text: "c" }, { type: "text", text: "d", cache_control: ephemeral }],
        },
      ],
      system: [{ type: "text", text: "S", cache_control: ephemeral }],
      tools: [{ name: "A" }, { name: "B", cache_control: ephemeral }],
    }),
    ["tools.1", "system.0", "messages.2.content.1"],
  );
  deepStrictEqual(cacheBreakpoints(BODY), []);
});

Deno.test("fake server answers 400 to a request with more than 4 cache breakpoints and records it", async () => {
  await using server = await startFakeAnthropic([turn().text("kept")]);
  const ephemeral = { type: "ephemeral" };
  const body = {
    ...BODY,
    system: [1, 2, 3, 4, 5].map((index) => ({
      type: "text",
      text: `part ${index}`,
      cache_control: ephemeral,
    })),
  };
  const response = await post(server, body);
  equal(response.status, 400);
  deepStrictEqual((await response.json()).error, {
    type: "invalid_request_error",
    message: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
  });
  deepStrictEqual(server.requests[0]?.body, body);
  equal(server.remaining, 1);
});

Deno.test("fake server drops the connection where the script says, and the client sees a broken body", async () => {
  await using server = await startFakeAnthropic([turn().text("partial").drop()]);
  const response = await post(server);
  equal(response.status, 200);
  await rejects(response.text());
  deepStrictEqual(server.sent.map((event) => event.event), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
  ]);
});

Deno.test("fake server close() cuts a stream that is waiting in a delay", async () => {
  const server = await startFakeAnthropic([turn().text("before").delay(60_000).text("after")]);
  const response = await post(server);
  const reader = response.body!.getReader();
  await reader.read();
  await server.close();
  await rejects(async () => {
    while (!(await reader.read()).done) { /* drain until the cut */ }
  });
  ok(!server.sent.some((event) => event.event === "message_stop"));
});

Deno.test("splitFragments is deterministic and covers the text", () => {
  const text = "0123456789abcdefghij";
  deepStrictEqual(splitFragments(text, [1, 3], 5), splitFragments(text, [1, 3], 5));
  equal(splitFragments(text, [1, 3], 5).join(""), text);
  deepStrictEqual(splitFragments("abcde", 2), ["ab", "cd", "e"]);
  deepStrictEqual(splitFragments("", 2), [""]);
});

/** Sends one request on `connection` and reads its answer up to the end of the chunked body, or to EOF. */
async function exchange(connection: Deno.TcpConn, body: unknown): Promise<string> {
  const payload = JSON.stringify(body);
  const head = Object.entries({
    ...HEADERS,
    "content-length": String(new TextEncoder().encode(payload).length),
  })
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await connection.write(
    new TextEncoder().encode(`POST /v1/messages HTTP/1.1\r\nhost: x\r\n${head}\r\n${payload}`),
  );
  let answer = "";
  const buffer = new Uint8Array(64 * 1024);
  while (!answer.endsWith("0\r\n\r\n")) {
    const count = await connection.read(buffer);
    if (count === null) break;
    answer += new TextDecoder().decode(buffer.subarray(0, count));
  }
  return answer;
}

Deno.test("with keepAlive, the fake server answers a second request on the same connection", async () => {
  for (const keepAlive of [true, false]) {
    await using server = await startFakeAnthropic([
      turn().text("one").stop("end_turn"),
      turn().text("two").stop("end_turn"),
    ], { keepAlive });
    const connection = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(server.url).port) });
    try {
      const first = await exchange(connection, BODY);
      match(first, new RegExp(`connection: ${keepAlive ? "keep-alive" : "close"}\r\n`));
      match(first, /"text":"one"/);
      const second = await exchange(connection, BODY).catch(() => "");
      if (keepAlive) {
        match(second, /"text":"two"/);
        equal(server.requests.length, 2);
      } else {
        equal(second, "");
        equal(server.requests.length, 1);
      }
    } finally {
      connection.close();
    }
  }
});
