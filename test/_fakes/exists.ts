/**
 * Whether anything is at a path, without following a final symlink (a dangling one counts): what the tests ask
 * of the disk after a run.
 *
 * @module
 */

/** Whether `Deno.lstat` finds anything at `path`. */
export async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}
