/**
 * A read-only sandbox kept across mewcode's own commands (`ShellSandbox.runCommand` with `keep`): Grep's
 * ripgrep searches, which would otherwise each start bubblewrap and join the resource limits again (about
 * 12 ms of a search here). The sandbox is the one a command of its plan would get (the same mounts, seccomp
 * filter and limits); only its life is longer.
 *
 * Inside it, a supervising bash runs as process 1 from the copy of the shell it may not read (as the Bash
 * tool's kept sandbox does, src/tools/_shell_host.ts: no other process may open its pipes or memory through
 * /proc/1). For each command it:
 *   1. forks the command's subshell before the command comes, which reads it from standard input (its length
 *      in bytes, the command, a start marker), compares the mount table with the one the sandbox started
 *      with (a mount the host removed or moved, a hidden folder deleted and made again, makes it answer
 *      "stale" after the start marker: the command then runs in a sandbox of its own), or writes the marker
 *      and "go" and runs the command with standard input from /dev/null, its standard output and standard
 *      error those of the sandbox (mewcode reads them apart, as for a command per sandbox);
 *   2. kills every other process of the sandbox, until none is left;
 *   3. reads the end marker only now (it was sent with the command, and no command ever knew it), and writes
 *      it to both streams, followed on standard output by the exit status: nothing a command wrote can end
 *      its output early or forge its status;
 *   4. exits when the command left anything behind (an entry in a scratch folder, a System V IPC object, a
 *      process that would not die): the next command gets a new sandbox.
 * One entry is there from the start, for the commands: `KEPT_OUTPUT_FILE`, an empty file a command may write
 * its output to and hand on with `cat`, then empty again. A program that prints many small pieces (ripgrep
 * prints each file's lines apart) is much slower writing to a pipe that mewcode reads: each write wakes the
 * reading process (the kernel wakes an epoll reader on every write), and on two cores that competes with the
 * program itself (measured: a search printing 3.2 MB in 8,000 writes took 467 ms into the pipe, 324 ms into a
 * file followed by `cat`).
 * A timeout or a cancellation kills the sandbox (bubblewrap, and with it the PID namespace), and a new one
 * starts at once for the next command. It ends by itself when its standard input closes, that is when
 * mewcode ends.
 *
 * One command at a time: a command that comes while one runs gets a sandbox of its own (`run` answers
 * null). A command whose plan differs from the sandbox's (the session's view changed) replaces it.
 *
 * @module
 */
import { concatBytes, indexOfBytes } from "../common/bytes.ts";
import type { PersistentShell, ShellPlan } from "../tools/tool.ts";
import { killKeptSandbox, spawnKeptSandbox, waitForStart } from "./bubblewrap.ts";
import { type CommandResult, passBytes } from "./sandboxed_command.ts";
import { endIfLeftBehind, KILL_THE_REST, listScratch } from "./supervisor_lines.ts";

/**
 * The file a kept command may write its output to (see the module doc): made empty when the sandbox starts,
 * so that it is not an entry left behind. A command run in a sandbox of its own makes it.
 */
export const KEPT_OUTPUT_FILE = "/tmp/.mewcode-output";
/** The longest a new sandbox may take to say that it runs. */
const START_TIMEOUT_MS = 10_000;
/** Output kept per stream by default, in characters (as for a command per sandbox). */
const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const READY = new TextEncoder().encode("\u0001mewcode ready\n");
/** The word after the start marker when the command runs. */
const GO = new TextEncoder().encode("go");
/** A command that fails to start this many sandboxes in a row is left to sandboxes of its own. */
const MAX_START_FAILURES = 2;

/** A plan whose sandbox can be kept (`planCall` with `keep`). */
export type KeptPlan = ShellPlan & { persistent: PersistentShell };

/** What a command in the kept sandbox is run with (`ShellSandbox.runCommand`'s options). */
export interface KeptCommandOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept per stream, in characters; default 1 MiB. */
  maxOutputChars?: number;
  /** Takes standard output as it arrives (each piece in a buffer reused once it returns). */
  onStdout?: (bytes: Uint8Array) => void;
}

