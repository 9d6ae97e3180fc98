/**
 * End to end: `scripts/mewcode -p` as a real process against the fake Anthropic server (real HTTP + SSE),
 * with real tools in a temp workspace and the transcript in a temp MEWCODE_HOME.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { TranscriptRecord } from "../../src/session/transcript.ts";
import {
  type FakeAnthropic,
  httpError,
  type ScriptedResponse,
  startFakeAnthropic,
  turn,
} from "../fake_anthropic/server.ts";
import { explainRun, runMewcode } from "../_fakes/run_cli.ts";
import { E2eWorkspace as Sandbox } from "../_fakes/e2e_workspace.ts";

type ToolEnd = Extract<TranscriptRecord, { type: "tool-call-end" }>;

function toolEnds(records: TranscriptRecord[]): ToolEnd[] {
  return records.filter((record): record is ToolEnd => record.type === "tool-call-end");
}

/** The system prompt of the server's recorded request `number` (1-based): its text blocks joined. */
function systemOf(server: FakeAnthropic, number: number): string {
  const system = (server.requests[number - 1]?.body as { system?: unknown }).system;
  if (typeof system === "string") return system;
  ok(Array.isArray(system), `request ${number} has a system prompt`);
  return system.map((block: { text?: string }) => block.text ?? "").join("");
}

/** The messages of the server's recorded request `number` (1-based). */
function messagesOf(server: FakeAnthropic, number: number): { role: string; content: unknown }[] {
  const body = server.requests[number - 1]?.body as
    | { messages?: { role: string; content: unknown }[] }
    | undefined;
  ok(body?.messages, `request ${number} has messages`);
  return body.messages;
}

/** The tool_result blocks of the last user message of request `number`. */
function toolResultsOf(server: FakeAnthropic, number: number): Record<string, unknown>[] {
  const last = messagesOf(server, number).at(-1);
  ok(last?.role === "user" && Array.isArray(last.content));
  return (last.content as Record<string, unknown>[]).filter((block) => block.type === "tool_result");
}

async function withServer<T>(
  script: ScriptedResponse[],
  body: (server: FakeAnthropic) => Promise<T>,
): Promise<T> {
  await using server = await startFakeAnthropic(script);
  return await body(server);
}

Deno.test("e2e: text + two tool_use blocks in 1-3 character fragments run with the exact inputs, one user message pairs both results", async () => {
  await using box = await Sandbox.create();
  const first = await box.write("naïve 文件.txt", 'alpha "quoted" line\n');
  const second = await box.write("notes/b\\c.md", "beta 🐱 line\n");
  const inputs = [{ path: first }, { path: second, offset: 1, limit: 5 }];
  await withServer([
    turn()
      .text("Reading both files.", { chunk: 4 })
      .toolUse("ReadFile", inputs[0], { id: "toolu_first", fragment: [1, 3], seed: 7 })
      .toolUse("ReadFile", inputs[1], { id: "toolu_second", fragment: [1, 3], seed: 11, asciiEscapes: true }),
    turn().text("Both files read.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, []);
    equal(run.code, 0, explainRun(run));
    equal(run.stdout, "Both files read.\n");
    equal(run.stderr, "", "without --verbose a successful run prints nothing on stderr");
    equal(server.requests.length, 2);
    const messages = messagesOf(server, 2);
    deepStrictEqual(messages[1], {
      role: "assistant",
      content: [
        { type: "text", text: "Reading both files." },
        { type: "tool_use", id: "toolu_first", name: "ReadFile", input: inputs[0] },
        { type: "tool_use", id: "toolu_second", name: "ReadFile", input: inputs[1] },
      ],
    });
    equal(messages.length, 3);
    const results = toolResultsOf(server, 2);
    deepStrictEqual(results.map((block) => block.tool_use_id), ["toolu_first", "toolu_second"]);
    equal((messages[2]?.content as unknown[]).length, 2, "the user message holds exactly the two results");
    match(String(results[0]?.content), /alpha "quoted" line/);
    match(String(results[1]?.content), /beta 🐱 line/);
    ok(results.every((block) => block.is_error === undefined), JSON.stringify(results));
    const { records } = await box.transcript();
    // Parallel reads may finish in either order: pair the executed inputs with their call ids.
    const executed = Object.fromEntries(toolEnds(records).map((record) => [record.id, record.input]));
    deepStrictEqual(executed, { toolu_first: inputs[0], toolu_second: inputs[1] });
    const system = systemOf(server, 1);
    ok(system.includes(`Workspace root: ${box.root}`), system);
  });
});

Deno.test("e2e: a tool_use with malformed JSON gets an is_error result and the loop continues", async () => {
  await using box = await Sandbox.create();
  await withServer([
    turn().rawToolUse("ReadFile", `{"path": "${box.path("a.txt")}`, { id: "toolu_bad", fragment: 2 }),
    turn().text("I will fix my call.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, []);
    equal(run.code, 0, explainRun(run));
    equal(run.stdout, "I will fix my call.\n");
    const [result] = toolResultsOf(server, 2);
    equal(result?.tool_use_id, "toolu_bad");
    equal(result?.is_error, true);
    match(String(result?.content), /not valid JSON/);
  });
});

Deno.test("e2e: ReadFile then EditFile in a later turn succeeds", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("app.ts", "export const answer = 41;\n");
  await withServer([
    turn().toolUse("ReadFile", { path: file }),
    turn().toolUse("EditFile", { path: file, old_string: "41", new_string: "42" }),
    turn().text("Fixed.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--permission-mode", "acceptEdits"]);
    equal(run.code, 0, explainRun(run));
    equal(await Deno.readTextFile(file), "export const answer = 42;\n");
    const [edit] = toolResultsOf(server, 3);
    equal(edit?.is_error, undefined, String(edit?.content));
  });
});

