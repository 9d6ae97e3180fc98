/**
 * Waiting in tests for something another process does, by polling.
 *
 * @module
 */
import { ok } from "node:assert/strict";

/** Waits until `ready` holds, polling every 20 ms; fails with `what` after `timeoutMs` (default 60 s). */
export async function waitFor(
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
