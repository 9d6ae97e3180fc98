import { deepStrictEqual, equal, throws } from "node:assert/strict";
import { Conversation, pairToolResults, validateConversation } from "../../src/agent/conversation.ts";
import type { Message } from "../../src/llm/provider.ts";

const toolUse = (id: string) => ({
  type: "tool-use" as const,
  id,
  name: "ReadFile",
  input: { path: `/w/${id}` },
});

Deno.test("Conversation keeps an assistant message's text, thinking and tool_use blocks together, in order", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([
    { type: "thinking", thinking: "hmm", signature: "sig" },
    { type: "text", text: "Looking" },
    toolUse("a"),
    { type: "text", text: "" },
    toolUse("b"),
  ]);
  deepStrictEqual(conversation.messages[1], {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "hmm", signature: "sig" },
      { type: "text", text: "Looking" },
      toolUse("a"),
      toolUse("b"),
    ],
  });
  deepStrictEqual(conversation.pendingToolUses().map((block) => block.id), ["a", "b"]);
});

Deno.test("Conversation answers all tool_uses in one user message, results first and in the model's order", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([toolUse("a"), toolUse("b"), toolUse("c")]);
  conversation.addToolResults(
    new Map([
      ["c", { content: "C", isError: false }],
      ["a", { content: "A failed", isError: true }],
    ]),
    {
      missing: (block) => ({ content: `${block.id} was cancelled`, isError: true }),
      note: "You were cut off.",
    },
  );
  deepStrictEqual(conversation.messages[2], {
    role: "user",
    content: [
      { type: "tool-result", toolUseId: "a", content: "A failed", isError: true },
      { type: "tool-result", toolUseId: "b", content: "b was cancelled", isError: true },
      { type: "tool-result", toolUseId: "c", content: "C", isError: false },
      { type: "text", text: "You were cut off." },
    ],
  });
  deepStrictEqual(validateConversation(conversation.messages), []);
  deepStrictEqual(conversation.pendingToolUses(), []);
});

Deno.test("Conversation refuses a new assistant message while tool_uses are unanswered", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([toolUse("a")]);
  throws(() => conversation.addAssistant([{ type: "text", text: "again" }]), /tool use a has no tool result/);
});

Deno.test("Conversation replaces a tool_use input that is not an object with {}", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([{ type: "tool-use", id: "x", name: "ReadFile", input: '{"pa' }]);
  deepStrictEqual(conversation.pendingToolUses()[0]?.input, {});
});

Deno.test("Conversation merges user text after tool results into the same user message", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([toolUse("a")]);
  conversation.addToolResults(new Map([["a", { content: "A", isError: false }]]), {
    missing: () => ({ content: "", isError: true }),
  });
  conversation.addUserText("next question");
  equal(conversation.length, 3);
  deepStrictEqual(validateConversation(conversation.messages), []);
});

Deno.test("Conversation merges a pause_turn continuation into the assistant message and skips empty ones", () => {
  const conversation = new Conversation();
  conversation.addUserText("hi");
  conversation.addAssistant([{ type: "text", text: "Part one." }]);
  equal(conversation.addAssistant([{ type: "text", text: "" }]), false);
  conversation.addAssistant([{ type: "text", text: " Part two." }]);
  equal(conversation.length, 2);
  deepStrictEqual(conversation.last?.content, [{ type: "text", text: "Part one." }, {
    type: "text",
    text: " Part two.",
  }]);
});

Deno.test("pairToolResults returns one result per tool_use, in order, is_error only on errors", () => {
  const blocks = pairToolResults(
    [toolUse("a"), toolUse("b")],
    new Map([["b", { content: "B", isError: false }]]),
    () => ({ content: "missing", isError: true }),
  );
  deepStrictEqual(blocks, [
    { type: "tool-result", toolUseId: "a", content: "missing", isError: true },
    { type: "tool-result", toolUseId: "b", content: "B", isError: false },
  ]);
});

Deno.test("validateConversation finds each broken pairing rule", async (t) => {
  const assistant: Message = { role: "assistant", content: [toolUse("a"), toolUse("b")] };
  const cases: [string, Message[], RegExp][] = [
    ["a missing result", [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      assistant,
      { role: "user", content: [{ type: "tool-result", toolUseId: "a", content: "A", isError: false }] },
    ], /answers \[a\] but the assistant asked for \[a, b\]/],
    ["results out of order", [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      assistant,
      {
        role: "user",
        content: [
          { type: "tool-result", toolUseId: "b", content: "B", isError: false },
          { type: "tool-result", toolUseId: "a", content: "A", isError: false },
        ],
      },
    ], /answers \[b, a\]/],
    ["text before the results", [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      assistant,
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "tool-result", toolUseId: "a", content: "A", isError: false },
          { type: "tool-result", toolUseId: "b", content: "B", isError: false },
        ],
      },
    ], /tool results after other content/],
    [
      "two user messages in a row",
      [{ role: "user", content: [{ type: "text", text: "a" }] }, {
        role: "user",
        content: [{ type: "text", text: "b" }],
      }],
      /both from the user/,
    ],
  ];
  for (const [name, messages, problem] of cases) {
    await t.step(name, () => {
      const problems = validateConversation(messages);
      equal(problems.some((text) => problem.test(text)), true, problems.join("; "));
    });
  }
  await t.step("a trailing assistant message with tool_uses is still valid", () => {
    deepStrictEqual(
      validateConversation([{ role: "user", content: [{ type: "text", text: "hi" }] }, assistant]),
      [],
    );
  });
});

Deno.test("Conversation refuses to resume from invalid messages", () => {
  throws(
    () =>
      new Conversation([{ role: "user", content: [{ type: "text", text: "a" }] }, {
        role: "user",
        content: [{ type: "text", text: "b" }],
      }]),
    /Cannot resume/,
  );
});
