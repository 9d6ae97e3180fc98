/**
 * Waiting for a promise at most so long.
 *
 * @module
 */

/** The promise's value, or "timeout" once `ms` have passed first (the promise itself runs on). */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
