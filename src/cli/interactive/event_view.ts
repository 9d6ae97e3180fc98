/**
 * How one turn of the interactive session looks: the answer streams as Markdown as it arrives, thinking is
 * collapsed into one dim line, each tool call gets a line when it ends (with the diff of an edit, or the exit
 * code and last lines of a command), and errors, warnings and retries are shown where they happen. Output
 * is append-only; the live status line below it shows what is running.
 *
 * @module
 */
import type { AgentEvent } from "../../agent/events.ts";
import { assertNever } from "../../common/errors.ts";
import type { Usage } from "../../llm/provider.ts";
import { sanitize } from "../_terminal_text.ts";
import { MarkdownStream } from "./markdown.ts";
import type { Screen } from "./screen.ts";
import type { Style } from "./style.ts";
import { finishedToolLines } from "./tool_view.ts";

/** The most of a file read to show the diff of a write. */
const MAX_DIFF_SOURCE_BYTES = 1024 * 1024;

/** What the view needs besides the events. */
export interface EventViewOptions {
  screen: Screen;
  style: Style;
  /** Real path of the workspace root: paths are shown relative to it. */
  root: string;
  /**
   * The text of a file before a call changed it (taken when the call passed its hooks), by call id; null
   * when the file did not exist; undefined when it was not taken.
   */
  before(callId: string): string | null | undefined;
}

/** What a turn came to, for the footer and /cost. */
export interface TurnTotals {
  usage: Usage | null;
  costUsd: number | null;
  /** The prompt size of the last request. */
  contextTokens: number | null;
}

/** Renders the events of one turn. */
export class EventView {
  #options: EventViewOptions;
  #markdown: MarkdownStream | null = null;
  #thinkingStarted: number | null = null;
  #thinkingChars = 0;
  #totals: TurnTotals = { usage: null, costUsd: null, contextTokens: null };

  constructor(options: EventViewOptions) {
    this.#options = options;
  }

  /** What the turn used so far. */
  get totals(): TurnTotals {
    return this.#totals;
  }

  async show(event: AgentEvent): Promise<void> {
    const { screen, style } = this.#options;
    screen.report(event);
    switch (event.type) {
      case "text-delta":
        this.#endThinking();
        this.#stream().push(event.text);
        return;
      case "thinking-delta":
        this.#thinkingStarted ??= Date.now();
        this.#thinkingChars += event.thinking.length;
        return;
      case "request-end":
        this.#endThinking();
        this.#endText();
        return;
      case "retry":
        this.#endText();
        screen.print(`${style.yellow(`↻ ${sanitize(event.reason)}; trying again`)}\n`);
        return;
      case "tool-call-end":
        this.#endText();
        await this.#toolEnd(event);
        return;
      case "usage":
        this.#totals = {
          ...this.#totals,
          usage: event.totals,
          contextTokens: event.usage.inputTokens + event.usage.cacheReadInputTokens +
            event.usage.cacheCreationInputTokens + event.usage.outputTokens,
        };
        return;
      case "warning":
        this.#endText();
        screen.print(`${style.yellow(`⚠ ${sanitize(event.message)}`)}\n`);
        return;
      case "error":
        this.#endText();
        screen.print(`${style.red(`✗ ${sanitize(event.message)}`)}\n`);
        return;
      case "compaction":
        this.#endText();
        screen.print(
          `${
            style.dim(
              `⋯ compacted ${event.removedMessages} earlier messages into a summary (${event.trigger})`,
            )
          }\n`,
        );
        return;
      case "turn-end":
        this.#endThinking();
        this.#endText();
        this.#totals = { ...this.#totals, usage: event.totals, costUsd: event.costUsd };
        this.#showEnd(event);
        return;
      case "user-message":
      case "request-start":
      case "tool-call-start":
      case "tool-results":
      case "compaction-start":
        return;
      default:
        assertNever(event);
    }
  }

  #stream(): MarkdownStream {
    this.#markdown ??= new MarkdownStream({
      width: this.#options.screen.columns,
      style: this.#options.style,
      write: (text) => this.#options.screen.print(text),
    });
    return this.#markdown;
  }

  #endText(): void {
    if (this.#markdown === null) return;
    this.#markdown.end();
    this.#markdown = null;
  }

  /** Thinking is shown collapsed: one dim line saying how long and how much. */
  #endThinking(): void {
    if (this.#thinkingStarted === null) return;
    const seconds = ((Date.now() - this.#thinkingStarted) / 1000).toFixed(1);
    const words = Math.max(1, Math.round(this.#thinkingChars / 6));
    this.#options.screen.print(
      `${this.#options.style.dim(`✻ thought for ${seconds} s (~${words} words)`)}\n`,
    );
    this.#thinkingStarted = null;
    this.#thinkingChars = 0;
  }

  async #toolEnd(event: Extract<AgentEvent, { type: "tool-call-end" }>): Promise<void> {
    const { screen, style, root } = this.#options;
    const diff = await this.#diffOf(event);
    const lines = finishedToolLines(
      {
        name: event.name,
        input: event.input,
        result: event.result,
        outcome: event.outcome,
        durationMs: event.durationMs,
      },
      { style, width: screen.columns, root, ...(diff === null ? {} : { diff }) },
    );
    screen.print(`${lines.join("\n")}\n`);
  }

  /** Before and after of a completed WriteFile or EditFile, when the before text was taken. */
  async #diffOf(
    event: Extract<AgentEvent, { type: "tool-call-end" }>,
  ): Promise<{ before: string | null; after: string } | null> {
    if (event.name !== "WriteFile" && event.name !== "EditFile") return null;
    if (event.outcome.status !== "completed") return null;
    const path = (event.input as { path?: unknown } | null)?.path;
    if (typeof path !== "string") return null;
    const before = this.#options.before(event.id);
    if (before === undefined) return null;
    const after = await readText(path);
    return after === null ? null : { before, after };
  }

  #showEnd(event: Extract<AgentEvent, { type: "turn-end" }>): void {
    const { screen, style } = this.#options;
    switch (event.reason) {
      case "end_turn":
      case "error":
        return;
      case "aborted":
        screen.print(`${style.yellow("⊘ interrupted")}\n`);
        return;
      case "max_turns":
      case "max_budget":
      case "refusal":
      case "max_tokens":
      case "model_context_window_exceeded":
      case "unknown_stop_reason":
        screen.print(`${style.yellow(`⊘ ${sanitize(event.message ?? event.reason)}`)}\n`);
        return;
      default:
        assertNever(event.reason);
    }
  }
}

/** A file's text, or null when it is missing or too large to diff. */
export async function readText(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_DIFF_SOURCE_BYTES) return null;
    return new TextDecoder().decode(await Deno.readFile(path));
  } catch {
    return null;
  }
}
