/**
 * The live status line of `-p` on a terminal: one line on standard error, redrawn in place and erased at the
 * end, showing a spinner, the elapsed time and what the run is doing now (waiting for the model, thinking,
 * writing, the running tool and what it works on, a retry counting down). A consumer of AgentEvents.
 *
 * The caller creates it only when standard error is a terminal and neither `--verbose` nor `--quiet` is set,
 * and sends every other line it writes to standard error through `printAbove`.
 *
 * @module
 */
import type { AgentEvent } from "../agent/events.ts";
import { assertNever } from "../common/errors.ts";
import { cut, displayWidth, type Keep, sanitize } from "./_terminal_text.ts";
import { callArgument } from "./call_label.ts";

/** Carriage return, then clear the whole line: what both erasing and redrawing start with. */
const ERASE = "\r\x1b[2K";
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
const DEFAULT_INTERVAL_MS = 100;
const DEFAULT_COLUMNS = 80;
const SEPARATOR = " · ";
/** The fewest cells a tool's argument or a retry's reason keeps before the end of the line is cut instead. */
const MIN_DETAIL_WIDTH = 12;

/** Where the status line writes, and how it measures the terminal and time. */
export interface StatusLineOptions {
  /** Writes raw text to standard error. */
  write: (text: string) => void;
  /** The terminal's width in columns, asked at every redraw; defaults to the console's size, or 80. */
  columns?: () => number;
  /** The clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
  /** How often the spinner, the elapsed time and a retry's countdown are redrawn; 100 ms by default. */
  intervalMs?: number;
}

/** What the run is doing when no tool call is running. */
type Activity =
  | { status: "waiting" }
  | { status: "thinking" }
  | { status: "writing" }
  /** A request ended; its tool calls are being prepared, or the next request. */
  | { status: "working" }
  /** A summary request replaces the older turns of the conversation. */
  | { status: "compacting" }
  | { status: "retrying"; attempt: number; reason: string; until: number };

/** A line whose `detail` gives way first when the terminal is too narrow for all of it. */
interface LineParts {
  before: string;
  detail: string;
  keep: Keep;
  after: string;
}

/** One live line on standard error that shows what a run is doing; `stop()` (or `turn-end`) erases it. */
export class StatusLine {
  #write: (text: string) => void;
  #columns: () => number;
  #now: () => number;
  #intervalMs: number;
  #startedAt: number;
  #timer: ReturnType<typeof setInterval>;
  #activity: Activity = { status: "waiting" };
  /** Running calls by id, in the order they started. */
  #running = new Map<string, { name: string; input: unknown }>();
  #turn = 0;
  #toolCallsDone = 0;
  /** The line as last drawn, or null when none is on the screen. */
  #shown: string | null = null;
  #stopped = false;
  #hidden = false;

  /** Draws the line at once and starts redrawing it every `intervalMs`. */
  constructor(options: StatusLineOptions) {
    const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new RangeError(
        `Cannot start the status line: intervalMs must be a positive number, got ${intervalMs}`,
      );
    }
    this.#write = options.write;
    this.#columns = options.columns ?? consoleColumns;
    this.#now = options.now ?? Date.now;
    this.#intervalMs = intervalMs;
    this.#startedAt = this.#now();
    this.#timer = setInterval(() => this.redraw(), intervalMs);
    // The line is decoration: it must never keep a finished process alive.
    Deno.unrefTimer(this.#timer);
    this.redraw();
  }

