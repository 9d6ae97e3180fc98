/**
 * Runs ripgrep for Grep in the read-only shell sandbox (`ShellSandbox.runCommand` with mode "read-only", in
 * the sandbox kept across such commands where it is free: kept_command.ts): bubblewrap with the workspace
 * and the added folders bound read-only, no network, mewcode's state hidden, the seccomp filter and resource
 * limits of the shell, an environment cleared to the shell's allowlist. The sandbox is the boundary; inside
 * it the script only ever hands ripgrep a directory it resolved and checked to lie in the workspace, and
 * ripgrep never follows a symlink (no `--follow`).
 *
 * The script resolves the path (`cd -P`, a builtin), refuses one outside the roots or inside an excluded
 * folder, decides whether ripgrep should read the ignore files above the start directory (only in the one
 * layout where ripgrep reads exactly what Grep's walk reads: see below), prints a header line with what it
 * decided, and runs ripgrep there with the caller's arguments, once (the caller's pattern also reports the
 * lines with a NUL byte, which tell binary files apart: no second pass over the files).
 *
 * ripgrep writes its report to a file in the sandbox's private /tmp (`KEPT_OUTPUT_FILE`), which `cat` then
 * hands on whole, and which is emptied again: ripgrep writes each file's lines apart, and into the pipe that
 * mewcode reads every one of those writes woke mewcode, which cost a search a third of its time (see
 * kept_command.ts). The file is capped a little above what the caller reads (`ulimit -f`): a larger report
 * ends ripgrep (SIGXFSZ) instead of filling memory, and reads as too long. Without `cat`, ripgrep writes to
 * the pipe.
 *
 * Above the start, Grep reads `.gitignore` from the workspace root (or the added folder holding the start)
 * down to the start's parent. ripgrep reads them from every parent up to the nearest directory with `.git`,
 * where it stops. The two agree when no parent has one (then `--no-ignore-parent`), or when the folder holding
 * the start has `.git` and no directory between it and the start (the start included) does, and no parent has
 * a `.rgignore` (ripgrep reads those from every parent). Any other layout is refused.
 *
 * @module
 */
import { KEPT_OUTPUT_FILE } from "./kept_command.ts";
import type { CommandResult } from "./sandboxed_command.ts";
import { shellQuote } from "../common/shell_quote.ts";

/** Exit status of the script when the path is not a directory inside the roots (the caller searches itself). */
export const NOT_A_SEARCH_DIRECTORY = 90;
/** Exit status of the script when the ignore files above the start are laid out in a way ripgrep reads differently. */
export const UNSUPPORTED_IGNORE_LAYOUT = 91;
/** Exit status of the script when it cannot open the file ripgrep writes its report to. */
export const NO_OUTPUT_FILE = 92;
/** The first word of the header line: `mewcode-rg\0<start>\0<parent flag>`. */
export const HEADER_WORD = "mewcode-rg";

/** Runs a command in the read-only sandbox: `ShellSandbox` implements it. */
export interface SandboxCommandRunner {
  runCommand(
    command: string,
    options: {
      mode: "read-only" | "workspace-write";
      timeoutMs: number;
      signal?: AbortSignal;
      maxOutputChars?: number;
      onStdout?: (bytes: Uint8Array) => void;
      keep?: boolean;
    },
  ): Promise<CommandResult>;
}

/** One ripgrep search. */
export interface RipgrepCommand {
  /** Absolute path of ripgrep, as resolved by `resolveHelpers`. */
  rg: string;
  /** Absolute path of cat, as resolved by `resolveHelpers`, or null: ripgrep then writes to the pipe. */
  cat: string | null;
  /** The directory to search, as the model named it (absolute; resolved inside the sandbox). */
  path: string;
  /** Real paths of the workspace root, then of the added folders. */
  roots: readonly string[];
  /** Real paths the tools treat as outside the workspace. */
  excluded: readonly string[];
  /** ripgrep's arguments for the search (before `--` and the path). */
  search: readonly string[];
}

/**
 * The shell script of a search; `maxOutputBytes` caps the report's file (ripgrep ends past it; a few hundred
 * bytes or the same again more may be written, as the unit of the limit differs between shells).
 */