Deno.test("e2e: EditFile and WriteFile of an existing file never read fail and leave it unchanged", async () => {
  await using box = await Sandbox.create();
  const edited = await box.write("edit_me.txt", "one\n");
  const written = await box.write("write_me.txt", "two\n");
  await withServer([
    turn()
      .toolUse("EditFile", { path: edited, old_string: "one", new_string: "uno" })
      .toolUse("WriteFile", { path: written, content: "dos\n" }),
    turn().text("Both refused.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--permission-mode", "acceptEdits"]);
    equal(run.code, 0, explainRun(run));
    const results = toolResultsOf(server, 2);
    equal(results.length, 2);
    for (const result of results) {
      equal(result.is_error, true);
      match(String(result.content), /has not been read in this session; read it first with ReadFile/);
    }
    equal(await Deno.readTextFile(edited), "one\n");
    equal(await Deno.readTextFile(written), "two\n");
  });
});

Deno.test("e2e: a change made by someone else between the read and the edit fails with modified since read", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("shared.txt", "original\n");
  await withServer([
    turn().toolUse("ReadFile", { path: file }),
    turn().delay(700).toolUse("EditFile", { path: file, old_string: "original", new_string: "mine" }),
    turn().text("It changed under me.").stop("end_turn"),
  ], async (server) => {
    let finished = false;
    const running = box.run(server, ["--permission-mode", "acceptEdits"]).finally(() => finished = true);
    // The second request means the read is done; the server holds the EditFile back for 700 ms meanwhile.
    // A run that ends early fails the assertions below instead of leaving this loop waiting forever.
    while (server.requests.length < 2 && !finished) await new Promise((resolve) => setTimeout(resolve, 10));
    await Deno.writeTextFile(file, "original, edited by someone else\n");
    const run = await running;
    equal(run.code, 0, explainRun(run));
    const [result] = toolResultsOf(server, 3);
    equal(result?.is_error, true);
    match(String(result?.content), /modified since you read it/);
    equal(await Deno.readTextFile(file), "original, edited by someone else\n");
  });
});

