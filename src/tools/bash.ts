/**
 * Bash: runs one shell command in the workspace, under the session's shell plan (bubblewrap or direct).
 *
 * Runs inside a worker whose only permission is to spawn the sandbox binary (or, in
 * `danger-full-access`, the shell itself): no environment, file or `Deno.kill(-pid)` access. So the
 * process tree is ended through what those permissions allow: killing bubblewrap ends its whole PID
 * namespace; without bubblewrap, the shell itself signals the call's process group.
 *
 * @module
 */
import { z } from "zod";
import { assertNever, describeError } from "./errors.ts";
import { defineTool, errorResult, type ShellPlan, textResult, type ToolResult } from "./tool.ts";

/** Default time limit of one command in milliseconds. */
export const BASH_DEFAULT_TIMEOUT_MS = 30_000;
/** Largest time limit the model may ask for in milliseconds. */
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Output beyond this many characters is cut in the middle. */
export const BASH_OUTPUT_LIMIT = 10_000;
const HEAD_CHARS = 2_000;
const TAIL_CHARS = BASH_OUTPUT_LIMIT - HEAD_CHARS;
/** Between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 500;
/** How long the pipes may stay open after the shell exited (a background child holding stdout). */
const DRAIN_MS = 200;
/** Added to the command's own limit for the executor's hard limit, so Bash reports its own timeout. */
const EXECUTOR_GRACE_MS = 5_000;

const BASH_DESCRIPTION =
  `Runs a shell command with bash -c in the workspace root and returns its combined output and exit code.

Use it for what needs a program: builds, tests, linters, package managers, git (status, diff, log, commit), running scripts. Do NOT use it to read, search or change files: use ReadFile to read, Grep to search contents, Glob to find files by name, and EditFile or WriteFile to change files (not cat, head, tail, grep, find, sed, awk or echo >).

Every call starts a fresh shell in the workspace root: nothing carries over between calls (cd, exported variables, shell functions, activated virtualenvs). Use absolute paths, or chain commands in one call: "cd packages/api && npm test". Standard input is empty (/dev/null), so commands that wait for input, a pager or an editor do not hang; pagers are set to cat and the terminal is "dumb". Pass non-interactive flags (for example --yes) where a tool asks questions.

timeout is in milliseconds: default 30000 (30 s), at most 600000 (10 min). On timeout the command and every process it started are killed and you get the output so far. Background processes (cmd &) do not outlive the call: start servers and watchers only when the same command also uses and stops them.

Output: stdout and stderr merged in the order they were written, as <output>...</output> followed by <exit_code>N</exit_code>. A non-zero exit code is a normal result: read the output to see what failed. Output longer than 10000 characters keeps the first 2000 and the last 8000 with a note of how many were cut, so filter noisy commands (for example "npm test 2>&1 | tail -n 50" or "--quiet"). Colours and other escape sequences are removed; invalid UTF-8 is replaced.

Sandbox: by default (workspace-write) the command can write only inside the workspace and to a private /tmp that is discarded after the call; everything else is read-only, .git/hooks, .git/config and .mewcode are read-only, credentials such as ~/.ssh are hidden, the environment holds no secrets, and there is no network access, so downloads and installs fail unless the user enabled the network. In read-only mode nothing can be written. A write that fails with "Read-only file system" is the sandbox: do not try to work around it; tell the user what you need instead.`;

const BashInput = z.object({
  command: z.string().describe(
    'The shell command to run, for example "npm test" or "git status". Runs in the workspace root',
  ),
  timeout: z.number().int().min(1).max(BASH_MAX_TIMEOUT_MS).optional().describe(
    "Time limit in milliseconds, at most 600000; default 30000",
  ),
}).strict();

/** The input of Bash. */
export type BashInput = z.infer<typeof BashInput>;

/** Runs a shell command in the workspace under the session's sandbox. */
export const bashTool = defineTool({
  name: "Bash",
  category: "shell",
  description: BASH_DESCRIPTION,
  inputSchema: BashInput,
  isReadOnly: false,
  isDestructive: true,
  isConcurrencySafe: () => false,
  validateInput(input) {
    if (input.command.trim() === "") return "Cannot run Bash: command is empty: give the command to run";
    return null;
  },
  timeoutMs: (input) => (input.timeout ?? BASH_DEFAULT_TIMEOUT_MS) + EXECUTOR_GRACE_MS,
  async execute(context, input) {
    if (context.shell.unavailable !== null) {
      return errorResult(context.shell.unavailable, { status: "unavailable" });
    }
    if (context.signal.aborted) return errorResult(cancelledMessage(""), { status: "cancelled" });
    const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;
    const run = await runShell(context.shell, context.root, input.command, {
      timeoutMs,
      signal: context.signal,
    });
    return shellResult(run, timeoutMs);
  },
});