/**
 * The supervisor's script (see the module doc). Its commands run in a subshell: a fork of the supervisor,
 * which the command's own programs replace or run under.
 */
export function commandSupervisorScript(plan: KeptPlan): string {
  const folders = plan.persistent.scratch;
  return [
    ...plan.persistent.prologue,
    "IFS= read -r -d '' __mewcode_mounts < /proc/self/mountinfo",
    `: > ${KEPT_OUTPUT_FILE}`,
    ...listScratch("__mewcode_scratch", folders),
    // The command comes after its length in bytes (a pipe is read a byte per system call up to a delimiter,
    // in a few calls for a length), then the start marker.
    "__mewcode_take() {",
    "  local LC_ALL=C",
    '  IFS= read -r __mewcode_length && IFS= read -r -N "$__mewcode_length" __mewcode_command &&',
    "    IFS= read -r -d '' __mewcode_start",
    "}",
    "printf '\\001mewcode ready\\n'",
    "while :; do",
    // The command's subshell is forked before the command comes (a fork costs ~3 ms here): it reads it, then
    // checks the mounts and says whether it runs the command.
    "  (",
    "    __mewcode_take || exit 0",
    "    IFS= read -r -d '' __mewcode_now < /proc/self/mountinfo",
    '    if [[ $__mewcode_now != "$__mewcode_mounts" ]]; then printf \'%sstale\\n\' "$__mewcode_start"; exit 0; fi',
    "    printf '%sgo' \"$__mewcode_start\"",
    "    exec </dev/null",
    "    unset -f __mewcode_take",
    // Every variable of the supervisor's goes (names given when expanded, before it runs).
    '    eval \'unset -v "${!__mewcode_@}"; \'"$__mewcode_command"',
    "  )",
    "  __mewcode_code=$?",
    ...KILL_THE_REST.map((line) => `  ${line}`),
    // No command came (the input closed): mewcode is gone.
    "  IFS= read -r -d '' __mewcode_end || exit 0",
    `  printf '%sstatus %d\\n' "$__mewcode_end" "$__mewcode_code"`,
    `  printf '%s' "$__mewcode_end" >&2`,
    ...endIfLeftBehind(folders).map((line) => `  ${line}`),
    "done",
  ].join("\n");
}

/**
 * The kept sandbox of a session's own commands: at most one, started by the first command that finds none,
 * replaced when it ended or its plan changed. Never throws.
 */
export class KeptCommands {
  #sandbox: KeptCommandSandbox | null = null;
  /** Settles once the last sandbox asked for is ready, or could not start (see `#ready`). */
  #settled: Promise<unknown> = Promise.resolve();
  #busy = false;
  #startFailures = 0;
  #closed = false;

