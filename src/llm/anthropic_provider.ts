/**
 * The Anthropic provider: the official SDK sends the request (`messages.create({stream: true})`, body
 * from `toWireRequest`, with prompt-cache breakpoints unless `request.cache` is false) and yields the raw
 * stream events; our assembler (anthropic_stream.ts) turns them into ProviderEvents and our retry policy
 * (retry.ts) retries, reporting each retry as an event. The SDK's own retries are off.
 *
 * ```ts
 * const provider = new AnthropicProvider({ apiKey, baseUrl }); // or createProvider(config) (create_provider.ts)
 * for await (const event of provider.stream(request, { signal })) { … }
 * ```
 *
 * Errors thrown by `stream`: ApiError subclasses (message as the API gave it), StreamInterruptedError
 * (failure after content arrived), StreamProtocolError, or the signal's reason when aborted.
 * A `retry` event means the previous attempt yielded nothing (see retry.ts). Needs `--allow-net` and
 * `--allow-env` (SDK 1.14.0 reads ANTHROPIC_* variables in its constructor; it needs no `--allow-sys`).
 *
 * @module
 */
import Anthropic from "@anthropic-ai/sdk";
import { assembleStream } from "./anthropic_stream.ts";
import { toWireRequest } from "./anthropic_wire.ts";
import { ApiError, ConnectionError, MissingApiKeyError, StreamProtocolError } from "./errors.ts";
import type { ModelRequest, Provider, ProviderEvent } from "./provider.ts";
import { guardSdkStream, type SdkStream } from "./_sdk_stream.ts";
import { type RetryOptions, streamWithRetry } from "./retry.ts";

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
  #client: Anthropic;
  #retry: RetryOptions;
  #idleTimeoutMs: number;
  /** Warnings already said in this session. */
  #warned = new Set<string>();

  constructor(options: AnthropicProviderOptions) {
    if (options.apiKey.trim() === "") throw new MissingApiKeyError();
    this.baseUrl = options.baseUrl?.trim() || DEFAULT_BASE_URL;
    this.#retry = options.retry ?? {};
    this.#idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: this.baseUrl,
      maxRetries: 0,
      timeout: this.#idleTimeoutMs,
      logLevel: "off",
    });
  }

  /** Streams one model turn, retrying per the policy; see the module doc for what it throws. */
  stream(request: ModelRequest, options: { signal: AbortSignal }): AsyncIterable<ProviderEvent> {
    const { signal } = options;
    return streamWithRetry(() => this.#attempt(request, signal), { ...this.#retry, signal });
  }

  /** The ids of the models the API offers (`GET /v1/models`), to check that it answers. */
  async listModels(options: { signal: AbortSignal }): Promise<string[]> {
    try {
      const page = await this.#client.models.list(undefined, { signal: options.signal });
      return page.data.map((model) => model.id);
    } catch (error) {
      throw this.#toOurError(error, options.signal);
    }
  }

  async *#attempt(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    let rawStream: SdkStream;
    const warnings: string[] = [];
    try {
      const pending = withConsoleWarnings(
        warnings,
        () => this.#client.messages.create(toWireRequest(request), { signal }),
      );
      for (const message of warnings) {
        if (this.#warned.has(message)) continue;
        this.#warned.add(message);
        yield { type: "warning", message };
      }
      rawStream = await pending;
    } catch (error) {
      throw this.#toOurError(error, signal);
    }
    yield* assembleStream(guardSdkStream(rawStream, {
      signal,
      idleTimeoutMs: this.#idleTimeoutMs,
      baseUrl: this.baseUrl,
      toOurError: (error) => this.#toOurError(error, signal),
    }));
  }

  #toOurError(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return signal.reason;
    if (error instanceof ApiError || error instanceof StreamProtocolError) return error;
    if (error instanceof Anthropic.APIConnectionError) {
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      return new ConnectionError(`Cannot reach the API at "${this.baseUrl}": ${cause}`, { cause: error });
    }
    if (error instanceof Anthropic.APIError) {
      if (error.status === undefined) return ApiError.fromErrorEvent(error.error);
      const body = error.error ?? error.message.replace(new RegExp(`^${error.status} `), "");
      return ApiError.fromResponse(error.status, body, { headers: error.headers ?? null });
    }
    if (error instanceof SyntaxError) {
      return new StreamProtocolError(`Cannot parse a stream event from the API: ${error.message}`, {
        cause: error,
      });
    }
    const message = error instanceof Error ? error.message : String(error);
    return new ConnectionError(
      `Connection to the API at "${this.baseUrl}" failed while streaming: ${message}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Runs `start` with `console.warn` collecting into `into`. The SDK warns about a deprecated model with
 * `console.warn` on every request, synchronously inside `messages.create`: written straight to stderr it
 * would repeat on every turn and break into the interactive session's screen, so the provider says it once,
 * as an event. Nothing is awaited while the collector is in place, so no other code's warning is taken.
 */
function withConsoleWarnings<T>(into: string[], start: () => T): T {
  const original = console.warn;
  console.warn = (...data: unknown[]) => {
    into.push(
      data.map((part) => typeof part === "string" ? part : Deno.inspect(part)).join(" ").replaceAll(
        "\n",
        " ",
      ),
    );
  };
  try {
    return start();
  } finally {
    console.warn = original;
  }
}