Deno.test("e2e: two edits in a row without a re-read both succeed", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("two.txt", "first line\nsecond line\n");
  await withServer([
    turn().toolUse("ReadFile", { path: file }),
    turn().toolUse("EditFile", { path: file, old_string: "first", new_string: "1st" }),
    turn().toolUse("EditFile", { path: file, old_string: "second", new_string: "2nd" }),
    turn().text("Two edits.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--permission-mode", "acceptEdits"]);
    equal(run.code, 0, explainRun(run));
    equal(await Deno.readTextFile(file), "1st line\n2nd line\n");
    for (const number of [3, 4]) equal(toolResultsOf(server, number)[0]?.is_error, undefined);
  });
});

Deno.test("e2e: three concurrency-safe Grep calls over a large tree overlap in time", async () => {
  await using box = await Sandbox.create();
  const line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n";
  // Large enough that each search outlasts the time the other calls need to arrive and start, even under load.
  const body = line.repeat(1_600);
  for (let index = 0; index < 240; index++) await box.write(`tree/d${index % 12}/f${index}.txt`, body);
  const patterns = ["needle_one", "needle_two", "needle_three"];
  let builder = turn();
  for (const [index, pattern] of patterns.entries()) {
    builder = builder.toolUse("Grep", { pattern, path: box.path("tree") }, { id: `toolu_grep_${index}` });
  }
  await withServer([builder, turn().text("Searched.").stop("end_turn")], async (server) => {
    const run = await box.run(server, []);
    equal(run.code, 0, explainRun(run));
    const ends = toolEnds((await box.transcript()).records);
    equal(ends.length, 3);
    for (const end of ends) equal(end.isError, false, end.content);
    const latestStart = Math.max(...ends.map((end) => end.startedAt));
    const earliestEnd = Math.min(...ends.map((end) => end.endedAt));
    ok(
      latestStart < earliestEnd,
      `all three run at once: ${JSON.stringify(ends.map((end) => [end.startedAt, end.endedAt]))}`,
    );
  });
});

Deno.test("e2e: a WriteFile between two ReadFiles splits them into three batches in order", async () => {
  await using box = await Sandbox.create();
  const a = await box.write("a.txt", "A\n");
  const b = box.path("b.txt");
  const c = await box.write("c.txt", "C\n");
  await withServer([
    turn()
      .toolUse("ReadFile", { path: a }, { id: "toolu_1" })
      .toolUse("WriteFile", { path: b, content: "B\n" }, { id: "toolu_2" })
      .toolUse("ReadFile", { path: c }, { id: "toolu_3" }),
    turn().text("Done.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--permission-mode", "acceptEdits"]);
    equal(run.code, 0, explainRun(run));
    equal(await Deno.readTextFile(b), "B\n");
    const ends = toolEnds((await box.transcript()).records);
    const byId = new Map(ends.map((end) => [end.id, end]));
    const [first, write, last] = ["toolu_1", "toolu_2", "toolu_3"].map((id) => byId.get(id));
    ok(first && write && last);
    ok(first.endedAt <= write.startedAt, "the write waits for the first read");
    ok(write.endedAt <= last.startedAt, "the second read waits for the write");
    deepStrictEqual(toolResultsOf(server, 2).map((block) => block.tool_use_id), [
      "toolu_1",
      "toolu_2",
      "toolu_3",
    ]);
  });
});

Deno.test("e2e: a safe call starts before message_stop when the server delays the end of the stream", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("early.txt", "early\n");
  await withServer([
    // 2.5 s: a fresh process loads its tools while the model streams, which on a loaded machine running
    // the whole suite took longer than the 800 ms this waited before.
    turn().toolUse("ReadFile", { path: file }, { id: "toolu_early" }).delay(2_500).stop("tool_use"),
    turn().text("ok").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, []);
    equal(run.code, 0, explainRun(run));
    const [end] = toolEnds((await box.transcript()).records);
    const stop = server.sent.find((event) => event.request === 1 && event.event === "message_stop");
    ok(end && stop);
    ok(end.startedAt < stop.at, `started at ${end.startedAt}, message_stop sent at ${stop.at}`);
    ok(end.endedAt < stop.at, "it even finished while the model was still streaming");
  });
});

