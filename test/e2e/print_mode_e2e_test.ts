/**
 * End to end: one-shot mode as scripts use it — `scripts/mewcode` as a real process against the fake
 * Anthropic server (real HTTP + SSE), real tools, a temp workspace and MEWCODE_HOME.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import {
  cacheBreakpoints,
  type FakeAnthropic,
  httpError,
  startFakeAnthropic,
  turn,
} from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { join } from "node:path";
import { settleTree } from "../_fakes/tool_context.ts";
import { workspaceSlug } from "../../src/config/home.ts";
import { type CliRun, explainRun, LAUNCHER, runMewcode } from "../_fakes/run_cli.ts";
import { startKeyEchoServer } from "../_fakes/key_echo_server.ts";
import { processesWith } from "../_fakes/processes.ts";

/** The text of the first user message of request `number` (1-based). */
function firstUserText(server: FakeAnthropic, number: number): string {
  const body = server.requests[number - 1]?.body as { messages: { content: { text?: string }[] }[] };
  return body.messages[0]!.content.map((block) => block.text ?? "").join("");
}

function systemText(server: FakeAnthropic, number: number): string {
  const system = (server.requests[number - 1]?.body as { system: { text: string }[] | string }).system;
  return typeof system === "string" ? system : system.map((block) => block.text).join("");
}

Deno.test("e2e -p: piped stdin is sent as context with the prompt argument as the instruction", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("ok").stop("end_turn")]);
  const run = await box.exec(server, ["-p", "q"], { stdin: "ctx\n" });
  equal(run.code, 0, explainRun(run));
  equal(run.stdout, "ok\n");
  const text = firstUserText(server, 1);
  match(text, /<stdin>\nctx\n<\/stdin>/);
  ok(text.endsWith("\n\nq"), text);
});

/** Starts `mewcode ...args` in the box with every stream a pipe, stdin left for the test to write. */
function spawnWithPipe(box: E2eWorkspace, server: FakeAnthropic, args: string[]): Deno.ChildProcess {
  return new Deno.Command(LAUNCHER, {
    args,
    cwd: box.root,
    env: box.env(server),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("e2e -p: stdin at EOF, or open and silent, does not hang the run", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("one").stop("end_turn"),
    turn().text("two").stop("end_turn"),
  ]);
  // < /dev/null
  const closed = await box.exec(server, ["-p", "q"]);
  equal(closed.code, 0, explainRun(closed));
  equal(closed.stdout, "one\n");
  // `sleep 100 | mewcode -p q`: a pipe whose writer never writes nor closes.
  const child = spawnWithPipe(box, server, ["-p", "q"]);
  const started = Date.now();
  const output = await child.output();
  const elapsed = Date.now() - started;
  await child.stdin.close().catch(() => {});
  equal(output.code, 0, new TextDecoder().decode(output.stderr));
  equal(new TextDecoder().decode(output.stdout), "two\n");
  // It waited for the first byte (so stdin really was open and silent), then went on without it.
  ok(elapsed >= 1_000 && elapsed < 30_000, `finished in ${elapsed} ms`);
  equal(firstUserText(server, 2), "q");
});

/**
 * Runs `mewcode ...args` with a real pipe on stdin that sends `text` once `silence` resolves (a slow
 * command: `make 2>&1 | mewcode -p "why did it fail"`), then closes.
 */
async function execWithSlowStdin(
  box: E2eWorkspace,
  server: FakeAnthropic,
  args: string[],
  text: string,
  silence: () => Promise<void>,
): Promise<CliRun> {
  const child = spawnWithPipe(box, server, args);
  await silence();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text)).catch(() => {});
  await writer.close().catch(() => {});
  const output = await child.output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("e2e -p: stdin that starts late is not lost silently, and --wait-for-stdin waits for it", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    // The answer takes long enough that the input arrives while the run is going.
    turn().delay(2_500).text("no context").stop("end_turn"),
    turn().text("with context").stop("end_turn"),
  ]);
  // Sent once the run has gone on without it: its request reached the server (not after a fixed time, which
  // a loaded machine can take just to start the process).
  const requestArrived = async () => {
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  const left = await execWithSlowStdin(
    box,
    server,
    ["-p", "why did it fail"],
    "error: late\n",
    requestArrived,
  );
  equal(left.code, 0, explainRun(left));
  equal(left.stdout, "no context\n");
  equal(firstUserText(server, 1), "why did it fail");
  match(
    left.stderr,
    /warning: Standard input began to send after its first 1000 ms of silence.*--wait-for-stdin/,
  );

  const waited = await execWithSlowStdin(
    box,
    server,
    ["-p", "why did it fail", "--wait-for-stdin"],
    "error: late\n",
    () => new Promise((resolve) => setTimeout(resolve, 1_600)),
  );
  equal(waited.code, 0, explainRun(waited));
  equal(waited.stdout, "with context\n");
  match(firstUserText(server, 2), /<stdin>\nerror: late\n<\/stdin>\n\nwhy did it fail$/);
  ok(!waited.stderr.includes("Standard input"), waited.stderr);
});

