import { deepStrictEqual, equal, match, ok, throws } from "node:assert/strict";
import {
  compactConversation,
  compactionCut,
  type CompactionResult,
  SUMMARY_HEADING,
} from "../../src/agent/compaction.ts";
import { validateConversation } from "../../src/agent/conversation.ts";
import { ApiError } from "../../src/llm/errors.ts";
import type { Message, Usage } from "../../src/llm/provider.ts";
import {
  messageEnd,
  messageStart,
  ScriptedProvider,
  type ScriptedTurn,
  textTurn,
} from "../_fakes/scripted_provider.ts";

const SUMMARY_USAGE: Usage = {
  inputTokens: 700,
  outputTokens: 90,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};

function user(text: string): Message {
  return { role: "user", content: [{ type: "text", text }] };
}

function assistantText(text: string): Message {
  return { role: "assistant", content: [{ type: "text", text }] };
}

function toolCall(id: string, path: string): Message {
  return {
    role: "assistant",
    content: [
      { type: "thinking", thinking: `I should read ${path}`, signature: `sig-${id}` },
      { type: "text", text: `Reading ${path}.` },
      { type: "tool-use", id, name: "ReadFile", input: { path } },
    ],
  };
}

function toolResult(id: string, content: string, isError = false): Message {
  return { role: "user", content: [{ type: "tool-result", toolUseId: id, content, isError }] };
}

/** A conversation of one prompt and three tool turns, then the final answer: 8 messages. */
function toolLoop(): Message[] {
  return [
    user("Fix the failing test in src/a.ts"),
    toolCall("t1", "/w/src/a.ts"),
    toolResult("t1", "1\texport const a = 1;"),
    toolCall("t2", "/w/test/a_test.ts"),
    toolResult("t2", "Cannot read file: not found", true),
    toolCall("t3", "/w/src/b.ts"),
    toolResult("t3", "1\texport const b = 2;"),
    assistantText("The test expects a to be 2."),
  ];
}

function summaryTurn(text: string, stopReason = "end_turn"): ScriptedTurn {
  return [
    messageStart(),
    { type: "text-delta", index: 0, text },
    messageEnd([{ type: "text", text }], stopReason, SUMMARY_USAGE),
  ];
}

async function compact(
  turns: ScriptedTurn[],
  messages: Message[],
  options: { keepRecentTurns?: number; signal?: AbortSignal } = {},
): Promise<{ result: CompactionResult; provider: ScriptedProvider }> {
  const provider = new ScriptedProvider(turns);
  const result = await compactConversation({
    provider,
    model: "claude-test",
    maxTokens: 2000,
    system: "You are a test.",
    messages,
    keepRecentTurns: options.keepRecentTurns ?? 2,
    signal: options.signal ?? new AbortController().signal,
  });
  return { result, provider };
}

Deno.test("compactionCut keeps the last N assistant messages and everything after them, never splitting a tool_use from its result", async (t) => {
  const messages = toolLoop();
  await t.step("keep 1: from the final answer", () => equal(compactionCut(messages, 1), 7));
  await t.step("keep 2: from the third tool call", () => equal(compactionCut(messages, 2), 5));
  await t.step("keep 3: from the second tool call", () => equal(compactionCut(messages, 3), 3));
  await t.step(
    "keep 4 leaves only the prompt: nothing to compact",
    () => equal(compactionCut(messages, 4), null),
  );
  await t.step("keep 9: more turns than there are", () => equal(compactionCut(messages, 9), null));
  await t.step("every cut starts at an assistant message after a user message", () => {
    for (let keep = 1; keep <= 3; keep++) {
      const cut = compactionCut(messages, keep);
      ok(cut !== null);
      equal(messages[cut]?.role, "assistant");
      equal(messages[cut - 1]?.role, "user");
    }
  });
  await t.step("a trailing tool call still waiting for its results is kept", () => {
    const waiting = messages.slice(0, 6);
    equal(compactionCut(waiting, 1), 5);
  });
  await t.step("keepRecentTurns below 1 is a RangeError", () => {
    throws(() => compactionCut(messages, 0), RangeError);
    throws(() => compactionCut(messages, 1.5), RangeError);
  });
});

Deno.test("compactConversation replaces the older turns by one marked summary message and keeps the recent ones verbatim", async () => {
  const messages = toolLoop();
  const { result, provider } = await compact(
    [summaryTurn("The user wants the test in src/a.ts fixed.")],
    messages,
  );
  ok(result.status === "compacted", JSON.stringify(result));
  equal(result.summary, "The user wants the test in src/a.ts fixed.");
  equal(result.removed, 5);
  equal(result.kept, 3);
  deepStrictEqual(result.usage, SUMMARY_USAGE);
  equal(result.messages.length, 4);
  const first = result.messages[0];
  equal(first?.role, "user");
  const text = first?.content[0]?.type === "text" ? first.content[0].text : "";
  ok(text.startsWith(SUMMARY_HEADING), text);
  match(text, /<summary>\nThe user wants the test in src\/a\.ts fixed\.\n<\/summary>/);
  // The kept turns, thinking blocks and signatures included, exactly as they were.
  deepStrictEqual(result.messages.slice(1), messages.slice(5));
  deepStrictEqual(validateConversation(result.messages), []);
  equal(provider.requests.length, 1);
});