  /** Updates what the line shows from one event and redraws it; `turn-end` stops it. */
  report(event: AgentEvent): void {
    if (this.#stopped) return;
    this.#apply(event);
    this.redraw();
  }

  /** Writes a line of its own (a newline is added if missing) above the status line, then redraws. */
  printAbove(text: string): void {
    const ended = text.endsWith("\n") ? text : `${text}\n`;
    if (this.#stopped || this.#hidden) {
      this.#write(ended);
      return;
    }
    const line = this.#render();
    this.#write(`${ERASE}${ended}${ERASE}${line}`);
    this.#shown = line;
  }

  /** Draws the line now if it changed (the timer calls this for the spinner, the clock and countdowns). */
  redraw(): void {
    if (this.#stopped || this.#hidden) return;
    const line = this.#render();
    if (line === this.#shown) return;
    this.#write(`${ERASE}${line}`);
    this.#shown = line;
  }

  /** Erases the line and draws nothing until `show()`; what is reported meanwhile is kept. */
  hide(): void {
    if (this.#stopped || this.#hidden) return;
    this.#hidden = true;
    if (this.#shown !== null) this.#write(ERASE);
    this.#shown = null;
  }

  /** Draws the line again after `hide()`. */
  show(): void {
    if (!this.#hidden) return;
    this.#hidden = false;
    this.redraw();
  }

  /** Stops the timer and erases the line; later calls write nothing except `printAbove` text. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    if (this.#shown !== null) this.#write(ERASE);
    this.#shown = null;
  }

  /** Stops the line, so that `using line = new StatusLine(…)` cannot leak its timer. */
  [Symbol.dispose](): void {
    this.stop();
  }

  #apply(event: AgentEvent): void {
    switch (event.type) {
      case "request-start":
        this.#turn = event.turn;
        this.#activity = { status: "waiting" };
        return;
      case "thinking-delta":
        this.#activity = { status: "thinking" };
        return;
      case "text-delta":
        this.#activity = { status: "writing" };
        return;
      case "retry":
        // A retry discards what the response delivered, calls included; their ends may never come.
        this.#running.clear();
        this.#activity = {
          status: "retrying",
          attempt: event.attempt,
          reason: event.reason,
          until: this.#now() + event.delayMs,
        };
        return;
      case "request-end":
      case "compaction":
        this.#activity = { status: "working" };
        return;
      case "compaction-start":
        this.#activity = { status: "compacting" };
        return;
      case "tool-call-start":
        this.#running.set(event.id, { name: event.name, input: event.input });
        return;
      case "tool-call-end":
        this.#running.delete(event.id);
        this.#toolCallsDone++;
        return;
      case "turn-end":
        this.stop();
        return;
      case "user-message":
      case "usage":
      case "tool-results":
      case "warning":
      case "error":
        // Warnings and errors are lines of their own: the caller prints them with printAbove.
        return;
      default:
        assertNever(event);
    }
  }

  #render(): string {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#startedAt);
    const frame = SPINNER[Math.floor(elapsed / this.#intervalMs) % SPINNER.length];
    const doing = this.#describeNow(now);
    return fitLine({
      before: `${frame} ${formatDuration(elapsed)}${SEPARATOR}${sanitize(doing.before)}`,
      detail: sanitize(doing.detail),
      keep: doing.keep,
      after: sanitize(doing.after) + this.#counts(),
    }, lineWidth(this.#columns()));
  }

  #describeNow(now: number): LineParts {
    let latest: { name: string; input: unknown } | undefined;
    for (const call of this.#running.values()) latest = call;
    if (latest !== undefined) return describeCall(latest.name, latest.input, this.#running.size - 1);
    return describeActivity(this.#activity, now);
  }

  #counts(): string {
    let text = "";
    if (this.#turn > 0) text += `${SEPARATOR}turn ${this.#turn}`;
    if (this.#toolCallsDone > 0) {
      text += `${SEPARATOR}${this.#toolCallsDone} tool call${this.#toolCallsDone === 1 ? "" : "s"}`;
    }
    return text;
  }
}

/** Formats a duration, rounded down to whole units: `12s`, `1m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${twoDigits(seconds % 60)}s`;
  return `${Math.floor(minutes / 60)}h${twoDigits(minutes % 60)}m`;
}

function twoDigits(value: number): string {
  return String(value).padStart(2, "0");
}

function plain(text: string): LineParts {
  return { before: text, detail: "", keep: "start", after: "" };
}

function describeCall(name: string, input: unknown, others: number): LineParts {
  const more = others > 0 ? ` +${others} more` : "";
  const argument = callArgument(name, input);
  if (argument === null) return { ...plain(name), after: more };
  return { before: `${name} `, detail: argument.text, keep: argument.keep, after: more };
}

function describeActivity(activity: Activity, now: number): LineParts {
  switch (activity.status) {
    case "waiting":
      return plain("waiting for the model");
    case "thinking":
      return plain("thinking");
    case "writing":
      return plain("writing");
    case "working":
      return plain("working");
    case "compacting":
      return plain("compacting the conversation");
    case "retrying": {
      // The event's attempt is the one that failed; the line names the one it waits for.
      const next = activity.attempt + 1;
      const remaining = activity.until - now;
      if (remaining <= 0) return plain(`waiting for the model (attempt ${next})`);
      const wait = formatDuration(Math.ceil(remaining / 1000) * 1000);
      return {
        before: "",
        detail: activity.reason,
        keep: "start",
        after: ` — retrying in ${wait} (attempt ${next})`,
      };
    }
    default:
      return assertNever(activity);
  }
}

function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return DEFAULT_COLUMNS;
  }
}

/** The cells the line may use: one less than the terminal, so that it never reaches the wrapping column. */
function lineWidth(columns: number): number {
  const usable = Number.isFinite(columns) && columns >= 1 ? Math.floor(columns) : DEFAULT_COLUMNS;
  return Math.max(1, usable - 1);
}

/** Cuts a line to `width` cells: its detail first, down to a few cells, then its end. */
function fitLine(parts: LineParts, width: number): string {
  const whole = parts.before + parts.detail + parts.after;
  if (displayWidth(whole) <= width) return whole;
  const room = width - displayWidth(parts.before) - displayWidth(parts.after);
  if (room >= MIN_DETAIL_WIDTH) return parts.before + cut(parts.detail, room, parts.keep) + parts.after;
  return cut(parts.before + cut(parts.detail, MIN_DETAIL_WIDTH, parts.keep) + parts.after, width, "start");
}
