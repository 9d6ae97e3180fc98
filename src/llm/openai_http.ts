/**
 * OpenAI-compatible chat completions over `fetch` (by default HTTP/1.1 on Deno's own sockets, http1_fetch.ts):
 * one streaming `POST <baseUrl>/chat/completions` and `GET <baseUrl>/models`. The official `openai` SDK did
 * this before, but its module (430 KB once bundled) loaded and compiled before the first request, on the path
 * every prompt waits on (measured: a one-shot prompt's request reached the server ~70 ms later than an
 * Anthropic one's); the wire format is documented, and what we used of the SDK was this sliver.
 *
 * ```ts
 * const client = new OpenAiHttpClient({ apiKey, baseUrl: "http://127.0.0.1:11434/v1", idleTimeoutMs: 120_000 });
 * const stream = await client.streamChat(toWireRequest(request, options), { signal });
 * for await (const chunk of stream) { … } // each parsed chunk, for assembleChatStream
 * ```
 *
 * What it throws, already as ours (errors.ts): what a request's failures become (an HTTP error status, fetch
 * failing, a redirect, a web page, silence) is _api_http.ts's, the request id read from `x-request-id`. The
 * stream is `data:` events of one JSON chunk each, until `data: [DONE]` (the stream ends there); a chunk with an
 * `error` → the ApiError it describes (`streamErrorFromWire`); a `data:` that is not JSON →
 * StreamProtocolError; the body failing → ConnectionError `Connection to the API at "<baseUrl>" failed while
 * streaming: <cause>`; the caller's signal aborting → its reason, at any point. Events without data are
 * skipped.
 *
 * @module
 */
import type { HeaderLookup } from "./errors.ts";
import { type ApiEventStream, type ApiFetch, apiHeaders, ApiHttp, parseStreamData } from "./_api_http.ts";
import { streamErrorFromWire } from "./openai_wire.ts";
import type { SseEvent } from "./sse_decoder.ts";

/** How to reach an OpenAI-compatible API. */
export interface OpenAiHttpOptions {
  /** The key sent as the bearer token. */
  apiKey: string;
  /** The key masked in error messages: null when the one sent is only a placeholder. */
  secret: string | null;
  /** Up to the API's version path, e.g. `https://api.openai.com/v1`, without a trailing slash. */
  baseUrl: string;
  /** How long to wait for the response headers, in milliseconds. */
  idleTimeoutMs: number;
  /** The fetch to use; by default HTTP/1.1 on sockets, or Deno's fetch behind a proxy (http1_fetch.ts). */
  fetch?: ApiFetch;
}

/** A minimal client of the chat completions API (see the module doc). */
export class OpenAiHttpClient {
  readonly baseUrl: string;
  #apiKey: string;
  #http: ApiHttp;

  constructor(options: OpenAiHttpOptions) {
    this.baseUrl = options.baseUrl;
    this.#apiKey = options.apiKey;
    this.#http = new ApiHttp({
      apiKey: options.secret,
      baseUrl: options.baseUrl,
      idleTimeoutMs: options.idleTimeoutMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      baseUrlSetting: "OPENAI_BASE_URL (or the baseUrl setting)",
      errorHeaders: requestIdHeaders,
    });
  }

  /**
   * Sends `body` (a wire request with `stream: true`) and returns its chunks once the headers arrived;
   * `onSent` hears when the request was written (ApiHttp.send).
   */
  streamChat(body: unknown, options: { signal: AbortSignal; onSent?: () => void }): Promise<ApiEventStream> {
    const headers = apiHeaders("text/event-stream", this.#apiKey);
    return this.#http.stream(`${this.baseUrl}/chat/completions`, headers, body, options, chatChunks);
  }

  /** The ids on the first page of `GET <baseUrl>/models` (what `mewcode doctor` shows). */
  listModels(options: { signal: AbortSignal }): Promise<string[]> {
    return this.#http.listModels(
      `${this.baseUrl}/models`,
      apiHeaders("application/json", this.#apiKey),
      options,
    );
  }
}

/** The stream's chunks (see the module doc). */
async function* chatChunks(events: AsyncIterable<SseEvent>): AsyncGenerator<unknown> {
  for await (const event of events) {
    if (event.data.startsWith("[DONE]")) return;
    if (event.data === "") continue;
    const chunk = parseStreamData(event.data, "a stream chunk");
    if (typeof chunk === "object" && chunk !== null && "error" in chunk && chunk.error) {
      throw streamErrorFromWire({ error: chunk.error });
    }
    yield chunk;
  }
}

/** The response headers, with OpenAI's `x-request-id` answering for `request-id`. */
function requestIdHeaders(headers: Headers): HeaderLookup {
  return {
    get: (name) =>
      name === "request-id" ? headers.get("x-request-id") ?? headers.get(name) : headers.get(name),
  };
}
