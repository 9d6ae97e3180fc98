/**
 * A model request sent before the code that reads its answer has loaded. A session's first run knows its
 * request (system prompt, tools, the prompt) well before the agent loop, the tool scheduler and the output
 * code have loaded, and loading them takes longer than sending it: the request goes first, and they load
 * once the model's answer has begun, while the model works on its first token.
 *
 * Nothing heavy may load before the request was written (`sent`, or at the latest `responded`): the runtime
 * writes the request, and steps through the connection's handshake, only between the steps of the JavaScript
 * that runs, and loading a dozen modules is one long step (measured: the request reached a local server 20 ms
 * later).
 *
 * The loop then talks to `provider`, which hands it the stream already under way when it asks for the same
 * request (compared as JSON: what the API would receive), once. Any other request, or the same one asked
 * again (a retry after a broken response), is sent as usual, and a request nobody asked for is aborted
 * (`discard`). Events, errors, retries and `onResponse` reach the loop as if it had sent the request itself.
 *
 * ```ts
 * const started = new StartedRequest(provider, request, signal);
 * await started.responded; // the request went out, and the model's answer has begun
 * const { runAgent } = await import("../agent/loop.ts");
 * try {
 *   for await (const event of runAgent({ provider: started.provider, … })) …
 * } finally {
 *   started.discard();
 * }
 * ```
 *
 * @module
 */
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "./provider.ts";

export class StartedRequest {
  /** The provider the loop uses: the started stream for the same request, the inner provider otherwise. */
  readonly provider: Provider;
  readonly #inner: Provider;
  /** The request as JSON until the loop takes it or it is discarded (a resumed conversation's is large). */
  #request: string | null;
  readonly #controller = new AbortController();
  readonly #iterator: AsyncIterator<ProviderEvent>;
  /** The first step of the stream, taken at once: it sends the request. */
  readonly #first: Promise<IteratorResult<ProviderEvent>>;
  #taken = false;
  #responded = false;
  #onResponse: (() => void) | undefined;
  readonly #unlink: () => void;
  readonly #response = Promise.withResolvers<void>();
  readonly #sent = Promise.withResolvers<void>();

  /** Sends `request` through `inner` now; `signal` aborts it, as it will abort the run. */
  constructor(inner: Provider, request: ModelRequest, signal: AbortSignal) {
    this.#inner = inner;
    this.#request = JSON.stringify(request);
    this.#unlink = follow(signal, this.#controller);
    const stream = inner.stream(request, {
      signal: this.#controller.signal,
      onSent: () => this.#sent.resolve(),
      onResponse: () => {
        this.#responded = true;
        this.#sent.resolve();
        this.#response.resolve();
        this.#onResponse?.();
      },
    });
    this.#iterator = stream[Symbol.asyncIterator]();
    this.#first = this.#iterator.next();
    // Until the loop takes it, a failure (no connection, a refused key) waits to be reported by the loop.
    this.#first.then(() => this.#response.resolve(), () => this.#response.resolve());
    this.provider = {
      name: inner.name,
      stream: (next, options) => this.#stream(next, options),
      ...(inner.listModels === undefined ? {} : { listModels: inner.listModels.bind(inner) }),
    };
  }

  /**
   * Settles once the response has begun (its first event arrived), or the request failed or was aborted:
   * the request is no longer held back by what runs in the meantime. Never rejects.
   */
  get responded(): Promise<void> {
    return this.#response.promise;
  }

  /**
   * Settles once the request has been written to the connection (`StreamOptions.onSent`), or at the latest
   * once the response began: what would have held it back may run from then on, while the model works. Never
   * rejects, and never settles for a request that failed before either (nothing is worth preparing then).
   */
  get sent(): Promise<void> {
    return this.#sent.promise;
  }

  /** Aborts the started request unless the loop took it: no one will read its answer. */
  discard(): void {
    if (this.#taken) return;
    this.#taken = true;
    this.#request = null;
    this.#unlink();
    this.#controller.abort(new DOMException("the request was not used", "AbortError"));
  }

  #stream(request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent> {
    if (this.#request === null || JSON.stringify(request) !== this.#request) {
      this.discard();
      return this.#inner.stream(request, options);
    }
    this.#taken = true;
    this.#request = null;
    const unlink = follow(options.signal, this.#controller);
    if (this.#responded) options.onResponse?.();
    else this.#onResponse = options.onResponse;
    return this.#replay(unlink);
  }

  async *#replay(unlink: () => void): AsyncGenerator<ProviderEvent> {
    try {
      for (let step = await this.#first; !step.done; step = await this.#iterator.next()) yield step.value;
    } finally {
      unlink();
      this.#unlink();
      // A reader that stops early (the turn ended) closes the stream, as `for await` over it would.
      await this.#iterator.return?.();
    }
  }
}

/** Aborts `controller` when `signal` aborts, with its reason; returns what stops following. */
function follow(signal: AbortSignal, controller: AbortController): () => void {
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  return () => signal.removeEventListener("abort", abort);
}