Deno.test("e2e: 529 then success is retried and gives one final answer", async () => {
  await using box = await Sandbox.create();
  await withServer([
    httpError(529, "overloaded_error", "Overloaded"),
    turn().text("Final answer.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--verbose"]);
    equal(run.code, 0, explainRun(run));
    equal(run.stdout, "Final answer.\n");
    equal(server.requests.length, 2);
    match(run.stderr, /\[retry\] attempt 2 in \d+ ms: Overloaded \(529 overloaded_error\)/);
    const { records } = await box.transcript();
    equal(records.filter((record) => record.type === "retry").length, 1);
  });
});

Deno.test("e2e: a retry-after of 1 s is honoured", async () => {
  await using box = await Sandbox.create();
  await withServer([
    httpError(429, "rate_limit_error", "Slow down", { headers: { "retry-after": "1" } }),
    turn().text("After the wait.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, ["--verbose"]);
    equal(run.code, 0, explainRun(run));
    equal(run.stdout, "After the wait.\n");
    const [first, second] = server.requests;
    ok(first && second);
    ok(second.receivedAt - first.receivedAt >= 1000, `waited ${second.receivedAt - first.receivedAt} ms`);
    match(run.stderr, /\[retry\] attempt 2 in 1000 ms/);
  });
});

Deno.test("e2e: a mid-stream error after a WriteFile is not retried: a clear error, exit 75, the call never runs, transcript intact", async () => {
  await using box = await Sandbox.create();
  const target = box.path("never.txt");
  await withServer([
    turn()
      .text("Partial answer before the failure")
      .toolUse("WriteFile", { path: target, content: "should not exist\n" })
      .errorEvent("overloaded_error", "Overloaded"),
  ], async (server) => {
    const run = await box.run(server, ["--permission-mode", "bypassPermissions"]);
    // The API was overloaded: a script may try again later.
    equal(run.code, 75, explainRun(run));
    match(run.stderr, /mewcode: Response stream interrupted after content arrived: Overloaded/);
    equal(run.stdout, "");
    equal(server.requests.length, 1);
    equal(await Deno.stat(target).then(() => true, () => false), false, "the WriteFile never ran");
    const { records, torn } = await box.transcript();
    equal(torn, false);
    const partial = records.find((record) => record.type === "assistant-message");
    ok(partial?.type === "assistant-message");
    equal(partial.partial, true);
    deepStrictEqual(partial.content, [{ type: "text", text: "Partial answer before the failure" }]);
    ok(records.some((record) => record.type === "error"));
    const last = records.at(-1);
    ok(last?.type === "turn-end");
    equal(last.reason, "error");
  });
});

Deno.test("e2e: --max-turns 2 with a model that always asks for a tool stops after 2 requests, exit 53", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("loop.txt", "again\n");
  await withServer([
    turn().toolUse("ReadFile", { path: file }),
    turn().toolUse("ReadFile", { path: file, limit: 1 }),
    turn().toolUse("ReadFile", { path: file, limit: 2 }),
  ], async (server) => {
    const run = await box.run(server, ["--max-turns", "2"]);
    equal(run.code, 53, explainRun(run));
    equal(server.requests.length, 2);
    match(run.stderr, /Stopped after 2 model requests: --max-turns 2 was reached/);
    const last = (await box.transcript()).records.at(-1);
    ok(last?.type === "turn-end");
    equal(last.reason, "max_turns");
  });
});

