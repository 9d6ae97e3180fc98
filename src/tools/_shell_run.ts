/**
 * Runs one shell command under a plan and ends its whole process tree, with only the permission the shell
 * worker has (to spawn the plan's program). Private to src/tools/.
 *
 * Stopping bubblewrap is timed: killed while it still builds the sandbox, bubblewrap leaves the sandbox's
 * first process orphaned (that process arms its own parent-death signal only once the sandbox is built),
 * and the command runs on outside any limit of ours. So the shell first announces on standard error that
 * it runs (the sandbox is complete), and a stop requested before that waits for the announcement, for
 * bubblewrap to exit, or for a last-resort delay.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import { writeAndClose } from "../common/streams.ts";
import { type Output, OutputCollector, TextSanitizer } from "./_shell_output.ts";
import type { ShellPlan } from "./tool.ts";

/** How a shell run ended. */
export type ShellRun =
  | { status: "exited"; code: number; output: Output; durationMs: number }
  | { status: "timed-out"; output: Output; durationMs: number }
  | { status: "cancelled"; output: Output; durationMs: number }
  | { status: "spawn-failed"; message: string };

/** Between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 500;
/** How long the pipes may stay open after the shell exited (a background child holding stdout). */
const DRAIN_MS = 200;
/** The longest a stop waits for the sandbox to be built before it kills bubblewrap anyway. */
const READY_WAIT_MS = 5_000;
/** What the shell writes on standard error first: the sandbox is built. Never shown. */
const READY = "\u0001mewcode-shell-ready\u0001\n";

/** Starts the shell under the plan, collects its output, and ends its whole process tree. */
export async function runShell(
  plan: ShellPlan,
  root: string,
  command: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<ShellRun> {
  // The prologue (the announcement, stdin from /dev/null, stderr joined to stdout in one pipe in exact
  // order, the sandbox's resource limits) runs on its own lines before COMMAND is parsed, so even
  // COMMAND's syntax errors land in the same stream and nothing of COMMAND runs outside the limits.
  const announce = `printf '${READY.replaceAll("\u0001", "\\001").replace("\n", "\\n")}' >&2`;
  const script = [announce, ...plan.prologue, "exec 2>&1", command].join("\n");
  const program = plan.wrapper[0] ?? plan.shell;
  const args = plan.wrapper.length === 0
    ? ["-c", script]
    : [...plan.wrapper.slice(1), plan.shell, "-c", script];
  const started = performance.now();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: root,
      clearEnv: true,
      env: plan.env,
      // bubblewrap reads the seccomp program from standard input (`--seccomp 0`) and closes it.
      stdin: plan.seccomp === null ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      // Without bubblewrap, a new session, so that the shell's pid is also its process group: the group is
      // what gets killed. bubblewrap needs none (killing it ends its PID namespace), and a session is dear:
      // Deno's setsid runs between fork and exec, which rules out posix_spawn, and forking copies the page
      // tables of the whole runtime (measured: 10.9 ms to spawn bubblewrap detached, 1.1 ms not).
      detached: plan.wrapper.length === 0,
    }).spawn();
  } catch (error) {
    return { status: "spawn-failed", message: `${program}: ${describeError(error)}` };
  }
  const collector = new OutputCollector();
  const killer = new TreeKiller(child, plan);
  const readers = [child.stdout.getReader(), child.stderr.getReader()] as const;
  const pumps = [pump(readers[0], collector), pump(readers[1], collector, () => killer.ready())];
  let stopReason: "timed-out" | "cancelled" | null = null;
  const stop = (reason: "timed-out" | "cancelled") => {
    if (stopReason !== null) return;
    stopReason = reason;
    killer.terminate();
  };
  // Watch the time limit and the signal before anything is awaited: an abort that arrives while
  // bubblewrap reads its seccomp program must still stop the command.
  const timer = setTimeout(() => stop("timed-out"), options.timeoutMs);
  const onAbort = () => stop("cancelled");
  options.signal.addEventListener("abort", onAbort, { once: true });
  if (options.signal.aborted) stop("cancelled");
  if (plan.seccomp !== null) await writeAndClose(child.stdin, plan.seccomp);
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
  await killer.exited();
  await drain(pumps, DRAIN_MS);
  await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})));
  await Promise.all(pumps);
  const output = collector.finish();
  const durationMs = Math.round(performance.now() - started);
  if (stopReason !== null) return { status: stopReason, output, durationMs };
  return { status: "exited", code: status.code, output, durationMs };
}

