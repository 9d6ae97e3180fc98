/**
 * The host side of a sandbox kept across Bash calls (the worker side is src/tools/_shell_host.ts): the two
 * files it needs, made once per session in a private folder.
 *
 * - The seccomp program as a file: the kept sandbox's standard input carries the commands, so bubblewrap
 *   reads the program from fd 3, which `sh` opens from this file before it becomes bubblewrap.
 * - A copy of the shell with mode 0111, for the supervisor. A program started from a file its user may
 *   not read is not dumpable: no other process of the sandbox may open its /proc entries (its pipes under
 *   /proc/1/fd, its memory), although they all run as the same user without capabilities. So a command
 *   can neither read the next command nor write a false exit status.
 *
 * @module
 */
import { join } from "../common/path.ts";

/** The files of a kept sandbox, and how to remove them. */
export interface KeptSandboxFiles {
  /** The private folder (mode 0700) holding both. */
  directory: string;
  seccompFile: string;
  /** The supervisor's shell: a copy of the session's shell that may be run, not read. */
  supervisorCopy: string;
}

/**
 * Makes the files in a new private folder (in `directory`, default the system's temporary folder); null (and
 * nothing left behind) when that fails.
 */
export async function prepareKeptSandboxFiles(
  options: { shell: string; seccomp: Uint8Array; directory?: string },
): Promise<KeptSandboxFiles | null> {
  let directory: string;
  try {
    directory = await Deno.makeTempDir({
      prefix: "mewcode-shell-",
      ...(options.directory === undefined ? {} : { dir: options.directory }),
    });
  } catch {
    return null;
  }
  const seccompFile = join(directory, "seccomp.bpf");
  const supervisorCopy = join(directory, "shell");
  try {
    await Deno.chmod(directory, 0o700);
    await Deno.writeFile(seccompFile, options.seccomp, { mode: 0o600, createNew: true });
    await Deno.copyFile(options.shell, supervisorCopy);
    await Deno.chmod(supervisorCopy, 0o111);
    return { directory, seccompFile, supervisorCopy };
  } catch {
    await removeKeptSandboxFiles({ directory, seccompFile, supervisorCopy });
    return null;
  }
}

/** Removes the private folder; never throws. */
export async function removeKeptSandboxFiles(files: KeptSandboxFiles): Promise<void> {
  await Deno.remove(files.directory, { recursive: true }).catch(() => undefined);
}

/** Whether `path` is a directory (not a symlink to one) with nothing in it. */
export function isEmptyDirectory(path: string): boolean {
  try {
    if (!Deno.lstatSync(path).isDirectory) return false;
    return Deno.readDirSync(path).next().done === true;
  } catch {
    return false;
  }
}

/** What a session without a kept sandbox, or without bash, should say (`ShellSandbox.caveats`). */
export function keptSandboxCaveats(
  facts: { bash: string | null; sh: string | null; kept: boolean },
): string[] {
  const caveats: string[] = [];
  if (!facts.kept) {
    const why = facts.bash === null
      ? "bash is not installed"
      : facts.sh === null
      ? "no sh found in the system directories"
      : "its files could not be made";
    caveats.push(
      `each Bash call starts a sandbox of its own (about 20 ms; a kept sandbox needs bash: ${why})`,
    );
  }
  if (facts.bash === null) {
    caveats.push(
      "sh closes only descriptors 3 to 9 it inherited: one above 9 left open by mewcode's parent reaches commands",
    );
  }
  return caveats;
}
