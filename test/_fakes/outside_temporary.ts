/**
 * A new directory outside the temporary directories, for tests of the checks that refuse anything under
 * /tmp, /var/tmp and /dev/shm outright: so that only the check under test can refuse what lies there.
 *
 * @module
 */

const CHECKOUT = new URL("../../", import.meta.url).pathname;
const TEMPORARY = ["/tmp/", "/var/tmp/", "/dev/shm/"];

/** Made beside the checkout, or in a system directory when the checkout itself lies in /tmp; the caller removes it. */
export async function directoryOutsideTemporary(): Promise<string> {
  for (const parent of [CHECKOUT, "/var/cache", "/opt", "/srv"]) {
    const real = await Deno.realPath(parent).catch(() => null);
    if (real === null || TEMPORARY.some((prefix) => `${real}/`.startsWith(prefix))) continue;
    try {
      return await Deno.realPath(await Deno.makeTempDir({ dir: real, prefix: ".mewcode-outside-tmp-" }));
    } catch {
      // Not writable here: try the next.
    }
  }
  throw new Error("no writable directory outside /tmp, /var/tmp and /dev/shm for the test");
}