/**
 * Reads one pipe into the collector. With `onReady`, the pipe is standard error before `exec 2>&1`: the
 * shell's announcement is taken out of it (it may arrive split across reads) and reported.
 */
async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  collector: OutputCollector,
  onReady?: () => void,
): Promise<void> {
  const sanitizer = new TextSanitizer();
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  let watching = onReady !== undefined;
  let pending = "";
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!watching) {
        collector.push(sanitizer.write(value));
        continue;
      }
      // Before the announcement only bubblewrap's own messages arrive here: plain text, decoded here.
      pending += decoder.decode(value, { stream: true });
      const at = pending.indexOf(READY);
      if (at === -1) continue;
      watching = false;
      onReady?.();
      collector.push(
        sanitizer.write(new TextEncoder().encode(pending.slice(0, at) + pending.slice(at + READY.length))),
      );
      pending = "";
    }
  } catch {
    // The reader was cancelled or the pipe broke: keep what arrived.
  }
  if (pending !== "") collector.push(sanitizer.write(new TextEncoder().encode(pending + decoder.decode())));
  collector.push(sanitizer.end());
}

/** Waits for the pipes to close, at most `limitMs`. */
async function drain(pumps: Promise<void>[], limitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((resolve) => timer = setTimeout(resolve, limitMs));
  await Promise.race([Promise.all(pumps), limit]);
  clearTimeout(timer);
}

/**
 * Ends the process tree of one call with only the permissions Bash has. Under bubblewrap, killing
 * bubblewrap once the sandbox is built ends its PID namespace (`--die-with-parent`), `setsid` and `nohup`
 * children included. Without it, the shell is spawned again to signal the process group, since
 * `Deno.kill(-pid)` needs full run permission.
 */
class TreeKiller {
  #child: Deno.ChildProcess;
  #plan: ShellPlan;
  #escalation: ReturnType<typeof setTimeout> | undefined;
  #readyWait: ReturnType<typeof setTimeout> | undefined;
  #signals: Promise<void>[] = [];
  #done = false;
  #ready = false;
  #requested = false;

  constructor(child: Deno.ChildProcess, plan: ShellPlan) {
    this.#child = child;
    this.#plan = plan;
  }

  /** The shell runs, so the sandbox is complete: a stop that waited for it goes ahead. */
  ready(): void {
    this.#ready = true;
    if (this.#requested && this.#readyWait !== undefined) {
      clearTimeout(this.#readyWait);
      this.#readyWait = undefined;
      this.#kill();
    }
  }

  /** SIGTERM now (once the sandbox is built), SIGKILL after a short grace unless the shell has exited. */
  terminate(): void {
    if (this.#requested) return;
    this.#requested = true;
    if (this.#ready || this.#plan.wrapper.length === 0) {
      this.#kill();
      return;
    }
    this.#readyWait = setTimeout(() => {
      this.#readyWait = undefined;
      this.#kill();
    }, READY_WAIT_MS);
  }

  /** Called once the shell has exited: stops the escalation and kills what is left of the group. */
  async exited(): Promise<void> {
    this.#done = true;
    clearTimeout(this.#escalation);
    clearTimeout(this.#readyWait);
    // Background children (`cmd &`) of a direct shell are still in its group; bubblewrap's are already gone.
    if (this.#plan.wrapper.length === 0) this.#signals.push(this.#signalGroup("SIGKILL"));
    await Promise.all(this.#signals);
  }

  #kill(): void {
    // The announcement can be read after the exit was seen: nothing is left to kill, and no timer may stay.
    if (this.#done) return;
    this.#signal("SIGTERM");
    this.#escalation = setTimeout(() => this.#signal("SIGKILL"), KILL_GRACE_MS);
  }

  #signal(signal: "SIGTERM" | "SIGKILL"): void {
    if (this.#done) return;
    try {
      this.#child.kill(signal);
    } catch {
      // Already exited.
    }
    if (this.#plan.wrapper.length === 0) this.#signals.push(this.#signalGroup(signal));
  }

  async #signalGroup(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    const name = signal === "SIGTERM" ? "TERM" : "KILL";
    try {
      await new Deno.Command(this.#plan.shell, {
        args: ["-c", `kill -s ${name} -- -${this.#child.pid} 2>/dev/null`],
        clearEnv: true,
        env: this.#plan.env,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output();
    } catch {
      // Nothing more can be done with Bash's permissions; the direct kill above still ended the shell.
    }
  }
}
