/**
 * The OpenAI-compatible provider (OpenAI, Ollama, vLLM, LM Studio, OpenRouter, …): the official `openai`
 * SDK sends a streaming chat completions request (`stream: true`, `stream_options.include_usage`, body from
 * openai_wire.ts) and yields the parsed chunks; our assembler (openai_stream.ts) turns them into
 * ProviderEvents and our retry policy (retry.ts) retries, exactly as for Anthropic. The SDK's own retries
 * are off.
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
 * compatible servers know). The SDK reads none of the OPENAI_* variables here: key, base URL,
 * organisation and project are passed explicitly.
 *
 * @module
 */
import OpenAI from "openai";
import {
  ApiError,
  ConnectionError,
  type HeaderLookup,
  isWebPage,
  StreamProtocolError,
  webPageError,
} from "./errors.ts";
import { assembleChatStream } from "./openai_stream.ts";
import { streamErrorFromWire, type TokenLimitField, toWireRequest } from "./openai_wire.ts";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "./provider.ts";
import { guardSdkStream, type SdkStream } from "./_sdk_stream.ts";
import { apiFetch } from "./http1_fetch.ts";
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
  fetch?: (input: string | URL, init?: RequestInit) => Promise<Response>;
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
  #client: OpenAI;
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
    const fetchVia = options.fetch ?? apiFetch();
    this.#client = new OpenAI({
      apiKey: options.apiKey ?? PLACEHOLDER_KEY,
      baseURL: this.baseUrl,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.#idleTimeoutMs,
      logLevel: "off",
      // A redirect is not followed: it would resend the conversation (an https → http one in clear) to
      // another address. Its 3xx reaches #toOurError as an APIError.
      fetch: async (input, init) => {
        // The SDK sends a URL; a Request (none it makes) would go through Deno's fetch.
        const response = input instanceof Request
          ? await fetch(input, { ...init, redirect: "manual" })
          : await fetchVia(input, { ...init, redirect: "manual" });
        const contentType = response.headers.get("content-type");
        if (!response.ok || !isWebPage(contentType)) return response;
        await response.body?.cancel();
        // The SDK would read the page as an empty stream; thrown here, it reaches #classify as the cause.
        throw webPageError(this.baseUrl, contentType ?? "");
      },
    });
  }

  /** Streams one model turn, retrying per the policy; see the module doc for what it throws. */
  stream(request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent> {
    const { signal, onResponse } = options;
    return streamWithRetry(() => this.#attempt(request, signal), { ...this.#retry, signal, onResponse });
  }

  /** The ids of the models the server offers (`GET /models`), to check that it answers. */
  async listModels(options: { signal: AbortSignal }): Promise<string[]> {
    try {
      const page = await this.#client.models.list({ signal: options.signal });
      return page.data.map((model) => model.id);
    } catch (error) {
      throw this.#toOurError(error, options.signal);
    }
  }

  async *#attempt(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    let rawStream: SdkStream;
    try {
      rawStream = await this.#client.chat.completions.create(
        toWireRequest(request, { tokenLimitField: this.#tokenLimitField }),
        { signal },
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

  /** `error` as ours, without the key or the base URL's password (redact_secrets.ts). */
  #toOurError(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return signal.reason;
    return redactError(this.#classify(error), this.#secrets);
  }

  #classify(error: unknown): unknown {
    if (error instanceof ApiError || error instanceof StreamProtocolError) return error;
    if (error instanceof OpenAI.APIConnectionError && error.cause instanceof ApiError) return error.cause;
    if (error instanceof OpenAI.APIConnectionError) {
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      return new ConnectionError(`Cannot reach the API at "${this.baseUrl}": ${cause}`, { cause: error });
    }
    if (error instanceof OpenAI.APIError) {
      // An error payload inside the stream has no status of its own.
      if (error.status === undefined) return streamErrorFromWire({ error: error.error });
      if (error.status >= 300 && error.status < 400) return this.#redirectError(error.status, error.headers);
      const body = error.error ?? error.message.replace(new RegExp(`^${error.status} `), "");
      return ApiError.fromResponse(error.status, body, {
        headers: error.headers === undefined ? null : requestIdHeaders(error.headers),
      });
    }
    if (error instanceof SyntaxError) {
      return new StreamProtocolError(`Cannot parse a stream chunk from the API: ${error.message}`, {
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

  #redirectError(status: number, headers: Headers | undefined): ApiError {
    const target = headers?.get("location") ?? "";
    const message = `Cannot use the API at "${this.baseUrl}": it redirects to "${target}"; ` +
      "set OPENAI_BASE_URL (or the baseUrl setting) to the address it redirects to";
    return new ApiError(message, { status, errorType: null, isRetryable: false });
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

/** The response headers, with OpenAI's `x-request-id` answering for `request-id`. */
function requestIdHeaders(headers: Headers): HeaderLookup {
  return {
    get: (name) =>
      name === "request-id" ? headers.get("x-request-id") ?? headers.get(name) : headers.get(name),
  };
}