Deno.test("e2e: a prompt without -p runs headless when stdout is not a terminal", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("headless answer").stop("end_turn")]);
  const run = await box.exec(server, ["what", "is", "this?"]);
  equal(run.code, 0, explainRun(run));
  equal(run.stdout, "headless answer\n");
  equal(firstUserText(server, 1), "what is this?");
  match(systemText(server, 1), /no one is at the terminal|headless/i);
});

Deno.test("e2e -p: exit statuses for limits and API failures", async (t) => {
  await using box = await E2eWorkspace.create();
  await t.step("--max-turns 1 against a tool-looping server → 53, error_max_turns", async () => {
    await using server = await startFakeAnthropic([
      turn().toolUse("Glob", { pattern: "*.a" }),
      turn().toolUse("Glob", { pattern: "*.b" }),
    ]);
    const run = await box.exec(server, ["-p", "loop", "--max-turns", "1", "--output-format", "json"]);
    equal(run.code, 53, explainRun(run));
    equal(JSON.parse(run.stdout).subtype, "error_max_turns");
    equal(server.requests.length, 1);
  });
  await t.step("a budget of $0.0001 → 54, error_max_budget", async () => {
    await using server = await startFakeAnthropic([
      turn().usage({ input_tokens: 5_000, output_tokens: 100 }).toolUse("Glob", { pattern: "*.a" }),
      turn().toolUse("Glob", { pattern: "*.b" }),
    ]);
    const run = await box.exec(server, [
      "-p",
      "loop",
      "--max-budget-usd",
      "0.0001",
      "--output-format",
      "json",
    ]);
    equal(run.code, 54, explainRun(run));
    const result = JSON.parse(run.stdout);
    equal(result.subtype, "error_max_budget");
    ok(result.total_cost_usd >= 0.0001, run.stdout);
    equal(server.requests.length, 1);
  });
  await t.step("a 401 → 41, error_auth", async () => {
    await using server = await startFakeAnthropic([
      httpError(401, "authentication_error", "invalid x-api-key"),
    ]);
    const run = await box.exec(server, ["-p", "q", "--output-format", "json"]);
    equal(run.code, 41, explainRun(run));
    const result = JSON.parse(run.stdout);
    equal(result.subtype, "error_auth");
    equal(result.is_error, true);
    match(run.stderr, /invalid x-api-key/);
  });
  await t.step("529 on every attempt → 75 after the retries", async () => {
    const overloaded = () =>
      httpError(529, "overloaded_error", "Overloaded", { headers: { "retry-after-ms": "10" } });
    await using server = await startFakeAnthropic(Array.from({ length: 5 }, overloaded));
    const run = await box.exec(server, ["-p", "q", "--output-format", "json"]);
    equal(run.code, 75, explainRun(run));
    equal(server.requests.length, 5, "the first attempt and four retries");
    equal(JSON.parse(run.stdout).subtype, "error_api");
  });
  await t.step("a mid-stream overloaded error after a text block and a ReadFile is retried → 0", async () => {
    const file = await box.write("notes.txt", "hello\n");
    await using server = await startFakeAnthropic([
      turn().text("Let me read it.").toolUse("ReadFile", { path: file }).errorEvent(
        "overloaded_error",
        "Overloaded",
      ),
      turn().text("Let me read it.").toolUse("ReadFile", { path: file }),
      turn().text("It says hello.").stop("end_turn"),
    ]);
    const run = await box.exec(server, ["-p", "read", "--output-format", "json"]);
    equal(run.code, 0, explainRun(run));
    equal(JSON.parse(run.stdout).result, "It says hello.");
    equal(server.requests.length, 3);
    // The retried request is the first one again: the broken response left nothing in the conversation.
    deepStrictEqual(
      (server.requests[1]?.body as { messages: unknown[] }).messages.length,
      (server.requests[0]?.body as { messages: unknown[] }).messages.length,
    );
  });
});