Deno.test("e2e: the transcript has every tool call with timestamps and durations, and usage totals", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("t.txt", "content\n");
  await withServer([
    turn().toolUse("ReadFile", { path: file }).toolUse("Glob", { pattern: "*.txt", path: box.root }).usage({
      input_tokens: 120,
      output_tokens: 30,
      cache_read_input_tokens: 7,
    }),
    turn().text("Done.").stop("end_turn").usage({ input_tokens: 200, output_tokens: 12 }),
  ], async (server) => {
    const run = await box.run(server, ["--verbose"]);
    equal(run.code, 0, explainRun(run));
    match(run.stderr, /\[tool\] ReadFile completed in \d+ ms: ok/);
    match(run.stderr, /\[usage\] 320 input, 42 output tokens \(cache: 7 read, 0 written\) over 2 requests/);
    const { path, records } = await box.transcript();
    ok(path.startsWith(join(box.home, "projects")));
    equal(records[0]?.type, "session-start");
    deepStrictEqual(records.filter((record) => record.type === "request").length, 2);
    const ends = toolEnds(records);
    deepStrictEqual(ends.map((end) => end.name).sort(), ["Glob", "ReadFile"]);
    for (const end of ends) {
      ok(end.startedAt > 1_600_000_000_000 && end.endedAt >= end.startedAt);
      equal(end.durationMs, end.endedAt - end.startedAt);
      equal(end.isError, false, end.content);
      ok(records.some((record) => record.type === "tool-call-start" && record.id === end.id));
    }
    const usage = records.filter((record) => record.type === "usage");
    equal(usage.length, 2);
    const last = records.at(-1);
    ok(last?.type === "turn-end");
    deepStrictEqual(last.totals, {
      inputTokens: 320,
      outputTokens: 42,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 7,
      requests: 2,
    });
  });
});

Deno.test("e2e: default mode denies WriteFile in -p with a reason the model sees, and exits 55", async () => {
  await using box = await Sandbox.create();
  const target = box.path("denied.txt");
  await withServer([
    turn().toolUse("WriteFile", { path: target, content: "no\n" }),
    turn().text("I was not allowed to write.").stop("end_turn"),
  ], async (server) => {
    const run = await box.run(server, []);
    equal(run.code, 55, explainRun(run));
    equal(run.stdout, "I was not allowed to write.\n");
    const [result] = toolResultsOf(server, 2);
    equal(result?.is_error, true);
    match(
      String(result?.content),
      /Permission to use WriteFile was denied: WriteFile changes "denied.txt", which needs the user's approval in the default permission mode, and no one is present to approve it/,
    );
    equal(await Deno.stat(target).then(() => true, () => false), false);
  });
});

Deno.test("e2e: an API address that is not an http(s) URL is a usage error naming it, before any request", async () => {
  // A scheme left out, a port past 65535, a broken IPv6 address: each was retried for seconds, then exit 75.
  await using box = await Sandbox.create();
  for (const url of ["localhost:8080", "http://127.0.0.1:99999", "http://[::1"]) {
    const started = Date.now();
    const run = await runMewcode(["-p", "hello"], {
      cwd: box.root,
      env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: url, MEWCODE_HOME: box.home },
    });
    equal(run.code, 2, explainRun(run));
    ok(run.stderr.includes(`ANTHROPIC_BASE_URL is "${url}"`), run.stderr);
    ok(Date.now() - started < 5_000, "it was retried");
  }
});

Deno.test("e2e: a missing ANTHROPIC_API_KEY is a clear error naming it, exit 41", async () => {
  await using box = await Sandbox.create();
  const run = await runMewcode(["-p", "hello"], {
    cwd: box.root,
    env: { ANTHROPIC_API_KEY: "", MEWCODE_HOME: box.home },
  });
  equal(run.code, 41, explainRun(run));
  match(run.stderr, /ANTHROPIC_API_KEY is not set/);
});

Deno.test("e2e: -p reads the prompt from stdin, and an empty prompt is a usage error", async () => {
  await using box = await Sandbox.create();
  await withServer([turn().text("From stdin.").stop("end_turn")], async (server) => {
    const env = { ...server.env(), MEWCODE_HOME: box.home };
    const run = await runMewcode(["-p"], { cwd: box.root, env, stdin: "What is 2 + 2?\n" });
    equal(run.code, 0, explainRun(run));
    equal(run.stdout, "From stdin.\n");
    const first = messagesOf(server, 1)[0];
    deepStrictEqual(
      (first?.content as { text?: string }[]).map((block) => block.text),
      ["What is 2 + 2?\n"],
    );
    const empty = await runMewcode(["-p"], { cwd: box.root, env, stdin: "  \n" });
    equal(empty.code, 2, explainRun(empty));
    match(empty.stderr, /Missing the prompt/);
  });
});
