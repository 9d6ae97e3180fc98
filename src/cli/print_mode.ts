/**
 * `mewcode -p`: one prompt (the argument, or standard input) run to completion; the final answer on
 * stdout; with `--verbose`, tool calls and retries on stderr. No one is there to approve anything, so
 * an "ask" decision is a denial the model sees with its reason.
 *
 * Exit status: 0 success; 1 API or runtime error (message on stderr); 2 usage error; 53 when
 * `--max-turns` stopped the run; 130 when interrupted.
 *
 * @module
 */
import type { AgentEvent } from "../agent/events.ts";
import { describeError, runAgent } from "../agent/loop.ts";
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { Transcript } from "../agent/transcript.ts";
import { assertNever } from "../tools/errors.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import { createToolRuntime, type ExecutorKind } from "../execution/runtime.ts";
import { AnthropicProvider } from "../llm/anthropic.ts";
import type { Provider } from "../llm/provider.ts";
import type { CliOptions } from "./args.ts";
import { EXIT } from "./exit_codes.ts";
import { runtimeOptionsFrom, type Workspace } from "./runtime_options.ts";

/** What `runPrintMode` needs; `provider` and the streams are injectable for tests. */
export interface PrintModeInput {
  /** The workspace: its real path and the other names the user gave it. */
  workspace: Workspace;
  options: CliOptions;
  signal: AbortSignal;
  /** Default: AnthropicProvider from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL. */
  provider?: Provider;
  /** Default: the process environment. */
  env?: Record<string, string>;
  /** Default: the process's stdin. */
  stdin?: PromptSource;
  /** Where tools run; default "worker" (the sandbox). Unit tests use "direct". */
  executor?: ExecutorKind;
  /** Default: the process's stdout and stderr. */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

/** Where a prompt not given as an argument is read from (`Deno.stdin` fits). */
export interface PromptSource {
  readonly readable: ReadableStream<Uint8Array>;
  isTerminal(): boolean;
}

/** Runs one prompt to completion; returns the exit status. Always closes the tool runtime. */
export async function runPrintMode(input: PrintModeInput): Promise<number> {
  const { workspace, options, signal } = input;
  const root = workspace.root;
  const env = input.env ?? Deno.env.toObject();
  const out = input.stdout ?? ((text: string) => writeAllSync(Deno.stdout, text));
  const err = input.stderr ?? ((text: string) => writeAllSync(Deno.stderr, text));
  if (options.command.kind !== "print") throw new TypeError("runPrintMode needs the print command");

  const prompt = options.command.prompt ?? await readPrompt(input.stdin ?? Deno.stdin);
  if (prompt === null || prompt.trim() === "") {
    err(
      'mewcode: Missing the prompt: pass it after -p or on standard input\nRun "mewcode --help" for usage.\n',
    );
    return EXIT.usage;
  }

  let provider: Provider;
  try {
    provider = input.provider ??
      AnthropicProvider.fromEnv({ get: (name) => env[name] });
  } catch (error) {
    err(`mewcode: ${describeError(error)}\n`);
    return EXIT.error;
  }

  let transcript: Transcript;
  try {
    transcript = await Transcript.create({ home: resolveMewcodeHome(env), root });
  } catch (error) {
    err(`mewcode: Cannot open the session transcript: ${describeError(error)}\n`);
    return EXIT.error;
  }
  try {
    await using runtime = await createToolRuntime({
      // No approver: in -p no one can answer, so "ask" is a denial with its reason.
      ...await runtimeOptionsFrom(workspace, options, env),
      ...(input.executor === undefined ? {} : { executor: input.executor }),
    });
    const platform = `${Deno.build.os} ${Deno.build.arch}`;
    transcript.append({
      type: "session-start",
      sessionId: transcript.sessionId,
      root,
      model: options.model,
      platform,
    });
    const system = buildSystemPrompt({
      root,
      platform,
      date: new Date(),
      tools: runtime.registry.listEnabled(),
      permissionMode: options.permissionMode,
    });
    const reporter = new Reporter(options.verbose, err);
    const warnEndOfSession = async () => {
      for (const line of await runtime.finish()) err(`mewcode: warning: ${line}\n`);
    };
    for await (
      const event of runAgent({
        provider,
        pipeline: runtime.pipeline,
        prompt,
        model: options.model,
        maxTokens: options.maxTokens,
        system,
        signal,
        maxTurns: options.maxTurns,
        transcript,
      })
    ) {
      reporter.report(event);
      if (event.type !== "turn-end") continue;
      if (event.text !== "" && event.reason !== "error" && event.reason !== "aborted") {
        out(event.text.endsWith("\n") ? event.text : `${event.text}\n`);
      }
      if (options.verbose) err(`[session] transcript: ${transcript.path}\n`);
      await warnEndOfSession();
      return exitFor(event, err, options.maxTurns);
    }
    err("mewcode: The agent stopped without a result\n");
    return EXIT.error;
  } catch (error) {
    err(`mewcode: ${describeError(error)}\n`);
    return EXIT.error;
  } finally {
    transcript.close();
  }
}

function exitFor(
  event: Extract<AgentEvent, { type: "turn-end" }>,
  err: (text: string) => void,
  maxTurns: number | null,
): number {
  const { reason } = event;
  switch (reason) {
    case "end_turn":
    case "unknown_stop_reason":
      return EXIT.ok;
    case "max_turns":
      err(
        `mewcode: Stopped after ${event.turns} model request${
          event.turns === 1 ? "" : "s"
        }: --max-turns ${maxTurns} ` +
          "was reached before the model finished; the task may be incomplete\n",
      );
      return EXIT.maxTurns;
    case "error":
      // The error event already printed the message.
      return EXIT.error;
    case "aborted":
      err("mewcode: Interrupted\n");
      return EXIT.interrupted;
    case "refusal":
    case "max_tokens":
      err(`mewcode: ${event.message ?? reason}\n`);
      return EXIT.error;
    default:
      return assertNever(reason);
  }
}

/** Writes what `-p` shows on stderr: errors and warnings always; tool calls, retries and usage with --verbose. */
class Reporter {
  #verbose: boolean;
  #err: (text: string) => void;

