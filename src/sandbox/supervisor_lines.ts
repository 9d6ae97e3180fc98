/**
 * Shell lines the supervisors of kept sandboxes share (bash, as process 1 of the sandbox): the Bash tool's
 * (src/tools/_shell_supervisor.ts) and the one that runs mewcode's own read-only commands
 * (kept_command.ts). Between commands a supervisor runs builtins only.
 *
 * @module
 */
import { shellQuote } from "../common/shell_quote.ts";

/** How many rounds of `kill -9 -1` a supervisor tries before it gives its sandbox up. */
const MAX_KILL_ROUNDS = 10_000;

/**
 * Lines that list the scratch folders (the writable tmpfs mounts and the mqueue filesystem that only the
 * sandbox's commands can change) into the variable `variable`: entries' names, folder by folder.
 */
export function listScratch(variable: string, folders: readonly string[]): string[] {
  return [
    "shopt -s nullglob dotglob",
    `${variable}=`,
    `for __mewcode_folder in ${folders.map(shellQuote).join(" ")}; do`,
    `  __mewcode_left=("$__mewcode_folder"/*); ${variable}+="$__mewcode_folder:\${__mewcode_left[*]}"$'\\n'`,
    "done",
    "shopt -u nullglob dotglob",
  ];
}

/**
 * Lines that kill every other process of the sandbox (`kill -9 -1` from process 1 signals them all, and
 * fails once there is none; zombies count until reaped: the common case costs one system call), and set
 * `__mewcode_spins` to the number of rounds: `MAX_KILL_ROUNDS` means one would not die.
 */
export const KILL_THE_REST: readonly string[] = [
  "__mewcode_spins=0",
  `while kill -9 -1 2>/dev/null && ((++__mewcode_spins < ${MAX_KILL_ROUNDS})); do wait; done`,
];

/**
 * Lines, in the supervisor's loop, that end the sandbox when the last command left anything behind that
 * the next would see: a process that would not die, an entry in a scratch folder (compared with
 * `__mewcode_scratch`, listed at the start with `listScratch`), or a System V shared memory segment, message
 * queue or semaphore set, which outlive their processes (the first two are memory too, which no tmpfs size
 * bounds; a line below each table's header is one). POSIX message queues are entries of the sandbox's
 * mqueue filesystem, one of the scratch folders. The sandbox ends, and its IPC namespace with it.
 */
export function endIfLeftBehind(folders: readonly string[]): string[] {
  return [
    `((__mewcode_spins >= ${MAX_KILL_ROUNDS})) && exit 0`,
    ...listScratch("__mewcode_now", folders),
    `[[ $__mewcode_now == "$__mewcode_scratch" ]] || exit 0`,
    "for __mewcode_ipc in /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem; do",
    '  { IFS= read -r __mewcode_line && IFS= read -r __mewcode_line && exit 0; } 2>/dev/null <"$__mewcode_ipc"',
    "done",
  ];
}
