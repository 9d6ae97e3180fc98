import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { SUMMARY_HEADING } from "../../src/agent/compaction.ts";
import { Conversation, validateConversation } from "../../src/agent/conversation.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runAgent, type RunAgentOptions } from "../../src/agent/loop.ts";
import type { ContentBlock, ModelRequest, Usage } from "../../src/llm/provider.ts";
import { probePipeline, Probes } from "../_fakes/probe_tools.ts";
import {
  messageEnd,
  messageStart,
  ScriptedProvider,
  type ScriptedTurn,
  type ScriptStep,
} from "../_fakes/scripted_provider.ts";

function usage(inputTokens: number, outputTokens = 5): Usage {
  return { inputTokens, outputTokens, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
}

/** A response calling ProbeRead once, reporting a prompt of `promptTokens`. */
function readTurn(id: string, promptTokens: number): ScriptStep[] {
  const content: ContentBlock[] = [
    { type: "text", text: `Reading ${id}.` },
    { type: "tool-use", id, name: "ProbeRead", input: { label: id } },
  ];
  return [
    messageStart(),
    { type: "tool-call", index: 1, id, name: "ProbeRead", input: { label: id } },
    messageEnd(content, "tool_use", usage(promptTokens)),
  ];
}

function textAnswer(text: string, promptTokens = 10, stopReason = "end_turn"): ScriptStep[] {
  return [
    messageStart(),
    { type: "text-delta", index: 0, text },
    messageEnd([{ type: "text", text }], stopReason, usage(promptTokens)),
  ];
}

/** The summary request's answer; it checks that it was sent without tools. */
function summaryAnswer(text: string): ScriptedTurn {
  return (request: ModelRequest) => {
    equal(request.tools.length, 0, "the summary request offers no tools");
    return [messageStart(), messageEnd([{ type: "text", text }], "end_turn", usage(3000, 200))];
  };
}

async function run(
  turns: ScriptedTurn[],
  options: Partial<RunAgentOptions> & { onEvent?: (event: AgentEvent) => void } = {},
): Promise<{ events: AgentEvent[]; provider: ScriptedProvider; conversation: Conversation }> {
  const probes = new Probes();
  const provider = new ScriptedProvider(turns);
  const conversation = options.conversation ?? new Conversation();
  const { onEvent, ...rest } = options;
  const events: AgentEvent[] = [];
  for await (
    const event of runAgent({
      provider,
      pipeline: probePipeline(probes.tools),
      prompt: "do the thing",
      model: "claude-test",
      maxTokens: 1000,
      system: "You are a test.",
      signal: new AbortController().signal,
      resultDir: null,
      compaction: { thresholdTokens: 1000, keepRecentTurns: 1 },
      ...rest,
      conversation,
    })
  ) {
    events.push(event);
    onEvent?.(event);
  }
  return { events, provider, conversation };
}

function ofType<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
}

function textOf(block: ContentBlock | undefined): string {
  return block?.type === "text" ? block.text : "";
}

Deno.test("runAgent compacts before the next request once the conversation passes the threshold, then goes on to a normal end", async () => {
  const { events, provider, conversation } = await run(
    [
      readTurn("t1", 100),
      readTurn("t2", 200),
      readTurn("t3", 1500), // past the threshold of 1000
      summaryAnswer("The model read t1, t2 and t3."),
      textAnswer("All read."),
    ],
    { costOf: (spent) => spent.inputTokens / 1_000_000 + spent.outputTokens / 100_000 },
  );
  equal(provider.requests.length, 5);
  const beforeCompaction = provider.requests[2];
  const afterCompaction = provider.requests[4];
  ok(beforeCompaction !== undefined && afterCompaction !== undefined);
  // Request 3 carried 5 messages; request 4 would have carried 7: the summary and the last turn replace them.
  equal(beforeCompaction.messages.length, 5);
  equal(afterCompaction.messages.length, 3);
  ok(textOf(afterCompaction.messages[0]?.content[0]).startsWith(SUMMARY_HEADING));
  match(textOf(afterCompaction.messages[0]?.content[0]), /The model read t1, t2 and t3\./);
  deepStrictEqual(afterCompaction.messages.slice(1).map((message) => message.role), ["assistant", "user"]);
  const kept = afterCompaction.messages[1]?.content.find((block) => block.type === "tool-use");
  equal(kept?.type === "tool-use" ? kept.id : null, "t3");
  const answer = afterCompaction.messages[2]?.content[0];
  equal(answer?.type === "tool-result" ? answer.toolUseId : null, "t3");
  deepStrictEqual(validateConversation(afterCompaction.messages), []);
  // The compaction happened between the tool results of turn 3 and the request of turn 4, in this order.
  const sequence = events.map((event) => event.type).filter((type) =>
    ["compaction-start", "compaction", "request-start", "tool-results", "usage"].includes(type)
  );
  deepStrictEqual(sequence.slice(-6), [
    "tool-results",
    "compaction-start",
    "usage",
    "compaction",
    "request-start",
    "usage",
  ]);
  const [compaction] = ofType(events, "compaction");
  ok(compaction !== undefined);
  equal(compaction.turn, 4);
  equal(compaction.trigger, "auto");
  equal(compaction.removedMessages, 5);
  equal(compaction.keptMessages, 2);
  deepStrictEqual(compaction.messages, afterCompaction.messages);
  deepStrictEqual(compaction.usage, usage(3000, 200));
  equal(ofType(events, "request-start").at(-1)?.messageCount, 3);
  const end = events.at(-1);
  ok(end?.type === "turn-end");
  equal(end.reason, "end_turn");
  equal(end.text, "All read.");
  equal(end.turns, 4, "the summary request is not one of the run's turns");
  // Totals count the summary request: 4 turns + 1 summary.
  equal(end.totals.requests, 5);
  equal(end.totals.inputTokens, 100 + 200 + 1500 + 3000 + 10);
  equal(end.totals.outputTokens, 5 * 4 + 200);
  const expectedCost = (100 + 200 + 1500 + 3000 + 10) / 1_000_000 + (5 * 4 + 200) / 100_000;
  ok(end.costUsd !== null && Math.abs(end.costUsd - expectedCost) < 1e-12, `cost ${end.costUsd}`);
  // The conversation object itself was compacted in place and goes on from there.
  equal(conversation.length, 4);
  deepStrictEqual(conversation.messages.slice(0, 3), afterCompaction.messages);
});

