/**
 * The terminal of an interactive session: its modes (raw input, bracketed paste, cursor visibility), its size,
 * its colour support, the keys it sends and what is written to it — and the promise to leave it as it was
 * found. `restore()` undoes every mode this object turned on; `restoreOnExit()` makes that happen however the
 * process ends (normal exit, `Deno.exit`, an uncaught error, SIGTERM, SIGHUP).
 *
 * Standard input and output are injected (`Deno.stdin`/`Deno.stdout` by default), so a test can drive the
 * terminal, and the line editor on top of it, with a fake pair.
 *
 * @module
 */
import { KeyDecoder, type KeyEvent } from "./keys.ts";

/** The input side of a terminal; `Deno.stdin` is one. */
export interface TerminalInput {
  readonly readable: ReadableStream<Uint8Array>;
  isTerminal(): boolean;
  setRaw(mode: boolean): void;
}

/** The output side of a terminal; `Deno.stdout` is one. */
export interface TerminalOutput {
  writeSync(bytes: Uint8Array): number;
  isTerminal(): boolean;
}

/** A terminal's size in character cells. */
export interface TerminalSize {
  columns: number;
  rows: number;
}

/** How many colours the terminal shows: none, the basic 16, 256, or 24-bit. */
export type ColorLevel = "none" | "basic" | "256" | "truecolor";

/** An event from the terminal: a key, a paste, or a change of size. */
export type TerminalEvent = KeyEvent | { type: "resize"; columns: number; rows: number };

/** The environment variables colour detection reads. */
export interface ColorEnv {
  NO_COLOR?: string | undefined;
  FORCE_COLOR?: string | undefined;
  TERM?: string | undefined;
  COLORTERM?: string | undefined;
}

/** What a Terminal reads and writes, and how long it waits to tell keys apart; all optional. */
export interface TerminalOptions {
  input?: TerminalInput;
  output?: TerminalOutput;
  /** The current size; defaults to `Deno.consoleSize()`, or 80×24 when that fails. */
  size?: () => TerminalSize;
  /** Subscribes to size changes and returns the unsubscribe function; defaults to SIGWINCH. */
  onResize?: (listener: () => void) => () => void;
  env?: ColorEnv;
  /** How long a lone ESC (or a partial sequence) waits for the rest before it counts as Esc; 100 ms. */
  escapeTimeoutMs?: number;
  /** How long an open bracketed paste waits for more before it is taken as complete; 2 s. */
  pasteTimeoutMs?: number;
  /**
   * Stops the process as Ctrl-Z in a cooked terminal would (`stopProcess`); defaults to SIGTSTP to the
   * process group, whose default action stops it until the shell sends SIGCONT (`fg`, `bg`).
   */
  stop?: () => void;
  /** Subscribes to the process being continued and returns the unsubscribe function; defaults to SIGCONT. */
  onContinue?: (listener: () => void) => () => void;
}

/** What `restoreOnExit` does on SIGTERM or SIGHUP after restoring the terminal. */
export interface RestoreOnExitOptions {
  /** Exit with 128 + the signal number (143, 129); true by default. False leaves exiting to other listeners. */
  exitOnSignal?: boolean;
}

const BRACKETED_PASTE_ON = "\x1b[?2004h";
const BRACKETED_PASTE_OFF = "\x1b[?2004l";
const CURSOR_SHOW = "\x1b[?25h";
const CURSOR_HIDE = "\x1b[?25l";
const ERASE_LINE = "\r\x1b[2K";
const DEFAULT_SIZE: TerminalSize = { columns: 80, rows: 24 };
const EXIT_SIGNALS = [["SIGTERM", 15], ["SIGHUP", 1]] as const;
/**
 * How long `stopProcess` waits for SIGCONT before it takes the stop as refused: a process group with no job
 * control shell above it (orphaned, as under `xterm -e`) has SIGTSTP discarded by the kernel.
 */
const STOP_WAIT_MS = 150;
/** How much longer it waits once that time passed: a process continued after a stop sees both at once. */
const CONTINUE_GRACE_MS = 50;
/** What the session says when Ctrl-Z could not stop it (`stopProcess` returned false). */
export const NOT_STOPPED_NOTICE = "(Ctrl-Z: no shell with job control runs mewcode here, so it goes on)";

