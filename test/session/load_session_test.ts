import { deepStrictEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import type { AgentEvent } from "../../src/agent/events.ts";
import { loadSession, SessionLoadError } from "../../src/session/load_session.ts";
import { Transcript } from "../../src/session/transcript.ts";

/** Writes a transcript from events, as a session would, and returns its path. */
async function writeTranscript(home: string, events: AgentEvent[]): Promise<string> {
  using transcript = await Transcript.create({ home, root: "/ws", sessionId: "s1" });
  transcript.append({
    type: "session-start",
    sessionId: "s1",
    root: "/ws",
    model: "claude-test",
    platform: "linux x86_64",
    provider: "anthropic",
    version: "1",
  });
  for (const event of events) transcript.record(event);
  return transcript.path;
}

const TOOL_TURN: AgentEvent[] = [
  { type: "user-message", text: "read a" },
  {
    type: "request-end",
    turn: 1,
    stopReason: "tool_use",
    partial: false,
    content: [{ type: "text", text: "Reading." }, {
      type: "tool-use",
      id: "t1",
      name: "ReadFile",
      input: { path: "/ws/a" },
    }],
  },
  {
    type: "tool-results",
    turn: 1,
    content: [{ type: "tool-result", toolUseId: "t1", content: "1\ta", isError: false }],
  },
  {
    type: "request-end",
    turn: 2,
    stopReason: "end_turn",
    partial: false,
    content: [{ type: "text", text: "It says a." }],
  },
];

Deno.test("loadSession rebuilds the conversation a transcript records", async () => {
  const home = await Deno.makeTempDir();
  try {
    const loaded = await loadSession(await writeTranscript(home, TOOL_TURN));
    equal(loaded.sessionId, "s1");
    equal(loaded.model, "claude-test");
    equal(loaded.provider, "anthropic");
    equal(loaded.turns, 2);
    equal(loaded.torn, false);
    equal(loaded.notice, null);
    deepStrictEqual(loaded.messages, [
      { role: "user", content: [{ type: "text", text: "read a" }] },
      {
        role: "assistant",
        content: [{ type: "text", text: "Reading." }, {
          type: "tool-use",
          id: "t1",
          name: "ReadFile",
          input: { path: "/ws/a" },
        }],
      },
      { role: "user", content: [{ type: "tool-result", toolUseId: "t1", content: "1\ta", isError: false }] },
      { role: "assistant", content: [{ type: "text", text: "It says a." }] },
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadSession stops at the last complete line of a torn file and says so", async () => {
  const home = await Deno.makeTempDir();
  try {
    // The run crashed while writing the tool results: the last line is cut off.
    const path = await writeTranscript(home, TOOL_TURN.slice(0, 2));
    await Deno.writeTextFile(path, '{"type":"tool-results","turn":1,"content":[{"ty', { append: true });
    const loaded = await loadSession(path);
    equal(loaded.torn, true);
    ok(loaded.notice !== null);
    match(loaded.notice, /last line was cut off \(the session ended while writing it\) and was dropped/);
    match(loaded.notice, /1 tool call of its last turn never ran/);
    // The pending call is answered, so the conversation can be sent again.
    deepStrictEqual(loaded.messages.at(-1), {
      role: "user",
      content: [{
        type: "tool-result",
        toolUseId: "t1",
        content: "ReadFile was not run: the session ended before it ran",
        isError: true,
      }],
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadSession tells the model which calls of a killed run ended, started without ending, or never ran", async () => {
  const home = await Deno.makeTempDir();
  try {
    const bash = (id: string, command: string) => ({
      type: "tool-use" as const,
      id,
      name: "Bash",
      input: { command },
    });
    const start = (id: string): AgentEvent => ({
      type: "tool-call-start",
      turn: 1,
      id,
      name: "Bash",
      input: {},
      startedAt: 1,
    });
    // Three calls run one at a time: the first ended, the second was running when the run was killed.
    const path = await writeTranscript(home, [
      { type: "user-message", text: "build" },
      {
        type: "request-end",
        turn: 1,
        stopReason: "tool_use",
        partial: false,
        content: [bash("b1", "make"), bash("b2", "make install"), bash("b3", "make clean")],
      },
      start("b1"),
      {
        type: "tool-call-end",
        turn: 1,
        id: "b1",
        name: "Bash",
        input: {},
        result: { content: "built", isError: false, metadata: {} },
        outcome: { status: "completed", gate: "execute" },
        startedAt: 1,
        endedAt: 2,
        durationMs: 1,
      },
      start("b2"),
    ]);
    const loaded = await loadSession(path);
    deepStrictEqual(loaded.messages.at(-1), {
      role: "user",
      content: [
        { type: "tool-result", toolUseId: "b1", content: "built", isError: false },
        {
          type: "tool-result",
          toolUseId: "b2",
          content: "Bash started, but the session ended before it finished, so its effects are unknown: " +
            "check the files or state it would change before running it again",
          isError: true,
        },
        {
          type: "tool-result",
          toolUseId: "b3",
          content: "Bash was not run: the session ended before it ran",
          isError: true,
        },
      ],
    });
    equal(
      loaded.notice,
      `The session "${path}" was restored, but 1 tool call of its last turn started but never finished ` +
        "(its effects are unknown); 1 tool call of its last turn never ran",
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadSession refuses an empty file, an unknown record type and a broken line with clear errors", async () => {
  const home = await Deno.makeTempDir();
  try {
    const empty = join(home, "empty.jsonl");
    await Deno.writeTextFile(empty, "");
    await rejects(
      loadSession(empty),
      (error) => error instanceof SessionLoadError && /holds no records/.test(error.message),
    );
    const unknown = join(home, "unknown.jsonl");
    await Deno.writeTextFile(
      unknown,
      '{"type":"user-message","content":"hi","ts":1}\n{"type":"hologram","ts":2}\n',
    );
    await rejects(
      loadSession(unknown),
      (error) =>
        error instanceof SessionLoadError && /line 2: unknown record type "hologram"/.test(error.message),
    );
    const broken = join(home, "broken.jsonl");
    await Deno.writeTextFile(broken, '{"type":\n{"type":"user-message","content":"hi","ts":1}\n');
    await rejects(
      loadSession(broken),
      (error) => error instanceof SessionLoadError && /line 1/.test(error.message),
    );
    const missing = join(home, "missing.jsonl");
    await rejects(
      loadSession(missing),
      (error) => error instanceof SessionLoadError && /NotFound/.test(error.message),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadSession refuses records that do not form a valid conversation", async () => {
  const home = await Deno.makeTempDir();
  try {
    const path = join(home, "bad.jsonl");
    await Deno.writeTextFile(
      path,
      '{"type":"user-message","content":"hi","ts":1}\n' +
        '{"type":"tool-results","turn":1,"content":[{"type":"tool-result","toolUseId":"x","content":"?","isError":false}],"ts":2}\n',
    );
    await rejects(
      loadSession(path),
      (error) =>
        error instanceof SessionLoadError && /record 2 \(tool-results\) does not fit/.test(error.message),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
