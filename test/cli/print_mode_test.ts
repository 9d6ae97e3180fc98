import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { parseCli } from "../../src/cli/args.ts";
import { type PromptSource, runPrintMode } from "../../src/cli/print_mode.ts";
import { ApiError } from "../../src/llm/errors.ts";
import { makeFifo, releaseWriters } from "../_fakes/fifo.ts";
import { ScriptedProvider, type ScriptedTurn, textTurn, toolTurn } from "../_fakes/scripted_provider.ts";

interface PrintRun {
  code: number;
  stdout: string;
  stderr: string;
  provider: ScriptedProvider;
}

/** Runs -p in a new temp workspace; `turns` may be built from the workspace's root. */
async function print(
  argv: string[],
  turns: ScriptedTurn[] | ((root: string) => ScriptedTurn[]),
  options: {
    stdin?: string | PromptSource;
    repeatLast?: boolean;
    stdoutError?: Error;
    stdoutIsTerminal?: boolean;
    stderrIsTerminal?: boolean;
    /** A workspace and MEWCODE_HOME the caller made (and removes), for runs that continue a session. */
    dirs?: { root: string; home: string };
    /** Aborted as a signal would abort the run, with the signal it names. */
    interrupt?: { signal: AbortSignal; received: () => "SIGINT" | "SIGTERM" | null };
  } = {},
): Promise<PrintRun> {
  const root = options.dirs?.root ?? await Deno.realPath(await Deno.makeTempDir());
  const home = options.dirs?.home ?? await Deno.makeTempDir();
  let stdout = "";
  let stderr = "";
  const script = typeof turns === "function" ? turns(root) : turns;
  const provider = new ScriptedProvider(script, { repeatLast: options.repeatLast ?? false });
  const bytes = new TextEncoder().encode(typeof options.stdin === "string" ? options.stdin : "");
  let offset = 0;
  const stdin: PromptSource = typeof options.stdin === "object" ? options.stdin : {
    isTerminal: () => options.stdin === undefined,
    read: (buffer) => {
      if (offset === bytes.length) return Promise.resolve(null);
      const taken = bytes.subarray(offset, offset + buffer.length);
      buffer.set(taken);
      offset += taken.length;
      return Promise.resolve(taken.length);
    },
  };
  try {
    const code = await runPrintMode({
      workspace: { root, aliases: [] },
      options: parseCli(argv),
      signal: options.interrupt?.signal ?? new AbortController().signal,
      ...(options.interrupt === undefined ? {} : {
        interruption: {
          get received() {
            return options.interrupt!.received();
          },
        },
      }),
      provider,
      // In-process tools: worker startup is covered by the e2e tests, which run what ships.
      executor: "direct",
      env: { MEWCODE_HOME: home },
      stdin,
      stdinLimits: { firstByteMs: 20 },
      stdout: (text) => {
        if (options.stdoutError !== undefined) throw options.stdoutError;
        stdout += text;
      },
      stderr: (text) => (stderr += text),
      stdoutIsTerminal: options.stdoutIsTerminal ?? false,
      stderrIsTerminal: options.stderrIsTerminal ?? false,
    });
    return { code, stdout, stderr, provider };
  } finally {
    if (options.dirs === undefined) {
      await Deno.remove(root, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  }
}

/** A workspace and a MEWCODE_HOME for several runs, removed at the end of the scope. */
async function sharedDirs(): Promise<{ root: string; home: string } & AsyncDisposable> {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const home = await Deno.makeTempDir();
  return {
    root,
    home,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
      await Deno.remove(home, { recursive: true });
    },
  };
}

Deno.test("runPrintMode prints the final text and exits 0", async () => {
  const run = await print(["-p", "hello"], [textTurn("Hi there.")]);
  equal(run.code, 0, run.stderr);
  equal(run.stdout, "Hi there.\n");
  equal(run.stderr, "");
});

Deno.test("runPrintMode tells a person at the terminal at once that silent stdin was left, a log only if it comes", async () => {
  // Silent for 300 ms, then its end: the run does not wait for it.
  const reads: Promise<number | null>[] = [];
  const silent: PromptSource = {
    isTerminal: () => false,
    read: () => {
      reads.push(new Promise((resolve) => setTimeout(() => resolve(null), 300)));
      return reads.at(-1)!;
    },
  };
  const terminal = await print(["-p", "hello", "--quiet"], [textTurn("Hi.")], {
    stdin: silent,
    stderrIsTerminal: true,
  });
  equal(terminal.code, 0, terminal.stderr);
  equal(
    terminal.stderr,
    "mewcode: warning: Standard input sent nothing in 20 ms, so the run goes on without it; to wait for piped " +
      "input however long it takes, pass --wait-for-stdin\n",
  );
  const log = await print(["-p", "hello"], [textTurn("Hi.")], { stdin: silent, stderrIsTerminal: false });
  equal(log.stderr, "", "a silent inherited pipe is no news in a script's log");
  deepStrictEqual(log.provider.requests[0]?.messages[0]?.content, [{ type: "text", text: "hello" }]);
  equal(reads.length, 2);
  await Promise.all(reads);
});

Deno.test("runPrintMode stops the run and exits 1 when standard output cannot be written", async () => {
  const full = new Error("No space left on device (os error 28)");
  const run = await print(
    ["-p", "hello", "--output-format", "stream-json"],
    [toolTurn([{ id: "t1", name: "Glob", input: { pattern: "*" } }]), textTurn("Done.")],
    { stdoutError: full },
  );
  equal(run.code, 1, run.stderr);
  equal(run.provider.requests.length, 0, "the run stopped at its first line");
  match(
    run.stderr,
    /^mewcode: Cannot write to standard output: No space left on device \(os error 28\); the run was stopped\n$/,
  );
});

Deno.test("runPrintMode exits 141 without a word when the reader of standard output has gone", async () => {
  const run = await print(["-p", "hello"], [textTurn("Hi there.")], {
    stdoutError: new Deno.errors.BrokenPipe("Broken pipe (os error 32)"),
  });
  equal(run.code, 141);
  equal(run.stderr, "");
});

Deno.test("runPrintMode shows escape sequences in a text answer on a terminal, and passes them to a pipe", async () => {
  // A clipboard write (OSC 52) of a command, and a carriage return that would hide what came before it.
  const answer = "Done.\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\nHidden\rShown";
  const terminal = await print(["-p", "hello"], [textTurn(answer)], { stdoutIsTerminal: true });
  equal(terminal.code, 0, terminal.stderr);
  equal(terminal.stdout, "Done.␛]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==␇\nHidden␍Shown\n");
  const piped = await print(["-p", "hello"], [textTurn(answer)], { stdoutIsTerminal: false });
  equal(piped.stdout, `${answer}\n`, "a script gets the answer as the model wrote it");
});

Deno.test("runPrintMode reads the prompt from stdin when -p has no argument", async () => {
  const run = await print(["-p"], [textTurn("ok")], { stdin: "from stdin" });
  equal(run.code, 0, run.stderr);
  deepStrictEqual(run.provider.requests[0]?.messages[0]?.content, [{ type: "text", text: "from stdin" }]);
});

Deno.test("runPrintMode exits 2 without a prompt", async () => {
  const run = await print(["-p"], []);
  equal(run.code, 2);
  match(run.stderr, /Missing the prompt/);
});

Deno.test("runPrintMode exits 53 with a clear message when --max-turns stops the run", async () => {
  let count = 0;
  const run = await print(
    ["-p", "loop", "--max-turns", "1"],
    [() => toolTurn([{ id: `t${++count}`, name: "Glob", input: { pattern: `*.${count}` } }])],
    { repeatLast: true },
  );
  equal(run.code, 53);
  equal(run.provider.requests.length, 1);
  match(run.stderr, /Stopped after 1 model request: --max-turns 1 was reached/);
});

Deno.test("runPrintMode exits 1 with the API's message on an API error", async () => {
  const error = new ApiError("prompt is too long", {
    status: 400,
    errorType: "invalid_request_error",
    isRetryable: false,
  });
  const run = await print(["-p", "x"], [[{ type: "throw", error }]]);
  equal(run.code, 1);
  equal(run.stdout, "");
  match(run.stderr, /mewcode: prompt is too long \(API status 400 invalid_request_error\)/);
});

Deno.test("runPrintMode with --verbose reports tool calls, retries and usage on stderr", async () => {
  const run = await print(["-p", "x", "--verbose", "--permission-mode", "default"], (root) => [
    [
      { type: "retry", attempt: 1, delayMs: 250, reason: "Overloaded (529 overloaded_error)" },
      ...toolTurn([{ id: "t1", name: "WriteFile", input: { path: `${root}/a.txt`, content: "x" } }]),
    ],
    textTurn("done"),
  ]);
  // The WriteFile needed an approval no one could give.
  equal(run.code, 55, run.stderr);
  match(run.stderr, /\[retry\] attempt 2 in 250 ms: Overloaded \(529 overloaded_error\)/);
  match(run.stderr, /\[tool\] WriteFile \{"path":"[^"]*\/a.txt","content":"x"\}/);
  match(run.stderr, /\[tool\] WriteFile denied in \d+ ms: error: Permission to use WriteFile was denied/);
  match(run.stderr, /\[usage\] 20 input, 10 output tokens/);
  ok(run.stderr.includes("[session] transcript: "));
});

Deno.test("runPrintMode --output-format json prints one result object and nothing else", async () => {
  const run = await print(["-p", "hello", "--output-format", "json"], [textTurn("Hi there.")]);
  equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split("\n");
  equal(lines.length, 1);
  const result = JSON.parse(lines[0]!);
  equal(result.type, "result");
  equal(result.schema_version, 1);
  equal(result.subtype, "success");
  equal(result.is_error, false);
  equal(result.result, "Hi there.");
  equal(result.num_turns, 1);
  match(result.session_id, /^[0-9a-f-]{36}$/);
  deepStrictEqual(Object.keys(result.usage).sort(), [
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "input_tokens",
    "output_tokens",
  ]);
  deepStrictEqual(result.permission_denials, []);
  equal(typeof result.duration_ms, "number");
  equal(typeof result.duration_api_ms, "number");
});

Deno.test("runPrintMode in default mode: a WriteFile is denied with its hint, warned about, and exits 55", async () => {
  let target = "";
  const run = await print(["-p", "write", "--output-format", "json"], (root) => {
    target = `${root}/a.txt`;
    return [
      toolTurn([{ id: "w1", name: "WriteFile", input: { path: target, content: "x" } }]),
      textTurn("I could not."),
    ];
  });
  equal(run.code, 55, run.stderr);
  const result = JSON.parse(run.stdout);
  equal(result.subtype, "error_permission");
  equal(result.is_error, true);
  equal(result.result, "I could not.");
  equal(
    result.error,
    "1 action needed an approval that no one could give, so the task may be incomplete: each of " +
      "permission_denials names the flag or rule that would allow it",
    "is_error is true, so error says why",
  );
  equal(result.permission_denials.length, 1);
  equal(result.permission_denials[0].tool, "WriteFile");
  deepStrictEqual(result.permission_denials[0].input, { path: target, content: "x" });
  match(result.permission_denials[0].reason, /approv/);
  equal(
    result.permission_denials[0].hint,
    '--permission-mode acceptEdits or --allowedTools "WriteFile(a.txt)"',
  );
  ok(
    run.stderr.includes(
      `mewcode: warning: WriteFile ${target} was not allowed: run with --permission-mode acceptEdits or ` +
        '--allowedTools "WriteFile(a.txt)"\n',
    ),
  );
  match(run.stderr, /1 action needed an approval that no one could give/);
});

Deno.test("runPrintMode --output-format stream-json: init first, events, result last, every line versioned", async () => {
  const run = await print(
    ["-p", "look", "--output-format", "stream-json", "--include-partial-messages"],
    [
      toolTurn([{ id: "g1", name: "Glob", input: { pattern: "*.md" } }], { text: "Looking." }),
      textTurn("None."),
    ],
  );
  equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
  const sessionId = lines[0].session_id;
  for (const line of lines) {
    equal(line.schema_version, 1);
    equal(line.session_id, sessionId);
  }
  deepStrictEqual(lines.map((line) => line.subtype ? `${line.type}/${line.subtype}` : line.type), [
    "system/init",
    "request",
    "stream_event",
    "usage",
    "assistant",
    "tool_use",
    "tool_result",
    "request",
    "stream_event",
    "usage",
    "assistant",
    "result/success",
  ]);
  const init = lines[0];
  deepStrictEqual(init.tools.sort(), ["Bash", "EditFile", "Glob", "Grep", "ReadFile", "WriteFile"]);
  equal(init.permission_mode, "default");
  equal(init.sandbox_mode, "workspace-write");
  const toolResult = lines.find((line) => line.type === "tool_result");
  equal(toolResult.status, "completed");
  equal(toolResult.gate, "execute");
  equal(toolResult.tool_use_id, "g1");
});

Deno.test("runPrintMode sends piped stdin as context with the prompt argument as the instruction", async () => {
  const run = await print(["-p", "review this"], [textTurn("LGTM")], { stdin: "diff --git a/x b/x\n" });
  equal(run.code, 0, run.stderr);
  const sent = run.provider.requests[0]?.messages[0]?.content[0];
  ok(sent?.type === "text");
  match(sent.text, /<stdin>\ndiff --git a\/x b\/x\n<\/stdin>\n\nreview this$/);
});

Deno.test("runPrintMode --max-budget-usd stops before the next request once the run has cost that much", async () => {
  let count = 0;
  const run = await print(
    ["-p", "loop", "--max-budget-usd", "0.000001", "--model", "claude-sonnet-5-5", "--output-format", "json"],
    [() => toolTurn([{ id: `t${++count}`, name: "Glob", input: { pattern: `*.${count}` } }])],
    { repeatLast: true },
  );
  equal(run.code, 54, run.stderr);
  equal(run.provider.requests.length, 1);
  const result = JSON.parse(run.stdout);
  equal(result.subtype, "error_max_budget");
  ok(result.total_cost_usd > 0.000001);
  match(run.stderr, /reaching --max-budget-usd 0\.000001/);
  // The amounts said are the amount spent, not rounded to four decimals ("$0.0001" for $0.00007).
  for (
    const said of [run.stderr.match(/the run cost \$([0-9.]+)/), result.error.match(/has cost \$([0-9.]+)/)]
  ) {
    ok(said !== null, run.stderr);
    ok(Math.abs(Number(said[1]) - result.total_cost_usd) <= result.total_cost_usd * 0.05, said[0]);
  }
});

Deno.test("runPrintMode refuses --max-budget-usd for a model without a known price (exit 2)", async () => {
  const run = await print(["-p", "q", "--max-budget-usd", "1", "--model", "some-local-model"], []);
  equal(run.code, 2);
  match(run.stderr, /knows no price for the model "some-local-model"/);
  equal(run.provider.requests.length, 0);
});

Deno.test("runPrintMode --json-schema: a conforming answer is the result, in text and json", async () => {
  const schema = JSON.stringify({
    type: "object",
    properties: { count: { type: "integer" } },
    required: ["count"],
    additionalProperties: false,
  });
  const answer = () => toolTurn([{ id: "s1", name: "StructuredOutput", input: { count: 3 } }]);
  const text = await print(["-p", "count", "--json-schema", schema], [answer()]);
  equal(text.code, 0, text.stderr);
  equal(text.stdout, '{"count":3}\n');
  equal(text.provider.requests.length, 1);
  ok(text.provider.requests[0]!.tools.some((tool) => tool.name === "StructuredOutput"));
  const json = await print(["-p", "count", "--json-schema", schema, "--output-format", "json"], [answer()]);
  deepStrictEqual(JSON.parse(json.stdout).structured_output, { count: 3 });
});

Deno.test("runPrintMode --json-schema: a wrong answer gets one repair turn, then fails with exit 1", async () => {
  const schema = '{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}';
  const wrong = (id: string) => toolTurn([{ id, name: "StructuredOutput", input: { count: "three" } }]);
  const repaired = await print(
    ["-p", "count", "--json-schema", schema],
    [wrong("s1"), toolTurn([{ id: "s2", name: "StructuredOutput", input: { count: 3 } }])],
  );
  equal(repaired.code, 0, repaired.stderr);
  equal(repaired.stdout, '{"count":3}\n');
  const repair = repaired.provider.requests[1]?.messages.at(-1)?.content[0];
  ok(repair?.type === "tool-result" && repair.isError);
  match(repair.content, /count: must be integer, received "three"/);

  const failed = await print(
    ["-p", "count", "--json-schema", schema, "--output-format", "json"],
    [wrong("s1"), wrong("s2"), textTurn("never sent")],
  );
  equal(failed.code, 1);
  equal(failed.provider.requests.length, 2);
  const result = JSON.parse(failed.stdout);
  equal(result.subtype, "error_structured_output");
  equal(result.structured_output, undefined);
});

Deno.test("runPrintMode --json-schema: an answer never given through the tool gets one reminder, then exit 1", async () => {
  const schema = '{"type":"object","properties":{"a":{"type":"string"}}}';
  const run = await print(["-p", "q", "--json-schema", schema], [textTurn("a is x"), textTurn("still text")]);
  equal(run.code, 1);
  equal(run.provider.requests.length, 2);
  const reminder = run.provider.requests[1]?.messages.at(-1)?.content[0];
  ok(reminder?.type === "text");
  match(reminder.text, /without calling StructuredOutput/);
  equal(run.stdout, "");
});

Deno.test("runPrintMode refuses an invalid --json-schema before any request (exit 2)", async () => {
  const run = await print([
    "-p",
    "q",
    "--json-schema",
    '{"type":"object","properties":{"a":{"type":"strin"}}}',
  ], []);
  equal(run.code, 2);
  match(run.stderr, /Invalid --json-schema/);
  equal(run.provider.requests.length, 0);
});

Deno.test("runPrintMode refuses a session another run holds with its reason alone, not what its load found", async () => {
  await using dirs = await sharedDirs();
  const first = await print(
    ["-p", "look", "--output-format", "json"],
    [toolTurn([{ id: "g1", name: "Glob", input: { pattern: "*" } }]), textTurn("Nothing.")],
    { dirs },
  );
  equal(first.code, 0, first.stderr);
  const sessionId = JSON.parse(first.stdout).session_id;
  const [project] = await Array.fromAsync(Deno.readDir(`${dirs.home}/projects`));
  const path = `${dirs.home}/projects/${project!.name}/${sessionId}.jsonl`;
  // The other run is in the middle of its Glob: its transcript ends at the call's start, and it holds the lock.
  const lines = (await Deno.readTextFile(path)).split("\n");
  const started = lines.findIndex((line) => line.includes('"type":"tool-call-start"'));
  await Deno.writeTextFile(path, `${lines.slice(0, started + 1).join("\n")}\n`);
  using other = await Deno.open(path, { read: true });
  other.lockSync(true);

  const second = await print(["-p", "more", "-c", "--output-format", "json"], [textTurn("Unused.")], {
    dirs,
  });
  equal(second.code, 1, second.stderr);
  equal(second.provider.requests.length, 0);
  equal(
    second.stderr,
    `mewcode: Session ${sessionId} is in use by another mewcode run (it holds the lock on "${path}"), and two ` +
      "runs writing one session would mix up its conversation: wait for that run to end and continue the " +
      "session then, or start a new session\n",
  );
  const result = JSON.parse(second.stdout);
  equal(result.session_id, sessionId);
  equal(result.subtype, "error_during_execution");
});

Deno.test("runPrintMode exits 2 when --session-id names a session the workspace already has", async () => {
  await using dirs = await sharedDirs();
  const id = "0b7a3c52-8f14-4d6e-9a21-5c3e7f9d1b40";
  const first = await print(["-p", "hello", "--session-id", id], [textTurn("Hi.")], { dirs });
  equal(first.code, 0, first.stderr);
  const again = await print(
    ["-p", "hello", "--session-id", id, "--output-format", "json"],
    [textTurn("Hi.")],
    {
      dirs,
    },
  );
  equal(again.code, 2, again.stderr);
  equal(again.stdout, "", "a usage error prints no result");
  equal(again.provider.requests.length, 0);
  match(
    again.stderr,
    new RegExp(
      `^mewcode: A session with id ${id} already exists for this workspace \\(".*"\\): continue it with ` +
        `--resume ${id}, or choose another id\nRun "mewcode --help" for usage\.\n$`,
    ),
  );
});

Deno.test("runPrintMode says in plain words why a --system-prompt-file cannot be read, and exits 2", async (t) => {
  await using dirs = await sharedDirs();
  const missing = `${dirs.root}/missing.md`;
  const cases: [string, string, string][] = [
    ["a missing file", missing, `Cannot read --system-prompt-file "${missing}": no such file`],
    [
      "a folder",
      dirs.root,
      `Cannot read --system-prompt-file "${dirs.root}": it is not a regular file or a pipe`,
    ],
  ];
  for (const [name, file, message] of cases) {
    await t.step(name, async () => {
      const run = await print(["-p", "hi", "--system-prompt-file", file], [textTurn("Unused.")], { dirs });
      equal(run.code, 2, run.stderr);
      equal(run.provider.requests.length, 0);
      equal(run.stderr, `mewcode: ${message}\nRun "mewcode --help" for usage.\n`);
    });
  }
});

Deno.test("runPrintMode says once on stderr why a cut-off or refused answer ended the run", async (t) => {
  const cases: [string, "max_tokens" | "refusal", string][] = [
    ["max_tokens", "max_tokens", "The response was cut off at the max_tokens limit"],
    ["refusal", "refusal", "The model declined to continue this request"],
  ];
  for (const [name, stopReason, message] of cases) {
    await t.step(name, async () => {
      const run = await print(["-p", "hi"], [textTurn("Half an", stopReason)]);
      equal(run.code, 1, run.stderr);
      equal(run.stdout, "Half an\n");
      equal(run.stderr.split(message).length - 1, 1, run.stderr);
    });
  }
});

Deno.test("runPrintMode refuses to continue a session another run continued while it waited for stdin", async () => {
  await using dirs = await sharedDirs();
  const first = await print(["-p", "first"], [textTurn("One.")], { dirs });
  equal(first.code, 0, first.stderr);
  // The slow command piped into this run (--wait-for-stdin) finishes only after another run continued the
  // session: the conversation this run read lacks that run's turn.
  let other: PrintRun | null = null;
  let sent = false;
  const slowPipe: PromptSource = {
    isTerminal: () => false,
    read: async (buffer) => {
      if (sent) return null;
      other = await print(["-p", "-c", "meanwhile"], [textTurn("Two.")], { dirs });
      sent = true;
      return new TextEncoder().encodeInto("make: *** [all] Error 2\n", buffer).written;
    },
  };
  const run = await print(
    ["-p", "-c", "--wait-for-stdin", "why did it fail", "--output-format", "json"],
    [textTurn("Unused.")],
    { dirs, stdin: slowPipe },
  );
  equal(other!.code, 0, other!.stderr);
  equal(run.code, 1, run.stderr);
  equal(run.provider.requests.length, 0, "nothing is sent from a conversation that misses a turn");
  match(
    run.stderr,
    /^mewcode: Session \S+ changed after this run read it .*: another mewcode run continued it/,
  );
  equal(JSON.parse(run.stdout).subtype, "error_during_execution");
});

Deno.test("runPrintMode ends at a signal while it waits for standard input, with the interrupted result", async () => {
  const controller = new AbortController();
  // `make | mewcode -p --wait-for-stdin "why"` under `timeout`: make is still running when SIGTERM comes.
  const neverSends: PromptSource = {
    isTerminal: () => false,
    read: () => {
      queueMicrotask(() => controller.abort());
      return new Promise(() => {});
    },
  };
  const run = await print(
    ["-p", "--wait-for-stdin", "why did it fail", "--output-format", "json"],
    [textTurn("Unused.")],
    { stdin: neverSends, interrupt: { signal: controller.signal, received: () => "SIGTERM" } },
  );
  equal(run.code, 143, run.stderr);
  equal(run.provider.requests.length, 0);
  equal(run.stderr, "mewcode: Interrupted by SIGTERM while reading standard input\n");
  const result = JSON.parse(run.stdout);
  equal(result.subtype, "interrupted");
  equal(result.is_error, true);
  equal(result.error, "The run was interrupted while it read its prompt from standard input");
});

Deno.test("runPrintMode exits 2 with the reason when standard input cannot be read (mewcode -p < folder)", async (t) => {
  const folder: PromptSource = {
    isTerminal: () => false,
    read: () => Promise.reject(new Deno.errors.IsADirectory("Is a directory (os error 21)")),
  };
  for (const argv of [["-p"], ["-p", "q"]]) {
    await t.step(argv.join(" "), async () => {
      const run = await print(argv, [textTurn("Unused.")], { stdin: folder });
      equal(run.code, 2, run.stderr);
      equal(run.provider.requests.length, 0);
      equal(
        run.stderr,
        "mewcode: Cannot read standard input: it is a directory; give it a file, a command's output or " +
          'nothing\nRun "mewcode --help" for usage.\n',
      );
    });
  }
});

Deno.test("runPrintMode reads --append-system-prompt-file from a pipe, as <(command) gives it", async () => {
  await using dirs = await sharedDirs();
  const pipe = `${dirs.root}/rules.pipe`;
  await makeFifo(pipe);
  const writing = (async () => {
    using writer = await Deno.open(pipe, { write: true });
    await writer.write(new TextEncoder().encode("Answer in French."));
  })();
  const run = await print(["-p", "hi", "--append-system-prompt-file", pipe], [textTurn("Bonjour.")], {
    dirs,
  });
  // A run that never read the pipe leaves the writer waiting for a reader: let it go.
  await releaseWriters(pipe);
  await writing.catch(() => {});
  equal(run.code, 0, run.stderr);
  ok(
    run.provider.requests[0]!.system.endsWith("Answer in French."),
    run.provider.requests[0]!.system.slice(-200),
  );
});

Deno.test("runPrintMode continues with -r the session --session-id named, whatever the id's case", async (t) => {
  await using dirs = await sharedDirs();
  // What macOS's uuidgen prints: upper case.
  const id = "3F2A9C1E-7B4D-4E8A-9C21-5D3E7F9A1B40";
  const first = await print(["-p", "first", "--session-id", id, "--output-format", "json"], [
    textTurn("One."),
  ], {
    dirs,
  });
  equal(first.code, 0, first.stderr);
  equal(JSON.parse(first.stdout).session_id, id.toLowerCase());
  for (const given of [id, id.slice(0, 8)]) {
    await t.step(given, async () => {
      const run = await print(["-p", "more", "-r", given, "--output-format", "json"], [textTurn("Two.")], {
        dirs,
      });
      equal(run.code, 0, run.stderr);
      equal(JSON.parse(run.stdout).session_id, id.toLowerCase());
      ok(run.provider.requests[0]!.messages.length >= 3, "the conversation so far was sent");
    });
  }
});
