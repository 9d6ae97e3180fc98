import { deepStrictEqual, equal } from "node:assert/strict";
import { validateConversation } from "../../src/agent/conversation.ts";
import { portHistory } from "../../src/llm/history_port.ts";
import type { Message } from "../../src/llm/provider.ts";

const ANTHROPIC_HISTORY: Message[] = [
  { role: "user", content: [{ type: "text", text: "Look" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Hmm.", signature: "sig" },
      { type: "redacted-thinking", data: "opaque" },
      { type: "tool-use", id: "toolu_1", name: "Glob", input: { pattern: "*" } },
    ],
  },
  { role: "user", content: [{ type: "tool-result", toolUseId: "toolu_1", content: "a.ts", isError: false }] },
  { role: "assistant", content: [{ type: "text", text: "Found a.ts." }] },
];

Deno.test("portHistory keeps a history for its own provider as it is, without a notice", () => {
  deepStrictEqual(portHistory(ANTHROPIC_HISTORY, { from: "anthropic", to: "anthropic" }), {
    messages: ANTHROPIC_HISTORY,
    notice: null,
  });
  equal(
    portHistory(ANTHROPIC_HISTORY, { from: null, to: "anthropic" }).notice,
    null,
    "older transcripts are Anthropic's",
  );
});

Deno.test("portHistory names the thinking blocks an OpenAI-compatible provider cannot take", () => {
  const ported = portHistory(ANTHROPIC_HISTORY, { from: "anthropic", to: "openai" });
  equal(
    ported.notice,
    "Continuing a session recorded with anthropic on openai: 2 thinking blocks are dropped (only anthropic can " +
      "read them back)",
  );
  // The conversation stays valid; the request to the new provider leaves the blocks out (openai_wire.ts).
  deepStrictEqual(validateConversation(ported.messages), []);
});

Deno.test("portHistory rewrites tool call ids Anthropic refuses, in the call and its result alike", () => {
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "Go" }] },
    {
      role: "assistant",
      content: [
        { type: "tool-use", id: "call:0", name: "Glob", input: {} },
        { type: "tool-use", id: "call_0", name: "Glob", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool-result", toolUseId: "call:0", content: "x", isError: false },
        { type: "tool-result", toolUseId: "call_0", content: "y", isError: false },
      ],
    },
  ];
  const ported = portHistory(history, { from: "ollama", to: "anthropic" });
  const ids = ported.messages.flatMap((message) =>
    message.content.map((block) =>
      block.type === "tool-use" ? block.id : block.type === "tool-result" ? block.toolUseId : null
    )
  ).filter((id) => id !== null);
  deepStrictEqual(ids, ["call_0_2", "call_0", "call_0_2", "call_0"]);
  deepStrictEqual(validateConversation(ported.messages), []);
  equal(
    ported.notice,
    "Continuing a session recorded with ollama on anthropic: 1 tool call id is rewritten to the characters " +
      "anthropic accepts",
  );
  equal(
    portHistory(ANTHROPIC_HISTORY, { from: "openai", to: "anthropic" }).notice,
    "Continuing a session recorded with openai on anthropic",
  );
});