type ShellRun =
  | { status: "exited"; code: number; output: Output; durationMs: number }
  | { status: "timed-out"; output: Output; durationMs: number }
  | { status: "cancelled"; output: Output; durationMs: number }
  | { status: "spawn-failed"; message: string };

interface Output {
  text: string;
  /** Characters cut from the middle. */
  cut: number;
}

function shellResult(run: ShellRun, timeoutMs: number): ToolResult {
  switch (run.status) {
    case "spawn-failed":
      return errorResult(`Cannot run Bash command: ${run.message}`, { status: "spawn-failed" });
    case "exited":
      return textResult(`${wrapOutput(run.output)}\n<exit_code>${run.code}</exit_code>`, {
        status: "exited",
        exitCode: run.code,
        durationMs: run.durationMs,
        charactersCut: run.output.cut,
      });
    case "timed-out":
      return errorResult(
        `Bash command timed out after ${timeoutMs} ms and was killed with every process it started; ` +
          `output so far:\n${wrapOutput(run.output)}`,
        { status: "timeout", durationMs: run.durationMs, charactersCut: run.output.cut },
      );
    case "cancelled":
      return errorResult(cancelledMessage(wrapOutput(run.output)), {
        status: "cancelled",
        durationMs: run.durationMs,
        charactersCut: run.output.cut,
      });
    default:
      return assertNever(run);
  }
}

function cancelledMessage(output: string): string {
  const base = "Bash command was cancelled before it finished: the user interrupted the call";
  return output === "" ? base : `${base}; output so far:\n${output}`;
}

function wrapOutput(output: Output): string {
  return `<output>${output.text.replace(/\n$/, "")}</output>`;
}

/** Starts the shell under the plan, collects its output, and ends its whole process tree. */
async function runShell(
  plan: ShellPlan,
  root: string,
  command: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<ShellRun> {
  // The prologue (stdin from /dev/null, stderr joined to stdout in one pipe in exact order, the sandbox's
  // resource limits) runs on its own lines before COMMAND is parsed, so even COMMAND's syntax errors land
  // in the same stream and nothing of COMMAND runs outside the limits.
  const script = [...plan.prologue, "exec 2>&1", command].join("\n");
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
      // A new session, so the shell's pid is also its process group: the group is what gets killed.
      detached: true,
    }).spawn();
  } catch (error) {
    return { status: "spawn-failed", message: `${program}: ${describeError(error)}` };
  }
  if (plan.seccomp !== null) await writeAndClose(child.stdin, plan.seccomp);
  const collector = new OutputCollector();
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pumps = readers.map((reader) => pump(reader, collector));
  const killer = new TreeKiller(child, plan);
  let stopReason: "timed-out" | "cancelled" | null = null;
  const stop = (reason: "timed-out" | "cancelled") => {
    if (stopReason !== null) return;
    stopReason = reason;
    killer.terminate();
  };
  const timer = setTimeout(() => stop("timed-out"), options.timeoutMs);
  const onAbort = () => stop("cancelled");
  options.signal.addEventListener("abort", onAbort, { once: true });
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

/** Hands bubblewrap the seccomp program and closes the pipe (it reads to the end before it starts). */
async function writeAndClose(stdin: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch {
    // bubblewrap exited before reading everything: its exit status and output say why.
  } finally {
    writer.releaseLock();
  }
}

async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  collector: OutputCollector,
): Promise<void> {
  const sanitizer = new TextSanitizer();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      collector.push(sanitizer.write(value));
    }
  } catch {
    // The reader was cancelled or the pipe broke: keep what arrived.
  }
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
 * bubblewrap ends its PID namespace (`--die-with-parent`), `setsid` and `nohup` children included.
 * Without it, the shell is spawned again to signal the process group, since `Deno.kill(-pid)` needs
 * full run permission.
 */
class TreeKiller {
  #child: Deno.ChildProcess;
  #plan: ShellPlan;
  #escalation: ReturnType<typeof setTimeout> | undefined;
  #signals: Promise<void>[] = [];
  #done = false;

  constructor(child: Deno.ChildProcess, plan: ShellPlan) {
    this.#child = child;
    this.#plan = plan;
  }

