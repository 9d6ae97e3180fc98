/**
 * Runs a command in the shell sandbox from the main process, for work mewcode does itself on a
 * repository's behalf: a trusted repository's hooks, and reading the repository's state with git (whose
 * configuration could otherwise run code). Unlike the Bash tool, standard input carries data, standard
 * output and standard error stay apart, and the exit code is returned as is.
 *
 * The process tree is ended the way the Bash tool ends it: bubblewrap is stopped only once the shell
 * announced that the sandbox is built (killed during setup, it orphans the sandbox's first process).
 *
 * @module
 */
import { writeAndClose } from "../common/streams.ts";
import type { ShellPlan } from "../tools/tool.ts";
import { isTooLongToStart, TOO_LONG_HINT } from "./shell_startup.ts";

/** How a sandboxed command ended. */
export type CommandResult =
  | {
    status: "exited";
    code: number;
    stdout: string;
    stderr: string;
    durationMs: number;
    /** Whether the command's shell started (inside the sandbox, once built): its exit code is its own. */
    started: boolean;
  }
  | { status: "timed-out"; stdout: string; stderr: string; durationMs: number }
  | { status: "failed"; message: string };

/** What to run and with what. */
export interface SandboxedCommand {
  /** A shell command, run with `SHELL -c`. */
  command: string;
  /** Written to the command's standard input, then closed; empty by default. */
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept per stream, in characters; default 1 MiB. */
  maxOutputChars?: number;
  /**
   * Takes standard output as it arrives, as bytes, instead of the result's `stdout` (then empty), with no
   * limit: for a caller that reads a large output as it comes rather than holding it whole. Each piece comes
   * in the same buffer, reused once `onStdout` returns: copy what you keep.
   */
  onStdout?: (bytes: Uint8Array) => void;
}

const READY = "\u0001mewcode-command-ready\u0001\n";
/** The variable the command's input arrives in; the shell unsets it before anything else runs. */
const INPUT_VARIABLE = "MEWCODE_COMMAND_INPUT";
const READY_WAIT_MS = 5_000;
const KILL_GRACE_MS = 500;
const DEFAULT_MAX_OUTPUT = 1024 * 1024;

