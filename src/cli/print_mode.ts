/**
 * `mewcode -p`: one prompt (the argument, or standard input) run to completion; the final answer on
 * stdout; with `--verbose`, tool calls and retries on stderr. No one is there to approve anything, so
 * an "ask" decision is a denial the model sees with its reason.
 *
 * Exit status (see run_summary.ts): 0 success; 1 API or runtime error (message on stderr); 2 usage error;
 * 53 when `--max-turns` stopped the run; 130 when interrupted.
 *
 * @module
 */
import { assertNever, describeError } from "../common/errors.ts";
import { type ExecutorKind, openSession, type Provider, type Session } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import type { CliOptions } from "./args.ts";
import { EXIT } from "./exit_codes.ts";
import { emptyRunSummary, foldRun, type RunSummary } from "./run_summary.ts";
import { sessionOptionsFrom } from "./session_options.ts";
import { StderrReporter } from "./stderr_reporter.ts";

/** What `runPrintMode` needs; `provider` and the streams are injectable for tests. */
export interface PrintModeInput {
  /** The workspace: its real path and the other names the user gave it. */
  workspace: Workspace;
  options: CliOptions;
  signal: AbortSignal;
  /** Default: the provider the environment configures. */
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

/** Runs one prompt to completion; returns the exit status. Always closes the session. */
export async function runPrintMode(input: PrintModeInput): Promise<number> {
  const { workspace, options, signal } = input;
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
  let session: Session;
  try {
    session = await openSession({
      ...sessionOptionsFrom(workspace, options, env),
      needsModel: true,
      // No approver: in -p no one can answer, so "ask" is a denial with its reason.
      ...(input.provider === undefined ? {} : { provider: input.provider }),
      ...(input.executor === undefined ? {} : { executor: input.executor }),
    });
  } catch (error) {
    err(`mewcode: ${describeError(error)}\n`);
    return EXIT.error;
  }
  try {
    const reporter = new StderrReporter(options.verbose, err);
    let summary = emptyRunSummary();
    try {
      for await (const event of session.run(prompt, { signal })) {
        reporter.report(event);
        summary = foldRun(summary, event);
      }
    } catch (error) {
      err(`mewcode: ${describeError(error)}\n`);
      return EXIT.error;
    }
    if (summary.stop === null) {
      err("mewcode: The agent stopped without a result\n");
      return EXIT.error;
    }
    if (summary.text !== "" && summary.stop !== "error" && summary.stop !== "aborted") {
      out(summary.text.endsWith("\n") ? summary.text : `${summary.text}\n`);
    }
    if (options.verbose && session.transcriptPath !== null) {
      err(`[session] transcript: ${session.transcriptPath}\n`);
    }
    for (const line of await session.finish()) err(`mewcode: warning: ${line}\n`);
    reportEnd(summary, err, options.maxTurns);
    return summary.exitStatus;
  } finally {
    await session.close();
  }
}

/** The line on stderr that says why a run that did not succeed ended (errors were printed as they came). */
function reportEnd(summary: RunSummary, err: (text: string) => void, maxTurns: number | null): void {
  switch (summary.stop) {
    case "max_turns":
      err(
        `mewcode: Stopped after ${summary.turns} model request${summary.turns === 1 ? "" : "s"}: ` +
          `--max-turns ${maxTurns} was reached before the model finished; the task may be incomplete\n`,
      );
      return;
    case "aborted":
      err("mewcode: Interrupted\n");
      return;
    case "refusal":
    case "max_tokens":
      err(`mewcode: ${summary.message ?? summary.stop}\n`);
      return;
    // A normal end, or an error already printed as it came.
    case "end_turn":
    case "unknown_stop_reason":
    case "error":
    case null:
      return;
    default:
      return assertNever(summary.stop);
  }
}

async function readPrompt(stdin: PromptSource): Promise<string | null> {
  if (stdin.isTerminal()) return null;
  return await new Response(stdin.readable).text();
}

function writeAllSync(target: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += target.writeSync(bytes.subarray(written));
}
