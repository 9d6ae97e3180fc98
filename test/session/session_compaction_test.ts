/**
 * Compaction through a whole session: real HTTP to the fake Anthropic server (which rejects, with a 400, a
 * conversation the API would refuse), real tools in a temp workspace, the transcript in a temp
 * MEWCODE_HOME, then the transcript loaded back.
 */
import { testSessionOptions } from "../_fakes/session_options.ts";
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { SUMMARY_HEADING } from "../../src/agent/compaction.ts";
import { conversationTokens } from "../../src/agent/conversation.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import type { Message } from "../../src/llm/provider.ts";
import { loadSession } from "../../src/session/load_session.ts";
import {
  type CompactionResult,
  openSession,
  type Session,
  type SessionOptions,
} from "../../src/session/session.ts";
import { scanSessions } from "../../src/session/session_index.ts";
import { readTranscript } from "../../src/session/transcript.ts";
import { checkMessagesRequest } from "../fake_anthropic/conversation_rules.ts";
import {
  type FakeAnthropic,
  type ScriptedResponse,
  startFakeAnthropic,
  turn,
} from "../fake_anthropic/server.ts";

interface WireMessage {
  role: string;
  content: Record<string, unknown>[];
}

class Workspace implements AsyncDisposable {
  constructor(readonly root: string, readonly home: string) {}

  static async create(): Promise<Workspace> {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-compaction-ws-" }));
    const home = await Deno.makeTempDir({ prefix: "mewcode-compaction-home-" });
    for (const name of ["a", "b", "c"]) {
      await Deno.writeTextFile(join(root, `${name}.txt`), `content of ${name}\n`);
    }
    return new Workspace(root, home);
  }

  open(server: FakeAnthropic, options: Partial<SessionOptions> = {}): Promise<Session> {
    return openSession(
      testSessionOptions(this.root, { ...server.env(), MEWCODE_HOME: this.home, HOME: this.home }, {
        compaction: { thresholdTokens: 1000, keepRecentTurns: 1 },
        ...options,
      }),
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.root, { recursive: true });
    await Deno.remove(this.home, { recursive: true });
  }
}

async function collect(events: AsyncGenerator<AgentEvent>): Promise<AgentEvent[]> {
  return await Array.fromAsync(events);
}

/** Every event of a generator, and what it returned. */
async function collectWithResult<R>(
  events: AsyncGenerator<AgentEvent, R>,
): Promise<{ events: AgentEvent[]; result: R }> {
  const collected: AgentEvent[] = [];
  let step = await events.next();
  while (!step.done) {
    collected.push(step.value);
    step = await events.next();
  }
  return { events: collected, result: step.value };
}

function messagesOf(server: FakeAnthropic, number: number): WireMessage[] {
  const body = server.requests[number - 1]?.body as { messages?: WireMessage[] } | undefined;
  ok(body?.messages, `request ${number} has messages`);
  return body.messages;
}

function firstText(message: WireMessage | undefined): string {
  const block = message?.content[0];
  return typeof block?.text === "string" ? block.text : "";
}

function turnEnd(events: AgentEvent[]): Extract<AgentEvent, { type: "turn-end" }> {
  const last = events.at(-1);
  ok(last?.type === "turn-end", `the last event is turn-end, got ${JSON.stringify(last)}`);
  return last;
}

function readCall(ws: Workspace, name: string, id: string, inputTokens: number): ScriptedResponse {
  return turn().toolUse("ReadFile", { path: join(ws.root, `${name}.txt`) }, { id }).usage({
    input_tokens: inputTokens,
  });
}