  constructor(verbose: boolean, err: (text: string) => void) {
    this.#verbose = verbose;
    this.#err = err;
  }

  report(event: AgentEvent): void {
    switch (event.type) {
      case "error":
        this.#err(`mewcode: ${event.message}\n`);
        return;
      case "warning":
        // Warnings always reach stderr: a script's log should show what the sandbox stopped or undid.
        this.#err(`mewcode: warning: ${event.message}\n`);
        return;
      case "retry":
        if (this.#verbose) {
          this.#err(`[retry] attempt ${event.attempt} in ${Math.round(event.delayMs)} ms: ${event.reason}\n`);
        }
        return;
      case "tool-call-start":
        if (this.#verbose) {
          this.#err(`[tool] ${event.name} ${shorten(JSON.stringify(event.input) ?? "", 160)}\n`);
        }
        return;
      case "tool-call-end": {
        if (!this.#verbose) return;
        const outcome = event.result.isError
          ? `error: ${shorten(firstLine(event.result.content), 200)}`
          : "ok";
        this.#err(`[tool] ${event.name} ${event.status} in ${Math.round(event.durationMs)} ms: ${outcome}\n`);
        return;
      }
      case "turn-end":
        if (this.#verbose) {
          const totals = event.totals;
          this.#err(
            `[usage] ${totals.inputTokens} input, ${totals.outputTokens} output tokens ` +
              `(cache: ${totals.cacheReadInputTokens} read, ${totals.cacheCreationInputTokens} written) ` +
              `over ${totals.requests} request${totals.requests === 1 ? "" : "s"}\n`,
          );
        }
        return;
      case "request-start":
      case "request-end":
      case "text-delta":
      case "thinking-delta":
      case "usage":
        return;
      default:
        assertNever(event);
    }
  }
}

async function readPrompt(stdin: PromptSource): Promise<string | null> {
  if (stdin.isTerminal()) return null;
  return await new Response(stdin.readable).text();
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

function shorten(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function writeAllSync(target: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += target.writeSync(bytes.subarray(written));
}