Deno.test("e2e -p: a response cut off or ended for an unknown reason is a failure, not a success", async (t) => {
  await using box = await E2eWorkspace.create();
  const cases: [string | null, RegExp][] = [
    ["max_tokens", /cut off at the max_tokens limit/],
    ["model_context_window_exceeded", /filled the model's context window; compact it/],
    ["weird", /a reason this version does not know \("weird"\)/],
    [null, /ended without a stop reason/],
  ];
  for (const [stopReason, message] of cases) {
    await t.step(`stop reason ${JSON.stringify(stopReason)} → 1, error_during_execution`, async () => {
      await using server = await startFakeAnthropic([turn().text("The answer is").stop(stopReason)]);
      const run = await box.exec(server, ["-p", "q", "--output-format", "json"]);
      equal(run.code, 1, explainRun(run));
      const result = JSON.parse(run.stdout);
      equal(result.subtype, "error_during_execution");
      equal(result.is_error, true);
      equal(result.result, "The answer is");
      match(result.error, message);
      match(run.stderr, message);
    });
  }
});

Deno.test("e2e -p: -c continues the latest session; -r with an unknown id is a usage error", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("The capital is Paris.").stop("end_turn"),
    turn().text("About 2 million people.").stop("end_turn"),
  ]);
  const first = await box.exec(server, ["-p", "capital of France?"]);
  equal(first.code, 0, explainRun(first));
  const second = await box.exec(server, ["-p", "how many live there?", "-c", "--output-format", "json"]);
  equal(second.code, 0, explainRun(second));
  const messages =
    (server.requests[1]?.body as { messages: { role: string; content: { text?: string }[] }[] })
      .messages;
  deepStrictEqual(
    messages.map((message) => `${message.role}: ${message.content.map((block) => block.text).join("")}`),
    ["user: capital of France?", "assistant: The capital is Paris.", "user: how many live there?"],
  );
  const sessions = await box.exec(server, ["sessions", "--json"]);
  equal(sessions.code, 0, explainRun(sessions));
  const listed = JSON.parse(sessions.stdout).sessions;
  equal(listed.length, 1, "the continued run appended to the same session");
  equal(listed[0].session_id, JSON.parse(second.stdout).session_id);
  equal(listed[0].turns, 2);

  const unknown = await box.exec(server, ["-p", "q", "-r", "0000000-no-such-session"]);
  equal(unknown.code, 2, explainRun(unknown));
  match(unknown.stderr, /mewcode sessions/);
});

Deno.test("e2e -p --json-schema: a conforming answer is the object; a wrong one gets one repair, then exit 1", async () => {
  await using box = await E2eWorkspace.create();
  const schema = '{"type":"object","properties":{"files":{"type":"integer"}},"required":["files"]}';
  await using server = await startFakeAnthropic([
    turn().toolUse("StructuredOutput", { files: 3 }),
    turn().toolUse("StructuredOutput", { files: "three" }),
    turn().toolUse("StructuredOutput", { files: "still three" }),
  ]);
  const good = await box.exec(server, ["-p", "count", "--json-schema", schema]);
  equal(good.code, 0, explainRun(good));
  deepStrictEqual(JSON.parse(good.stdout), { files: 3 });
  const bad = await box.exec(server, ["-p", "count", "--json-schema", schema, "--output-format", "json"]);
  equal(bad.code, 1, explainRun(bad));
  equal(JSON.parse(bad.stdout).subtype, "error_structured_output");
  equal(server.requests.length, 3, "one request for the good run, two (one repair) for the bad one");
});

Deno.test("e2e -p: the second request of a multi-turn run carries cache_control on the tools, system and last message", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().toolUse("Glob", { pattern: "*.md" }),
    turn().text("none").stop("end_turn"),
  ]);
  const run = await box.exec(server, ["-p", "find docs"]);
  equal(run.code, 0, explainRun(run));
  const second = server.requests[1]?.body as { tools: unknown[]; messages: { content: unknown[] }[] };
  const points = cacheBreakpoints(second);
  const lastMessage = second.messages.length - 1;
  const lastBlock = second.messages[lastMessage]!.content.length - 1;
  ok(points.includes(`tools.${second.tools.length - 1}`), points.join(", "));
  ok(points.some((point) => point.startsWith("system.")), points.join(", "));
  ok(points.includes(`messages.${lastMessage}.content.${lastBlock}`), points.join(", "));
});

