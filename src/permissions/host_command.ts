/**
 * Runs a command the user configured (their own hooks, their approval command) as the user: `/bin/sh -c`
 * in the workspace with the environment given, the input on standard input, standard output and standard
 * error apart. On a timeout or an abort its whole process group is stopped (SIGTERM, then SIGKILL), and
 * whatever of the group is left when the command ends is killed.
 *
 * @module
 */

/** How a command ended; the same shape as the shell sandbox's `CommandResult`. */
export type ProcessResult =
  | { status: "exited"; code: number; stdout: string; stderr: string; durationMs: number }
  | { status: "timed-out"; stdout: string; stderr: string; durationMs: number }
  | { status: "failed"; message: string };

/** What to run a command with. */
export interface HostCommandOptions {
  cwd: string;
  /** The whole environment of the command (nothing else is inherited). */
  env: Readonly<Record<string, string>>;
  stdin: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Characters kept of each output stream; default 1 MiB. */
  maxOutputChars?: number;
}

/** Runs commands as the user; a test seam for the callers. */
export type HostCommandRunner = (command: string, options: HostCommandOptions) => Promise<ProcessResult>;

const SHELL = "/bin/sh";
const KILL_GRACE_MS = 500;
/** How long output is still read after the command exits (a process that left the group may hold it). */
const DRAIN_GRACE_MS = 1_000;
const DEFAULT_MAX_OUTPUT = 1024 * 1024;

/** Runs `command` with `/bin/sh -c`; never throws. */
export async function runHostCommand(command: string, options: HostCommandOptions): Promise<ProcessResult> {
  const started = performance.now();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(SHELL, {
      args: ["-c", command],
      cwd: options.cwd,
      clearEnv: true,
      env: { ...options.env },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      // Its own process group, so a timeout stops everything it started.
      detached: true,
    }).spawn();
  } catch (error) {
    return { status: "failed", message: `cannot start ${SHELL}: ${(error as Error).message}` };
  }
  const signalGroup = (signal: Deno.Signal): void => {
    try {
      Deno.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  let stopRequested = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = (): void => {
    if (stopRequested) return;
    stopRequested = true;
    signalGroup("SIGTERM");
    killTimer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stop();
  const limit = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT;
  const stdout = collect(child.stdout, limit);
  const stderr = collect(child.stderr, limit);
  const writer = child.stdin.getWriter();
  const feeding = writer.write(new TextEncoder().encode(options.stdin)).then(() => writer.close()).catch(
    () => undefined, // The command exited without reading its input: its exit status says why.
  );
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    options.signal?.removeEventListener("abort", stop);
  }
  // Whatever of the group survived its leader goes too, however the command ended: nothing it started in
  // the background (a formatter's config can start anything) runs on after it.
  signalGroup("SIGKILL");
  const drainTimer = setTimeout(() => {
    stdout.cancel();
    stderr.cancel();
    writer.abort().catch(() => undefined);
  }, DRAIN_GRACE_MS);
  const [out, err] = await Promise.all([stdout.text, stderr.text, feeding]).finally(() =>
    clearTimeout(drainTimer)
  );
  const durationMs = Math.round(performance.now() - started);
  if (timedOut) return { status: "timed-out", stdout: out, stderr: err, durationMs };
  return { status: "exited", code: status.code, stdout: out, stderr: err, durationMs };
}

/** Reads a stream to its end (or until cancelled) as text, keeping at most `limit` characters. */
function collect(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): { text: Promise<string>; cancel(): void } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const text = (async () => {
    let collected = "";
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        if (collected.length <= limit) collected += decoder.decode(value, { stream: true });
      }
    } catch {
      // Cancelled, or the stream failed: keep what arrived.
    }
    collected += decoder.decode();
    return collected.length > limit ? collected.slice(0, limit) : collected;
  })();
  return { text, cancel: () => void reader.cancel().catch(() => undefined) };
}
