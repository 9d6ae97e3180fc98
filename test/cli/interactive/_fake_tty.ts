/**
 * A fake terminal for tests: an input stream the test feeds byte chunks into, an output that draws on a
 * `Screen`, a size the test can change (with a resize notification), and a record of raw-mode switches.
 * `terminal()` puts a real `Terminal` on top of it, so tests go through the real key decoder.
 *
 * @module
 */
import {
  Terminal,
  type TerminalInput,
  type TerminalOptions,
  type TerminalOutput,
} from "../../../src/cli/interactive/terminal.ts";
import { Screen } from "./_screen.ts";

/** A fake pair of terminal streams drawing on a screen `columns` × `rows`. */
export class FakeTty {
  readonly screen: Screen;
  /** Every string written, in order. */
  readonly written: string[] = [];
  /** Each `setRaw` call's mode, in order. */
  readonly rawCalls: boolean[] = [];
  readonly input: TerminalInput;
  readonly output: TerminalOutput;
  columns: number;
  rows: number;
  #chunks: Uint8Array[] = [];
  #ended = false;
  /** Hands input to a read that waits for it; null when no read waits. */
  #deliver: (() => void) | null = null;
  #idleWaiters: (() => void)[] = [];
  #resizeListeners = new Set<() => void>();
  #decoder = new TextDecoder();
  #encoder = new TextEncoder();

  constructor(columns = 40, rows = 12, options: { isTerminal?: boolean } = {}) {
    this.columns = columns;
    this.rows = rows;
    this.screen = new Screen(columns, rows);
    const isTerminal = () => options.isTerminal ?? true;
    // One chunk per read, handed out only when a read asks, so a test can tell when all input was taken.
    const readable = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (this.#hand(controller)) return;
        return new Promise<void>((resolve) => {
          this.#deliver = () => {
            if (!this.#hand(controller)) return;
            this.#deliver = null;
            resolve();
          };
          for (const waiter of this.#idleWaiters.splice(0)) waiter();
        });
      },
    }, { highWaterMark: 0 });
    this.input = { readable, isTerminal, setRaw: (mode) => this.rawCalls.push(mode) };
    this.output = {
      isTerminal,
      writeSync: (bytes) => {
        const text = this.#decoder.decode(bytes, { stream: true });
        this.written.push(text);
        this.screen.write(text);
        return bytes.length;
      },
    };
  }

  /** A Terminal over this fake; a short escape timeout keeps tests fast. */
  terminal(options: TerminalOptions = {}): Terminal {
    return new Terminal({
      input: this.input,
      output: this.output,
      size: () => ({ columns: this.columns, rows: this.rows }),
      onResize: (listener) => {
        this.#resizeListeners.add(listener);
        return () => this.#resizeListeners.delete(listener);
      },
      env: {},
      escapeTimeoutMs: 10,
      ...options,
    });
  }

  /** Sends chunks of input, each as one read: strings as UTF-8, byte arrays as they are. */
  send(...chunks: (string | Uint8Array)[]): void {
    for (const chunk of chunks) {
      this.#chunks.push(typeof chunk === "string" ? this.#encoder.encode(chunk) : chunk);
    }
    this.#deliver?.();
  }

  /** Ends the input, as a closed standard input does. */
  end(): void {
    this.#ended = true;
    this.#deliver?.();
  }

  /**
   * Resolves once every chunk sent was read and the next read waits: whoever reads (the line editor) has
   * handled all of it and drawn the result.
   */
  idle(): Promise<void> {
    if (this.#deliver !== null && this.#chunks.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Changes the size and tells the terminal, as SIGWINCH does. */
  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.screen.resize(columns, rows);
    for (const listener of this.#resizeListeners) listener();
  }

  /** Everything written, joined. */
  get writtenText(): string {
    return this.written.join("");
  }

  /** Gives the next chunk (or the end) to the stream; false when there is nothing to give yet. */
  #hand(controller: ReadableStreamDefaultController<Uint8Array>): boolean {
    const chunk = this.#chunks.shift();
    if (chunk !== undefined) {
      controller.enqueue(chunk);
      return true;
    }
    if (!this.#ended) return false;
    controller.close();
    return true;
  }
}
