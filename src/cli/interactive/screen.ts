/**
 * The interactive session's output and key handling during a turn. The terminal stays in raw mode for the
 * whole session (Esc must reach us while a turn runs), so every line feed is written as CR LF; output is
 * append-only, printed above one live status line (spinner, elapsed time, the running tool), and keys are
 * read by one loop that hands each to whoever listens now: an approval question, or the turn's Esc/Ctrl-C.
 *
 * @module
 */
import type { AgentEvent } from "../../agent/events.ts";
import { StatusLine } from "../status_line.ts";
import type { KeyEvent } from "./keys.ts";
import { NOT_STOPPED_NOTICE, type Terminal } from "./terminal.ts";

/** Writes to the terminal of a session: lines above the live status line, if one is shown. */
export class Screen {
  readonly terminal: Terminal;
  #status: StatusLine | null = null;

  constructor(terminal: Terminal) {
    this.terminal = terminal;
  }

  /** The terminal's width in columns. */
  get columns(): number {
    return this.terminal.columns;
  }

  /** Prints text (whole lines) above the status line. */
  print(text: string): void {
    if (text === "") return;
    if (this.#status !== null) this.#status.printAbove(text);
    else this.#raw(text);
  }

  /** Shows the live status line (a turn started). */
  startStatus(): void {
    this.#status ??= new StatusLine({ write: (text) => this.#raw(text), columns: () => this.columns });
  }

  /** Updates the status line from an event. */
  report(event: AgentEvent): void {
    this.#status?.report(event);
  }

  /**
   * Ctrl-Z: hides the status line, stops the process until the shell continues it (`Terminal.stopProcess`),
   * then shows the line again below what the shell wrote; says so when there is no shell to stop for.
   */
  async stopProcess(): Promise<void> {
    this.#status?.hide();
    const stopped = await this.terminal.stopProcess();
    if (!stopped) this.print(`${NOT_STOPPED_NOTICE}\n`);
    this.#status?.show();
  }

  /** Erases the status line (the turn ended, or a question needs the screen). */
  stopStatus(): void {
    this.#status?.stop();
    this.#status = null;
  }

  /** Whether the status line is shown. */
  get statusShown(): boolean {
    return this.#status !== null;
  }

  #raw(text: string): void {
    this.terminal.write(text.replace(/\r?\n/g, "\r\n"));
  }
}

/** Takes a key and says whether it used it. */
export type KeyHandler = (key: KeyEvent) => boolean;

/**
 * Reads keys during a turn and gives each to the newest handler that takes it; Ctrl-Z stops the process
 * (`Screen.stopProcess`) whoever listens. `suspend()` stops reading (so the line editor can read),
 * `resume()` starts again; input that arrives meanwhile is kept.
 */
export class KeyRouter {
  #screen: Screen;
  #handlers: { take: KeyHandler; redraw: (() => void) | undefined }[] = [];
  #controller: AbortController | null = null;
  #loop: Promise<void> | null = null;

  constructor(screen: Screen) {
    this.#screen = screen;
  }

  /**
   * Adds a handler on top; returns the function that removes it. `redraw`, when given, draws the handler's
   * question again after the process was stopped and continued (the shell wrote below it meanwhile).
   */
  push(handler: KeyHandler, redraw?: () => void): () => void {
    const entry = { take: handler, redraw };
    this.#handlers.push(entry);
    return () => {
      const index = this.#handlers.lastIndexOf(entry);
      if (index !== -1) this.#handlers.splice(index, 1);
    };
  }

  /** Starts reading keys (idempotent). */
  resume(): void {
    if (this.#loop !== null) return;
    const controller = new AbortController();
    this.#controller = controller;
    this.#loop = this.#read(controller.signal);
  }

  /** Stops reading keys and waits until the reader has let go of the terminal. */
  async suspend(): Promise<void> {
    this.#controller?.abort();
    await this.#loop;
    this.#loop = null;
    this.#controller = null;
  }

  async #read(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let event;
      try {
        event = await this.#screen.terminal.readKey({ signal });
      } catch {
        return;
      }
      if (event === null) return;
      if (event.type === "resize") continue;
      if (event.type === "key" && event.name === "z" && event.ctrl && !event.alt) {
        await this.#screen.stopProcess();
        this.#handlers.at(-1)?.redraw?.();
        continue;
      }
      for (let index = this.#handlers.length - 1; index >= 0; index--) {
        if (this.#handlers[index]?.take(event)) break;
      }
    }
  }
}

/** Whether a key is Esc or Ctrl-C: what interrupts a turn or answers "No". */
export function isCancelKey(key: KeyEvent): boolean {
  return key.type === "key" && ((key.name === "escape" && !key.ctrl) || (key.name === "c" && key.ctrl));
}