Deno.test("compactConversation sends one request without tools whose text holds the older turns and the instructions", async () => {
  const { provider } = await compact([summaryTurn("Summary.")], toolLoop());
  const request = provider.requests[0];
  ok(request !== undefined);
  deepStrictEqual(request.tools, []);
  equal(request.cache, false);
  equal(request.system, "You are a test.");
  equal(request.maxTokens, 2000);
  equal(request.messages.length, 1);
  const only = request.messages[0];
  equal(only?.role, "user");
  const text = only?.content[0]?.type === "text" ? only.content[0].text : "";
  match(text, /^<conversation>\n\[user\]\nFix the failing test in src\/a\.ts/);
  match(text, /\[tool call ReadFile, id t1\] \{"path":"\/w\/src\/a\.ts"\}/);
  match(text, /\[tool result for t2, an error\]\nCannot read file: not found/);
  match(text, /## State and next steps/);
  // Only the older part: the kept turns are not summarised, thinking is never written out.
  ok(!text.includes("/w/src/b.ts"), "the kept third call is not in the summary request");
  ok(!text.includes("I should read"), "thinking is left out");
});

Deno.test("compactConversation writes out only the start and end of a very long tool result", async () => {
  const messages = toolLoop();
  messages[2] = toolResult("t1", `HEAD${"x".repeat(50_000)}TAIL`);
  const { provider } = await compact([summaryTurn("Summary.")], messages);
  const first = provider.requests[0]?.messages[0]?.content[0];
  const text = first?.type === "text" ? first.text : "";
  ok(text.includes("HEAD") && text.includes("TAIL"));
  match(text, /\[… \d+ characters left out …\]/);
  ok(text.length < 20_000, `the request text is ${text.length} characters`);
});

Deno.test("compactConversation says there is nothing to compact for a short conversation and sends no request", async () => {
  const { result, provider } = await compact([], [user("hi"), assistantText("Hello.")]);
  equal(result.status, "nothing-to-compact");
  equal(provider.requests.length, 0);
  const empty = await compact([], []);
  equal(empty.result.status, "nothing-to-compact");
});

Deno.test("compactConversation fails, keeping the conversation's fate to the caller, when the summary is cut off or the API errs", async (t) => {
  await t.step("cut off at max_tokens", async () => {
    const { result } = await compact([summaryTurn("## Task\nFix", "max_tokens")], toolLoop());
    ok(result.status === "failed");
    match(result.reason, /cut off at the limit of 2000 tokens/);
    equal(result.error, null);
    deepStrictEqual(result.usage, SUMMARY_USAGE);
  });
  await t.step("cut off by a full context window", async () => {
    const { result } = await compact(
      [summaryTurn("## Task\nFix", "model_context_window_exceeded")],
      toolLoop(),
    );
    ok(result.status === "failed");
    match(result.reason, /filled the model's context window/);
  });
  await t.step("an empty answer", async () => {
    const { result } = await compact([summaryTurn("   ")], toolLoop());
    ok(result.status === "failed");
    match(result.reason, /without a summary/);
  });
  await t.step("an API error", async () => {
    const error = new ApiError("Overloaded", {
      status: 529,
      errorType: "overloaded_error",
      isRetryable: true,
    });
    const { result } = await compact([[messageStart(), { type: "throw", error }]], toolLoop());
    ok(result.status === "failed");
    equal(result.error, error);
    match(result.reason, /Overloaded/);
    // The response had started: its input side counts.
    equal(result.usage?.inputTokens, 10);
  });
});

Deno.test("compactConversation ends as aborted when the signal aborts during the summary request", async () => {
  const controller = new AbortController();
  const asked = Promise.withResolvers<void>();
  const never = new Promise<void>(() => {});
  const turn: ScriptedTurn = () => {
    asked.resolve();
    return [messageStart(), { type: "wait", until: never }, ...textTurn("late").slice(1)];
  };
  const pending = compact([turn], toolLoop(), { signal: controller.signal });
  await asked.promise;
  controller.abort();
  const { result } = await pending;
  ok(result.status === "aborted", JSON.stringify(result));
});

Deno.test("compactConversation refuses an invalid conversation with a TypeError", async () => {
  const broken = [user("a"), toolCall("t1", "/w/a"), user("no result")];
  let thrown: unknown = null;
  try {
    await compact([], broken);
  } catch (error) {
    thrown = error;
  }
  ok(thrown instanceof TypeError, String(thrown));
});
