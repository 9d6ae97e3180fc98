import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { parseCli } from "../../src/cli/args.ts";
import { type PromptSource, runPrintMode } from "../../src/cli/print_mode.ts";
import { ApiError } from "../../src/llm/errors.ts";
import { ScriptedProvider, type ScriptedTurn, textTurn, toolTurn } from "../_fakes/scripted_provider.ts";

interface PrintRun {
  code: number;
  stdout: string;
  stderr: string;
  provider: ScriptedProvider;
}

async function print(
  argv: string[],
  turns: ScriptedTurn[],
  options: { stdin?: string; repeatLast?: boolean } = {},
): Promise<PrintRun> {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const home = await Deno.makeTempDir();
  let stdout = "";
  let stderr = "";
  const provider = new ScriptedProvider(turns, { repeatLast: options.repeatLast ?? false });
  const stdin: PromptSource = {
    readable: ReadableStream.from([new TextEncoder().encode(options.stdin ?? "")]),
    isTerminal: () => options.stdin === undefined,
  };
  try {
    const code = await runPrintMode({
      workspace: { root, aliases: [] },
      options: parseCli(argv),
      signal: new AbortController().signal,
      provider,
      // In-process tools: worker startup is covered by the e2e tests, which run what ships.
      executor: "direct",
      env: { MEWCODE_HOME: home },
      stdin,
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    return { code, stdout, stderr, provider };
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("runPrintMode prints the final text and exits 0", async () => {
  const run = await print(["-p", "hello"], [textTurn("Hi there.")]);
  equal(run.code, 0, run.stderr);
  equal(run.stdout, "Hi there.\n");
  equal(run.stderr, "");
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
  const run = await print(["-p", "x", "--verbose", "--permission-mode", "default"], [
    [
      { type: "retry", attempt: 1, delayMs: 250, reason: "Overloaded (529 overloaded_error)" },
      ...toolTurn([{ id: "t1", name: "WriteFile", input: { path: "/nowhere/a.txt", content: "x" } }]),
    ],
    textTurn("done"),
  ]);
  equal(run.code, 0, run.stderr);
  match(run.stderr, /\[retry\] attempt 1 in 250 ms: Overloaded \(529 overloaded_error\)/);
  match(run.stderr, /\[tool\] WriteFile \{"path":"\/nowhere\/a.txt","content":"x"\}/);
  match(run.stderr, /\[tool\] WriteFile denied in \d+ ms: error: Permission to use WriteFile was denied/);
  match(run.stderr, /\[usage\] 20 input, 10 output tokens/);
  ok(run.stderr.includes("[session] transcript: "));
});