Deno.test("a session run compacts past its threshold over real HTTP, every request passes the API's rules, and the transcript loads back exactly", async () => {
  await using ws = await Workspace.create();
  await using server = await startFakeAnthropic([
    readCall(ws, "a", "toolu_1", 100),
    readCall(ws, "b", "toolu_2", 200),
    readCall(ws, "c", "toolu_3", 2000),
    turn().text("SUMMARY: read a.txt and b.txt; c.txt is being read.").usage({
      input_tokens: 3000,
      output_tokens: 150,
    }),
    turn().text("All three read.").usage({ input_tokens: 300 }),
  ]);
  let path: string;
  let compacted: Message[];
  {
    await using session = await ws.open(server);
    const events = await collect(session.run("Read a, b and c", { signal: new AbortController().signal }));
    const end = turnEnd(events);
    equal(end.reason, "end_turn", JSON.stringify(events.filter((event) => event.type === "error")));
    equal(end.text, "All three read.");
    equal(server.remaining, 0);
    equal(server.requests.length, 5);
    // The summary request: no tools, one user message.
    const summaryBody = server.requests[3]?.body as Record<string, unknown>;
    equal(summaryBody.tools, undefined);
    equal(messagesOf(server, 4).length, 1);
    // The request after it is shorter than the one before it, starts with the summary, pairs every tool_use.
    equal(messagesOf(server, 3).length, 5);
    const after = messagesOf(server, 5);
    equal(after.length, 3);
    ok(firstText(after[0]).startsWith(SUMMARY_HEADING));
    match(firstText(after[0]), /SUMMARY: read a\.txt and b\.txt/);
    equal(after[1]?.content.find((block) => block.type === "tool_use")?.id, "toolu_3");
    equal(after[2]?.content[0]?.tool_use_id, "toolu_3");
    equal(checkMessagesRequest(server.requests[4]?.body), null);
    // The totals count the summary request.
    equal(end.totals.requests, 5);
    equal(end.totals.inputTokens, 100 + 200 + 2000 + 3000 + 300);
    const [compaction] = events.filter((event) => event.type === "compaction");
    ok(compaction?.type === "compaction");
    equal(compaction.trigger, "auto");
    compacted = session.messages;
    equal(compacted.length, 4);
    ok(session.transcriptPath !== null);
    path = session.transcriptPath;
  }
  const { records } = await readTranscript(path);
  const types = records.map((record) => record.type);
  ok(types.includes("compaction"));
  equal(
    types.indexOf("usage", types.indexOf("compaction") - 1),
    types.indexOf("compaction") - 1,
    "usage just before",
  );
  const loaded = await loadSession(path);
  deepStrictEqual(loaded.messages, compacted);
  equal(loaded.notice, null);
  equal(
    loaded.contextTokens,
    conversationTokens({
      inputTokens: 300,
      outputTokens: 20,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    }),
  );
  // The sessions listing reads the new record type as a healthy transcript and counts the summary's usage.
  const { sessions } = await scanSessions(ws.home, ws.root);
  equal(sessions.length, 1);
  equal(sessions[0]?.problem, null);
  equal(sessions[0]?.usage.inputTokens, 100 + 200 + 2000 + 3000 + 300);
  equal(sessions[0]?.turns, 4);
  // A torn last line after the compaction is skipped; the conversation is the same.
  await Deno.writeTextFile(path, '{"type":"assistant-message","turn":6,"content":[{"ty', { append: true });
  const torn = await loadSession(path);
  equal(torn.torn, true);
  deepStrictEqual(torn.messages, compacted);

  // Continuing the session (-c) sends the compacted history, then the new prompt.
  await using next = await startFakeAnthropic([turn().text("Still here.")]);
  await using resumed = await ws.open(next, {
    resume: { id: loaded.sessionId ?? "", messages: loaded.messages, contextTokens: loaded.contextTokens },
  });
  const more = await collect(resumed.run("Anything else?", { signal: new AbortController().signal }));
  equal(turnEnd(more).reason, "end_turn");
  const sent = messagesOf(next, 1);
  equal(sent.length, 5);
  ok(firstText(sent[0]).startsWith(SUMMARY_HEADING));
  equal(firstText(sent[4]), "Anything else?");
});

Deno.test("Session.compact compacts on request between runs, records it, and the next run and a reload go on from the summary", async () => {
  await using ws = await Workspace.create();
  await using server = await startFakeAnthropic([
    turn().text("Answer one."),
    turn().text("Answer two."),
    turn().text("The user asked two questions; both were answered.").usage({
      input_tokens: 400,
      output_tokens: 40,
    }),
    turn().text("Answer three."),
  ]);
  await using session = await ws.open(server, { compaction: { thresholdTokens: null, keepRecentTurns: 1 } });
  const signal = new AbortController().signal;
  await collect(session.run("Question one?", { signal }));
  await collect(session.run("Question two?", { signal }));
  const { events, result } = await collectWithResult<CompactionResult>(session.compact({ signal }));
  equal(result.status, "compacted");
  deepStrictEqual(events.map((event) => event.type), ["compaction-start", "usage", "compaction"]);
  const [start, usage, compaction] = events;
  ok(start?.type === "compaction-start" && usage?.type === "usage" && compaction?.type === "compaction");
  equal(start.trigger, "manual");
  equal(start.turn, 0);
  equal(usage.totals.requests, 1);
  equal(usage.totals.inputTokens, 400);
  equal(compaction.trigger, "manual");
  equal(compaction.removedMessages, 3);
  equal(compaction.keptMessages, 1);
  const summaryRequest = messagesOf(server, 3);
  equal(summaryRequest.length, 1);
  match(firstText(summaryRequest[0]), /Question one\?[\s\S]*Answer one\.[\s\S]*Question two\?/);
  deepStrictEqual(session.messages.map((message) => message.role), ["user", "assistant"]);
  await collect(session.run("Question three?", { signal }));
  const third = messagesOf(server, 4);
  deepStrictEqual(third.map((message) => message.role), ["user", "assistant", "user"]);
  ok(firstText(third[0]).startsWith(SUMMARY_HEADING));
  equal(firstText(third[1]), "Answer two.");
  equal(firstText(third[2]), "Question three?");
  ok(session.transcriptPath !== null);
  const loaded = await loadSession(session.transcriptPath);
  deepStrictEqual(loaded.messages, session.messages);
});

Deno.test("Session.compact says there is nothing to compact in a short conversation and sends no request", async () => {
  await using ws = await Workspace.create();
  await using server = await startFakeAnthropic([turn().text("Hello.")]);
  await using session = await ws.open(server);
  const signal = new AbortController().signal;
  const empty = await collectWithResult<CompactionResult>(session.compact({ signal }));
  equal(empty.result.status, "nothing-to-compact");
  await collect(session.run("Hi", { signal }));
  const { events, result } = await collectWithResult<CompactionResult>(session.compact({ signal }));
  equal(result.status, "nothing-to-compact");
  deepStrictEqual(events.map((event) => event.type), ["warning"]);
  match(events[0]?.type === "warning" ? events[0].message : "", /^Nothing to compact: /);
  equal(server.requests.length, 1);
  equal(session.messages.length, 2);
});
