import { deepStrictEqual, throws } from "node:assert/strict";
import { parseRawEvent, toWireRequest } from "../../src/llm/anthropic_wire.ts";
import { StreamProtocolError } from "../../src/llm/errors.ts";
import type { ContentBlock, ModelRequest } from "../../src/llm/provider.ts";
import { cacheBreakpoints } from "../fake_anthropic/server.ts";

const BASE: ModelRequest = {
  model: "claude-test-1",
  maxTokens: 100,
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  tools: [],
};

Deno.test("toWireRequest omits an empty system prompt and an empty tool list, keeping the message breakpoint", () => {
  deepStrictEqual(toWireRequest(BASE), {
    model: "claude-test-1",
    max_tokens: 100,
    stream: true,
    messages: [{
      role: "user",
      content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }],
    }],
  });
});

Deno.test("toWireRequest puts the message breakpoint on the last block that can carry one", async (t) => {
  const thinking: ContentBlock = { type: "thinking", thinking: "Hm", signature: "sig" };
  const redacted: ContentBlock = { type: "redacted-thinking", data: "opaque" };
  const text: ContentBlock = { type: "text", text: "Partial answer" };
  const toolUse: ContentBlock = { type: "tool-use", id: "toolu_1", name: "ReadFile", input: {} };
  const cases: [string, ContentBlock[], string[]][] = [
    ["a text block last", [thinking, text], ["messages.1.content.1"]],
    ["thinking blocks after it", [text, thinking, redacted], ["messages.1.content.0"]],
    ["a tool_use block last", [thinking, text, toolUse], ["messages.1.content.2"]],
    ["only thinking blocks", [thinking, redacted], []],
  ];
  for (const [name, content, expected] of cases) {
    await t.step(name, () => {
      const request: ModelRequest = { ...BASE, messages: [...BASE.messages, { role: "assistant", content }] };
      deepStrictEqual(cacheBreakpoints(toWireRequest(request)), expected);
    });
  }
});

Deno.test("toWireRequest leaves the caller's messages and tools untouched", () => {
  const request: ModelRequest = {
    ...BASE,
    system: "Be brief.",
    tools: [{ name: "ReadFile", description: "Reads.", inputSchema: { type: "object" } }],
  };
  const before = structuredClone(request);
  const wire = toWireRequest(request);
  deepStrictEqual(cacheBreakpoints(wire), ["tools.0", "system.0", "messages.0.content.0"]);
  deepStrictEqual(request, before);
  deepStrictEqual(cacheBreakpoints(toWireRequest(request)), cacheBreakpoints(wire));
});

Deno.test("parseRawEvent refuses a usage count that is not a whole number from 0 up, which a budget would trust", () => {
  const delta = (usage: Record<string, unknown>) => ({
    type: "message_delta",
    delta: { stop_reason: "end_turn" },
    usage,
  });
  for (const count of [-100_000_000, 1.5, 1e308, "12", Number.MAX_SAFE_INTEGER + 2]) {
    throws(() => parseRawEvent(delta({ output_tokens: count })), StreamProtocolError, String(count));
    throws(
      () => parseRawEvent({ type: "message_start", message: { id: "m", usage: { input_tokens: count } } }),
      StreamProtocolError,
      String(count),
    );
  }
  deepStrictEqual(parseRawEvent(delta({ output_tokens: 12, input_tokens: null })), {
    type: "message_delta",
    delta: { stop_reason: "end_turn" },
    usage: { output_tokens: 12 },
  });
});
