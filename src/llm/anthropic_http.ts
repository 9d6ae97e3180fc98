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
 * What it throws, already as ours (errors.ts): what a request's failures become (an HTTP error status, fetch
 * failing, a redirect, a web page, silence) is _api_http.ts's; while streaming, an `error` event →
 * `ApiError.fromErrorEvent`, a `data:` that is not JSON → StreamProtocolError, the body failing →
 * ConnectionError `Connection to the API at "<baseUrl>" failed while streaming: <cause>`; the caller's signal
 * aborting → its reason, at any point.
 *
 * `ping` events and events without an `event:` name or without data are skipped; any other event's data
 * is yielded (the assembler ignores types it does not know). The stream's `controller` cancels the request.
 *
 * @module
 */
import { ApiError } from "./errors.ts";
import {
  type ApiEventStream,
  type ApiFetch,
  apiHeaders,
  ApiHttp,
  parseJson,
  parseStreamData,
} from "./_api_http.ts";
import type { SseEvent } from "./sse_decoder.ts";

export { MAX_ERROR_BODY_BYTES } from "./_api_http.ts";

/**
 * The API version the requests are written for: the one @anthropic-ai/sdk 1.14.0 sent, which the wire
 * format in anthropic_wire.ts follows.
 */
export const ANTHROPIC_VERSION = "2026-10-21";

/** How to reach the API. */
export interface AnthropicHttpOptions {
  apiKey: string;
  /** Without the `/v1` path, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  /** How long to wait for the response headers, in milliseconds. */
  idleTimeoutMs: number;
  /** The fetch to use; by default HTTP/1.1 on sockets, or Deno's fetch behind a proxy (http1_fetch.ts). */
  fetch?: ApiFetch;
}

/** The parsed events of one streaming response, and the controller that cancels its request. */
export type MessageEventStream = ApiEventStream;

/** A minimal client of the Messages API (see the module doc). */
export class AnthropicHttpClient {
  readonly baseUrl: string;
  #apiKey: string;
  #http: ApiHttp;

  constructor(options: AnthropicHttpOptions) {
    this.baseUrl = options.baseUrl;
    this.#apiKey = options.apiKey;
    this.#http = new ApiHttp({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      idleTimeoutMs: options.idleTimeoutMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      baseUrlSetting: "ANTHROPIC_BASE_URL",
    });
  }

  /**
   * Sends `body` (a wire request with `stream: true`) and returns its events once the headers arrived;
   * `onSent` hears when the request was written (ApiHttp.send).
   */
  streamMessage(
    body: unknown,
    options: { signal: AbortSignal; onSent?: () => void },
  ): Promise<MessageEventStream> {
    return this.#http.stream(
      this.#url("/v1/messages"),
      this.#headers("text/event-stream"),
      body,
      options,
      messageEvents,
    );
  }

  /** The ids on the first page of `GET /v1/models` (what `mewcode doctor` shows). */
  listModels(options: { signal: AbortSignal }): Promise<string[]> {
    return this.#http.listModels(this.#url("/v1/models"), this.#headers("application/json"), options);
  }

  #url(path: string): string {
    return `${this.baseUrl.replace(/\/+$/, "")}${path}`;
  }

  #headers(accept: string): Record<string, string> {
    return { ...apiHeaders(accept, this.#apiKey), "anthropic-version": ANTHROPIC_VERSION };
  }
}

/** The stream's payloads (see the module doc). */
async function* messageEvents(events: AsyncIterable<SseEvent>): AsyncGenerator<unknown> {
  for await (const event of events) {
    if (event.event === null || event.event === "ping") continue;
    if (event.event === "error") throw ApiError.fromErrorEvent(parseJson(event.data) ?? event.data);
    if (event.data === "") continue;
    yield parseStreamData(event.data, "a stream event");
  }
}
