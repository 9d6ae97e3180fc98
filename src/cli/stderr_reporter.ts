/**
 * What one-shot mode shows on standard error as a run goes, line by line: errors, warnings and each
 * denied action with what would allow it, always (a script's log must show them); with `--verbose`, each
 * tool call with its outcome, the model's intermediate text, retries and usage. A consumer of AgentEvents.
 *
 * Everything that came from the model or the API is made safe for a terminal first (no escapes).
 *
 * @module
 */
import type { AgentEvent } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";
import { sanitizeLines } from "./_terminal_text.ts";
import { callArgument } from "./call_label.ts";

/** Writes the run's events for people, one line at a time (a status line, when shown, stays below them). */
export class StderrReporter {
  #verbose: boolean;
  #line: (text: string) => void;

  /** `line` writes one line (ending in "\n") to standard error. */
  constructor(verbose: boolean, line: (text: string) => void) {
    this.#verbose = verbose;
    this.#line = line;
  }

  report(event: AgentEvent): void {
    switch (event.type) {
      case "error":
        this.#say(`mewcode: ${event.message}`);
        return;
      case "warning":
        // Warnings always reach stderr: a script's log should show what the sandbox stopped or undid.
        this.#say(`mewcode: warning: ${event.message}`);
        return;
      case "retry":
        if (this.#verbose) {
          this.#say(
            `[retry] attempt ${event.attempt + 1} in ${Math.round(event.delayMs)} ms: ${event.reason}`,
          );
        }
        return;
      case "request-end":
        if (this.#verbose) this.#intermediateText(event.content);
        return;
      case "tool-call-start":
        if (this.#verbose) {
          this.#say(`[tool] ${event.name} ${shorten(JSON.stringify(event.input) ?? "", 160)}`);
        }
        return;
      case "tool-call-end":
        this.#toolCallEnd(event);
        return;
      case "turn-end":
        if (this.#verbose) {
          const totals = event.totals;
          this.#say(
            `[usage] ${totals.inputTokens} input, ${totals.outputTokens} output tokens ` +
              `(cache: ${totals.cacheReadInputTokens} read, ${totals.cacheCreationInputTokens} written) ` +
              `over ${totals.requests} request${totals.requests === 1 ? "" : "s"}`,
          );
        }
        return;
      case "compaction": {
        // Always: it changes what the model knows of the conversation.
        const count = event.removedMessages;
        this.#say(`mewcode: compacted ${count} earlier message${count === 1 ? "" : "s"} into a summary`);
        return;
      }
      case "user-message":
      case "compaction-start":
      case "request-start":
      case "text-delta":
      case "thinking-delta":
      case "usage":
      case "tool-results":
        return;
      default:
        assertNever(event);
    }
  }

  /** Writes a line for people that is not an event (the transcript's path, the end of a run). */
  say(text: string): void {
    this.#say(text);
  }

  #toolCallEnd(event: Extract<AgentEvent, { type: "tool-call-end" }>): void {
    const { denial } = event.outcome;
    if (event.outcome.status === "denied" && denial !== undefined) {
      // Always: a denied action is work the user asked for that did not happen.
      const argument = callArgument(event.name, event.input);
      const what = argument === null ? event.name : `${event.name} ${shorten(argument.text, 120)}`;
      const hint = denial.hint === null
        ? denial.reason
        : denial.hint.startsWith("--")
        ? `run with ${denial.hint}`
        : denial.hint;
      this.#say(`mewcode: warning: ${what} was not allowed: ${hint}`);
    }
    if (!this.#verbose) return;
    // A command that ran but failed is not "ok": its exit code says so.
    const exit = event.result.metadata.exitCode;
    const detail = event.result.isError
      ? `error: ${shorten(firstLine(event.result.content), 200)}`
      : typeof exit === "number" && exit !== 0
      ? `exit code ${exit}`
      : "ok";
    const ms = Math.round(event.durationMs);
    this.#say(`[tool] ${event.name} ${event.outcome.status} in ${ms} ms: ${detail}`);
  }

  /** The text of a response that goes on to call tools: the model saying what it is doing. */
  #intermediateText(content: Extract<AgentEvent, { type: "request-end" }>["content"]): void {
    if (!content.some((block) => block.type === "tool-use")) return;
    for (const block of content) {
      if (block.type === "text" && block.text.trim() !== "") this.#say(`[model] ${block.text.trim()}`);
    }
  }

  #say(text: string): void {
    // Line by line, so that a multi-line message keeps its lines but no line carries an escape.
    this.#line(`${sanitizeLines(text)}\n`);
  }
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

function shorten(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
