/**
 * End to end: `scripts/mewcode -p --provider openai` (and `ollama/…` models) as a real process against the
 * fake chat completions server (real HTTP + SSE), with real tools in a temp workspace and the transcript
 * in a temp MEWCODE_HOME.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import {
  chatError,
  type ChatScriptedResponse,
  chatTurn,
  type FakeOpenAi,
  startFakeOpenAi,
} from "../fake_anthropic/openai_server.ts";
import { E2eWorkspace as Sandbox } from "../_fakes/e2e_workspace.ts";
import { type CliRun, explainRun, LAUNCHER, runMewcode } from "../_fakes/run_cli.ts";

const OPENAI = ["--provider", "openai", "--model", "gpt-test"];

type WireMessage = { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string };

/** The messages of the server's chat completion request `number` (1-based). */
function messagesOf(server: FakeOpenAi, number: number): WireMessage[] {
  const body = server.completions[number - 1]?.body as { messages?: WireMessage[] } | undefined;
  ok(body?.messages, `request ${number} has messages`);
  return body.messages;
}

/** The tool messages of request `number`, after its last assistant message. */
function toolMessagesOf(server: FakeOpenAi, number: number): WireMessage[] {
  const messages = messagesOf(server, number);
  const last = messages.findLastIndex((message) => message.role === "assistant");
  return messages.slice(last + 1).filter((message) => message.role === "tool");
}

/** Runs `mewcode -p PROMPT ...args` in the workspace against the server. */
function run(
  box: Sandbox,
  server: FakeOpenAi,
  args: string[],
  options: { env?: Record<string, string>; prompt?: string } = {},
): Promise<CliRun> {
  return runMewcode(["-p", options.prompt ?? "Do the task", ...args], {
    cwd: box.root,
    env: { ...server.env(), MEWCODE_HOME: box.home, ...options.env },
  });
}

async function withServer<T>(
  script: ChatScriptedResponse[],
  body: (server: FakeOpenAi) => Promise<T>,
  options: Parameters<typeof startFakeOpenAi>[1] = {},
): Promise<T> {
  await using server = await startFakeOpenAi(script, options);
  return await body(server);
}

Deno.test("e2e openai: text and two parallel calls with 1-3 character argument fragments run, their results go back as tool messages in order", async () => {
  await using box = await Sandbox.create();
  const first = await box.write("naïve 文件.txt", 'alpha "quoted" line\n');
  const second = await box.write("notes/b\\c.md", "beta 🐱 line\n");
  const inputs = [{ path: first }, { path: second, offset: 1, limit: 5 }];
  await withServer([
    chatTurn()
      .text("Reading both files.", { chunk: 4 })
      .toolCall("ReadFile", inputs[0], { id: "call_first", fragment: [1, 3], seed: 7 })
      .toolCall("ReadFile", inputs[1], { id: "call_second", fragment: [1, 3], seed: 11, asciiEscapes: true }),
    chatTurn().text("Both files read.").finish("stop"),
  ], async (server) => {
    const result = await run(box, server, OPENAI);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "Both files read.\n");
    equal(result.stderr, "");
    const messages = messagesOf(server, 2);
    deepStrictEqual(messages.map((message) => message.role), ["system", "user", "assistant", "tool", "tool"]);
    deepStrictEqual(messages[2], {
      role: "assistant",
      content: "Reading both files.",
      tool_calls: [
        {
          id: "call_first",
          type: "function",
          function: { name: "ReadFile", arguments: JSON.stringify(inputs[0]) },
        },
        {
          id: "call_second",
          type: "function",
          function: { name: "ReadFile", arguments: JSON.stringify(inputs[1]) },
        },
      ],
    });
    const tools = toolMessagesOf(server, 2);
    deepStrictEqual(tools.map((message) => message.tool_call_id), ["call_first", "call_second"]);
    match(String(tools[0]?.content), /alpha "quoted" line/);
    match(String(tools[1]?.content), /beta 🐱 line/);
    const body = server.completions[0]?.body as { model: string; tools: { function: { name: string } }[] };
    equal(body.model, "gpt-test");
    ok(body.tools.some((tool) => tool.function.name === "ReadFile"));
    const { records } = await box.transcript();
    const start = records[0];
    ok(start?.type === "session-start");
    equal(start.provider, "openai");
    equal(start.model, "gpt-test");
  });
});