/** Decides colour support: FORCE_COLOR wins (0/false turn it off), then NO_COLOR, a non-terminal and TERM=dumb. */
export function detectColorLevel(env: ColorEnv, isTerminal: boolean): ColorLevel {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") {
    if (force === "0" || force === "false") return "none";
    if (force === "2") return "256";
    if (force === "3") return "truecolor";
    if (force === "1" || force === "true") return "basic";
    return fullLevel(env);
  }
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return "none";
  if (!isTerminal || env.TERM === "dumb") return "none";
  return fullLevel(env);
}

function fullLevel(env: ColorEnv): ColorLevel {
  if (env.COLORTERM === "truecolor" || env.COLORTERM === "24bit") return "truecolor";
  if (env.TERM?.includes("256color")) return "256";
  return "basic";
}

/** The session's terminal; see the module documentation. Dispose of it (`await using`) to restore it. */
export class Terminal {
  /** Colour support, decided once from the environment and whether the output is a terminal. */
  readonly colors: ColorLevel;
  #input: TerminalInput;
  #output: TerminalOutput;
  #size: () => TerminalSize;
  #onResize: (listener: () => void) => () => void;
  #escapeTimeoutMs: number;
  #pasteTimeoutMs: number;
  #encoder = new TextEncoder();
  #decoder = new KeyDecoder();
  #queue: TerminalEvent[] = [];
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #pendingRead: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  #ended = false;
  #reading = false;
  #unsubscribeResize: (() => void) | null = null;
  /** Wakes a waiting `readKey` when an event was queued from outside the input (a resize). */
  #wake: (() => void) | null = null;
  #removeExitHooks: (() => void) | null = null;
  #stop: () => void;
  #onContinue: (listener: () => void) => () => void;
  #raw = false;
  #bracketedPaste = false;
  #cursorHidden = false;
  /** Whether something was written after the last line feed. */
  #lineDirty = false;
  #gone = false;