Deno.test("e2e -p: AGENTS.md reaches the first request; a 1 MB one is cut with a notice", async () => {
  await using box = await E2eWorkspace.create();
  await box.write("AGENTS.md", "Always answer in French.\n");
  await using server = await startFakeAnthropic([
    turn().text("Bonjour").stop("end_turn"),
    turn().text("Bonjour").stop("end_turn"),
  ]);
  const run = await box.exec(server, ["-p", "hi"]);
  equal(run.code, 0, explainRun(run));
  match(systemText(server, 1), /Always answer in French\./);

  const line = "Use tabs, not spaces, in every file of this project.\n";
  await box.write(
    "AGENTS.md",
    `FIRST LINE MARKER\n${line.repeat(Math.ceil(1024 * 1024 / line.length))}LAST LINE MARKER\n`,
  );
  const big = await box.exec(server, ["-p", "hi"]);
  equal(big.code, 0, explainRun(big));
  const system = systemText(server, 2);
  match(system, /FIRST LINE MARKER/);
  ok(!system.includes("LAST LINE MARKER"), "the end of the file is cut");
  match(system, /mewcode cut this file here/);
  ok(system.length < 200_000, `system prompt of ${system.length} characters`);
});

Deno.test("e2e -p: the next process's Grep uses the walk the last one kept, while the tree is unchanged", async () => {
  await using box = await E2eWorkspace.create();
  // More files than a tree the worker searches alone, nobody touched for an hour; then the stamps' margin
  // (3 s: the status-change times cannot be set back) passes.
  await box.write(".gitignore", "*.log\n");
  for (let index = 0; index < 2_100; index++) await box.write(`src/d${index % 30}/f${index}.txt`, "text\n");
  await box.write("src/d0/skip.log", "ignored\n");
  await settleTree(box.root);
  await new Promise((resolve) => setTimeout(resolve, 3_200));
  const walks = join(box.home, "projects", await workspaceSlug(box.root), "walks");
  const grepOnce = async () => {
    await using server = await startFakeAnthropic([
      turn().toolUse("Grep", { pattern: "no such text" }),
      turn().text("searched").stop("end_turn"),
    ]);
    const run = await box.exec(server, ["-p", "find it"]);
    equal(run.code, 0, explainRun(run));
    const body = server.requests[1]?.body as {
      messages: { content: { type: string; content?: string }[] }[];
    };
    const result = body.messages.at(-1)!.content.find((block) => block.type === "tool_result");
    return String(result?.content);
  };
  const first = await grepOnce();
  match(first, /No matches found/);
  match(first, /1 file was ignored by \.gitignore/);
  const kept = [...Deno.readDirSync(walks)];
  equal(kept.length, 1, "one walk kept");
  const inode = Deno.statSync(join(walks, kept[0]!.name)).ino;
  equal(await grepOnce(), first);
  equal(Deno.statSync(join(walks, kept[0]!.name)).ino, inode, "the kept walk was used, not written again");
});

