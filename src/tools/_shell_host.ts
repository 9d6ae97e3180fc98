/**
 * A sandbox kept across Bash calls, on the worker's side (the host's side is src/sandbox/kept_sandbox.ts).
 * Starting bubblewrap and a shell costs about 20 ms here; a command sent to a sandbox that already runs
 * finds its shell started and waiting, and costs a few milliseconds. Private to src/tools/.
 *
 * Inside the sandbox, a supervising shell runs as process 1 from a copy of the shell it may not read (so
 * it is not dumpable: no command can open its pipes or memory through /proc/1). Before each call it starts
 * the command's shell, the session's own bash (`COMMAND_SHELL`; both scripts are in `_shell_supervisor.ts`),
 * which:
 *   1. reads the command and a start marker from standard input (NUL-terminated; a command holding NUL is
 *      refused before it is sent);
 *   2. compares the mount table with the one the sandbox started with: a mount the host removed or moved (a
 *      protected folder deleted or renamed on the host) makes it answer "stale" and exit, and the call
 *      runs in a new sandbox;
 *   3. writes the start marker to standard output, lets go of the supervisor's pipes (standard input from
 *      /dev/null, standard error joined to standard output) and runs the command as `bash -c` would: a
 *      fresh shell every time, its `$$`, `$0` and `BASH` those of `bash -c`.
 * Then the supervisor:
 *   4. kills every other process of the sandbox (`kill -9 -1` from process 1), `setsid` and `nohup`
 *      children included, until none is left;
 *   5. reads the end marker only now, so no command ever knew it, writes it to standard output, and the
 *      exit status to standard error, which no command can write (theirs is joined to standard output);
 *   6. lists the folders only commands write (/tmp, /var/tmp, /dev/shm, the home folders: `scratch`), and
 *      exits when the command left anything there, so the next call gets a new sandbox, as fresh as this
 *      one was (nothing is ever deleted: a workspace under /tmp is bound there), which the worker starts
 *      at once, while the model writes its next turn;
 *   7. starts the next command's shell (a fork and an exec, about 6 ms: calls back to back wait for it).
 * Output before the start marker (a killed process's last write) is dropped; output between the markers is
 * the call's, whatever it prints (a marker's text in it is just text: the real one is not known to it).
 *
 * The sandbox is the one the plan describes: a plan with other arguments (a protected path appeared, the
 * mode changed) gets a new one. A timeout or a cancellation kills it (bubblewrap, with --die-with-parent:
 * the whole PID namespace), and the next call starts a new one. It ends by itself when its standard input
 * closes, that is when this worker or mewcode ends.
 *
 * @module
 */
import { concatBytes, indexOfBytes } from "../common/bytes.ts";
import { killKeptSandbox, spawnKeptSandbox, waitForStart } from "../sandbox/bubblewrap.ts";
import { type Output, OutputCollector, TextSanitizer } from "./_shell_output.ts";
import { supervisorScript } from "./_shell_supervisor.ts";
import type { ShellRun } from "./_shell_run.ts";
import type { PersistentShell, ShellPlan } from "./tool.ts";

/** The longest a new sandbox may take to report that it runs. */
const START_TIMEOUT_MS = 10_000;
/** Sandboxes started at most for one call (see `#run`). */
const START_ATTEMPTS = 6;
/** The first pause before a start tried again; each later one doubles (randomised by ±50%). */
const RETRY_PAUSE_MS = 10;
/**
 * What bubblewrap says when a folder it mounts on went away while it started (another session removed its
 * placeholder), rather than because the sandbox cannot start here.
 */
const CHANGED_UNDER_START =
  /bwrap: Can't (?:mount|remount|find source path|create).*(?:No such file or directory|Unable to find|Unable to remount)/;
/** What the supervisor writes on standard error, each on a line of its own, after `\x01mewcode `. */
const TAG = "\u0001mewcode ";

/**
 * Runs Bash commands in a sandbox kept across calls; one call at a time, in arrival order. A sandbox that
 * ends by itself after a call (the command left something in a scratch folder) is replaced at once, while
 * the model writes its next turn, with the plan of that call: the next call usually finds it ready.
 */
