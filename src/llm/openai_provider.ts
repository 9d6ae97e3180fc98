/**
 * The OpenAI-compatible provider (OpenAI, Ollama, vLLM, LM Studio, OpenRouter, …): our client
 * (openai_http.ts) sends a streaming chat completions request (`stream: true`, `stream_options.include_usage`,
 * body from openai_wire.ts) and yields the parsed chunks; our assembler (openai_stream.ts) turns them into
 * ProviderEvents and our retry policy (retry.ts) retries, exactly as for Anthropic.
 *
 * ```ts
 * const provider = new OpenAiProvider({ name: "ollama", apiKey: null, baseUrl: "http://127.0.0.1:11434/v1" });
 * for await (const event of provider.stream(request, { signal })) { … }
 * ```
 *
 * Errors thrown by `stream`: ApiError subclasses (401/403 AuthenticationError, 429 RateLimitError, 5xx
 * ServerError, ConnectionError, an error payload in the stream, a non-retryable ApiError naming the target
 * of a redirect, which is not followed), StreamInterruptedError (failure after
 * content arrived), StreamProtocolError, or the signal's reason when aborted. The request limits the
 * response with `max_completion_tokens` on OpenAI's own API and `max_tokens` elsewhere (the field most
 * compatible servers know). Key and base URL are passed explicitly (the OPENAI_* variables are read by
 * create_provider.ts).
 *
 * @module
 */
import { once } from "../common/once.ts";
import { assembleChatStream } from "./openai_stream.ts";
import { OpenAiHttpClient } from "./openai_http.ts";
import { type TokenLimitField, toWireRequest } from "./openai_wire.ts";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "./provider.ts";
import { guardSdkStream, type SdkStream } from "./_sdk_stream.ts";
import type { ApiFetch } from "./_api_http.ts";
import { redactError, type Secrets } from "./redact_secrets.ts";
import { type RetryOptions, streamWithRetry } from "./retry.ts";

/** How to reach an OpenAI-compatible API. */
export interface OpenAiProviderOptions {
  /** Which provider this is for the transcript and messages: "openai" or "ollama". */
  name: "openai" | "ollama";
  /** null when the server needs none (a placeholder is sent, as Ollama's documentation does). */
  apiKey: string | null;
  /** The API's base URL, ending before `/chat/completions`, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  retry?: RetryOptions;
  /**
   * How long the API may stay silent, in milliseconds: waiting for the response headers, and between two
   * chunks. A silent connection is a ConnectionError (retried when no content had arrived).
   */
  idleTimeoutMs?: number;
  /**
   * The fetch requests go through; by default HTTP/1.1 on sockets, or Deno's fetch behind a proxy
   * (http1_fetch.ts); tests redirect a host with their own.
   */
  fetch?: ApiFetch;
}

/** Two minutes without a byte from the API ends the request (a local model may think for a long time). */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** The key sent to a server that needs none: some servers insist on an Authorization header. */
const PLACEHOLDER_KEY = "ollama";

/** A Provider backed by an OpenAI-compatible chat completions API. */
export class OpenAiProvider implements Provider {
  readonly name: "openai" | "ollama";
  /** The base URL requests go to. */
  readonly baseUrl: string;
  #client: OpenAiHttpClient;
  #retry: RetryOptions;
  #idleTimeoutMs: number;
  #tokenLimitField: TokenLimitField;
  #secrets: Secrets;

  constructor(options: OpenAiProviderOptions) {
    this.name = options.name;
    this.baseUrl = options.baseUrl.trim().replace(/\/+$/, "");
    this.#retry = options.retry ?? {};
    this.#idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#tokenLimitField = isOpenAiHost(this.baseUrl) ? "max_completion_tokens" : "max_tokens";
    this.#secrets = { apiKey: options.apiKey };
    this.#client = new OpenAiHttpClient({
      apiKey: options.apiKey ?? PLACEHOLDER_KEY,
      secret: options.apiKey,
      baseUrl: this.baseUrl,
      idleTimeoutMs: this.#idleTimeoutMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
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

  /** The ids of the models the server offers (`GET /models`), to check that it answers. */
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
    let rawStream: SdkStream;
    try {
      rawStream = await this.#client.streamChat(
        toWireRequest(request, { tokenLimitField: this.#tokenLimitField }),
        { signal, onSent },
      );
    } catch (error) {
      throw this.#toOurError(error, signal);
    }
    yield* assembleChatStream(guardSdkStream(rawStream, {
      signal,
      idleTimeoutMs: this.#idleTimeoutMs,
      baseUrl: this.baseUrl,
      toOurError: (error) => this.#toOurError(error, signal),
    }));
  }

  /** `error` as ours (the client's are), without the key or the base URL's password (redact_secrets.ts). */
  #toOurError(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return signal.reason;
    return redactError(error, this.#secrets);
  }
}

/** Whether a base URL is OpenAI's own API, which wants `max_completion_tokens`. */
function isOpenAiHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === "api.openai.com";
  } catch {
    return false;
  }
}