Deno.test("e2e openai: malformed arguments get an error tool message and the loop continues", async () => {
  await using box = await Sandbox.create();
  await withServer([
    chatTurn().rawToolCall("ReadFile", `{"path": "${box.path("a.txt")}`, { id: "call_bad", fragment: 2 }),
    chatTurn().text("I will fix my call.").finish("stop"),
  ], async (server) => {
    const result = await run(box, server, OPENAI);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "I will fix my call.\n");
    const [tool] = toolMessagesOf(server, 2);
    equal(tool?.tool_call_id, "call_bad");
    match(String(tool?.content), /^Error: ReadFile was not run: its input is not valid JSON/);
  });
});

Deno.test("e2e openai: a model that sends no tool calls answers in one request", async () => {
  await using box = await Sandbox.create();
  await withServer([chatTurn().text("Just ", { chunk: 2 }).text("an answer.")], async (server) => {
    const result = await run(box, server, OPENAI);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "Just an answer.\n");
    equal(server.completions.length, 1);
  });
});

Deno.test("e2e openai: a 429 with retry-after and a 5xx are retried before the answer", async () => {
  await using box = await Sandbox.create();
  await withServer([
    chatError(429, "Rate limit reached", { headers: { "retry-after": "1" } }),
    chatError(500, "The server had an error"),
    chatTurn().text("After the waits."),
  ], async (server) => {
    const result = await run(box, server, [...OPENAI, "--verbose"]);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "After the waits.\n");
    match(result.stderr, /\[retry\] attempt 2 in 1000 ms: Rate limit reached \(429/);
    match(result.stderr, /\[retry\] attempt 3 in \d+ ms: The server had an error \(500 server_error\)/);
    const [first, second] = server.completions;
    ok(first && second && second.receivedAt - first.receivedAt >= 1000);
  });
});

Deno.test("e2e openai: a stream dropped after text is sent again and the run succeeds", async () => {
  await using box = await Sandbox.create();
  await withServer([
    chatTurn().text("Half an ans").drop(),
    chatTurn().text("The whole answer."),
  ], async (server) => {
    const result = await run(box, server, [...OPENAI, "--verbose"]);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "The whole answer.\n");
    match(result.stderr, /Response stream broke off after content arrived/);
    equal(server.completions.length, 2);
  });
});

Deno.test("e2e openai: --max-turns 2 with a model that always calls a tool stops with exit 53", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("loop.txt", "again\n");
  await withServer([
    chatTurn().toolCall("ReadFile", { path: file }),
    chatTurn().toolCall("ReadFile", { path: file, limit: 1 }),
    chatTurn().toolCall("ReadFile", { path: file, limit: 2 }),
  ], async (server) => {
    const result = await run(box, server, [...OPENAI, "--max-turns", "2"]);
    equal(result.code, 53, explainRun(result));
    equal(server.completions.length, 2);
    match(result.stderr, /Stopped after 2 model requests: --max-turns 2/);
  });
});

Deno.test("e2e openai: --output-format json reports the same fields, with the usage and a null cost", async () => {
  await using box = await Sandbox.create();
  await withServer([
    chatTurn().usage({ prompt_tokens: 150, completion_tokens: 12, cached_tokens: 100 }).text("Done."),
  ], async (server) => {
    const result = await run(box, server, [...OPENAI, "--output-format", "json"]);
    equal(result.code, 0, explainRun(result));
    const json = JSON.parse(result.stdout);
    deepStrictEqual(Object.keys(json), [
      "type",
      "schema_version",
      "session_id",
      "subtype",
      "is_error",
      "result",
      "num_turns",
      "duration_ms",
      "duration_api_ms",
      "usage",
      "total_cost_usd",
      "permission_denials",
    ]);
    equal(json.result, "Done.");
    equal(json.subtype, "success");
    equal(json.total_cost_usd, null);
    deepStrictEqual(json.usage, {
      input_tokens: 50,
      output_tokens: 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 100,
    });
  });
});

