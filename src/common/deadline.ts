/**
 * Waiting for a promise at most so long.
 *
 * The deadline is an `Atomics.waitAsync` on a cell of its own, not a `setTimeout`: Deno loads its timer
 * module on the first `setTimeout` of a process (measured: 15 ms), and a one-shot run waits with a
 * deadline (for piped standard input, for an instruction file) before its first request, where every
 * millisecond counts. The wait is cancelled by a notify once the promise settles, so nothing is left
 * pending. Unlike a timer, the wait does not keep the process alive by itself: the promise raced must be
 * backed by an operation that does (a read, an open), as every caller's is.
 *
 * @module
 */

/** The promise's value, or "timeout" once `ms` have passed first (the promise itself runs on). */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  const cell = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const wait = Atomics.waitAsync(cell, 0, 0, Math.max(0, ms));
  // No wait at all (a deadline of 0): a promise that has settled already still wins.
  if (!wait.async) return await Promise.race([promise, "timeout" as const]);
  const deadline = wait.value.then((outcome) => outcome === "timed-out" ? "timeout" as const : null);
  try {
    const first = await Promise.race([promise, deadline]);
    // `null`: the wait was cancelled, which only happens below, after the race.
    return first === null ? await promise : first;
  } finally {
    Atomics.notify(cell, 0);
  }
}
