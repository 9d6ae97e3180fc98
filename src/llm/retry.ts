/**
 * The retry policy for model requests: retryable API errors (429, 408, 409, 5xx, 529 overloaded,
 * connection errors; `x-should-retry` decides when present) that happen BEFORE any content arrived are
 * retried with exponential backoff and full jitter, or after exactly the `retry-after(-ms)` the API asked
 * for, at most `maxRetries` times. Each retry is reported as a `retry` ProviderEvent before the wait.
 *
 * Once content has been yielded, a failure is never retried here: it is thrown as a StreamInterruptedError,
 * and the consumer decides (the agent loop discards the response and sends the request again, per
 * {@link decideStreamRetry}, when nothing with side effects came of it; otherwise it keeps what it
 * received). Non-retryable errors (400, 401, 403, 404, …), protocol errors and aborts are thrown unchanged.
 * A `retry-after` longer than `maxRetryAfterMs` is not waited for: the error is thrown.
 *
 * `message-start` is held back until the attempt's next event, so a retry event never follows an event
 * of the failed attempt: consumers may treat every event they receive as final. `onResponse` hears of the
 * first one at once: the time until the next event (the model's first token) is often the longest wait.
 *
 * @module
 */
import { ApiError, StalledError, StreamInterruptedError } from "./errors.ts";
import type { ProviderEvent } from "./provider.ts";

/** The numbers of the retry policy. */
export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 requests). */
  maxRetries: number;
  /** Upper bound of the first backoff; doubles with each retry. */
  baseDelayMs: number;
  /** Upper bound of any backoff. */
  maxDelayMs: number;
  /** The longest `retry-after` honoured; a longer one ends the retries. */
  maxRetryAfterMs: number;
}

/** The defaults: 4 retries, backoff bounds 1 s, 2 s, 4 s, 8 s (capped at 32 s), retry-after up to 60 s. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxRetries: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 32_000,
  maxRetryAfterMs: 60_000,
};

/** Waits `ms` milliseconds, rejecting with the signal's reason when aborted. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** The policy (any field may be overridden) plus the injectable clock and random source. */
export interface RetryOptions extends Partial<RetryPolicy> {
  /** A number in [0, 1); `Math.random` by default. */
  random?: () => number;
  /** `setTimeout`-based by default. */
  sleep?: Sleep;
}

/** Whether to retry, and after how long. */
/** How many times a request that stalled (the API sent nothing for the idle timeout) is sent again. */
export const MAX_STALL_RETRIES = 1;

/** A decision about a retry; `waitAskedMs` when the API's retry-after was longer than mewcode waits. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; waitAskedMs?: number };

/**
 * Decides about retry number `attempt` (1-based) after `error`: only ApiErrors marked retryable, within
 * `maxRetries`; waits the API's `retry-after` when given (up to `maxRetryAfterMs`), otherwise a random
 * delay in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))) (full jitter).
 */
export function decideRetry(
  error: unknown,
  attempt: number,
  options: { policy?: Partial<RetryPolicy>; random?: () => number } = {},
): RetryDecision {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  if (!(error instanceof ApiError) || !error.isRetryable || attempt > policy.maxRetries) {
    return { retry: false };
  }
  // A stall is tried once more, not `maxRetries` times: each costs the whole idle timeout.
  if (error instanceof StalledError && attempt > MAX_STALL_RETRIES) return { retry: false };
  if (error.retryAfterMs !== null) {
    if (error.retryAfterMs > policy.maxRetryAfterMs) return { retry: false, waitAskedMs: error.retryAfterMs };
    return { retry: true, delayMs: Math.ceil(error.retryAfterMs) };
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const random = options.random ?? Math.random;
  return { retry: true, delayMs: Math.floor(random() * ceiling) };
}

/**
 * Decides about sending a request again, as retry number `attempt` (1-based), after its response broke off
 * mid-way: a StreamInterruptedError is judged by {@link decideRetry} on the failure that broke it (so an
 * overloaded or dropped stream is retried, an invalid request is not); any other error is not retried
 * (a retryable ApiError thrown as it is has used up the provider's own retries already).
 */
export function decideStreamRetry(
  error: unknown,
  attempt: number,
  options: { policy?: Partial<RetryPolicy>; random?: () => number } = {},
): RetryDecision {
  if (!(error instanceof StreamInterruptedError) || !(error.cause instanceof ApiError)) {
    return { retry: false };
  }
  return decideRetry(error.cause, attempt, options);
}

/**
 * The `reason` of a retry after a broken stream, naming what broke it:
 * `Response stream broke off after content arrived: Overloaded (529 overloaded_error)`.
 */
export function brokenStreamReason(error: StreamInterruptedError): string {
  const cause = error.cause instanceof ApiError ? error.cause : error;
  return `Response stream broke off after content arrived: ${describeApiError(cause)}`;
}

/**
 * Runs `attempt` (one model request, streamed) and retries it per the policy. `attempt` receives the
 * 1-based attempt number. `onResponse` is called once, when the first `message-start` arrives (before it
 * is passed on: see the module doc).
 */
export async function* streamWithRetry(
  attempt: (attemptNumber: number) => AsyncIterable<ProviderEvent>,
  options: RetryOptions & { signal: AbortSignal; onResponse?: (() => void) | undefined },
): AsyncGenerator<ProviderEvent> {
  const { signal, random, sleep = abortableSleep, onResponse, ...policy } = options;
  let responded = false;
  for (let attemptNumber = 1;; attemptNumber++) {
    signal.throwIfAborted();
    let heldStart: ProviderEvent | null = null;
    let delivered = false;
    try {
      for await (const event of attempt(attemptNumber)) {
        // A warning (a deprecated model) is the provider's, not the response's: it makes no retry unsafe.
        if (event.type === "warning") {
          yield event;
          continue;
        }
        if (!delivered && event.type === "message-start") {
          heldStart = event;
          if (!responded) {
            responded = true;
            onResponse?.();
          }
          continue;
        }
        if (!delivered && heldStart !== null) yield heldStart;
        delivered = true;
        yield event;
      }
      if (!delivered && heldStart !== null) yield heldStart;
      return;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (!(error instanceof ApiError)) throw error;
      if (delivered) {
        throw error instanceof StreamInterruptedError ? error : new StreamInterruptedError(error);
      }
      const decision = decideRetry(error, attemptNumber, random ? { policy, random } : { policy });
      if (!decision.retry) {
        if (decision.waitAskedMs !== undefined) {
          const limit = policy.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs;
          error.message += `; the API asked to wait ${describeWait(decision.waitAskedMs)} before the next ` +
            `request (retry-after), longer than mewcode waits (${describeWait(limit)}): run again after that`;
        }
        throw error;
      }
      yield {
        type: "retry",
        attempt: attemptNumber,
        delayMs: decision.delayMs,
        reason: describeApiError(error),
      };
      await sleep(decision.delayMs, signal);
    }
  }
}

/** A wait as a person reads it: "45 s", "60 min", "more than a day". */
function describeWait(ms: number): string {
  if (ms > 24 * 60 * 60 * 1000) return "more than a day";
  if (ms >= 120_000) return `${Math.ceil(ms / 60_000)} min`;
  return `${Math.ceil(ms / 1000)} s`;
}

/** A one-line description of an ApiError for logs and retry events: `Overloaded (529 overloaded_error)`. */
function describeApiError(error: ApiError): string {
  const details = [error.status ?? "connection", error.errorType].filter((part) => part !== null).join(" ");
  return `${error.message} (${details})`;
}

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