Deno.test("e2e openai: a refused key exits 41, and so does a missing OPENAI_API_KEY, naming it", async () => {
  await using box = await Sandbox.create();
  await withServer([chatTurn().text("never")], async (server) => {
    const refused = await run(box, server, OPENAI, { env: { OPENAI_API_KEY: "sk-wrong" } });
    equal(refused.code, 41, explainRun(refused));
    match(refused.stderr, /Incorrect API key provided/);
    const missing = await run(box, server, OPENAI, { env: { OPENAI_API_KEY: "" } });
    equal(missing.code, 41, explainRun(missing));
    match(missing.stderr, /OPENAI_API_KEY is not set: .*export OPENAI_API_KEY=<your key>/);
    equal(server.completions.length, 1, "no request without a key");
  }, { apiKey: "sk-right" });
});

Deno.test("e2e openai: --max-budget-usd is a usage error, as no OpenAI-compatible model has a price", async () => {
  await using box = await Sandbox.create();
  await withServer([], async (server) => {
    const result = await run(box, server, [...OPENAI, "--max-budget-usd", "1"]);
    equal(result.code, 2, explainRun(result));
    match(result.stderr, /knows no price for the model "gpt-test" on the openai provider/);
  });
});

Deno.test("e2e openai: a provider without a model is a usage error for -p, while commands that need none still run", async () => {
  await using box = await Sandbox.create();
  await withServer([], async (server) => {
    const result = await run(box, server, ["--provider", "openai"]);
    equal(result.code, 2, explainRun(result));
    match(
      result.stderr,
      /Cannot use the openai provider without a model: name one with --model openai\/<model>/,
    );
    await Deno.writeTextFile(join(box.home, "settings.json"), JSON.stringify({ provider: "ollama" }));
    const permissions = await runMewcode(["permissions"], { cwd: box.root, env: { MEWCODE_HOME: box.home } });
    equal(permissions.code, 0, explainRun(permissions));
    equal(server.completions.length, 0);
  });
});

Deno.test("e2e ollama: the ollama/model form needs no key and reaches OPENAI_BASE_URL with the bare model", async () => {
  await using box = await Sandbox.create();
  await withServer([chatTurn().text("Local answer.")], async (server) => {
    const result = await run(box, server, ["--model", "ollama/qwen3-coder"], {
      env: { OPENAI_API_KEY: "" },
    });
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "Local answer.\n");
    const [request] = server.completions;
    equal((request?.body as { model: string }).model, "qwen3-coder");
    equal(request?.headers.authorization, "Bearer ollama");
    const start = (await box.transcript()).records[0];
    ok(start?.type === "session-start");
    equal(start.provider, "ollama");
  }, { apiKey: null });
});

Deno.test("e2e ollama: the user's settings baseUrl wins over OPENAI_BASE_URL", async () => {
  await using box = await Sandbox.create();
  await withServer([chatTurn().text("From settings.")], async (server) => {
    await Deno.writeTextFile(
      join(box.home, "settings.json"),
      JSON.stringify({ provider: "ollama", baseUrl: server.baseUrl }),
    );
    const result = await run(box, server, ["--model", "ollama/qwen3-coder"], {
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "" },
    });
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "From settings.\n");
    equal((server.completions[0]?.body as { model: string }).model, "qwen3-coder");
  }, { apiKey: null });
});

Deno.test("e2e openai: a trusted repository cannot move the endpoint or the provider", async () => {
  await using box = await Sandbox.create();
  await box.write(
    ".mewcode/settings.json",
    JSON.stringify({ provider: "ollama", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "ANTHROPIC_API_KEY" }),
  );
  await withServer([chatTurn().text("Still here.")], async (server) => {
    const result = await run(box, server, [...OPENAI, "--trust"]);
    equal(result.code, 0, explainRun(result));
    equal(result.stdout, "Still here.\n");
    for (
      const item of ['provider "ollama"', 'baseUrl "http://127.0.0.1:9/v1"', 'apiKeyEnv "ANTHROPIC_API_KEY"']
    ) {
      ok(result.stderr.includes(`${item}: a repository may never set this`), result.stderr);
    }
    equal(server.completions[0]?.headers.authorization, `Bearer ${server.apiKey}`);
  });
});

