/**
 * What runs on this machine, seen from /proc: for tests that check a call left nothing running.
 *
 * @module
 */

/** How many processes of this machine have `marker` (each of them, given several) in their command line. */
export async function processesWith(marker: string | readonly string[]): Promise<number> {
  const markers = typeof marker === "string" ? [marker] : marker;
  let count = 0;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const commandLine = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (markers.every((one) => commandLine.includes(one))) count += 1;
  }
  return count;
}

/**
 * A word in the command line of the read-only sandbox kept for mewcode's own commands (its supervisor's
 * script, src/sandbox/kept_command.ts), and of its bubblewrap: with the workspace's path, that sandbox's.
 */
export const SEARCH_SANDBOX_WORD = "__mewcode_take";