export class ShellHost {
  #sandbox: KeptSandbox | null = null;
  /** A replacement being started for the last plan; taken (or dropped) by the next call. */
  #spare: Promise<KeptSandbox | null> | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** The last sandbox that ended by itself, its pipes being closed. */
  #retiring: Promise<void> = Promise.resolve();
  /** Sandboxes whose end is already watched (once each, however many calls they serve). */
  #watched = new WeakSet<KeptSandbox>();

  /** Runs `command` under `plan`, which must keep a sandbox (`plan.persistent`). */
  run(
    plan: ShellPlan & { persistent: PersistentShell },
    command: string,
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<ShellRun> {
    const run = this.#queue.then(() => this.#run(plan, command, options));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Ends the kept sandbox, if any (it also ends by itself once this worker is gone). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue;
    const sandbox = this.#sandbox;
    this.#sandbox = null;
    await sandbox?.kill();
    await (await this.#takeSpare())?.kill();
    await this.#retiring;
  }

  /** The replacement started after the last call, once it is ready; null when there is none. */
  async #takeSpare(): Promise<KeptSandbox | null> {
    const spare = this.#spare;
    this.#spare = null;
    return spare === null ? null : await spare;
  }

  /** Starts a replacement once `sandbox` ends by itself, unless another call or close has moved on. */
  #replaceWhenEnded(sandbox: KeptSandbox, plan: ShellPlan & { persistent: PersistentShell }): void {
    if (this.#watched.has(sandbox)) return;
    this.#watched.add(sandbox);
    void sandbox.ended.then(() => {
      if (this.#closed || this.#sandbox !== sandbox) return;
      this.#sandbox = null;
      // Its pipes are closed (what `kill` does for an ended sandbox) before close() returns.
      this.#retiring = sandbox.kill();
      this.#spare = KeptSandbox.start(plan, sandbox.key, {
        signal: new AbortController().signal,
        limitMs: START_TIMEOUT_MS,
      }).then((start) => start.ok ? start.sandbox : null);
    });
  }

  async #run(
    plan: ShellPlan & { persistent: PersistentShell },
    command: string,
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<ShellRun> {
    if (command.includes("\0")) {
      return {
        status: "spawn-failed",
        message: "the command contains a NUL character, which no shell accepts",
      };
    }
    const started = performance.now();
    const deadline = started + options.timeoutMs;
    const key = plan.persistent.wrapper.join("\0");
    // A stale sandbox is replaced, and the replacement, just checked, is stale again only while the
    // workspace's protected folders keep changing under it: other sessions in the same workspace make and
    // remove the empty folders their sandboxes mount placeholders on, and one may go while this sandbox
    // starts (bubblewrap: "Can't mount tmpfs on …: No such file or directory"). Such a call is tried again
    // after a growing pause, as long as its time allows, up to `START_ATTEMPTS` times.
    if (this.#sandbox === null) this.#sandbox = await this.#takeSpare();
    for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
      if (attempt >= 2) {
        const pause = RETRY_PAUSE_MS * 2 ** (attempt - 2) * (0.5 + Math.random());
        if (performance.now() + pause >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, pause));
        if (options.signal.aborted) return stopped("cancelled", started);
      }
      if (this.#sandbox !== null && (this.#sandbox.key !== key || !this.#sandbox.alive)) {
        const replaced = this.#sandbox;
        this.#sandbox = null;
        await replaced.kill();
      }
      if (this.#sandbox === null) {
        const remaining = deadline - performance.now();
        const start = await KeptSandbox.start(plan, key, {
          signal: options.signal,
          limitMs: Math.min(START_TIMEOUT_MS, remaining),
        });
        if (!start.ok) {
          if (options.signal.aborted) return stopped("cancelled", started);
          if (start.timedOut && remaining <= START_TIMEOUT_MS) return stopped("timed-out", started);
          if (CHANGED_UNDER_START.test(start.message) && attempt + 1 < START_ATTEMPTS) continue;
          return { status: "spawn-failed", message: start.message };
        }
        this.#sandbox = start.sandbox;
      }
      const sandbox = this.#sandbox;
      const outcome = await sandbox.call(command, {
        timeoutMs: Math.max(0, deadline - performance.now()),
        signal: options.signal,
      });
      const durationMs = Math.round(performance.now() - started);
      switch (outcome.kind) {
        case "not-run":
          // Stale, or gone before it read the command: nothing of it ran; run it in a new sandbox.
          this.#sandbox = null;
          await sandbox.kill();
          continue;
        case "exited":
          // A sandbox the call ended may have exited before its outcome was read here (this worker was
          // busy): it is replaced as well. One that still runs is replaced if it ends later.
          this.#replaceWhenEnded(sandbox, plan);
          return { status: "exited", code: outcome.code, output: outcome.output, durationMs };
        case "timed-out":
        case "cancelled":
          this.#sandbox = null;
          return { status: outcome.kind, output: outcome.output, durationMs };
      }
    }
    return {
      status: "spawn-failed",
      message: "the sandbox kept being replaced before the command could run (the workspace's protected " +
        "folders keep changing); try again",
    };
  }
}

