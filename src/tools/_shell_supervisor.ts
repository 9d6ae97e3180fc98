/**
 * The scripts of a sandbox kept across Bash calls (see `_shell_host.ts` for how a call runs in it): the
 * supervisor that runs as process 1 of the sandbox, and the command shell it starts before each call.
 *
 * @module
 */
import { shellQuote } from "../common/shell_quote.ts";
import type { PersistentShell, ShellPlan } from "./tool.ts";
import { endIfLeftBehind, KILL_THE_REST, listScratch } from "../sandbox/supervisor_lines.ts";

/**
 * The shell each command runs in: the session's own bash (`plan.shell`), started by the supervisor before
 * the command arrives, so that it is `bash -c` in every way that shows (`$$`, `$0`, `BASH`, no variable,
 * function or option of the supervisor's). It reads the command and the start marker, checks the mount
 * table against the one the sandbox started with (its first argument), lets go of the supervisor's pipes,
 * and runs the command. It holds the pipes only while no other process exists in the sandbox.
 */
const COMMAND_SHELL = [
  "IFS= read -r -d '' __mewcode_command && IFS= read -r -d '' __mewcode_start || exit 0",
  "IFS= read -r -d '' __mewcode_now < /proc/self/mountinfo",
  `if [[ $__mewcode_now != "$1" ]]; then printf '\\001mewcode stale\\n' >&2; exit 0; fi`,
  `printf '\\0%s\\0' "$__mewcode_start"`,
  "exec </dev/null 2>&1",
  "set --",
  `eval 'unset -v __mewcode_command __mewcode_start __mewcode_now BASH_EXECUTION_STRING; '"$__mewcode_command"`,
].join("\n");

/**
 * The supervisor (see the module doc): from its unreadable copy of bash, it starts the command shell for the
 * next call, waits for it, kills what is left, reports, and checks the scratch folders. Only builtins run in
 * it between commands.
 */
export function supervisorScript(plan: ShellPlan & { persistent: PersistentShell }): string {
  const folders = plan.persistent.scratch;
  return [
    ...plan.persistent.prologue,
    "IFS= read -r -d '' __mewcode_mounts < /proc/self/mountinfo",
    ...listScratch("__mewcode_scratch", folders),
    `printf '\\001mewcode ready\\n' >&2`,
    "while :; do",
    // The next command's shell starts before the command arrives (a fork and an exec cost about 6 ms here).
    `  ( exec ${shellQuote(plan.shell)} -c ${shellQuote(COMMAND_SHELL)} ${
      shellQuote(plan.shell)
    } "$__mewcode_mounts" )`,
    "  __mewcode_code=$?",
    ...KILL_THE_REST.map((line) => `  ${line}`),
    // No command came (the input closed): the worker is gone.
    "  IFS= read -r -d '' __mewcode_end || exit 0",
    `  printf '\\0%s\\0' "$__mewcode_end"`,
    `  printf '\\001mewcode status %d\\n' "$__mewcode_code" >&2`,
    // A process that would not die, or anything left behind for the next call: the next call gets a new
    // sandbox (this one ends, and with it what is left).
    ...endIfLeftBehind(folders).map((line) => `  ${line}`),
    "done",
  ].join("\n");
}