Deno.test("e2e openai: -c continues with the recorded provider and model", async () => {
  await using box = await Sandbox.create();
  await withServer([
    chatTurn().text("The capital is Paris."),
    chatTurn().text("About 2 million people."),
  ], async (server) => {
    const first = await run(box, server, OPENAI, { prompt: "capital of France?" });
    equal(first.code, 0, explainRun(first));
    const second = await run(box, server, ["-c"], { prompt: "how many live there?" });
    equal(second.code, 0, explainRun(second));
    equal(second.stdout, "About 2 million people.\n");
    equal(second.stderr, "", "the same provider: nothing to warn about");
    const body = server.completions[1]?.body as { model: string; messages: WireMessage[] };
    equal(body.model, "gpt-test");
    deepStrictEqual(body.messages.slice(1).map((message) => `${message.role}: ${message.content}`), [
      "user: capital of France?",
      "assistant: The capital is Paris.",
      "user: how many live there?",
    ]);
  });
});

Deno.test("e2e: -c onto another provider converts the history and names the thinking blocks dropped", async () => {
  await using box = await Sandbox.create();
  const file = await box.write("a.txt", "alpha\n");
  await using anthropic = await startFakeAnthropic([
    turn().thinking("Let me read it.").toolUse("ReadFile", { path: file }, { id: "toolu_read" }),
    turn().text("It says alpha.").stop("end_turn"),
  ]);
  const first = await runMewcode(["-p", "what is in a.txt?"], {
    cwd: box.root,
    env: { ...anthropic.env(), MEWCODE_HOME: box.home },
  });
  equal(first.code, 0, explainRun(first));
  await withServer([chatTurn().text("Continued on OpenAI.")], async (server) => {
    const second = await run(box, server, ["-c", "--model", "openai/gpt-test"], { prompt: "and now?" });
    equal(second.code, 0, explainRun(second));
    equal(second.stdout, "Continued on OpenAI.\n");
    match(
      second.stderr,
      /warning: Continuing a session recorded with anthropic on openai: 1 thinking block is dropped \(only anthropic can read them back\)/,
    );
    const messages = messagesOf(server, 1);
    deepStrictEqual(messages.slice(1).map((message) => message.role), [
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    deepStrictEqual(messages[2]?.tool_calls, [
      {
        id: "toolu_read",
        type: "function",
        function: { name: "ReadFile", arguments: JSON.stringify({ path: file }) },
      },
    ]);
    equal(messages[3]?.tool_call_id, "toolu_read");
  });
});

Deno.test("e2e openai: SIGINT while the model streams exits 130 promptly", async () => {
  await using box = await Sandbox.create();
  await using server = await startFakeOpenAi([chatTurn().text("Thinking").delay(30_000).text("never")]);
  const child = new Deno.Command(LAUNCHER, {
    args: ["-p", "wait", ...OPENAI],
    cwd: box.root,
    env: { ...server.env(), MEWCODE_HOME: box.home },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  const deadline = Date.now() + 60_000;
  while (server.completions.length === 0) {
    ok(Date.now() < deadline, "the request never arrived");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Let the first text reach the client, so the interrupt lands mid-stream.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const interruptedAt = Date.now();
  Deno.kill(child.pid, "SIGINT");
  const result = await output;
  const stderr = new TextDecoder().decode(result.stderr);
  equal(result.code, 130, stderr);
  ok(Date.now() - interruptedAt < 3_000, "the run ended promptly");
  match(stderr, /Interrupted by SIGINT/);
  const records = (await box.transcript()).records;
  const last = records.at(-1);
  ok(last?.type === "turn-end");
  equal(last.reason, "aborted");
});
