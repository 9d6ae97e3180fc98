/**
 * A callback that runs the first time it is called only (nothing when `callback` is undefined): for news that
 * several paths may bring, such as a request's having been sent, through a retry or a resend.
 *
 * @module
 */

/** `callback`, run at its first call only. */
export function once(callback: (() => void) | undefined): () => void {
  let pending = callback;
  return () => {
    const call = pending;
    pending = undefined;
    call?.();
  };
}
