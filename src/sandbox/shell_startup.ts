/**
 * How every shell of the sandbox starts: the start-up check that proves bubblewrap works here (with the fixes
 * when it does not), and the first line each shell runs. Used by ShellSandbox (shell_sandbox.ts).
 *
 * @module
 */
import { writeAndClose } from "../common/streams.ts";
import type { SandboxMode, ShellPlan } from "../tools/tool.ts";
import { keptSandboxCommand, processIsolationArguments } from "./bubblewrap.ts";

/** What to do when the sandbox cannot run, at the end of every such message. */
export const INSTALL_HINT =
  "install bubblewrap (apt-get install bubblewrap); on Ubuntu 23.10 or later also allow " +
  "unprivileged user namespaces (sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor " +
  "profile for bwrap); or choose --sandbox danger-full-access explicitly to run commands without a sandbox";

/**
 * What to say instead of INSTALL_HINT when Linux refused to start a program because its arguments and
 * environment are too long (E2BIG): installing bubblewrap, a sysctl or running without the sandbox would not
 * help (every program is started the same way), and the last two would only weaken the sandbox.
 */
export const TOO_LONG_HINT =
  "the command line or environment is too long for Linux to start a program (at most 128 KiB per argument " +
  'or variable, a few MB in all): most likely a long value in the "env" of a settings file, or a huge ' +
  "command or input; shorten it (put a long value in a file and set the variable to its path)";

/** Whether starting a program failed because its arguments and environment are too long (E2BIG). */
export function isTooLongToStart(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return ("code" in error && error.code === "E2BIG") || /\(os error 7\)/.test(error.message);
}

/**
 * The shell line that closes every file descriptor above 2 the shell inherited: a descriptor mewcode's own
 * parent left open without close-on-exec (an editor's, a CI runner's, a `make` job server's) reaches
 * mewcode's children, and bubblewrap passes it into the sandbox, where a command could write to a file
 * outside it through the descriptor (measured: `echo x >&7` reached a file opened by mewcode's parent).
 * bash closes them all (found under /proc/self/fd); sh's redirections name descriptors 3 to 9 only.
 */
export function closeInheritedDescriptors(shell: string): string {
  if (!/(^|\/)bash$/.test(shell)) return "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-";
  // No redirection on the loop: bash would save standard error above 2, and the loop would close the copy.
  // The listing's own descriptor is closed once listed: the -e test skips it.
  return "for __mewcode_fd in /proc/self/fd/*; do [[ -e $__mewcode_fd ]] && " +
    "__mewcode_fd=${__mewcode_fd##*/} && ((__mewcode_fd > 2)) && exec {__mewcode_fd}>&-; done; " +
    "unset -v __mewcode_fd";
}

/**
 * Runs the plan's sandbox once with `SHELL -c true` (the kept sandbox's, through its launcher, when the plan
 * keeps one), with the plan's environment, as every call starts it; returns null when it works, else the
 * message with the fixes.
 */
export async function preflight(
  options: {
    plan: Pick<ShellPlan, "wrapper" | "shell" | "seccomp" | "persistent" | "env">;
    timeoutMs: number;
    mode: SandboxMode;
  },
): Promise<string | null> {
  const { plan } = options;
  const command = plan.persistent !== undefined
    ? keptSandboxCommand(plan.persistent, ["-c", "true"])
    : { program: plan.wrapper[0], args: [...plan.wrapper.slice(1), plan.shell, "-c", "true"] };
  const program = command.program;
  if (program === undefined) return null;
  const bwrap = plan.persistent?.wrapper[0] ?? program;
  const seccompOnStdin = plan.persistent === undefined ? plan.seccomp : null;
  const prefix = `Cannot run Bash in the "${options.mode}" sandbox`;
  let output: Deno.CommandOutput;
  try {
    const child = new Deno.Command(program, {
      args: command.args,
      stdin: seccompOnStdin === null ? "null" : "piped",
      stdout: "null",
      stderr: "piped",
      clearEnv: true,
      // bubblewrap hands its environment on (`BubblewrapOptions.env`): one too long fails here, not at a call.
      env: plan.env,
      signal: AbortSignal.timeout(options.timeoutMs),
    }).spawn();
    if (seccompOnStdin !== null) await writeAndClose(child.stdin, seccompOnStdin);
    output = await child.output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return `${prefix}: bubblewrap ("${bwrap}") is not installed: ${INSTALL_HINT}`;
    }
    const reason = error instanceof Error ? error.message : String(error);
    const hint = isTooLongToStart(error) ? TOO_LONG_HINT : INSTALL_HINT;
    return `${prefix}: cannot start bubblewrap ("${bwrap}"): ${reason}: ${hint}`;
  }
  if (output.success) return null;
  const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").slice(0, 3).join("; ");
  const detail = stderr === "" ? `exit code ${output.code}` : stderr;
  const namespaces = /namespace|uid map|setting up|Operation not permitted|Permission denied/i.test(stderr)
    ? " (the kernel refused to create the sandbox's namespaces)"
    : "";
  const seccomp = /seccomp/i.test(stderr) ? " (the kernel refused the seccomp filter)" : "";
  return `${prefix}: bubblewrap failed its start-up check${namespaces}${seccomp}: ${detail}: ${INSTALL_HINT}`;
}

/**
 * The start-up check of a plan. When the plan keeps a sandbox across calls and that fails, a sandbox per
 * call is checked too: if it works, only the kept sandbox is given up (`keptFailure`).
 */
export async function checkStart(
  plan: ShellPlan,
  timeoutMs: number,
  mode: SandboxMode,
): Promise<{ failure: string | null; keptFailure: string | null }> {
  const failure = await preflight({ plan, timeoutMs, mode });
  if (failure === null || plan.persistent === undefined) return { failure, keptFailure: null };
  const { persistent: _kept, ...perCall } = plan;
  const perCallFailure = await preflight({ plan: perCall, timeoutMs, mode });
  return perCallFailure === null
    ? { failure: null, keptFailure: failure }
    : { failure: perCallFailure, keptFailure: null };
}

/**
 * How danger-full-access starts its shell: in bubblewrap with only a PID namespace where that works (so that
 * commands cannot read mewcode's environment through /proc), else directly; and the caveat that says which.
 */
export async function fullAccessWrapper(
  options: {
    bwrap: string | null;
    root: string;
    env: Record<string, string>;
    shell: string;
    timeoutMs: number;
  },
): Promise<{ wrapper: string[]; caveat: string }> {
  let wrapper: string[] = [];
  if (options.bwrap !== null) {
    const isolated = processIsolationArguments({
      bwrap: options.bwrap,
      root: options.root,
      env: options.env,
    });
    const check = await preflight({
      plan: { wrapper: isolated, shell: options.shell, seccomp: null, env: options.env },
      timeoutMs: options.timeoutMs,
      mode: "danger-full-access",
    });
    if (check === null) wrapper = isolated;
  }
  const caveat = wrapper.length === 0
    ? "danger-full-access runs commands without a PID namespace (bubblewrap is not available): they can " +
      "read mewcode's environment, including the API key, through /proc/<pid>/environ, and background " +
      "processes started with setsid can outlive the call"
    : "danger-full-access: commands can read and write everything your user can (files, network, " +
      "credentials); only mewcode's own process is out of their sight (a PID namespace)";
  return { wrapper, caveat };
}
