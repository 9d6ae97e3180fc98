/**
 * What both providers do with their raw event stream (openai_http.ts's or anthropic_http.ts's, which have
 * the same shape): pass its items through, turn its errors into ours, treat a silence longer than the
 * idle timeout as a dropped connection, and cancel the HTTP request when the consumer stops early. The
 * providers differ only in their error classes (`toOurError`).
 *
 * @module
 */
import { StalledError } from "./errors.ts";

/** A stream as openai_http.ts and anthropic_http.ts return it: its items, and what cancels its request. */
export type SdkStream = AsyncIterable<unknown> & { controller: AbortController };

/** How to guard one stream. */
export interface GuardOptions {
  signal: AbortSignal;
  /** Milliseconds without an item before the connection counts as dropped. */
  idleTimeoutMs: number;
  /** For messages: where the API is. */
  baseUrl: string;
  /** Turns a stream error into ours (ApiError, ConnectionError, StreamProtocolError, or the abort reason). */
  toOurError(error: unknown): unknown;
}

/** The stream's items, with its errors translated and an abort surfacing as the signal's reason. */
export async function* guardSdkStream(stream: SdkStream, options: GuardOptions): AsyncGenerator<unknown> {
  const iterator = stream[Symbol.asyncIterator]();
  let done = false;
  try {
    while (true) {
      const result = await nextWithinIdleTimeout(iterator, stream.controller, options);
      if (result.done) break;
      yield result.value;
    }
    done = true;
  } catch (error) {
    throw options.toOurError(error);
  } finally {
    // Closing the stream's iterator early cancels its HTTP request. Not awaited: an async generator's
    // return waits for a read still pending, which is what an abort must not wait for.
    if (!done) {
      stream.controller.abort();
      iterator.return?.()?.catch(() => {
        // The request is cancelled either way; the error that brought us here matters more.
      });
    }
  }
  // A stream may end quietly when its request is aborted.
  options.signal.throwIfAborted();
}

/**
 * The next item, or the idle timeout's error, or the abort's reason as soon as the caller aborts: the
 * request's own signal should end the read too, but an abort that arrived while the body was waiting for
 * data was once not seen until the server sent more (30 s later, in a loaded test run), so the wait does
 * not depend on it.
 */
function nextWithinIdleTimeout(
  iterator: AsyncIterator<unknown>,
  controller: AbortController,
  options: GuardOptions,
): Promise<IteratorResult<unknown>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      const seconds = options.idleTimeoutMs / 1000;
      reject(new StalledError(`The API at "${options.baseUrl}" sent nothing for ${seconds} s`));
    }, options.idleTimeoutMs);
    onAbort = () => {
      controller.abort();
      reject(options.signal.reason);
    };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([iterator.next(), silence]).finally(() => {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  });
}