  /**
   * Runs `command` in the kept sandbox of `plan`; null when it did not run there (the sandbox is busy with
   * another command, or could not start, or found itself stale): run it in a sandbox of its own then.
   */
  async run(plan: KeptPlan, command: string, options: KeptCommandOptions): Promise<CommandResult | null> {
    if (this.#closed || this.#busy || this.#startFailures >= MAX_START_FAILURES || command.includes("\0")) {
      return null;
    }
    this.#busy = true;
    let replace = false;
    try {
      const started = performance.now();
      const sandbox = await this.#ready(plan, options);
      if (sandbox === null) return null;
      const remaining = options.timeoutMs - (performance.now() - started);
      const result = await sandbox.run(command, { ...options, timeoutMs: Math.max(1, remaining) });
      if (!sandbox.alive || result === null) {
        if (this.#sandbox === sandbox) this.#sandbox = null;
        await sandbox.kill();
        // Killed (a timeout, a search cancelled once the worker answered) or stale: the next command would
        // wait for a new one, which starts now instead.
        replace = true;
      }
      if (result === null || result.status === "failed") return result;
      return { ...result, durationMs: Math.round(performance.now() - started) };
    } finally {
      this.#busy = false;
      if (replace) this.warm(plan);
    }
  }

  /** Starts the sandbox of `plan` now, if none runs, so that the next command finds it ready. */
  warm(plan: KeptPlan): void {
    if (this.#closed || this.#busy || this.#startFailures >= MAX_START_FAILURES) return;
    if (this.#sandbox?.key === keyOf(plan) && this.#sandbox.alive) return;
    void this.#ready(plan, { timeoutMs: START_TIMEOUT_MS });
  }

  /** Ends the sandbox, if any. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#settled;
    const sandbox = this.#sandbox;
    this.#sandbox = null;
    await sandbox?.kill();
  }

  /**
   * The running sandbox of `plan`, started if needed; null when it cannot start. One at a time: a command
   * that comes while its sandbox is being started (warmed) waits for that one.
   */
  #ready(
    plan: KeptPlan,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<KeptCommandSandbox | null> {
    const ready = this.#settled.then(() => this.#readyNow(plan, options));
    this.#settled = ready.catch(() => null);
    return ready;
  }

  async #readyNow(
    plan: KeptPlan,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<KeptCommandSandbox | null> {
    const key = keyOf(plan);
    const current = this.#sandbox;
    if (current !== null && current.key === key && current.alive) return current;
    this.#sandbox = null;
    await current?.kill();
    if (this.#closed) return null;
    const start = await KeptCommandSandbox.start(plan, key, {
      limitMs: Math.min(START_TIMEOUT_MS, options.timeoutMs),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (!start.ok) {
      // A start given up because its command was cancelled says nothing of whether one can start.
      if (options.signal?.aborted !== true) this.#startFailures++;
      return null;
    }
    this.#startFailures = 0;
    if (this.#closed) {
      await start.sandbox.kill();
      return null;
    }
    this.#sandbox = start.sandbox;
    return start.sandbox;
  }
}

function keyOf(plan: KeptPlan): string {
  return [...plan.persistent.wrapper, "\0", ...plan.persistent.prologue].join("\0");
}

/**
 * A stream's reader for one command: bytes to the command until the end marker, then the status. Standard
 * output first waits for the start marker and the word after it (`go`, or `stale` when the command did
 * not run); standard error has no start marker (nothing but the command writes it before its end).
 */
interface Reading {
  /** The start marker and what follows it, until the word is whole; null once past (or for stderr). */
  before: { start: Uint8Array; bytes: Uint8Array } | null;
  /** Whether the word after the start marker was `stale` (stdout only). */
  stale: boolean;
  end: Uint8Array;
  /** Bytes that may be the beginning of the marker. */
  held: Uint8Array;
  /** After the marker: the status line as it arrives. */
  tail: string | null;
  /** Whether any byte went to the command's output. */
  taken: boolean;
  take: (bytes: Uint8Array) => void;
  done: () => void;
}

/** One bubblewrap process running the command supervisor. */
class KeptCommandSandbox {
  readonly key: string;
  #child: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #exited: Promise<Deno.CommandStatus>;
  #alive = true;
  #ready = Promise.withResolvers<void>();
  /** Standard output before the ready line; null once it came. */
  #early: Uint8Array | null = new Uint8Array(0);
  /** What bubblewrap said before the supervisor ran: why it could not start. */
  #diagnostics = "";
  #out: Reading | null = null;
  #err: Reading | null = null;
  #pumps: Promise<unknown>[];

  private constructor(key: string, child: Deno.ChildProcess) {
    this.key = key;
    this.#child = child;
    this.#stdin = child.stdin.getWriter();
    this.#exited = child.status.finally(() => {
      this.#alive = false;
      this.#ready.reject(new Error("exited"));
    });
    this.#ready.promise.catch(() => undefined);
    this.#pumps = [
      // Killed: what arrived was taken.
      passBytes(child.stdout, (bytes) => this.#onStdout(bytes)).catch(() => "").finally(() =>
        this.#out?.done()
      ),
      passBytes(child.stderr, (bytes) => this.#onStderr(bytes)).catch(() => "").finally(() =>
        this.#err?.done()
      ),
    ];
  }

  get alive(): boolean {
    return this.#alive;
  }

  static async start(
    plan: KeptPlan,
    key: string,
    options: { limitMs: number; signal?: AbortSignal },
  ): Promise<{ ok: true; sandbox: KeptCommandSandbox } | { ok: false; message: string }> {
    const child = spawnKeptSandbox(plan.persistent, ["-c", commandSupervisorScript(plan)], plan.env);
    if ("failed" in child) return { ok: false, message: child.failed };
    const sandbox = new KeptCommandSandbox(key, child);
    if (await waitForStart(sandbox.#ready.promise, options) === "ready" && sandbox.alive) {
      return { ok: true, sandbox };
    }
    await sandbox.kill();
    const detail = sandbox.#diagnostics.trim().split("\n").slice(0, 3).join("; ");
    return { ok: false, message: `the kept sandbox could not start: ${detail || "it exited at once"}` };
  }

  /**
   * Runs one command; null when it did not run (the sandbox was stale, or ended before it read the
   * command). A timeout or a cancellation kills the sandbox.
   */
  async run(command: string, options: KeptCommandOptions): Promise<CommandResult | null> {
    const started = performance.now();
    const limit = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT;
    const start = marker();
    const end = marker();
    const stdout = options.onStdout === undefined ? new TextCollector(limit) : null;
    const stderr = new TextCollector(limit);
    const outDone = Promise.withResolvers<void>();
    const errDone = Promise.withResolvers<void>();
    this.#out = {
      before: { start, bytes: new Uint8Array(0) },
      stale: false,
      end,
      held: new Uint8Array(0),
      tail: null,
      taken: false,
      take: options.onStdout ?? ((bytes) => stdout!.push(bytes)),
      done: () => outDone.resolve(),
    };
    this.#err = {
      before: null,
      stale: false,
      end,
      held: new Uint8Array(0),
      tail: null,
      taken: false,
      take: (bytes) => stderr.push(bytes),
      done: () => errDone.resolve(),
    };
    let stop: "timed-out" | "cancelled" | null = null;
    const stopped = Promise.withResolvers<void>();
    const onStop = (reason: "timed-out" | "cancelled") => {
      stop ??= reason;
      stopped.resolve();
    };
    const timer = setTimeout(() => onStop("timed-out"), options.timeoutMs);
    const onAbort = () => onStop("cancelled");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onStop("cancelled");
    try {
      if (stop === null) {
        // The end marker travels with the command; the supervisor reads it only once the command has ended.
        const text = new TextEncoder().encode(command);
        const request = concatBytes(
          new TextEncoder().encode(`${text.length}\n`),
          text,
          start,
          new Uint8Array(1),
          end,
          new Uint8Array(1),
        );
        this.#stdin.write(request).catch(() => undefined);
        const finished = Promise.all([outDone.promise, errDone.promise]);
        await Promise.race([finished, stopped.promise]);
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
    const out = this.#out;
    const err = this.#err!;
    this.#out = null;
    this.#err = null;
    if (out.stale) return null;
    if (stop !== null) {
      // What was held back in case it began a marker is the command's.
      if (out.before === null && out.tail === null) give(out, out.held);
      if (err.tail === null) give(err, err.held);
      await this.kill();
      const durationMs = Math.round(performance.now() - started);
      if (stop === "timed-out") {
        return { status: "timed-out", stdout: stdout?.finish() ?? "", stderr: stderr.finish(), durationMs };
      }
      // As a command per sandbox stopped by its signal: killed (SIGKILL).
      return {
        status: "exited",
        code: 137,
        stdout: stdout?.finish() ?? "",
        stderr: stderr.finish(),
        durationMs,
        started: true,
      };
    }
    const line = out.tail ?? "";
    const status = /^status (\d+)\n/.exec(line);
    if (status === null) {
      // The sandbox ended before the command started (it had just exited after the last one): run it
      // elsewhere. Ended during the command (the memory limit's killer can pick the supervisor): that is no
      // outcome of the command's own.
      if (out.before !== null || !out.taken && !err.taken) return null;
      return { status: "failed", message: "the sandbox ended during the command" };
    }
    return {
      status: "exited",
      code: Number(status[1]),
      stdout: stdout?.finish() ?? "",
      stderr: stderr.finish(),
      durationMs: Math.round(performance.now() - started),
      started: true,
    };
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

  #onStdout(bytes: Uint8Array): void {
    const reading = this.#out;
    if (reading === null) {
      // Before the first command: the ready line (nothing writes between commands: a stray byte is dropped).
      if (this.#early === null) return;
      this.#early = concatBytes(this.#early, bytes);
      if (indexOfBytes(this.#early, READY) === -1) return;
      this.#early = null;
      this.#ready.resolve();
      return;
    }
    if (reading.before !== null) {
      const before = reading.before;
      before.bytes = concatBytes(before.bytes, bytes);
      const at = indexOfBytes(before.bytes, before.start);
      if (at === -1) {
        // Keep what could be the start of the marker.
        before.bytes = before.bytes.slice(Math.max(0, before.bytes.length - before.start.length + 1));
        return;
      }
      const word = before.bytes.subarray(at + before.start.length);
      if (word.length < 2) return;
      if (word[0] === GO[0] && word[1] === GO[1]) {
        reading.before = null;
        bytes = word.slice(2);
      } else {
        // `stale`: the command did not run, and neither stream has more of it.
        reading.stale = true;
        reading.done();
        this.#err?.done();
        return;
      }
    }
    if (!feed(reading, bytes)) return;
    if (reading.tail!.includes("\n")) reading.done();
  }

  #onStderr(bytes: Uint8Array): void {
    const reading = this.#err;
    if (reading === null) {
      if (this.#diagnostics.length < 4096) this.#diagnostics += new TextDecoder().decode(bytes);
      return;
    }
    if (feed(reading, bytes)) reading.done();
  }
}

/**
 * Passes `bytes` to the reading until its end marker; true once the marker has been seen (what follows it
 * gathers in `tail`).
 */
function feed(reading: Reading, bytes: Uint8Array): boolean {
  if (reading.tail !== null) {
    reading.tail += new TextDecoder().decode(bytes);
    return true;
  }
  const joined = reading.held.length === 0 ? bytes : concatBytes(reading.held, bytes);
  const at = indexOfBytes(joined, reading.end);
  if (at !== -1) {
    if (at > 0) give(reading, joined.subarray(0, at));
    reading.held = new Uint8Array(0);
    reading.tail = new TextDecoder().decode(joined.subarray(at + reading.end.length));
    return true;
  }
  const keep = Math.min(joined.length, reading.end.length - 1);
  if (joined.length > keep) give(reading, joined.subarray(0, joined.length - keep));
  reading.held = joined.slice(joined.length - keep);
  return false;
}

function give(reading: Reading, bytes: Uint8Array): void {
  reading.taken = true;
  reading.take(bytes);
}

/** Text of a stream, at most `limit` characters. */
class TextCollector {
  #decoder = new TextDecoder();
  #text = "";
  #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(bytes: Uint8Array): void {
    if (this.#text.length > this.#limit) return;
    this.#text += this.#decoder.decode(bytes, { stream: true });
  }

  finish(): string {
    this.#text += this.#decoder.decode();
    return this.#text.length > this.#limit ? this.#text.slice(0, this.#limit) : this.#text;
  }
}

/** A fresh marker: SOH, 32 random hexadecimal digits, SOH (no NUL: it travels NUL-terminated). */
function marker(): Uint8Array {
  return new TextEncoder().encode(`\u0001${crypto.randomUUID().replaceAll("-", "")}\u0001`);
}
