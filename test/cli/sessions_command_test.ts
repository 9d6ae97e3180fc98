import { deepStrictEqual, equal, match } from "node:assert/strict";
import {
  describeSkipped,
  renderSessions,
  runSessionsCommand,
  SESSIONS_SCHEMA_VERSION,
  TABLE_WIDTH,
} from "../../src/cli/sessions_command.ts";
import type { SessionInfo } from "../../src/session/session_index.ts";

const ID_A = "aaaaaaaa-1111-4000-8000-000000000001";
const ID_B = "bbbbbbbb-2222-4000-8000-000000000002";

function session(overrides: Partial<SessionInfo> & { id: string }): SessionInfo {
  return {
    path: `/state/projects/-ws/${overrides.id}.jsonl`,
    startedAt: new Date(2025, 2, 4, 9, 5, 30),
    updatedAt: new Date(2025, 2, 4, 9, 40),
    firstPrompt: "fix the build",
    turns: 3,
    model: "claude-test",
    usage: { inputTokens: 60, outputTokens: 20, cacheReadInputTokens: 100, cacheCreationInputTokens: 200 },
    costUsd: 0.0123,
    problem: null,
    ...overrides,
  };
}

Deno.test("renderSessions prints a table of id, local date, turns, cost and first prompt", () => {
  const text = renderSessions([
    session({ id: ID_B, startedAt: new Date(2025, 11, 31, 23, 59), turns: 12, costUsd: null }),
    session({ id: ID_A, firstPrompt: null }),
  ], { json: false, root: "/ws" });
  deepStrictEqual(text.split("\n"), [
    `ID${" ".repeat(36)}DATE              TURNS  COST     FIRST PROMPT`,
    `${ID_B}  2025-12-31T23:59  12     -        fix the build`,
    `${ID_A}  2025-03-04T09:05  3      $0.0123  -`,
  ]);
});

Deno.test("renderSessions shortens first prompts so every line fits in 100 terminal columns", () => {
  const prefix = `${ID_A}  2025-03-04T09:05  3      $0.0123  `;
  const room = TABLE_WIDTH - prefix.length;
  const text = renderSessions([
    session({ id: ID_A, firstPrompt: "w".repeat(200) }),
    session({ id: ID_A, firstPrompt: "🐱".repeat(80) }),
    session({ id: ID_A, firstPrompt: "修复构建".repeat(20) }),
    session({ id: ID_A, firstPrompt: "x".repeat(room) }),
  ], { json: false, root: "/ws" });
  const [, latin, emoji, chinese, exact] = text.split("\n");
  equal(latin, `${prefix}${"w".repeat(room - 1)}…`);
  // Wide characters take two columns; the cut falls between characters, never inside a surrogate pair.
  equal(emoji, `${prefix}${"🐱".repeat(Math.floor((room - 1) / 2))}…`);
  equal(chinese, `${prefix}${"修复构建".repeat(20).slice(0, Math.floor((room - 1) / 2))}…`);
  equal(exact, `${prefix}${"x".repeat(room)}`);
});

Deno.test("renderSessions notes sessions that cannot be resumed as is", () => {
  const text = renderSessions([session({ id: ID_A, problem: "line 2 is not JSON" })], {
    json: false,
    root: "/ws",
  });
  equal(text.split("\n").at(-1), `Session ${ID_A} cannot be resumed as is: line 2 is not JSON`);
});

Deno.test("renderSessions says how to start a session when there is none", () => {
  equal(
    renderSessions([], { json: false, root: "/home/ada/app" }),
    'No sessions for "/home/ada/app" yet: run mewcode -p "<prompt>" (or mewcode) to start one',
  );
});

Deno.test("renderSessions prints versioned JSON with snake_case keys", () => {
  const first = session({ id: ID_A });
  const second = session({ id: ID_B, firstPrompt: null, model: null, costUsd: null, turns: 0 });
  const document = JSON.parse(renderSessions([first, second], { json: true, root: "/ws" }));
  deepStrictEqual(document, {
    schema_version: SESSIONS_SCHEMA_VERSION,
    sessions: [
      {
        session_id: ID_A,
        path: first.path,
        started_at: first.startedAt.toISOString(),
        updated_at: first.updatedAt.toISOString(),
        first_prompt: "fix the build",
        turns: 3,
        model: "claude-test",
        usage: {
          input_tokens: 60,
          output_tokens: 20,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 200,
        },
        total_cost_usd: 0.0123,
      },
      {
        session_id: ID_B,
        path: second.path,
        started_at: second.startedAt.toISOString(),
        updated_at: second.updatedAt.toISOString(),
        first_prompt: null,
        turns: 0,
        model: null,
        usage: {
          input_tokens: 60,
          output_tokens: 20,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 200,
        },
        total_cost_usd: null,
      },
    ],
  });
  deepStrictEqual(JSON.parse(renderSessions([], { json: true, root: "/ws" })), {
    schema_version: 1,
    sessions: [],
  });
});

Deno.test("describeSkipped gives one line per skipped file", () => {
  deepStrictEqual(
    describeSkipped([{ path: "/s/passwd.jsonl", reason: "it is a symbolic link, which is not followed" }]),
    ['Skipped "/s/passwd.jsonl": it is a symbolic link, which is not followed'],
  );
});

Deno.test("runSessionsCommand exits 1 with the reason when the sessions folder cannot be listed", async () => {
  const parent = await Deno.makeTempDir();
  try {
    const home = `${parent}/state-is-a-file`;
    await Deno.writeTextFile(home, "");
    let stdout = "";
    let stderr = "";
    const code = await runSessionsCommand({
      workspace: { root: "/ws", aliases: [] },
      json: false,
      env: { MEWCODE_HOME: home },
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    equal(code, 1);
    equal(stdout, "");
    match(
      stderr,
      /^mewcode: Cannot list the sessions in ".*\/state-is-a-file\/projects\/-ws": NotADirectory: .*: MEWCODE_HOME \(default ~\/\.mewcode\) must be a folder you can read$/,
    );
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
