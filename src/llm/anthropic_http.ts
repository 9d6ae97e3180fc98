/**
 * The Anthropic Messages API over `fetch` (by default HTTP/1.1 on Deno's own sockets, http1_fetch.ts): one
 * streaming `POST /v1/messages` and `GET /v1/models`.
 * The official SDK did this before, but importing it read ~470 files (OpenTelemetry, webhooks, every API
 * resource) and cost ~70 ms and several MB of heap before the first request, on the path every prompt
 * waits on; the wire format is documented and stable, and what we used of the SDK was this sliver.
 *
 * ```ts
 * const client = new AnthropicHttpClient({ apiKey, baseUrl, idleTimeoutMs: 120_000 });
 * const stream = await client.streamMessage(toWireRequest(request), { signal });
 * for await (const payload of stream) { … } // the parsed `data:` of each event, for assembleStream
 * ```
 *
 * What it throws, already as ours (errors.ts):
 * - an HTTP error status → `ApiError.fromResponse(status, body, { headers })` (the body read up to 1 MB,
 *   parsed as JSON when it is), so `x-should-retry`, `retry-after(-ms)` and `request-id` reach the retry
 *   policy;
 * - fetch failing (DNS, refused, TLS) → ConnectionError `Cannot reach the API at "<baseUrl>": <cause>`
 *   (with the key masked should the cause quote it, as in every error message of a response);
 * - a redirect → a non-retryable ApiError naming its target: it is not followed, since it would carry
 *   the key and the conversation to another address;
 * - no response headers within the idle timeout → ConnectionError `The API at "<baseUrl>" sent nothing
 *   for N s`;
 * - while streaming: an `error` event → `ApiError.fromErrorEvent`; a `data:` that is not JSON →
 *   StreamProtocolError; the body failing → ConnectionError `Connection to the API at "<baseUrl>" failed
 *   while streaming: <cause>`;
 * - the caller's signal aborting → its reason, at any point.
 *
 * `ping` events and events without an `event:` name or without data are skipped; any other event's data
 * is yielded (the assembler ignores types it does not know). The stream's `controller` cancels the request.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { withDeadline } from "../common/deadline.ts";
import {
  ApiError,
  ConnectionError,
  isWebPage,
  StalledError,
  StreamProtocolError,
  webPageError,
} from "./errors.ts";
import { redactError, redactSecrets } from "./redact_secrets.ts";
import type { SseEvent } from "./sse_decoder.ts";
import { lazyModule } from "../common/lazy_import.ts";
import { apiFetch } from "./http1_fetch.ts";

/** The stream's decoder: only a response that began needs it, so it loads after the request went out. */
const loadSseDecoder = lazyModule<typeof import("./sse_decoder.ts")>(
  new URL("./sse_decoder.ts", import.meta.url),
);

/**
 * The API version the requests are written for: the one @anthropic-ai/sdk 1.14.0 sent, which the wire
 * format in anthropic_wire.ts follows.
 */
export const ANTHROPIC_VERSION = "2026-10-21";

/** An error response's body is read up to this many bytes (its message is what matters). */
export const MAX_ERROR_BODY_BYTES = 1_000_000;

/** The model list is read up to this many bytes. */
const MAX_MODEL_LIST_BYTES = 4_000_000;

/** How to reach the API. */
export interface AnthropicHttpOptions {
  apiKey: string;
  /** Without the `/v1` path, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  /** How long to wait for the response headers, in milliseconds. */
  idleTimeoutMs: number;
  /** The fetch to use; by default HTTP/1.1 on sockets, or Deno's fetch behind a proxy (http1_fetch.ts). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/** The parsed events of one streaming response, and the controller that cancels its request. */
export type MessageEventStream = AsyncGenerator<unknown> & { controller: AbortController };

/** A minimal client of the Messages API (see the module doc). */
export class AnthropicHttpClient {
  readonly baseUrl: string;
  #apiKey: string;
  #idleTimeoutMs: number;
  #fetch: (url: string, init: RequestInit) => Promise<Response>;

  constructor(options: AnthropicHttpOptions) {
    this.baseUrl = options.baseUrl;
    this.#apiKey = options.apiKey;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#fetch = options.fetch ?? apiFetch();
  }

