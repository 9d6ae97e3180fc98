/**
 * The output side of a one-shot run (print_mode.ts): the result on stdout in the chosen format
 * (output_format.ts), people's information on stderr (a live status line on a terminal, or with `--verbose`
 * every call; warnings and denials always), and the exit status scripts branch on (run_summary.ts decides
 * it). Loaded once the run's first request is on its way: none of it is needed to send that request, and
 * loading it would delay it.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };
import type { AgentEvent } from "../agent/events.ts";
import { assertNever, describeError } from "../common/errors.ts";
import { errorCategory } from "../llm/errors.ts";
import { formatUsd } from "../llm/prices.ts";
import type { Session } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import type { CliOptions } from "./args.ts";
import { EXIT, type InterruptSignal } from "./exit_codes.ts";
import { OutputWriter } from "./output_format.ts";
import type { PromptInput } from "./prompt_input.ts";
import {
  emptyRunSummary,
  foldRun,
  type RunSummary,
  type RunVerdict,
  unansweredAdvice,
  unansweredApprovals,
  verdictOf,
} from "./run_summary.ts";
import type { PreparedRun } from "./_run_setup.ts";
import { StatusLine } from "./status_line.ts";
import { StderrReporter } from "./stderr_reporter.ts";
import { sanitizeLines } from "./_terminal_text.ts";
import type { ClosableOutput } from "./print_mode.ts";

/** Where a run's result goes: standard output, in the format the options chose. */
export interface OutputTarget {
  options: CliOptions;
  output: ClosableOutput;
  /** Whether stdout is a terminal, where the text answer's controls are shown, not obeyed. */
  stdoutIsTerminal: boolean;
}

/** What a run's report needs: the session, where its output goes, and what the run started with. */
export interface ReportContext {
  session: Session;
  workspace: Workspace;
  prepared: PreparedRun;
  target: OutputTarget;
  err: (text: string) => void;
  stderrIsTerminal: boolean;
  /** Which signal interrupted the run, when one did. */
  interruption: { readonly received: InterruptSignal | null } | undefined;
  startedAt: number;
  /** Standard input left unread at the start: it sent nothing in time. */
  stdinLeft: PromptInput["stdinLeft"];
}

function outputWriter(target: OutputTarget): OutputWriter {
  return new OutputWriter(target.options.outputFormat, {
    includePartialMessages: target.options.includePartialMessages,
    write: (text) => target.output.write(text),
    terminal: target.stdoutIsTerminal,
  });
}

/**
 * The report of one run: made when the run starts (stream-json's first line says what the session is), then
 * `follow`s the run's events to its result.
 */
export class RunReport {
  readonly #context: ReportContext;
  readonly #status: StatusLine | null;
  readonly #reporter: StderrReporter;
  readonly #writer: OutputWriter;
  #summary = emptyRunSummary();
  #running = true;

  constructor(context: ReportContext) {
    this.#context = context;
    const { session, workspace, prepared, target, err, stderrIsTerminal, stdinLeft } = context;
    const { options } = target;
    const status = options.verbose || options.quiet || !stderrIsTerminal
      ? null
      : new StatusLine({ write: err });
    this.#status = status;
    this.#reporter = new StderrReporter(
      options.verbose,
      status === null ? err : (text) => status.printAbove(text),
    );
    this.#writer = outputWriter(target);
    this.#writer.start({
      sessionId: session.id,
      model: prepared.model,
      cwd: workspace.root,
      tools: session.offeredTools().map((tool) => tool.name),
      permissionMode: prepared.setup.options.permissionMode,
      sandboxMode: prepared.setup.options.sandbox,
      version: denoConfig.version,
      transcriptPath: session.transcriptPath,
    });
    if (stdinLeft !== undefined && !stderrIsTerminal) {
      void stdinLeft.sent.then((sent) => {
        if (sent && this.#running) {
          this.#reporter.say(`mewcode: warning: ${lateStdinNotice(stdinLeft.waitedMs)}`);
        }
      });
    }
  }

  /**
   * Reports the run's events as they come, then its result; returns the exit status. `first` is the first
   * step of `events`, asked for already (print_mode.ts sends the run's request before this module loads).
   */
  async follow(
    events: AsyncGenerator<AgentEvent>,
    first: Promise<IteratorResult<AgentEvent>>,
  ): Promise<number> {
    const { session, prepared, target, startedAt, interruption } = this.#context;
    const { options, output } = target;
    const reporter = this.#reporter;
    try {
      for (let step = await first; !step.done; step = await events.next()) {
        const event = step.value;
        this.#status?.report(event);
        reporter.report(event);
        this.#writer.event(event);
        this.#summary = foldRun(this.#summary, event);
      }
    } catch (error) {
      // A bug, not an API error (those end the run with an error event): report it, keep the contract.
      this.#summary = foldRun(this.#summary, internalError(error));
      reporter.report(internalError(error));
    } finally {
      this.#running = false;
      this.#status?.stop();
    }
    const summary = this.#summary;
    for (const line of await session.finish()) reporter.say(`mewcode: warning: ${line}`);
    const verdict = verdictOf(summary, {
      signal: interruption?.received ?? null,
      structuredOutputFailed: prepared.answer !== null && summary.answer === undefined,
    });
    this.#writer.finish({
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
    const end = endMessage(summary, verdict, options, interruption?.received ?? null);
    if (end !== null) reporter.say(`mewcode: ${end}`);
    return verdict.exitStatus;
  }
}

function lateStdinNotice(waitedMs: number): string {
  return `Standard input began to send after its first ${waitedMs} ms of silence, when the run ` +
    "had started without it: what it sends is not read; to wait for piped input, pass --wait-for-stdin";
}

/** A session that could not open: the error on stderr, and the result a script reads on stdout. */
export function finishFailedStart(
  error: unknown,
  context: { target: OutputTarget; err: (text: string) => void; startedAt: number; sessionId: string },
): number {
  context.err(sanitizeLines(`mewcode: ${describeError(error)}\n`));
  return finishBeforeStart(context, { reason: "error", message: describeError(error), error });
}

/** The result of a run that ended before its first request (its reason on stderr already); its exit status. */
export function finishBeforeStart(
  context: { target: OutputTarget; startedAt: number; sessionId: string },
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
  outputWriter(context.target).finish({
    sessionId: context.sessionId,
    summary,
    verdict,
    durationMs: Date.now() - context.startedAt,
    costUsd: null,
  });
  return verdict.exitStatus;
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
