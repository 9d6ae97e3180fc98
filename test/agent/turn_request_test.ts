import { deepStrictEqual, equal } from "node:assert/strict";
import { Conversation } from "../../src/agent/conversation.ts";
import { runAgent, type RunAgentOptions } from "../../src/agent/loop.ts";
import { firstTurnRequest } from "../../src/agent/turn_request.ts";
import type { Message } from "../../src/llm/provider.ts";
import { probePipeline, Probes } from "../_fakes/probe_tools.ts";
import { ScriptedProvider, textTurn } from "../_fakes/scripted_provider.ts";

const RESUMED: Message[] = [
  { role: "user", content: [{ type: "text", text: "earlier question" }] },
  { role: "assistant", content: [{ type: "text", text: "earlier answer" }] },
];

function options(provider: ScriptedProvider, overrides: Partial<RunAgentOptions> = {}): RunAgentOptions {
  return {
    provider,
    pipeline: probePipeline(new Probes().tools),
    prompt: "do the thing",
    model: "claude-test",
    maxTokens: 1000,
    system: "You are a test.",
    signal: new AbortController().signal,
    resultDir: null,
    costOf: () => 0,
    ...overrides,
  };
}

/** Runs the loop and returns the first request it sent, with what firstTurnRequest predicted beforehand. */
async function firstOfRun(overrides: Partial<RunAgentOptions>) {
  const provider = new ScriptedProvider([textTurn("done")], { repeatLast: true });
  const run = options(provider, overrides);
  const predicted = firstTurnRequest(run);
  for await (const _event of runAgent(run)) { /* drained */ }
  return { predicted, sent: provider.requests[0] ?? null };
}

Deno.test("firstTurnRequest: the loop's first request is exactly the predicted one", async (t) => {
  const cases: Record<string, () => Partial<RunAgentOptions>> = {
    "a new conversation": () => ({}),
    "a resumed conversation": () => ({ conversation: new Conversation(RESUMED) }),
    "an answer tool": () => ({
      answer: {
        tool: { name: "StructuredOutput", description: "The answer.", inputSchema: { type: "object" } },
        check: () => null,
      },
    }),
    "a budget and a turn limit": () => ({ maxTurns: 3, maxBudgetUsd: 1 }),
    "compaction below its threshold": () => ({
      conversation: new Conversation(RESUMED),
      compaction: { thresholdTokens: 1000, keepRecentTurns: 1, contextTokens: 500 },
    }),
  };
  for (const [name, overrides] of Object.entries(cases)) {
    await t.step(name, async () => {
      const { predicted, sent } = await firstOfRun(overrides());
      deepStrictEqual(predicted, sent);
    });
  }
});

Deno.test("firstTurnRequest: none when the run may end or compact before its first request", async (t) => {
  const aborted = new AbortController();
  aborted.abort();
  const cases: Record<string, Partial<RunAgentOptions>> = {
    "an aborted run": { signal: aborted.signal },
    "no turns allowed": { maxTurns: 0 },
    "no budget": { maxBudgetUsd: 0 },
    "a conversation past its compaction threshold": {
      conversation: new Conversation([...RESUMED, ...RESUMED.map((message) => structuredClone(message))]),
      compaction: { thresholdTokens: 100, keepRecentTurns: 1, contextTokens: 500 },
    },
  };
  for (const [name, overrides] of Object.entries(cases)) {
    await t.step(name, () => {
      equal(firstTurnRequest(options(new ScriptedProvider([]), overrides)), null);
    });
  }
});
