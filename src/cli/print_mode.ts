/**
 * One-shot mode (`mewcode -p`, or a prompt with no terminal): one prompt run to completion, the result on
 * stdout in the chosen format, people's information on stderr, and an exit status scripts can branch on
 * (_print_run.ts reports the run).
 *
 * No one is there to approve anything, so an "ask" that no approval command answers is a denial the model
 * sees with its reason; the run then exits 55 so a script knows work was left undone.
 *
 * What only some runs need is loaded when they need it (`--json-schema`'s validator, a session to
 * continue), and what reports the run once its first request is on its way: the first model request waits
 * for nothing else.
 *
 * @module
 */
import { lazyImport, lazyModule } from "../common/lazy_import.ts";
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
import { type PromptInput, type PromptSource, readPromptInput, type StdinLimits } from "./prompt_input.ts";
import { type PreparedRun, prepareRun } from "./_run_setup.ts";
import type { OutputTarget, ReportContext } from "./_print_run.ts";

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
    return await usageFailure(error, err);
  }
  const target: OutputTarget = {
    options,
    output,
    stdoutIsTerminal: input.stdoutIsTerminal ?? Deno.stdout.isTerminal(),
  };
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
    return await usageFailure(error, err);
  }
  if (promptInput === "aborted") {
    const signal = input.interruption?.received ?? null;
    err(
      `mewcode: ${
        signal === null ? "Interrupted" : `Interrupted by ${signal}`
      } while reading standard input\n`,
    );
    return (await loadRunOutput()).finishBeforeStart(
      { target, startedAt, sessionId: prepared.session.resume?.id ?? "" },
      {
        reason: "aborted",
        message: "The run was interrupted while it read its prompt from standard input",
        signal,
      },
    );
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
  const warn = async (notices: readonly string[]) => {
    if (notices.length === 0) return;
    const { sanitizeLines } = await loadTerminalText();
    for (const notice of notices) err(`${sanitizeLines(`mewcode: warning: ${notice}`)}\n`);
  };
  await warn([...promptInput.notices, ...prepared.notices]);

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
      return await usageFailure(error, err);
    }
    // The run never started (no API key, a session id in use): still a result a script can read.
    return (await loadRunOutput()).finishFailedStart(error, {
      target,
      err,
      startedAt,
      sessionId: prepared.session.resume?.id ?? "",
    });
  }
  try {
    // Only now that this run holds the session: one that another run is using is refused instead, and what
    // its load found (a call of the other run's turn still running) says nothing about it.
    await warn(prepared.resumeNotices);
    const context: ReportContext = {
      session,
      workspace,
      prepared,
      target,
      err,
      stderrIsTerminal,
      interruption: input.interruption,
      startedAt,
      stdinLeft,
    };
    // stream-json's first line (the session, its tools) is written before the run starts, so a stdout that
    // cannot take it stops the run before its first request. The other formats write nothing until the model
    // answers: their report loads while the first request is on its way.
    let report = options.outputFormat === "stream-json"
      ? new (await loadRunOutput()).RunReport(context)
      : null;
    const events = session.run(promptInput.prompt, {
      signal: AbortSignal.any([input.signal, output.closed]),
      ...(prepared.answer === null ? {} : { answer: prepared.answer }),
      // A person at the terminal sees "waiting for the model" as soon as the request is sent.
      watched: stderrIsTerminal && !options.quiet,
    });
    // The run yields its first event once its first request is on its way (open_session.ts).
    const first = events.next();
    await first.catch(() => {});
    report ??= new (await loadRunOutput()).RunReport(context);
    return await report.follow(events, first);
  } finally {
    await session.close();
  }
}

function stdinLeftNotice(waitedMs: number): string {
  return `Standard input sent nothing in ${waitedMs} ms, so the run goes on without it; ` +
    "to wait for piped input however long it takes, pass --wait-for-stdin";
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

/** Standard output that stops taking text at the first write that fails, and says so (`closed`). */
export class ClosableOutput {
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

/** The output side of the run (_print_run.ts), loaded once. */
const loadRunOutput = lazyModule<typeof import("./_print_run.ts")>(
  new URL("./_print_run.ts", import.meta.url),
);

/** The terminal text sanitizer, for the rare run that has warnings before its output side loads. */
function loadTerminalText(): Promise<typeof import("./_terminal_text.ts")> {
  return lazyImport<typeof import("./_terminal_text.ts")>(new URL("./_terminal_text.ts", import.meta.url));
}

/**
 * A usage error on stderr: its message may quote what the workspace's settings hold (a folder to add), shown,
 * never obeyed by the terminal.
 */
async function usageFailure(error: Error, err: (text: string) => void): Promise<number> {
  const { sanitizeLines } = await loadTerminalText();
  err(sanitizeLines(`mewcode: ${error.message}\nRun "mewcode --help" for usage.\n`));
  return EXIT.usage;
}