  constructor(options: TerminalOptions = {}) {
    this.#input = options.input ?? Deno.stdin;
    this.#output = options.output ?? Deno.stdout;
    this.#size = options.size ?? consoleSize;
    this.#onResize = options.onResize ?? onWindowChange;
    this.#escapeTimeoutMs = options.escapeTimeoutMs ?? 100;
    this.#pasteTimeoutMs = options.pasteTimeoutMs ?? 2_000;
    this.#stop = options.stop ?? stopProcessGroup;
    this.#onContinue = options.onContinue ?? onContinued;
    this.colors = detectColorLevel(options.env ?? colorEnv(), this.#output.isTerminal());
  }

  /** Whether both input and output are terminals, which an interactive session needs. */
  get isInteractive(): boolean {
    return this.#input.isTerminal() && this.#output.isTerminal();
  }

  /** The width in columns (80 when unknown). */
  get columns(): number {
    return this.#measure().columns;
  }

  /** The height in rows (24 when unknown). */
  get rows(): number {
    return this.#measure().rows;
  }

  /**
   * Writes text as it is: the caller sanitizes what came from elsewhere. Once a write fails, the terminal is
   * taken as gone (closed or hung up: EIO) and later writes are dropped, so that the session still ends in
   * order (its tools stopped, its transcript closed, its temporary files removed) instead of on the error.
   */
  write(text: string): void {
    if (text === "" || this.#gone) return;
    const bytes = this.#encoder.encode(text);
    try {
      for (let offset = 0; offset < bytes.length;) offset += this.#output.writeSync(bytes.subarray(offset));
    } catch {
      this.#gone = true;
      return;
    }
    this.#lineDirty = !text.endsWith("\n");
  }

  /** Whether a write failed: the terminal was closed or hung up, and nothing more is shown. */
  get gone(): boolean {
    return this.#gone;
  }

  /** Turns raw input on (keys arrive one by one, unechoed, Ctrl+C as a byte) or off. */
  setRawMode(on: boolean): void {
    if (on === this.#raw) return;
    this.#input.setRaw(on);
    this.#raw = on;
  }

  /** Asks the terminal to mark pastes (ESC[?2004h), so a pasted newline is not Enter, or stops asking. */
  setBracketedPaste(on: boolean): void {
    if (on === this.#bracketedPaste) return;
    this.write(on ? BRACKETED_PASTE_ON : BRACKETED_PASTE_OFF);
    this.#bracketedPaste = on;
  }

  /** Shows or hides the cursor. */
  setCursorVisible(visible: boolean): void {
    if (visible === !this.#cursorHidden) return;
    this.write(visible ? CURSOR_SHOW : CURSOR_HIDE);
    this.#cursorHidden = !visible;
  }

  /**
   * The next event, or null once input has ended. Waits for input; a lone ESC becomes Escape after the escape
   * timeout. Rejects with the signal's reason when `signal` aborts; input that arrives later is kept for the
   * next call, so readers can take turns (the line editor, then the session during a turn); one at a time.
   */
  async readKey(options: { signal?: AbortSignal } = {}): Promise<TerminalEvent | null> {
    options.signal?.throwIfAborted();
    // Two readers would both feed the same chunk to the decoder and see every key twice.
    if (this.#reading) throw new Error("Cannot read a key: another read is waiting; abort it first");
    this.#reading = true;
    try {
      return await this.#nextEvent(options.signal);
    } finally {
      this.#reading = false;
    }
  }

  async #nextEvent(signal: AbortSignal | undefined): Promise<TerminalEvent | null> {
    this.#unsubscribeResize ??= this.#onResize(() => {
      this.#queue.push({ type: "resize", ...this.#measure() });
      this.#wake?.();
    });
    while (true) {
      const queued = this.#queue.shift();
      if (queued !== undefined) return queued;
      if (this.#ended) return null;
      this.#reader ??= this.#input.readable.getReader();
      this.#pendingRead ??= this.#reader.read();
      const pending = this.#decoder.pending;
      const waitMs = pending === "paste"
        ? this.#pasteTimeoutMs
        : pending === "sequence"
        ? this.#escapeTimeoutMs
        : null;
      const woken = new Promise<void>((resolve) => this.#wake = resolve);
      const outcome = await raceRead(this.#pendingRead, { waitMs, woken, signal });
      this.#wake = null;
      if (outcome.kind === "aborted") throw signal?.reason;
      if (outcome.kind === "woken") continue;
      if (outcome.kind === "timeout") {
        this.#queue.push(...this.#decoder.flush());
        continue;
      }
      this.#pendingRead = null;
      if (outcome.result.done) {
        this.#ended = true;
        this.#queue.push(...this.#decoder.flush());
        continue;
      }
      this.#queue.push(...this.#decoder.feed(outcome.result.value));
    }
  }

  /**
   * Leaves the terminal as it was found: bracketed paste off, cursor shown, the unfinished line erased, raw
   * mode off. Safe to call any number of times and from exit handlers (synchronous; errors of a terminal that
   * is already gone are ignored). The modes can be turned on again afterwards.
   */
  restore(): void {
    const steps: (() => void)[] = [
      () => this.setBracketedPaste(false),
      () => this.setCursorVisible(true),
      () => {
        if (!this.#lineDirty || !this.#output.isTerminal()) return;
        this.write(ERASE_LINE);
        this.#lineDirty = false;
      },
      () => this.setRawMode(false),
    ];
    for (const step of steps) {
      try {
        step();
      } catch {
        // A hung-up terminal cannot be written to; the other steps still run.
      }
    }
  }

  /**
   * Ctrl-Z: gives the terminal back as it was found and stops the process until the shell continues it
   * (`fg`), then takes the modes it had again and queues a resize event, on which a reader draws anew (the
   * shell wrote to the screen meanwhile). False when the process was not stopped (no job control: the
   * kernel discards SIGTSTP for a process group no shell waits for, and on Windows there is none).
   */
  async stopProcess(): Promise<boolean> {
    if (Deno.build.os === "windows") return false;
    const modes = { raw: this.#raw, paste: this.#bracketedPaste, hidden: this.#cursorHidden };
    this.restore();
    let continued = false;
    const { promise: resumed, resolve } = Promise.withResolvers<void>();
    const unsubscribe = this.#onContinue(() => {
      continued = true;
      resolve();
    });
    const wait = async (ms: number) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([resumed, new Promise((done) => timer = setTimeout(done, ms))]);
      clearTimeout(timer);
    };
    try {
      this.#stop();
      await wait(STOP_WAIT_MS);
      if (!continued) await wait(CONTINUE_GRACE_MS);
    } catch {
      // The signal could not be sent: nothing stopped.
    } finally {
      unsubscribe();
    }
    try {
      this.setRawMode(modes.raw);
      this.setBracketedPaste(modes.paste);
      this.setCursorVisible(!modes.hidden);
    } catch {
      // A terminal gone meanwhile: the reads end on their own.
    }
    this.#queue.push({ type: "resize", ...this.#measure() });
    this.#wake?.();
    return continued;
  }

  /**
   * Restores the terminal however the process ends: on `unload` (normal exit and `Deno.exit`), on an uncaught
   * error or unhandled rejection, and on SIGTERM and SIGHUP, after which it exits with 143 or 129 unless
   * `exitOnSignal` is false. Registers once per terminal; later calls do nothing. `close()` unregisters.
   */
  restoreOnExit(options: RestoreOnExitOptions = {}): void {
    if (this.#removeExitHooks !== null) return;
    const restore = () => this.restore();
    const exitOnSignal = options.exitOnSignal ?? true;
    const signalHandlers = EXIT_SIGNALS.map(([signal, number]) => {
      const handler = () => {
        this.restore();
        if (exitOnSignal) Deno.exit(128 + number);
      };
      return [signal, handler] as const;
    });
    globalThis.addEventListener("unload", restore);
    globalThis.addEventListener("error", restore);
    globalThis.addEventListener("unhandledrejection", restore);
    // Windows delivers only SIGINT and SIGBREAK to Deno.
    if (Deno.build.os !== "windows") {
      for (const [signal, handler] of signalHandlers) Deno.addSignalListener(signal, handler);
    }
    this.#removeExitHooks = () => {
      globalThis.removeEventListener("unload", restore);
      globalThis.removeEventListener("error", restore);
      globalThis.removeEventListener("unhandledrejection", restore);
      if (Deno.build.os !== "windows") {
        for (const [signal, handler] of signalHandlers) Deno.removeSignalListener(signal, handler);
      }
    };
  }

  /** Restores the terminal, removes the exit handlers and the resize listener, and stops reading input. */
  async close(): Promise<void> {
    this.restore();
    this.#removeExitHooks?.();
    this.#removeExitHooks = null;
    this.#unsubscribeResize?.();
    this.#unsubscribeResize = null;
    const reader = this.#reader;
    this.#reader = null;
    this.#pendingRead = null;
    this.#ended = true;
    await reader?.cancel().catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #measure(): TerminalSize {
    try {
      const size = this.#size();
      return size.columns > 0 && size.rows > 0 ? size : DEFAULT_SIZE;
    } catch {
      return DEFAULT_SIZE;
    }
  }
}

type ReadOutcome =
  | { kind: "read"; result: ReadableStreamReadResult<Uint8Array> }
  | { kind: "timeout" }
  | { kind: "woken" }
  | { kind: "aborted" };

interface RaceOptions {
  waitMs: number | null;
  woken: Promise<void>;
  signal: AbortSignal | undefined;
}

/** Waits for a read, a timeout (when `waitMs` is not null), a wake-up or an abort, whichever comes first. */
async function raceRead(
  read: Promise<ReadableStreamReadResult<Uint8Array>>,
  { waitMs, woken, signal }: RaceOptions,
): Promise<ReadOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const racers: Promise<ReadOutcome>[] = [
    read.then((result) => ({ kind: "read", result })),
    woken.then(() => ({ kind: "woken" })),
  ];
  if (waitMs !== null) {
    racers.push(new Promise((resolve) => timer = setTimeout(() => resolve({ kind: "timeout" }), waitMs)));
  }
  if (signal !== undefined) {
    racers.push(
      new Promise((resolve) => {
        onAbort = () => resolve({ kind: "aborted" });
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    );
  }
  try {
    return await Promise.race(racers);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
  }
}

function colorEnv(): ColorEnv {
  const get = (name: string) => Deno.env.get(name);
  return {
    NO_COLOR: get("NO_COLOR"),
    FORCE_COLOR: get("FORCE_COLOR"),
    TERM: get("TERM"),
    COLORTERM: get("COLORTERM"),
  };
}

function consoleSize(): TerminalSize {
  return Deno.consoleSize();
}

function stopProcessGroup(): void {
  Deno.kill(0, "SIGTSTP");
}

function onContinued(listener: () => void): () => void {
  Deno.addSignalListener("SIGCONT", listener);
  return () => Deno.removeSignalListener("SIGCONT", listener);
}

function onWindowChange(listener: () => void): () => void {
  if (Deno.build.os === "windows") return () => undefined;
  Deno.addSignalListener("SIGWINCH", listener);
  return () => Deno.removeSignalListener("SIGWINCH", listener);
}
