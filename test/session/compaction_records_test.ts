/** The transcript's compaction record: written from the event, read back by loadSession and the session index. */
import { deepStrictEqual, equal, match, ok, rejects } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import type { Message, Usage } from "../../src/llm/provider.ts";
import { loadSession, SessionLoadError } from "../../src/session/load_session.ts";
import { scanSessions } from "../../src/session/session_index.ts";
import { readTranscript, Transcript } from "../../src/session/transcript.ts";

const ROOT = "/ws";

function usage(inputTokens: number, outputTokens: number): Usage {
  return { inputTokens, outputTokens, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
}

const COMPACTED: Message[] = [
  { role: "user", content: [{ type: "text", text: "[Summary of the earlier conversation] a was read" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "b next", signature: "sig" },
      { type: "tool-use", id: "t2", name: "ReadFile", input: { path: "/ws/b" } },
    ],
  },
  { role: "user", content: [{ type: "tool-result", toolUseId: "t2", content: "1\tb", isError: false }] },
];

function compaction(messages: Message[], summary = "a was read"): AgentEvent {
  return {
    type: "compaction",
    turn: 3,
    trigger: "auto",
    removedMessages: 3,
    keptMessages: messages.length - 1,
    summary,
    messages,
    usage: usage(500, 50),
  };
}

/** The events of a run that read a, compacted, then read b and answered. */
function compactedRun(compactionEvent: AgentEvent = compaction(COMPACTED)): AgentEvent[] {
  return [
    { type: "user-message", text: "read a and b" },
    { type: "usage", turn: 1, usage: usage(100, 10), totals: { ...usage(100, 10), requests: 1 } },
    {
      type: "request-end",
      turn: 1,
      stopReason: "tool_use",
      partial: false,
      content: [{ type: "tool-use", id: "t1", name: "ReadFile", input: { path: "/ws/a" } }],
    },
    {
      type: "tool-results",
      turn: 1,
      content: [{ type: "tool-result", toolUseId: "t1", content: "1\ta", isError: false }],
    },
    { type: "usage", turn: 2, usage: usage(2000, 10), totals: { ...usage(2100, 20), requests: 2 } },
    {
      type: "request-end",
      turn: 2,
      stopReason: "tool_use",
      partial: false,
      content: [{ type: "tool-use", id: "t2", name: "ReadFile", input: { path: "/ws/b" } }],
    },
    {
      type: "tool-results",
      turn: 2,
      content: [{ type: "tool-result", toolUseId: "t2", content: "1\tb", isError: false }],
    },
    { type: "compaction-start", turn: 3, trigger: "auto", messageCount: 5 },
    { type: "usage", turn: 3, usage: usage(500, 50), totals: { ...usage(2600, 70), requests: 3 } },
    compactionEvent,
    { type: "usage", turn: 3, usage: usage(300, 7), totals: { ...usage(2900, 77), requests: 4 } },
    {
      type: "request-end",
      turn: 3,
      stopReason: "end_turn",
      partial: false,
      content: [{ type: "text", text: "a and b are read." }],
    },
  ];
}

async function writeTranscript(home: string, events: AgentEvent[]): Promise<string> {
  using transcript = await Transcript.create({ home, root: ROOT, sessionId: "s1" });
  transcript.append({
    type: "session-start",
    sessionId: "s1",
    root: ROOT,
    model: "claude-sonnet-5-5",
    platform: "linux x86_64",
    provider: "anthropic",
    version: "1",
  });
  for (const event of events) transcript.record(event);
  return transcript.path;
}

async function withHome(body: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.makeTempDir();
  try {
    await body(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("Transcript records a compaction as one record holding the whole new conversation, and not its start", async () => {
  await withHome(async (home) => {
    const { records } = await readTranscript(await writeTranscript(home, compactedRun()));
    const found = records.filter((record) => record.type === "compaction");
    equal(found.length, 1);
    const record = found[0];
    ok(record?.type === "compaction");
    deepStrictEqual(record.messages, COMPACTED);
    equal(record.summary, "a was read");
    equal(record.trigger, "auto");
    equal(record.removedMessages, 3);
    equal(record.keptMessages, 2);
    deepStrictEqual(record.usage, usage(500, 50));
    equal(records.filter((record) => (record.type as string) === "compaction-start").length, 0);
  });
});

Deno.test("loadSession continues from the last compaction: its messages, then what followed", async () => {
  await withHome(async (home) => {
    const loaded = await loadSession(await writeTranscript(home, compactedRun()));
    deepStrictEqual(loaded.messages, [
      ...COMPACTED,
      { role: "assistant", content: [{ type: "text", text: "a and b are read." }] },
    ]);
    equal(loaded.turns, 3);
    equal(loaded.notice, null);
    // The size as of the last response after the compaction: 300 in, 7 out.
    equal(loaded.contextTokens, 307);
  });
});

Deno.test("loadSession knows no conversation size right after a compaction", async () => {
  await withHome(async (home) => {
    const loaded = await loadSession(await writeTranscript(home, compactedRun().slice(0, 10)));
    deepStrictEqual(loaded.messages, COMPACTED);
    equal(loaded.contextTokens, null);
  });
});

Deno.test("loadSession refuses a compaction record whose messages break the pairing rules", async () => {
  await withHome(async (home) => {
    const broken = [COMPACTED[0]!, COMPACTED[1]!, {
      role: "user",
      content: [{ type: "text", text: "no result" }],
    }] as Message[];
    const path = await writeTranscript(home, compactedRun(compaction(broken)));
    await rejects(loadSession(path), (error: unknown) => {
      ok(error instanceof SessionLoadError);
      match(error.message, /record \d+ \(compaction\) does not fit the conversation/);
      return true;
    });
  });
});

Deno.test("scanSessions lists a transcript with a compaction record longer than a line it parses, with no problem", async () => {
  await withHome(async (home) => {
    const large: Message[] = [
      COMPACTED[0]!,
      { role: "assistant", content: [{ type: "text", text: "x".repeat(2 * 1024 * 1024) }] },
    ];
    await writeTranscript(home, compactedRun(compaction(large, "y".repeat(1000))).slice(0, 10));
    const { sessions, skipped } = await scanSessions(home, ROOT);
    deepStrictEqual(skipped, []);
    equal(sessions.length, 1);
    equal(sessions[0]?.problem, null);
    equal(sessions[0]?.turns, 2);
    // The summary request's usage record counts like any other.
    equal(sessions[0]?.usage.inputTokens, 100 + 2000 + 500);
    ok(sessions[0]?.costUsd !== null && sessions[0]!.costUsd! > 0);
  });
});