  /** Sends `body` (a wire request with `stream: true`) and returns its events once the headers arrived. */
  async streamMessage(body: unknown, options: { signal: AbortSignal }): Promise<MessageEventStream> {
    const controller = new AbortController();
    const signal = AbortSignal.any([options.signal, controller.signal]);
    const init = {
      method: "POST",
      headers: { ...this.#headers("text/event-stream"), "content-type": "application/json" },
      body: JSON.stringify(body),
    };
    const response = await this.#send("/v1/messages", init, signal, controller);
    if (response.body === null) {
      throw new ConnectionError(
        `Connection to the API at "${this.baseUrl}" failed while streaming: the response has no body`,
      );
    }
    return Object.assign(messageEvents(response.body, signal, this.baseUrl), { controller });
  }

  /** The ids on the first page of `GET /v1/models` (what `mewcode doctor` shows). */
  async listModels(options: { signal: AbortSignal }): Promise<string[]> {
    const controller = new AbortController();
    const signal = AbortSignal.any([options.signal, controller.signal]);
    const init = { method: "GET", headers: this.#headers("application/json") };
    const response = await this.#send("/v1/models", init, signal, controller);
    const text = await this.#readWithinIdleTimeout(response.body, MAX_MODEL_LIST_BYTES, signal, controller);
    const ids = modelIds(parseJson(text));
    if (ids === null) {
      throw new StreamProtocolError(
        `Cannot read the model list from the API at "${this.baseUrl}": ` +
          `expected {"data": [{"id": …}]}, got ${JSON.stringify(text.slice(0, 200))}`,
      );
    }
    return ids;
  }

  #headers(accept: string): Record<string, string> {
    return {
      accept,
      "anthropic-version": ANTHROPIC_VERSION,
      authorization: `Bearer ${this.#apiKey.trim()}`,
      "user-agent": `mewcode/${denoConfig.version}`,
    };
  }

  /**
   * Fetches `path` and returns a 2xx response, with our errors for everything else (see the module doc).
   * `signal` is the caller's signal combined with `controller`'s.
   */
  async #send(
    path: string,
    init: RequestInit,
    signal: AbortSignal,
    controller: AbortController,
  ): Promise<Response> {
    let response: Response;
    try {
      // A redirect is not followed: it would carry the key (and the conversation) to another address.
      const url = `${this.baseUrl.replace(/\/+$/, "")}${path}`;
      const responded = this.#fetch(url, { ...init, redirect: "manual", signal });
      if (await withDeadline(responded, this.#idleTimeoutMs) === "timeout") controller.abort(this.#silence());
      response = await responded;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const reason = this.#withoutKey(describeCause(error));
      throw new ConnectionError(`Cannot reach the API at "${this.baseUrl}": ${reason}`, { cause: error });
    }
    if (response.ok) {
      const contentType = response.headers.get("content-type");
      if (!isWebPage(contentType)) return response;
      await response.body?.cancel();
      throw webPageError(this.baseUrl, contentType ?? "");
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw this.#redirectError(response);
    }
    const text = await this.#readWithinIdleTimeout(response.body, MAX_ERROR_BODY_BYTES, signal, controller);
    // A server may repeat the Authorization header it got ("invalid key: Bearer sk-…").
    const error = ApiError.fromResponse(response.status, parseJson(text) ?? text, {
      headers: response.headers,
    });
    throw redactError(error, { apiKey: this.#apiKey });
  }

  #redirectError(response: Response): ApiError {
    const target = response.headers.get("location") ?? "";
    const message = `Cannot use the API at "${this.baseUrl}": it redirects to "${target}"; ` +
      "set ANTHROPIC_BASE_URL to the address it redirects to";
    return new ApiError(message, { status: response.status, errorType: null, isRetryable: false });
  }

  /** `text` with the API key masked: fetch quotes a header value it rejects (a key with a line break). */
  #withoutKey(text: string): string {
    return redactSecrets(text, { apiKey: this.#apiKey });
  }

  /**
   * The error of a request that got nothing within the idle timeout. The wait for it is withDeadline's, not
   * a setTimeout: a process's first timer loads Deno's timer module (~9 ms), which would run between the
   * request's fetch and its leaving, on the path every prompt waits on.
   */
  #silence(): StalledError {
    return new StalledError(
      `The API at "${this.baseUrl}" sent nothing for ${this.#idleTimeoutMs / 1000} s`,
    );
  }

  /** A whole (small) body as text, up to `limit` bytes, failing as a dropped connection would. */
  async #readWithinIdleTimeout(
    body: ReadableStream<Uint8Array> | null,
    limit: number,
    signal: AbortSignal,
    controller: AbortController,
  ): Promise<string> {
    try {
      const read = readText(body, limit);
      if (await withDeadline(read, this.#idleTimeoutMs) === "timeout") controller.abort(this.#silence());
      return await read;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new ConnectionError(
        `Connection to the API at "${this.baseUrl}" failed while reading its answer: ${describeCause(error)}`,
        { cause: error },
      );
    }
  }
}

/** The stream's payloads (see the module doc); `signal` is the request's. */
async function* messageEvents(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  baseUrl: string,
): AsyncGenerator<unknown> {
  try {
    const { parseSse } = await loadSseDecoder();
    for await (const event of parseSse(body)) {
      if (event.event === null || event.event === "ping") continue;
      if (event.event === "error") throw ApiError.fromErrorEvent(parseJson(event.data) ?? event.data);
      if (event.data === "") continue;
      yield parseEventData(event);
    }
  } catch (error) {
    if (error instanceof ApiError || error instanceof StreamProtocolError) throw error;
    if (signal.aborted) throw signal.reason;
    throw new ConnectionError(
      `Connection to the API at "${baseUrl}" failed while streaming: ${describeCause(error)}`,
      { cause: error },
    );
  }
}

function parseEventData(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StreamProtocolError(`Cannot parse a stream event from the API: ${reason}`, { cause: error });
  }
}

/** The JSON value of `text`, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The `data[].id`s of a model list page, or null when it is not one. */
function modelIds(page: unknown): string[] | null {
  if (typeof page !== "object" || page === null || !("data" in page) || !Array.isArray(page.data)) {
    return null;
  }
  const ids: string[] = [];
  for (const model of page.data) {
    if (typeof model !== "object" || model === null || !("id" in model) || typeof model.id !== "string") {
      return null;
    }
    ids.push(model.id);
  }
  return ids;
}

/** Reads a body as UTF-8 text, stopping (and cancelling the rest) after `limit` bytes. */
async function readText(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (body === null) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let done = false;
  try {
    while (size < limit) {
      const result = await reader.read();
      if (result.done) {
        done = true;
        break;
      }
      chunks.push(result.value);
      size += result.value.length;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.length;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * What made a request fail. Deno's fetch rejects with a bare "fetch failed" whose `cause` says what
 * happened ("… dns error: failed to lookup address …"), so the innermost message is the one to show.
 */
function describeCause(error: unknown): string {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  return innermost instanceof Error ? innermost.message : String(innermost);
}