/** Runs `command` under `plan` (its wrapper, seccomp program and prologue); never throws. */
export async function runSandboxedCommand(
  plan: ShellPlan,
  request: SandboxedCommand,
): Promise<CommandResult> {
  if (plan.unavailable !== null) return { status: "failed", message: plan.unavailable };
  const started = performance.now();
  // The announcement goes to stderr first. bubblewrap takes its standard input for the seccomp program, so
  // the command's input is a here-document. Its text comes in the environment, not in the script: a
  // process's arguments are readable by every local user (`ps`) while it runs, and a hook's input holds what
  // the tool read or wrote. The here-document's one line expands the variable (its value is not expanded
  // again) and ends it with a line break, as the input's own last one, or one added.
  const announce = `printf '${READY.replaceAll("\u0001", "\\001").replace("\n", "\\n")}' >&2`;
  const input = request.stdin ?? "";
  const delimiter = `MEWCODE_INPUT_${crypto.randomUUID().replaceAll("-", "")}`;
  const script = [
    announce,
    `__mewcode_input=$${INPUT_VARIABLE}; unset ${INPUT_VARIABLE}`,
    ...plan.prologue,
    input === "" ? `{\n${request.command}\n} </dev/null` : `{\n${request.command}\n} <<${delimiter}`,
    ...(input === "" ? [] : ["$__mewcode_input", delimiter]),
  ]
    .join("\n");
  const program = plan.wrapper[0] ?? plan.shell;
  const args = plan.wrapper.length === 0
    ? ["-c", script]
    : [...plan.wrapper.slice(1), plan.shell, "-c", script];
  // Killing bubblewrap ends its whole sandbox (the PID namespace dies with it), so only a shell run
  // without it needs a process group of its own to be killed by (a detached spawn forks
  // the whole runtime: see runShell in src/tools/_shell_run.ts).
  const grouped = plan.wrapper.length === 0;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      clearEnv: true,
      env: { ...plan.env, [INPUT_VARIABLE]: input.endsWith("\n") ? input.slice(0, -1) : input },
      stdin: plan.seccomp === null ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: grouped,
    }).spawn();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      status: "failed",
      message: `cannot start ${program}: ${reason}${isTooLongToStart(error) ? `: ${TOO_LONG_HINT}` : ""}`,
    };
  }
  const limit = request.maxOutputChars ?? DEFAULT_MAX_OUTPUT;
  let ready = plan.wrapper.length === 0;
  let killRequested = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  // The announcement can be read after the exit was seen: a stop requested then has nothing left to kill,
  // and must not leave a timer behind.
  let exited = false;
  const signal = (name: Deno.Signal) => {
    try {
      // The main process may signal a whole group (the Bash worker may not).
      Deno.kill(grouped ? -child.pid : child.pid, name);
    } catch {
      // Gone already.
    }
  };
  const kill = () => {
    if (exited) return;
    signal("SIGTERM");
    killTimer = setTimeout(() => signal("SIGKILL"), KILL_GRACE_MS);
  };
  let readyTimer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const stop = () => {
    if (killRequested) return;
    killRequested = true;
    if (ready) kill();
    else readyTimer = setTimeout(kill, READY_WAIT_MS);
  };
  const onReady = () => {
    ready = true;
    if (killRequested && readyTimer !== undefined) {
      clearTimeout(readyTimer);
      kill();
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, request.timeoutMs);
  const onAbort = () => stop();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted) stop();
  const stdout = request.onStdout === undefined
    ? collect(child.stdout, limit)
    : passBytes(child.stdout, request.onStdout);
  const stderr = collect(child.stderr, limit, onReady);
  if (plan.seccomp !== null) await writeAndClose(child.stdin, plan.seccomp);
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    exited = true;
    clearTimeout(timer);
    clearTimeout(readyTimer);
    clearTimeout(killTimer);
    request.signal?.removeEventListener("abort", onAbort);
  }
  const [out, err] = await Promise.all([stdout, stderr]);
  const durationMs = Math.round(performance.now() - started);
  if (timedOut) return { status: "timed-out", stdout: out, stderr: err, durationMs };
  return { status: "exited", code: status.code, stdout: out, stderr: err, durationMs, started: ready };
}

/**
 * Hands a stream's bytes to `take` as they arrive, each time in the same buffer (`take` must copy what it
 * keeps); resolves to "" at its end. A fresh 64 KiB chunk per read would leave megabytes of garbage behind a
 * large output until the next collection.
 */
export async function passBytes(
  stream: ReadableStream<Uint8Array>,
  take: (bytes: Uint8Array) => void,
): Promise<string> {
  const reader = stream.getReader({ mode: "byob" });
  let buffer = new ArrayBuffer(PASS_BUFFER_BYTES);
  try {
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (value === undefined) break;
      if (value.length > 0) take(value);
      buffer = value.buffer as ArrayBuffer;
      if (done) break;
    }
  } finally {
    reader.releaseLock();
  }
  return "";
}

const PASS_BUFFER_BYTES = 64 * 1024;

/** Reads a stream to its end as text, keeping at most `limit` characters; strips the announcement. */
async function collect(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onReady?: () => void,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let watching = onReady !== undefined;
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    if (watching) {
      const at = text.indexOf(READY);
      if (at !== -1) {
        watching = false;
        onReady?.();
        text = text.slice(0, at) + text.slice(at + READY.length);
      }
    }
    if (text.length > limit * 2) text = text.slice(0, limit * 2);
  }
  text += decoder.decode();
  return text.length > limit ? text.slice(0, limit) : text;
}