  /** SIGTERM now, SIGKILL after a short grace unless the shell has exited. */
  terminate(): void {
    this.#signal("SIGTERM");
    this.#escalation = setTimeout(() => this.#signal("SIGKILL"), KILL_GRACE_MS);
  }

  /** Called once the shell has exited: stops the escalation and kills what is left of the group. */
  async exited(): Promise<void> {
    this.#done = true;
    clearTimeout(this.#escalation);
    // Background children (`cmd &`) of a direct shell are still in its group; bubblewrap's are already gone.
    if (this.#plan.wrapper.length === 0) this.#signals.push(this.#signalGroup("SIGKILL"));
    await Promise.all(this.#signals);
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

/**
 * Keeps the first HEAD_CHARS and a rolling last TAIL_CHARS of the output, so memory stays bounded
 * however much a command prints.
 */
class OutputCollector {
  #head = "";
  #headFull = false;
  #tail: string[] = [];
  #tailLength = 0;
  #total = 0;

  push(text: string): void {
    if (text === "") return;
    this.#total += text.length;
    if (!this.#headFull) {
      let room = HEAD_CHARS - this.#head.length;
      if (text.length <= room) {
        this.#head += text;
        return;
      }
      if (isHighSurrogate(text.charCodeAt(room - 1))) room -= 1;
      this.#head += text.slice(0, room);
      text = text.slice(room);
      this.#headFull = true;
    }
    this.#tail.push(text);
    this.#tailLength += text.length;
    if (this.#tailLength > 4 * TAIL_CHARS) {
      const kept = this.#tail.join("").slice(-TAIL_CHARS);
      this.#tail = [kept];
      this.#tailLength = kept.length;
    }
  }

  finish(): Output {
    const tail = this.#tail.join("");
    if (this.#total <= BASH_OUTPUT_LIMIT) return { text: this.#head + tail, cut: 0 };
    let kept = tail.slice(-TAIL_CHARS);
    if (isLowSurrogate(kept.charCodeAt(0))) kept = kept.slice(1);
    const cut = this.#total - this.#head.length - kept.length;
    const marker = `\n... [${cut} characters cut from the middle of the output] ...\n`;
    return { text: this.#head + marker + kept, cut };
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

// CSI, OSC (ended by BEL or ST), DCS/SOS/PM/APC strings, other two-character escapes (not the
// introducers [ ] P X ^ _, so an unfinished sequence is not mistaken for one), and 8-bit CSI.
const ANSI_SEQUENCE =
  // deno-lint-ignore no-control-regex -- matching escape sequences is the point
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-OQ-WYZ\\`-~])|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and newline (carriage returns are handled first), DEL and C1 controls.
// deno-lint-ignore no-control-regex -- removing control characters is the point
const CONTROL_CHARACTERS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** An escape sequence this long without its end is not one: its ESC is dropped as a stray control. */
const MAX_PENDING_ESCAPE = 1024;

/**
 * Turns a byte stream into clean text: invalid UTF-8 becomes U+FFFD, escape sequences (even split
 * across chunks) and other control characters are removed, CRLF and lone CR become LF.
 */
class TextSanitizer {
  #decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  #pending = "";

  write(bytes: Uint8Array): string {
    const text = this.#pending + this.#decoder.decode(bytes, { stream: true });
    const split = incompleteSuffixStart(text);
    this.#pending = text.slice(split);
    return clean(text.slice(0, split));
  }

  end(): string {
    const text = this.#pending + this.#decoder.decode();
    this.#pending = "";
    return clean(text);
  }
}

/** Where a trailing fragment starts that the next chunk may complete (an escape sequence, or CR before LF). */
function incompleteSuffixStart(text: string): number {
  if (text.endsWith("\r")) return text.length - 1;
  const escape = Math.max(text.lastIndexOf("\x1b"), text.lastIndexOf("\x9b"));
  if (escape === -1 || text.length - escape > MAX_PENDING_ESCAPE) return text.length;
  ANSI_SEQUENCE.lastIndex = escape;
  const match = ANSI_SEQUENCE.exec(text);
  ANSI_SEQUENCE.lastIndex = 0;
  if (match !== null && match.index === escape) return text.length;
  return escape;
}

function clean(text: string): string {
  if (text.includes("\x1b") || text.includes("\x9b")) text = text.replace(ANSI_SEQUENCE, "");
  if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
  return text.replace(CONTROL_CHARACTERS, "");
}