/** Runs `mewcode -p` with its standard output closed by the reader at once, as `| head -1` does in time. */
async function runWithClosedOutput(
  box: E2eWorkspace,
  server: FakeAnthropic,
  args: string[],
): Promise<{ code: number; stderr: string; ms: number }> {
  const started = Date.now();
  const child = new Deno.Command(LAUNCHER, {
    args: ["-p", "Do the task", "--permission-mode", "bypassPermissions", ...args],
    cwd: box.root,
    env: box.env(server),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stdout.cancel();
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  return { code: status.code, stderr, ms: Date.now() - started };
}

Deno.test("e2e -p: a reader that stops early (| head) ends the run quietly with exit 141, its command stopped", async (t) => {
  await t.step(
    "stream-json: the run stops at its first line, before the command it asked for ends",
    async () => {
      await using box = await E2eWorkspace.create();
      const marker = `600.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      await using server = await startFakeAnthropic([
        turn().text("Waiting.").toolUse("Bash", { command: `sleep ${marker}` }).stop("tool_use"),
        turn().text("Done.").stop("end_turn"),
      ]);
      const run = await runWithClosedOutput(box, server, ["--output-format", "stream-json"]);
      equal(run.code, 141, run.stderr);
      equal(run.stderr, "", "nothing on stderr: the reader chose to stop");
      ok(run.ms < 30_000, `the run ended ${run.ms} ms after it started`);
      ok(server.requests.length <= 1, "no request after the output closed");
      equal(await processesWith(marker), 0, "no process of the command runs");
    },
  );
  await t.step("text: the whole answer could not be written", async () => {
    await using box = await E2eWorkspace.create();
    const answer = Array.from({ length: 20_000 }, (_, index) => `line ${index} of a long answer`).join("\n");
    await using server = await startFakeAnthropic([turn().text(answer).stop("end_turn")]);
    const run = await runWithClosedOutput(box, server, []);
    equal(run.code, 141, run.stderr);
    equal(run.stderr, "");
  });
});

Deno.test("e2e -p: an API error repeating the key shows it masked on stderr, in json outputs and the transcript", async () => {
  await using box = await E2eWorkspace.create();
  await using server = startKeyEchoServer("json-401");
  const apiKey = "sk-ant-SECRETKEY";
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: apiKey, MEWCODE_HOME: box.home };
  const runs = [];
  for (const format of ["text", "json", "stream-json"]) {
    runs.push(await runMewcode(["-p", "hi", "--output-format", format], { cwd: box.root, env }));
  }
  const shown = runs.map((run) => `${run.stdout}${run.stderr}`).join("");
  match(shown, /invalid key: Bearer <the API key>/);
  equal(shown.includes(apiKey), false, shown);
  let saved = "";
  for await (const entry of walk(box.home)) saved += await Deno.readTextFile(entry);
  match(saved, /invalid key: Bearer <the API key>/);
  equal(saved.includes(apiKey), false, "the transcript keeps the key");
});

/** Every file under `dir`. */
async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    if (entry.isFile) yield path;
  }
}

Deno.test("e2e: a current folder whose path is not UTF-8 is refused with its reason, not a stack trace", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("unused").stop("end_turn")]);
  // The runtime takes names only as text, so the shell makes the folder (byte 0xFF in its name) and enters it;
  // the shell's cd also sets PWD to that name.
  for (const args of [["-p", "hi"], ["tools"]]) {
    const child = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'folder=$(printf "latin\\377") && mkdir -p "$folder" && cd "$folder" && exec "$0" "$@"',
        LAUNCHER,
        ...args,
      ],
      cwd: box.root,
      env: box.env(server),
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(child.stderr);
    equal(child.code, 2, stderr);
    match(
      stderr,
      /^mewcode: Cannot use the current directory as the workspace: File name or path ".*latin\\xFF" is not valid UTF-8, and the runtime names files only by UTF-8 paths: rename the folder/,
    );
    ok(!stderr.includes("Uncaught"), stderr);
  }
  equal(server.requests.length, 0);
});

Deno.test("e2e: MEWCODE_HOME or HOME that is not UTF-8 refuses to start instead of counting as unset", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("unused").stop("end_turn")]);
  for (const name of ["MEWCODE_HOME", "HOME"]) {
    const child = await new Deno.Command("/bin/sh", {
      // The shell sets the variable to a path with byte 0xFF: the runtime cannot give it as text.
      args: ["-c", `${name}=$(printf "/tmp/latin\\377") exec "$0" "$@"`, LAUNCHER, "-p", "hi"],
      cwd: box.root,
      env: box.env(server),
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(child.stderr);
    equal(child.code, 2, stderr);
    equal(
      stderr,
      `mewcode: Refusing to start: ${name} is set but is not UTF-8, which the runtime cannot read, so mewcode ` +
        `would run as if it were unset: set ${name} to UTF-8 text, or unset it\n`,
    );
  }
  equal(server.requests.length, 0);
});

Deno.test("e2e -p: a proxy in the environment carries the request (Deno's fetch), not mewcode's own sockets", async () => {
  await using box = await E2eWorkspace.create();
  await using api = await startFakeAnthropic([turn().text("direct").stop("end_turn")]);
  await using proxy = await startFakeAnthropic([turn().text("through the proxy").stop("end_turn")]);
  const run = await runMewcode(["-p", "q"], {
    cwd: box.root,
    env: { ...box.env(api), HTTP_PROXY: proxy.url, NO_PROXY: "" },
  });
  equal(run.code, 0, explainRun(run));
  equal(run.stdout, "through the proxy\n");
  equal(api.requests.length, 0);
  // The proxy was asked for the API's URL, as a proxy is.
  equal(proxy.requests[0]?.path, `${api.url}/v1/messages`);
});
