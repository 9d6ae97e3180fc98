/**
 * One-shot mode (`mewcode -p`, or a prompt with no terminal): one prompt run to completion, the result on
 * stdout in the chosen format (output_format.ts), people's information on stderr (a live status line on a
 * terminal, or with `--verbose` every call; warnings and denials always), and an exit status scripts can
 * branch on (run_summary.ts decides it).
 *
 * No one is there to approve anything, so an "ask" that no approval command answers is a denial the model
 * sees with its reason; the run then exits 55 so a script knows work was left undone.
 *
 * What only some runs need is loaded when they need it (`--json-schema`'s validator, a session to
 * continue): the first model request waits for nothing else.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };
import type { AgentEvent } from "../agent/events.ts";
import { assertNever, describeError } from "../common/errors.ts";
import { errorCategory } from "../llm/errors.ts";
import { formatUsd } from "../llm/prices.ts";
import {
  AdditionalDirectoryError,
  type ExecutorKind,
  openSession,
  type Provider,
  type Session,
} from "../session/session.ts";
import { SessionExistsError } from "../session/transcript.ts";
import type { Workspace } from "../session/workspace.ts";
import { type CliOptions, UsageError } from "./args.ts";
import { EXIT, type InterruptSignal } from "./exit_codes.ts";
import { OutputWriter } from "./output_format.ts";
import { type PromptInput, type PromptSource, readPromptInput, type StdinLimits } from "./prompt_input.ts";
import {
  emptyRunSummary,
  foldRun,
  type RunSummary,
  type RunVerdict,
  unansweredAdvice,
  unansweredApprovals,
  verdictOf,
} from "./run_summary.ts";
import { type PreparedRun, prepareRun } from "./_run_setup.ts";
import { StatusLine } from "./status_line.ts";
import { StderrReporter } from "./stderr_reporter.ts";
import { sanitizeLines } from "./_terminal_text.ts";

export type { PromptSource };

/** What `runPrintMode` needs; everything after `signal` is injectable for tests. */
export interface PrintModeInput {
  /** The workspace: its real path and the other names the user gave it. */
  workspace: Workspace;
  options: CliOptions;
  signal: AbortSignal;
  /** Which signal aborted `signal`, when one did (SIGTERM exits 143, SIGINT 130, SIGHUP 129). */
  interruption?: { readonly received: InterruptSignal | null };
  /** Default: the provider the environment configures. */
  provider?: Provider;
  /** Default: the process environment. */
  env?: Record<string, string>;
  /** Default: the process's stdin. */
  stdin?: PromptSource;
  stdinLimits?: StdinLimits;
  /** Where tools run; default "worker" (the sandbox). Unit tests use "direct". */
  executor?: ExecutorKind;
  /** Default: the process's stdout and stderr. */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Whether stderr is a terminal, for the status line; default: asks the process's stderr. */
  stderrIsTerminal?: boolean;
  /** Whether stdout is a terminal, where the text answer's controls are shown, not obeyed; default: asks. */
  stdoutIsTerminal?: boolean;
}

