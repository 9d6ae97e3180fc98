/**
 * The fastest adversary a sandboxed program could be, for race tests of the file tools: another process
 * that swaps two paths with renameat2(RENAME_EXCHANGE) (Linux) in a tight loop.
 *
 * @module
 */

/**
 * Another process that swaps two paths in a tight loop with renameat2(RENAME_EXCHANGE), so each name is
 * always one of the two (never missing), thousands of times a millisecond: the fastest adversary a
 * sandboxed program could be. A shell loop of `mv`/`ln` is a thousand times slower and leaves gaps.
 */
export async function startSwapper(first: string, second: string): Promise<AsyncDisposable> {
  // renameat2(AT_FDCWD = -100, first, AT_FDCWD, second, RENAME_EXCHANGE = 2), through libc.
  const script = `const libc = Deno.dlopen("libc.so.6", {
  renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
});
const encoder = new TextEncoder();
const first = encoder.encode(Deno.args[0] + "\\0");
const second = encoder.encode(Deno.args[1] + "\\0");
while (true) libc.symbols.renameat2(-100, first, -100, second, 2);`;
  const before = await Deno.lstat(first);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-config",
      "--allow-ffi",
      `data:text/javascript;base64,${btoa(script)}`,
      first,
      second,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async (): Promise<void> => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    await child.status;
  };
  const deadline = Date.now() + 10_000;
  while ((await Deno.lstat(first)).ino === before.ino) {
    if (Date.now() > deadline) {
      await stop();
      throw new Error("The swapper process never swapped the paths");
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { [Symbol.asyncDispose]: stop };
}
