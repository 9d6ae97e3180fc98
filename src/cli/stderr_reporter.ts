/**
 * What `-p` shows on standard error as a run goes: errors and warnings always; with `--verbose`, each tool
 * call with its outcome, retries and usage. A consumer of AgentEvents.
 *
 * @module
 */
import type { AgentEvent } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";

/** Writes the run's events for people on standard error. */
export class StderrReporter {
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
        const detail = event.result.isError
          ? `error: ${shorten(firstLine(event.result.content), 200)}`
          : "ok";
        // A command that ran but failed is not "ok": its exit code says so.
        const exit = event.result.metadata.exitCode;
        const code = typeof exit === "number" && exit !== 0 ? ` (exit code ${exit})` : "";
        const ms = Math.round(event.durationMs);
        this.#err(`[tool] ${event.name} ${event.outcome.status}${code} in ${ms} ms: ${detail}\n`);
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
      case "user-message":
      case "request-start":
      case "request-end":
      case "text-delta":
      case "thinking-delta":
      case "usage":
      case "tool-results":
        return;
      default:
        assertNever(event);
    }
  }
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

function shorten(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
