/**
 * What runs on this machine, seen from /proc: for tests that check a call left nothing running.
 *
 * @module
 */

/** How many processes of this machine have `marker` in their command line. */
export async function processesWith(marker: string): Promise<number> {
  let count = 0;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const commandLine = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (commandLine.includes(marker)) count += 1;
  }
  return count;
}