/** A call stopped before its command ran: no output. */
function stopped(status: "cancelled" | "timed-out", started: number): ShellRun {
  return {
    status,
    output: new OutputCollector().finish(),
    durationMs: Math.round(performance.now() - started),
  };
}

/** How one call in a kept sandbox ended. */
type CallOutcome =
  | { kind: "not-run" }
  | { kind: "exited"; code: number; output: Output }
  | { kind: "timed-out" | "cancelled"; output: Output };

/** The call being run, as the two pipes' readers see it. */
interface Current {
  start: Uint8Array;
  end: Uint8Array;
  /** Waiting for the start marker, collecting output, or done (the end marker was read). */
  phase: "before" | "output" | "done";
  collector: OutputCollector;
  sanitizer: TextSanitizer;
  /** Bytes held back: they may be the beginning of a marker. */
  held: Uint8Array;
  status: number | null;
  settle: () => void;
}

/** One bubblewrap process running the supervisor. */
class KeptSandbox {
  readonly key: string;
  #child: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #exited: Promise<Deno.CommandStatus>;
  #alive = true;
  #ready = Promise.withResolvers<void>();
  #diagnostics = "";
  #current: Current | null = null;
  #stale = false;
  #pumps: Promise<void>[];

  private constructor(key: string, child: Deno.ChildProcess) {
    this.key = key;
    this.#child = child;
    this.#stdin = child.stdin.getWriter();
    this.#exited = child.status.finally(() => {
      this.#alive = false;
      this.#ready.reject(new Error("exited"));
      this.#current?.settle();
    });
    this.#ready.promise.catch(() => undefined);
    this.#pumps = [this.#readStdout(child.stdout), this.#readStderr(child.stderr)];
  }

  /** Whether the sandbox still runs. */
  get alive(): boolean {
    return this.#alive;
  }

  /** Settles once bubblewrap has exited, killed or by itself. */
  get ended(): Promise<unknown> {
    return this.#exited;
  }

  /** Starts the sandbox and waits until its supervisor runs, at most `limitMs`; the reason when it cannot. */
  static async start(
    plan: ShellPlan & { persistent: PersistentShell },
    key: string,
    options: { signal: AbortSignal; limitMs: number },
  ): Promise<{ ok: true; sandbox: KeptSandbox } | { ok: false; timedOut: boolean; message: string }> {
    // $0 of each command is the shell's path, as for `bash -c` started by that path.
    const child = spawnKeptSandbox(plan.persistent, ["-c", supervisorScript(plan), plan.shell], plan.env);
    if ("failed" in child) return { ok: false, timedOut: false, message: child.failed };
    const sandbox = new KeptSandbox(key, child);
    const outcome = await waitForStart(sandbox.#ready.promise, options);
    if (outcome === "ready" && sandbox.alive) return { ok: true, sandbox };
    await sandbox.kill();
    const detail = sandbox.#diagnostics.trim().split("\n").slice(0, 3).join("; ");
    const reason = outcome === "timed-out"
      ? `it did not start within ${Math.round(options.limitMs)} ms`
      : outcome === "cancelled"
      ? "the call was cancelled"
      : detail === ""
      ? "it exited at once"
      : detail;
    return {
      ok: false,
      timedOut: outcome === "timed-out",
      message: `the sandbox could not start: ${reason}`,
    };
  }

  /** Runs one command; see the module doc for the protocol. */
  async call(command: string, options: { timeoutMs: number; signal: AbortSignal }): Promise<CallOutcome> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const current: Current = {
      start: marker(),
      end: marker(),
      phase: "before",
      collector: new OutputCollector(),
      sanitizer: new TextSanitizer(),
      held: new Uint8Array(0),
      status: null,
      settle: () => resolve(),
    };
    this.#current = current;
    let stop: "timed-out" | "cancelled" | null = null;
    const onStop = (reason: "timed-out" | "cancelled") => {
      stop ??= reason;
      resolve();
    };
    const timer = setTimeout(() => onStop("timed-out"), options.timeoutMs);
    const onAbort = () => onStop("cancelled");
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) onStop("cancelled");
    try {
      if (stop === null) {
        // The markers travel without their first NUL: the supervisor reads each up to its last one, and
        // writes it back framed by two.
        const bytes = concatBytes(
          new TextEncoder().encode(`${command}\0`),
          current.start.subarray(1),
          current.end.subarray(1),
        );
        this.#stdin.write(bytes).catch(() => current.settle());
        await promise;
      }
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
    }
    if (stop !== null) {
      await this.kill();
      this.#current = null;
      return { kind: stop, output: finishOutput(current) };
    }
    if (!this.#alive || this.#stale) {
      // Its output pipe may still hold the start marker: read it to the end before deciding whether the
      // command ran (running it again would run it twice).
      await this.kill();
    }
    this.#current = null;
    if (current.phase === "before") return { kind: "not-run" };
    if (current.status === null) {
      // The supervisor itself ended during the command (the memory limit's killer can pick it).
      const status = await this.#exited;
      return { kind: "exited", code: status.code, output: finishOutput(current) };
    }
    return { kind: "exited", code: current.status, output: finishOutput(current) };
  }

  /** Kills bubblewrap, and with it the whole sandbox, and waits until it has exited. */
  async kill(): Promise<void> {
    await killKeptSandbox({
      alive: this.#alive,
      child: this.#child,
      exited: this.#exited,
      stdin: this.#stdin,
      pumps: this.#pumps,
    });
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) this.#onOutput(chunk);
    } catch {
      // Killed: what arrived is kept.
    }
  }

  /** Feeds bytes from standard output to the current call: markers found, output collected. */
  #onOutput(chunk: Uint8Array): void {
    const current = this.#current;
    if (current === null || current.phase === "done") return;
    let bytes = concatBytes(current.held, chunk);
    current.held = new Uint8Array(0);
    if (current.phase === "before") {
      const at = indexOfBytes(bytes, current.start);
      if (at === -1) {
        // Keep what could be the start of the marker; drop the rest (leftovers of the last call).
        current.held = bytes.slice(Math.max(0, bytes.length - current.start.length + 1));
        return;
      }
      current.phase = "output";
      bytes = bytes.subarray(at + current.start.length);
    }
    const end = indexOfBytes(bytes, current.end);
    if (end !== -1) {
      current.collector.push(current.sanitizer.write(bytes.subarray(0, end)));
      current.phase = "done";
      if (current.status !== null) current.settle();
      return;
    }
    const keep = Math.min(bytes.length, current.end.length - 1);
    current.collector.push(current.sanitizer.write(bytes.subarray(0, bytes.length - keep)));
    current.held = bytes.slice(bytes.length - keep);
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of stream) {
        pending += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = pending.indexOf("\n")) !== -1) {
          this.#onLine(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
      }
    } catch {
      // Killed.
    }
    if (pending !== "") this.#onLine(pending);
  }

  #onLine(line: string): void {
    if (!line.startsWith(TAG)) {
      // bubblewrap's own messages: why a start failed.
      if (this.#diagnostics.length < 4096) this.#diagnostics += `${line}\n`;
      return;
    }
    const [word, value] = line.slice(TAG.length).split(" ");
    const current = this.#current;
    switch (word) {
      case "ready":
        this.#ready.resolve();
        return;
      case "stale":
        this.#stale = true;
        current?.settle();
        return;
      case "status":
        if (current === null) return;
        current.status = Number(value);
        if (current.phase === "done") current.settle();
        return;
    }
  }
}

function finishOutput(current: Current): Output {
  if (current.phase === "output") {
    current.collector.push(current.sanitizer.write(current.held));
  }
  current.collector.push(current.sanitizer.end());
  return current.collector.finish();
}

/** A fresh marker: NUL, 32 random hexadecimal digits, NUL. */
function marker(): Uint8Array {
  const hex = Array.from(
    crypto.getRandomValues(new Uint8Array(16)),
    (byte) => byte.toString(16).padStart(2, "0"),
  )
    .join("");
  return new TextEncoder().encode(`\0${hex}\0`);
}