Deno.test("runAgent does not compact while the conversation stays under the threshold", async () => {
  // 995 input + 5 output: exactly the threshold, which is not past it.
  const { events, provider } = await run([readTurn("t1", 900), readTurn("t2", 995), textAnswer("Done.")]);
  equal(provider.requests.length, 3);
  equal(ofType(events, "compaction-start").length, 0);
  equal(ofType(events, "compaction").length, 0);
});

Deno.test("runAgent compacts before a run's first request when the caller says the conversation is already past the threshold", async () => {
  const earlier = new Conversation();
  earlier.addUserText("first question");
  earlier.addAssistant([{ type: "text", text: "first answer" }]);
  earlier.addUserText("second question");
  earlier.addAssistant([{ type: "text", text: "second answer" }]);
  const { events, provider } = await run([
    summaryAnswer("Two questions were answered."),
    textAnswer("Third."),
  ], {
    conversation: earlier,
    compaction: { thresholdTokens: 1000, keepRecentTurns: 1, contextTokens: 5000 },
  });
  equal(provider.requests.length, 2);
  const [compaction] = ofType(events, "compaction");
  equal(compaction?.turn, 1);
  const sent = provider.requests[1]?.messages ?? [];
  deepStrictEqual(sent.map((message) => message.role), ["user", "assistant", "user"]);
  equal(textOf(sent[1]?.content[0]), "second answer");
  equal(textOf(sent[2]?.content[0]), "do the thing", "the new prompt is kept verbatim");
});

Deno.test("runAgent goes on without compaction, once warned, when the summary request fails", async () => {
  const { events, provider } = await run([
    readTurn("t1", 100),
    readTurn("t2", 1500),
    [messageStart(), messageEnd([{ type: "text", text: "## Task" }], "max_tokens", usage(3000, 1000))],
    readTurn("t3", 1600),
    textAnswer("Done.", 1700),
  ]);
  equal(provider.requests.length, 5, "no second summary request after the failure");
  const warnings = ofType(events, "warning");
  equal(warnings.length, 1);
  match(
    warnings[0]?.message ?? "",
    /^Cannot compact the conversation: the summary was cut off .*goes on without compaction$/,
  );
  equal(ofType(events, "compaction").length, 0);
  equal(provider.requests[3]?.messages.length, 5, "the conversation was left whole");
  const end = events.at(-1);
  ok(end?.type === "turn-end");
  equal(end.reason, "end_turn");
  equal(end.totals.requests, 5, "the failed summary request still counts");
});

Deno.test("runAgent ends as aborted when the signal aborts during the summary request, the conversation unchanged", async () => {
  const controller = new AbortController();
  const never = new Promise<void>(() => {});
  const { events, provider, conversation } = await run(
    [
      readTurn("t1", 100),
      readTurn("t2", 1500),
      [
        messageStart(),
        { type: "wait", until: never },
        messageEnd([{ type: "text", text: "late" }], "end_turn"),
      ],
    ],
    {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "compaction-start") setTimeout(() => controller.abort(), 5);
      },
    },
  );
  equal(provider.requests.length, 3);
  equal(ofType(events, "compaction").length, 0);
  const end = events.at(-1);
  ok(end?.type === "turn-end");
  equal(end.reason, "aborted");
  equal(end.turns, 2);
  equal(conversation.length, 5, "prompt, two tool turns and their results: nothing was replaced");
  deepStrictEqual(validateConversation(conversation.messages), []);
});
