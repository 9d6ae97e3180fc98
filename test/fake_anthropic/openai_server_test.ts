/**
 * The fake chat completions server itself: what it streams and what it refuses, checked with plain fetch
 * (no SDK), so a fake that drifted from the API's shapes fails here first.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { checkChatRequest } from "./openai_rules.ts";
import { chatError, chatTurn, type FakeOpenAi, startFakeOpenAi } from "./openai_server.ts";

const VALID = {
  model: "m",
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: "user", content: "Hi" }],
};

async function post(
  server: FakeOpenAi,
  body: unknown,
  key: string | null = server.apiKey,
): Promise<Response> {
  return await fetch(`${server.baseUrl}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body. */
function payloads(text: string): string[] {
  return text.split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => block.slice(6));
}

Deno.test("the fake streams chunks with role, text, tool call fragments, finish, usage and [DONE]", async () => {
  await using server = await startFakeOpenAi([
    chatTurn().text("Hi").toolCall("Glob", { pattern: "*.ts" }, { id: "call_1", fragment: 5 })
      .usage({ prompt_tokens: 9, completion_tokens: 3, cached_tokens: 2 }),
  ]);
  const response = await post(server, VALID);
  equal(response.status, 200);
  equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const data = payloads(await response.text());
  equal(data.at(-1), "[DONE]");
  const chunks = data.slice(0, -1).map((text) => JSON.parse(text));
  ok(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.id === "chatcmpl-fake-1"));
  deepStrictEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
  deepStrictEqual(chunks[1].choices[0].delta, { content: "Hi" });
  deepStrictEqual(chunks[2].choices[0].delta.tool_calls, [
    { index: 0, id: "call_1", type: "function", function: { name: "Glob", arguments: "" } },
  ]);
  const args = chunks.slice(3, -2).map((chunk) => chunk.choices[0].delta.tool_calls[0].function.arguments);
  deepStrictEqual(args, ['{"pat', 'tern"', ':"*.t', 's"}']);
  equal(chunks.at(-2).choices[0].finish_reason, "tool_calls");
  deepStrictEqual(chunks.at(-1), {
    id: "chatcmpl-fake-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "m",
    choices: [],
    usage: {
      prompt_tokens: 9,
      completion_tokens: 3,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 2 },
    },
  });
});

Deno.test("the fake answers errors in OpenAI's shape, with their headers, without consuming the script for refusals", async () => {
  await using server = await startFakeOpenAi([
    chatError(429, "Rate limit reached", { headers: { "retry-after": "2" } }),
    chatTurn().text("ok"),
  ], { apiKey: "sk-right" });
  const unauthorized = await post(server, VALID, "sk-wrong");
  equal(unauthorized.status, 401);
  deepStrictEqual((await unauthorized.json()).error.code, "invalid_api_key");
  const missing = await post(server, VALID, null);
  equal(missing.status, 401);
  await missing.body?.cancel();
  const limited = await post(server, VALID);
  equal(limited.status, 429);
  equal(limited.headers.get("retry-after"), "2");
  deepStrictEqual(await limited.json(), {
    error: { message: "Rate limit reached", type: "error", param: null, code: null },
  });
  equal(server.remaining, 1);
  const notFound = await fetch(`${server.url}/v1/completions`, { method: "POST", body: "{}" });
  equal(notFound.status, 404);
  await notFound.body?.cancel();
  const models = await fetch(`${server.baseUrl}/models`, { headers: { authorization: "Bearer sk-right" } });
  deepStrictEqual((await models.json()).data.map((model: { id: string }) => model.id), ["fake-model"]);
  equal(server.completions.length, 3);
});

Deno.test("the fake refuses with 500 a request beyond the script", async () => {
  await using server = await startFakeOpenAi([]);
  const response = await post(server, VALID);
  equal(response.status, 500);
  equal(response.headers.get("x-should-retry"), "false");
  match((await response.json()).error.message, /no scripted response left for request 1/);
});

Deno.test("checkChatRequest enforces the pairing of tool messages with the previous assistant's calls", async (t) => {
  const call = (id: string) => ({
    id,
    type: "function",
    function: { name: "Glob", arguments: '{"pattern":"*"}' },
  });
  const body = (messages: unknown[]) => ({ ...VALID, messages });
  const user = { role: "user", content: "Go" };
  const assistant = { role: "assistant", content: null, tool_calls: [call("c1"), call("c2")] };
  const tool = (id: string) => ({ role: "tool", tool_call_id: id, content: "r" });
  const cases: [string, unknown, RegExp | null][] = [
    [
      "a valid round",
      body([{ role: "system", content: "S" }, user, assistant, tool("c1"), tool("c2"), user]),
      null,
    ],
    [
      "results out of order",
      body([user, assistant, tool("c2"), tool("c1")]),
      /expected "c1" \(the calls' order\)/,
    ],
    ["a missing result", body([user, assistant, tool("c1"), user]), /did not have response messages: c2/],
    ["an unanswered end", body([user, assistant, tool("c1")]), /ends with unanswered tool calls: c2/],
    ["a stray tool message", body([user, tool("c1")]), /must be a response to a preceding message/],
    [
      "a duplicate call id",
      body([user, assistant, tool("c1"), tool("c2"), { ...assistant }]),
      /Duplicate tool call id "c1"/,
    ],
    [
      "arguments that are not an object",
      body([user, {
        role: "assistant",
        content: null,
        tool_calls: [{ ...call("c9"), function: { name: "G", arguments: "[1]" } }],
      }, tool("c9")]),
      /expected a JSON object/,
    ],
    [
      "an empty assistant message",
      body([user, { role: "assistant", content: "" }]),
      /needs content or tool_calls/,
    ],
    [
      "an unknown role",
      body([{ role: "developer", content: "x" }]),
      /is not one of system, user, assistant, tool/,
    ],
    ["a late system message", body([user, { role: "system", content: "S" }]), /may only come first/],
    ["an assistant first", body([{ role: "assistant", content: "Hi" }]), /must start with a user message/],
    [
      "content blocks",
      body([{ role: "user", content: [{ type: "tool_result" }] }]),
      /expected a non-empty string/,
    ],
    ["no usage chunk asked for", { ...VALID, stream_options: undefined }, /include_usage must be true/],
    ["both token limits", { ...VALID, max_tokens: 5, max_completion_tokens: 5 }, /not both/],
    ["a bad tool", {
      ...VALID,
      tools: [{ type: "function", function: { name: "a b", parameters: { type: "object" } } }],
    }, /does not match pattern/],
  ];
  for (const [name, request, expected] of cases) {
    await t.step(name, () => {
      const problem = checkChatRequest(request);
      if (expected === null) equal(problem, null);
      else match(problem ?? "(accepted)", expected);
    });
  }
});
