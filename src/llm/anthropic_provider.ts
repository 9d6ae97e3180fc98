/**
 * The Anthropic provider: our HTTP client (anthropic_http.ts) sends the request (body from
 * `toWireRequest`, with prompt-cache breakpoints unless `request.cache` is false) and yields the raw
 * stream events; our assembler (anthropic_stream.ts) turns them into ProviderEvents and our retry policy
 * (retry.ts) retries, reporting each retry as an event.
 *
 * ```ts
 * const provider = new AnthropicProvider({ apiKey, baseUrl }); // or createProvider(config) (create_provider.ts)
 * for await (const event of provider.stream(request, { signal })) { … }
 * ```
 *
 * Errors thrown by `stream`: ApiError subclasses (message as the API gave it), StreamInterruptedError
 * (failure after content arrived), StreamProtocolError, or the signal's reason when aborted.
 * A `retry` event means the previous attempt yielded nothing (see retry.ts). Needs `--allow-net` only.
 *
 * @module
 */
import { once } from "../common/once.ts";
import { AnthropicHttpClient, type MessageEventStream } from "./anthropic_http.ts";
import { toWireRequest } from "./anthropic_wire.ts";
import { lazyModule } from "../common/lazy_import.ts";
import { ApiError, ConnectionError, MissingApiKeyError, StreamProtocolError } from "./errors.ts";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "./provider.ts";
import { redactError } from "./redact_secrets.ts";
import { type RetryOptions, streamWithRetry } from "./retry.ts";

/**
 * What reads a response (the stream's assembler and its idle guard): only a response that began needs it,
 * so it loads once the request went out and its headers came back, not before a session's first request.
 */
const loadAssembler = lazyModule<typeof import("./anthropic_stream.ts")>(
  new URL("./anthropic_stream.ts", import.meta.url),
);
const loadGuard = lazyModule<typeof import("./_sdk_stream.ts")>(new URL("./_sdk_stream.ts", import.meta.url));

/** The API endpoint when ANTHROPIC_BASE_URL is not set. */
export const DEFAULT_BASE_URL = "https://api.anthropic.com";

/** How to reach the API. */
export interface AnthropicProviderOptions {
  apiKey: string;
  /** The API's base URL; {@link DEFAULT_BASE_URL} when omitted. */
  baseUrl?: string;
  /** The retry policy and its injectable clock and random source. */
  retry?: RetryOptions;
  /**
   * How long the API may stay silent, in milliseconds: waiting for the response headers, and between two
   * stream events (the API sends `ping`s while the model thinks). A silent connection is a ConnectionError
   * (so it is retried when no content had arrived). {@link DEFAULT_IDLE_TIMEOUT_MS} by default.
   */
  idleTimeoutMs?: number;
}

/** Two minutes without a byte from the API ends the request. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** A Provider backed by the Anthropic Messages API. */
export class AnthropicProvider implements Provider {
  readonly name = "anthropic";
  /** The base URL requests go to. */
  readonly baseUrl: string;
  #client: AnthropicHttpClient;
  #retry: RetryOptions;
  #idleTimeoutMs: number;
  #apiKey: string;
  /** Warnings already said in this session. */
  #warned = new Set<string>();

  constructor(options: AnthropicProviderOptions) {
    if (options.apiKey.trim() === "") throw new MissingApiKeyError();
    this.baseUrl = options.baseUrl?.trim() || DEFAULT_BASE_URL;
    this.#retry = options.retry ?? {};
    this.#idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#apiKey = options.apiKey;
    this.#client = new AnthropicHttpClient({
      apiKey: options.apiKey,
      baseUrl: this.baseUrl,
      idleTimeoutMs: this.#idleTimeoutMs,
    });
  }

  /** Streams one model turn, retrying per the policy; see the module doc for what it throws. */
  stream(request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent> {
    const { signal, onResponse } = options;
    const onSent = once(options.onSent);
    return streamWithRetry(() => this.#attempt(request, signal, onSent), {
      ...this.#retry,
      signal,
      onResponse,
    });
  }

  /** The ids of the models the API offers (`GET /v1/models`), to check that it answers. */
  async listModels(options: { signal: AbortSignal }): Promise<string[]> {
    try {
      return await this.#client.listModels({ signal: options.signal });
    } catch (error) {
      throw this.#toOurError(error, options.signal);
    }
  }

  async *#attempt(
    request: ModelRequest,
    signal: AbortSignal,
    onSent: () => void,
  ): AsyncGenerator<ProviderEvent> {
    // Built before the request, outside its error handling: a conversation that cannot be sent (a resumed
    // transcript holding content mewcode does not know) is that, not a failed connection to retry.
    const body = toWireRequest(request);
    let rawStream: MessageEventStream;
    try {
      rawStream = await this.#client.streamMessage(body, { signal, onSent });
    } catch (error) {
      throw this.#toOurError(error, signal);
    }
    // Said once the request is out: a stream's first step sends it (a session sends its first request before
    // anything reads the answer, src/llm/started_request.ts), and a warning before would hold it back.
    const warning = deprecationWarning(request.model);
    if (warning !== null && !this.#warned.has(warning)) {
      this.#warned.add(warning);
      yield { type: "warning", message: warning };
    }
    const [{ assembleStream }, { guardSdkStream }] = await Promise.all([loadAssembler(), loadGuard()]);
    yield* assembleStream(guardSdkStream(rawStream, {
      signal,
      idleTimeoutMs: this.#idleTimeoutMs,
      baseUrl: this.baseUrl,
      toOurError: (error) => this.#toOurError(error, signal),
    }));
  }

  /**
   * The client throws our errors already; anything else is the stream's transport failing. Either way
   * without the key or the base URL's password (redact_secrets.ts).
   */
  #toOurError(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return signal.reason;
    if (error instanceof ApiError || error instanceof StreamProtocolError) {
      return redactError(error, { apiKey: this.#apiKey });
    }
    const message = error instanceof Error ? error.message : String(error);
    const reason = `Connection to the API at "${this.baseUrl}" failed while streaming: ${message}`;
    return redactError(new ConnectionError(reason, { cause: error }), { apiKey: this.#apiKey });
  }
}

/**
 * Models the API has announced the end of, with the date: the list @anthropic-ai/sdk 1.14.0 carried
 * (its internal/data), which warned on every request; the provider says it once per session, as an event.
 */
const DEPRECATED_MODELS: Readonly<Record<string, string>> = {
  "claude-mythos-preview": "2026-06-30",
  "claude-opus-4-5": "2027-01-22",
  "claude-opus-4-5-20251101": "2027-01-22",
  "claude-sonnet-4-5": "2026-11-30",
  "claude-sonnet-4-5-20250929": "2026-11-30",
};

/** The warning for a deprecated model, or null; past its date, it says the model has reached its end. */
export function deprecationWarning(model: string, now: Date = new Date()): string | null {
  if (!Object.hasOwn(DEPRECATED_MODELS, model)) return null;
  const end = new Date(`${DEPRECATED_MODELS[model]}T00:00:00Z`);
  const date = end.toLocaleDateString("en-US", {
    year: "numeric",
    month: "long",
    day: "numeric",
    timeZone: "UTC",
  });
  const when = now.getTime() >= end.getTime() + 24 * 60 * 60 * 1000
    ? `reached end-of-life on ${date}`
    : `will reach end-of-life on ${date}`;
  return `The model '${model}' is deprecated and ${when}: ` +
    "migrate to a newer model (https://docs.anthropic.com/en/docs/resources/model-deprecations)";
}