export function ripgrepScript(command: RipgrepCommand, maxOutputBytes = Infinity): string {
  const rg = shellQuote(command.rg);
  const roots = command.roots.map(shellQuote).join(" ");
  const excluded = command.excluded.map(shellQuote).join(" ");
  return [
    // A repository cannot configure ripgrep: no config file, whatever the environment says (--no-config too).
    "unset RIPGREP_CONFIG_PATH",
    `cd -P -- ${shellQuote(command.path)} 2>/dev/null || exit ${NOT_A_SEARCH_DIRECTORY}`,
    // `cd -P` sets PWD to the physical path: `$(pwd -P)` would fork a subshell (~3 ms here).
    "start=$PWD",
    'base=""',
    `for root in ${roots}; do case "$start" in "$root" | "$root"/*) base=$root; break ;; esac; done`,
    `[ -n "$base" ] || exit ${NOT_A_SEARCH_DIRECTORY}`,
    ...(excluded === "" ? [] : [
      `for folder in ${excluded}; do case "$start" in "$folder" | "$folder"/*) exit ${NOT_A_SEARCH_DIRECTORY} ;; esac; done`,
    ]),
    "parent=--no-ignore-parent",
    'if [ "$start" != "$base" ]; then',
    "  rules=0; nested=0; directory=$start",
    '  while [ "$directory" != "$base" ]; do',
    '    [ -e "$directory/.git" ] && nested=1',
    "    directory=${directory%/*}",
    '    [ -e "$directory/.gitignore" ] && rules=1',
    "  done",
    '  if [ "$rules" = 1 ]; then',
    `    [ "$nested" = 0 ] && [ -e "$base/.git" ] || exit ${UNSUPPORTED_IGNORE_LAYOUT}`,
    "    directory=$start",
    '    while [ -n "$directory" ]; do',
    "      directory=${directory%/*}",
    `      [ -e "$directory/.rgignore" ] && exit ${UNSUPPORTED_IGNORE_LAYOUT}`,
    "    done",
    '    parent=""',
    "  fi",
    "fi",
    `printf '${HEADER_WORD}\\0%s\\0%s\\n' "$start" "$parent"`,
    ...searchLines(
      `${rg} ${command.search.map(shellQuote).join(" ")} $parent -- .`,
      command.cat,
      maxOutputBytes,
    ),
  ].join("\n");
}

/** The lines that run ripgrep (`search`): its report through a file and `cat`, or straight to the pipe. */
function searchLines(search: string, cat: string | null, maxOutputBytes: number): string[] {
  // ripgrep takes the shell's place: one process less per search, and its exit status is the script's.
  if (cat === null) return [`exec ${search}`];
  const file = shellQuote(KEPT_OUTPUT_FILE);
  return [
    `exec 3>${file} || exit ${NO_OUTPUT_FILE}`,
    // In blocks of 512 bytes (dash) or 1024 (bash): at least one byte more than the caller reads.
    ...(Number.isFinite(maxOutputBytes)
      ? [`ulimit -f ${Math.ceil((maxOutputBytes + 1) / 512)} 2>/dev/null`]
      : []),
    `${search} >&3 3>&-`,
    "status=$?",
    "exec 3>&-",
    `[ -s ${file} ] && ${shellQuote(cat)} ${file}`,
    `: >${file}`,
    'exit "$status"',
  ];
}

/** Runs a search in the read-only sandbox; never throws. */
export async function runRipgrep(
  runner: SandboxCommandRunner,
  command: RipgrepCommand,
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    maxOutputChars: number;
    /** Takes standard output as it arrives, instead of the result's `stdout` (then empty). */
    onStdout?: (bytes: Uint8Array) => void;
  },
): Promise<CommandResult> {
  try {
    return await runner.runCommand(ripgrepScript(command, options.maxOutputChars), {
      mode: "read-only",
      // Searches come one after the other in a session: the sandbox stays for the next.
      keep: true,
      timeoutMs: options.timeoutMs,
      maxOutputChars: options.maxOutputChars,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
    });
  } catch (error) {
    return { status: "failed", message: error instanceof Error ? error.message : String(error) };
  }
}