/** Runs one prompt to completion; returns the exit status. Always closes the session. */
export async function runPrintMode(input: PrintModeInput): Promise<number> {
  const startedAt = Date.now();
  const { workspace, options } = input;
  const env = input.env ?? Deno.env.toObject();
  // Output that cannot be written (its reader stopped, as `| head` does; a full disk) stops the run: no one
  // would see the rest, and the model would go on spending and acting for no one.
  const output = new ClosableOutput(input.stdout ?? ((text: string) => writeAllSync(Deno.stdout, text)));
  const out = (text: string) => output.write(text);
  const err = input.stderr ?? ((text: string) => {
    try {
      writeAllSync(Deno.stderr, text);
    } catch {
      // Standard error is gone as well: nothing is left to tell.
    }
  });
  const command = options.command;
  if (command.kind !== "prompt") throw new TypeError("runPrintMode needs the prompt command");

  let prepared: PreparedRun;
  try {
    prepared = await prepareRun(workspace, options, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(sanitizeLines(`mewcode: ${error.message}\nRun "mewcode --help" for usage.\n`));
    return EXIT.usage;
  }
  const writer = new OutputWriter(options.outputFormat, {
    includePartialMessages: options.includePartialMessages,
    write: out,
    terminal: input.stdoutIsTerminal ?? Deno.stdout.isTerminal(),
  });
  // Reading stdin may take long (a slow command piped in, --wait-for-stdin): a signal stops it there too,
  // or `timeout 60 mewcode -p …` would wait for the pipe's end rather than end at its SIGTERM.
  let promptInput: PromptInput | null | "aborted";
  try {
    promptInput = await untilAborted(
      readPromptInput(command.prompt, input.stdin ?? Deno.stdin, {
        ...input.stdinLimits,
        wait: options.waitForStdin,
      }),
      input.signal,
    );
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(sanitizeLines(`mewcode: ${error.message}\nRun "mewcode --help" for usage.\n`));
    return EXIT.usage;
  }
  if (promptInput === "aborted") {
    const signal = input.interruption?.received ?? null;
    err(
      `mewcode: ${
        signal === null ? "Interrupted" : `Interrupted by ${signal}`
      } while reading standard input\n`,
    );
    return finishBeforeStart({ writer, startedAt, sessionId: prepared.session.resume?.id ?? "" }, {
      reason: "aborted",
      message: "The run was interrupted while it read its prompt from standard input",
      signal,
    });
  }
  if (promptInput === null) {
    err(
      'mewcode: Missing the prompt: pass it after -p or on standard input\nRun "mewcode --help" for usage.\n',
    );
    return EXIT.usage;
  }
  const stderrIsTerminal = input.stderrIsTerminal ?? Deno.stderr.isTerminal();
  const stdinLeft = promptInput.stdinLeft;
  // Someone at a terminal who piped a slow command in is told at once; a script's log only when the input
  // it left does come (an inherited pipe that stays silent is the common case there, and no news).
  if (stdinLeft !== undefined && stderrIsTerminal) {
    promptInput.notices.push(stdinLeftNotice(stdinLeft.waitedMs));
  }
  // Settings warnings quote the repository's files: shown, never obeyed by the terminal.
  const warn = (notices: readonly string[]) => {
    for (const notice of notices) err(`${sanitizeLines(`mewcode: warning: ${notice}`)}\n`);
  };
  warn([...promptInput.notices, ...prepared.notices]);

  let session: Session;
  try {
    session = await openSession({
      ...prepared.setup.options,
      needsModel: true,
      headless: true,
      ...prepared.session,
      // No approver: in -p no one can answer, so "ask" is a denial with its reason.
      ...(input.provider === undefined ? {} : { provider: input.provider }),
      ...(input.executor === undefined ? {} : { executor: input.executor }),
    });
  } catch (error) {
    // A taken --session-id is the counterpart of an unknown --resume id: the command line is wrong.
    if (error instanceof AdditionalDirectoryError || error instanceof SessionExistsError) {
      // The folder may come from the workspace's (trusted) settings: its name is shown, never obeyed.
      err(sanitizeLines(`mewcode: ${error.message}\nRun "mewcode --help" for usage.\n`));
      return EXIT.usage;
    }
    // The run never started (no API key, a session id in use): still a result a script can read.
    return finishFailedStart(error, { writer, err, startedAt, sessionId: prepared.session.resume?.id ?? "" });
  }
  // Only now that this run holds the session: one that another run is using is refused instead, and what
  // its load found (a call of the other run's turn still running) says nothing about it.
  warn(prepared.resumeNotices);
  try {
    const status = options.verbose || options.quiet || !stderrIsTerminal
      ? null
      : new StatusLine({ write: err });
    const reporter = new StderrReporter(
      options.verbose,
      status === null ? err : (text) => status.printAbove(text),
    );
    writer.start({
      sessionId: session.id,
      model: prepared.model,
      cwd: workspace.root,
      tools: session.offeredTools().map((tool) => tool.name),
      permissionMode: prepared.setup.options.permissionMode,
      sandboxMode: prepared.setup.options.sandbox,
      version: denoConfig.version,
      transcriptPath: session.transcriptPath,
    });
    let summary = emptyRunSummary();
    let running = true;
    if (stdinLeft !== undefined && !stderrIsTerminal) {
      void stdinLeft.sent.then((sent) => {
        if (sent && running) reporter.say(`mewcode: warning: ${lateStdinNotice(stdinLeft.waitedMs)}`);
      });
    }
    try {
      const run = session.run(promptInput.prompt, {
        signal: AbortSignal.any([input.signal, output.closed]),
        ...(prepared.answer === null ? {} : { answer: prepared.answer }),
      });
      for await (const event of run) {
        status?.report(event);
        reporter.report(event);
        writer.event(event);
        summary = foldRun(summary, event);
      }
    } catch (error) {
      // A bug, not an API error (those end the run with an error event): report it, keep the contract.
      summary = foldRun(summary, internalError(error));
      reporter.report(internalError(error));
    } finally {
      running = false;
      status?.stop();
    }
    for (const line of await session.finish()) reporter.say(`mewcode: warning: ${line}`);
    const verdict = verdictOf(summary, {
      signal: input.interruption?.received ?? null,
      structuredOutputFailed: prepared.answer !== null && summary.answer === undefined,
    });
    writer.finish({
      sessionId: session.id,
      summary,
      verdict,
      durationMs: Date.now() - startedAt,
      costUsd: summary.costUsd,
      ...(summary.answer === undefined ? {} : { structuredOutput: summary.answer }),
    });
    if (options.verbose && session.transcriptPath !== null) {
      reporter.say(`[session] transcript: ${session.transcriptPath}`);
    }
    if (output.failure !== null) {
      // A reader that stopped reading chose to: like any Unix tool, exit 141 (SIGPIPE's) and say nothing.
      if (output.failure instanceof Deno.errors.BrokenPipe) return EXIT.outputClosed;
      reporter.say(
        `mewcode: Cannot write to standard output: ${describeError(output.failure)}; the run was stopped`,
      );
      return EXIT.error;
    }
    const end = endMessage(summary, verdict, options, input.interruption?.received ?? null);
    if (end !== null) reporter.say(`mewcode: ${end}`);
    return verdict.exitStatus;
  } finally {
    await session.close();
  }
}

function stdinLeftNotice(waitedMs: number): string {
  return `Standard input sent nothing in ${waitedMs} ms, so the run goes on without it; ` +
    "to wait for piped input however long it takes, pass --wait-for-stdin";
}

function lateStdinNotice(waitedMs: number): string {
  return `Standard input began to send after its first ${waitedMs} ms of silence, when the run ` +
    "had started without it: what it sends is not read; to wait for piped input, pass --wait-for-stdin";
}

/** A session that could not open: the error on stderr, and the result a script reads on stdout. */
function finishFailedStart(
  error: unknown,
  context: { writer: OutputWriter; err: (text: string) => void; startedAt: number; sessionId: string },
): number {
  context.err(sanitizeLines(`mewcode: ${describeError(error)}\n`));
  return finishBeforeStart(context, { reason: "error", message: describeError(error), error });
}

/** The result of a run that ended before its first request (its reason on stderr already); its exit status. */
function finishBeforeStart(
  context: { writer: OutputWriter; startedAt: number; sessionId: string },
  end:
    | { reason: "error"; message: string; error: unknown }
    | { reason: "aborted"; message: string; signal: InterruptSignal | null },
): number {
  const start = end.reason === "error"
    ? foldRun(emptyRunSummary(), internalError(end.error))
    : emptyRunSummary();
  const summary = foldRun(start, {
    type: "turn-end",
    reason: end.reason,
    turns: 0,
    text: "",
    message: end.message,
    totals: emptyRunSummary().usage,
    costUsd: null,
    durationMs: 0,
  });
  const verdict = verdictOf(summary, { signal: end.reason === "aborted" ? end.signal : null });
  context.writer.finish({
    sessionId: context.sessionId,
    summary,
    verdict,
    durationMs: Date.now() - context.startedAt,
    costUsd: null,
  });
  return verdict.exitStatus;
}

/**
 * The promise's value, or "aborted" once `signal` aborts first (the promise itself runs on: a read of
 * standard input cannot be cancelled, and the process ends with `Deno.exit`).
 */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | "aborted"> {
  if (signal.aborted) return "aborted";
  let listener = () => {};
  const aborted = new Promise<"aborted">((resolve) => {
    listener = () => resolve("aborted");
    signal.addEventListener("abort", listener, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", listener);
  }
}

function internalError(error: unknown): Extract<AgentEvent, { type: "error" }> {
  return {
    type: "error",
    turn: 0,
    name: error instanceof Error ? error.name : "Error",
    message: describeError(error),
    category: errorCategory(error),
    error,
  };
}

/** The line on stderr that says why a run that did not succeed ended (errors were printed as they came). */
function endMessage(
  summary: RunSummary,
  verdict: RunVerdict,
  options: CliOptions,
  signal: InterruptSignal | null,
): string | null {
  const requests = `${summary.turns} model request${summary.turns === 1 ? "" : "s"}`;
  switch (verdict.subtype) {
    case "success":
    case "error_api":
    case "error_auth":
      return null;
    case "error_max_turns":
      return `Stopped after ${requests}: --max-turns ${options.maxTurns} was reached before the model ` +
        "finished; the task may be incomplete";
    case "error_max_budget":
      return `Stopped after ${requests}: the run cost ${formatUsd(summary.costUsd ?? 0)}, reaching ` +
        `--max-budget-usd ${options.maxBudgetUsd} before the model finished; the task may be incomplete`;
    case "error_permission": {
      const count = unansweredApprovals(summary);
      return `${count} action${
        count === 1 ? "" : "s"
      } needed an approval that no one could give, so the task ` +
        `may be incomplete: ${
          unansweredAdvice(
            summary,
            "the warnings above",
            "the warnings above name the flag or rule that would allow each",
          )
        }`;
    }
    case "interrupted":
      return signal === null ? "Interrupted" : `Interrupted by ${signal}`;
    case "error_structured_output":
    case "error_during_execution":
      // An error, or a warning with the same words (a cut-off answer), was printed as it came.
      if (summary.error !== null || summary.message === null) return null;
      return summary.warnings.includes(summary.message) ? null : summary.message;
    default:
      return assertNever(verdict.subtype);
  }
}

/** Standard output that stops taking text at the first write that fails, and says so (`closed`). */
class ClosableOutput {
  readonly #write: (text: string) => void;
  readonly #closed = new AbortController();
  /** The error of the write that failed, or null. */
  failure: unknown = null;

  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /** Aborts once a write failed. */
  get closed(): AbortSignal {
    return this.#closed.signal;
  }

  write(text: string): void {
    if (this.failure !== null) return;
    try {
      this.#write(text);
    } catch (error) {
      this.failure = error;
      this.#closed.abort(new DOMException("standard output was closed", "AbortError"));
    }
  }
}

function writeAllSync(target: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += target.writeSync(bytes.subarray(written));
}
