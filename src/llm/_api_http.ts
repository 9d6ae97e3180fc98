/**
 * What the two API clients share (anthropic_http.ts for the Messages API, openai_http.ts for OpenAI-compatible
 * chat completions): their headers, sending one request and turning every way it can fail into our errors, a
 * streaming request's events (each client reads them its own way), a small body read within the idle timeout,
 * and a model list.
 *
 * What `ApiHttp.send` throws, already as ours (errors.ts):
 * - an HTTP error status → `ApiError.fromResponse(status, body, { headers })` (the body read up to 1 MB,
 *   parsed as JSON when it is), so `x-should-retry`, `retry-after(-ms)` and the request id reach the retry
 *   policy; the key masked should the server quote it;
 * - fetch failing (DNS, refused, TLS) → ConnectionError `Cannot reach the API at "<baseUrl>": <cause>`
 *   (with the key masked should the cause quote it);
 * - a redirect → a non-retryable ApiError naming its target: it is not followed, since it would carry the key
 *   and the conversation to another address;
 * - a web page where the API's answer should be (a login portal, a wrong base URL) → `webPageError`;
 * - no response headers within the idle timeout → StalledError `The API at "<baseUrl>" sent nothing for N s`;
 * - the caller's signal aborting → its reason, at any point.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { joinBytes } from "../common/bytes.ts";
import { withDeadline } from "../common/deadline.ts";
import {
  ApiError,
  ConnectionError,
  type HeaderLookup,
  isWebPage,
  StalledError,
  StreamProtocolError,
  webPageError,
} from "./errors.ts";
import { redactError, redactSecrets } from "./redact_secrets.ts";
import type { SseEvent } from "./sse_decoder.ts";
import { apiFetch, type Http1Init, ON_SENT } from "./http1_fetch.ts";
import { lazyModule } from "../common/lazy_import.ts";
import { once } from "../common/once.ts";

/** The streams' decoder: only a response that began needs it, so it loads after the request went out. */
const loadSseDecoder = lazyModule<typeof import("./sse_decoder.ts")>(
  new URL("./sse_decoder.ts", import.meta.url),
);

/** An error response's body is read up to this many bytes (its message is what matters). */
export const MAX_ERROR_BODY_BYTES = 1_000_000;

/** The model list is read up to this many bytes. */
const MAX_MODEL_LIST_BYTES = 4_000_000;

/** The fetch the clients send through. */
export type ApiFetch = (url: string, init: RequestInit) => Promise<Response>;

/** The parsed items of one streaming response, and the controller that cancels its request. */
export type ApiEventStream = AsyncGenerator<unknown> & { controller: AbortController };

/** The headers of every request: what it accepts, the key as a bearer token, who asks. */
export function apiHeaders(accept: string, apiKey: string): Record<string, string> {
  return {
    accept,
    authorization: `Bearer ${apiKey.trim()}`,
    "user-agent": `mewcode/${denoConfig.version}`,
  };
}

/** How to reach one API. */
export interface ApiHttpOptions {
  /** The API key, masked in every error message; null when none is sent. */
  apiKey: string | null;
  /** Where the API is, as the user gave it: messages name it. */
  baseUrl: string;
  /** How long to wait for the response headers (and a small body), in milliseconds. */
  idleTimeoutMs: number;
  /** By default HTTP/1.1 on sockets, or Deno's fetch behind a proxy (http1_fetch.ts). */
  fetch?: ApiFetch;
  /** What sets the base URL, for the advice a redirect gets ("ANTHROPIC_BASE_URL"). */
  baseUrlSetting: string;
  /** The response headers an error reads (`retry-after`, the request id); default the headers as they are. */
  errorHeaders?: (headers: Headers) => HeaderLookup;
}

/** Sends an API's requests, with our errors for every failure (see the module doc). */
export class ApiHttp {
  readonly baseUrl: string;
  readonly idleTimeoutMs: number;
  #options: ApiHttpOptions;
  #fetch: ApiFetch;

  constructor(options: ApiHttpOptions) {
    this.baseUrl = options.baseUrl;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.#options = options;
    this.#fetch = options.fetch ?? apiFetch();
  }

  /**
   * Fetches `url` and returns a 2xx response, with our errors for everything else. `signal` is the caller's
   * signal combined with `controller`'s, which the idle timeout aborts. `onSent` is called once the request
   * was written (`ON_SENT`), or once its answer began with a fetch that does not tell.
   */
  async send(
    url: string,
    init: RequestInit,
    signal: AbortSignal,
    controller: AbortController,
    onSent?: () => void,
  ): Promise<Response> {
    let response: Response;
    const sent = once(onSent);
    try {
      // A redirect is not followed: it would carry the key (and the conversation) to another address.
      const request: Http1Init = { ...init, redirect: "manual", signal, [ON_SENT]: sent };
      const responded = this.#fetch(url, request);
      if (await withDeadline(responded, this.idleTimeoutMs) === "timeout") controller.abort(this.#silence());
      response = await responded;
      sent();
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
      const target = response.headers.get("location") ?? "";
      const message = `Cannot use the API at "${this.baseUrl}": it redirects to "${target}"; ` +
        `set ${this.#options.baseUrlSetting} to the address it redirects to`;
      throw new ApiError(message, { status: response.status, errorType: null, isRetryable: false });
    }
    const text = await this.#readWithinIdleTimeout(response.body, MAX_ERROR_BODY_BYTES, signal, controller);
    // A server may repeat the Authorization header it got ("invalid key: Bearer sk-…").
    const error = ApiError.fromResponse(response.status, parseJson(text) ?? text, {
      headers: this.#options.errorHeaders?.(response.headers) ?? response.headers,
    });
    throw redactError(error, { apiKey: this.#options.apiKey });
  }

  /**
   * POSTs `body` as JSON to `url` and returns the items `read` makes of the answer's server-sent events, once
   * its headers arrived (`send`'s errors before; while streaming, `read` throws our errors, and anything else
   * becomes `streamFailure`'s). `onSent` hears when the request was written.
   */
  async stream(
    url: string,
    headers: Record<string, string>,
    body: unknown,
    options: { signal: AbortSignal; onSent?: (() => void) | undefined },
    read: (events: AsyncIterable<SseEvent>) => AsyncGenerator<unknown>,
  ): Promise<ApiEventStream> {
    const controller = new AbortController();
    const signal = AbortSignal.any([options.signal, controller.signal]);
    const init = {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    };
    const response = await this.send(url, init, signal, controller, options.onSent);
    if (response.body === null) {
      throw streamFailure(new Error("the response has no body"), signal, this.baseUrl);
    }
    return Object.assign(streamItems(response.body, signal, this.baseUrl, read), { controller });
  }

  /** The ids on the first page of a model list (`{"data": [{"id": …}]}`) at `url`. */
  async listModels(
    url: string,
    headers: Record<string, string>,
    options: { signal: AbortSignal },
  ): Promise<string[]> {
    const controller = new AbortController();
    const signal = AbortSignal.any([options.signal, controller.signal]);
    const response = await this.send(url, { method: "GET", headers }, signal, controller);
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

  /** A whole (small) body as text, up to `limit` bytes, failing as a dropped connection would. */
  async #readWithinIdleTimeout(
    body: ReadableStream<Uint8Array> | null,
    limit: number,
    signal: AbortSignal,
    controller: AbortController,
  ): Promise<string> {
    try {
      const read = readText(body, limit);
      if (await withDeadline(read, this.idleTimeoutMs) === "timeout") controller.abort(this.#silence());
      return await read;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new ConnectionError(
        `Connection to the API at "${this.baseUrl}" failed while reading its answer: ${describeCause(error)}`,
        { cause: error },
      );
    }
  }

  /** `text` with the API key masked: fetch quotes a header value it rejects (a key with a line break). */
  #withoutKey(text: string): string {
    return redactSecrets(text, { apiKey: this.#options.apiKey });
  }

  /**
   * The error of a request that got nothing within the idle timeout. The wait for it is withDeadline's, not
   * a setTimeout: a process's first timer loads Deno's timer module (~9 ms), which would run between the
   * request's fetch and its leaving, on the path every prompt waits on.
   */
  #silence(): StalledError {
    return new StalledError(`The API at "${this.baseUrl}" sent nothing for ${this.idleTimeoutMs / 1000} s`);
  }
}

/** `read`'s items of the body's events (see `ApiHttp.stream`); `signal` is the request's. */
async function* streamItems(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  baseUrl: string,
  read: (events: AsyncIterable<SseEvent>) => AsyncGenerator<unknown>,
): AsyncGenerator<unknown> {
  try {
    const { parseSse } = await loadSseDecoder();
    yield* read(parseSse(body));
  } catch (error) {
    throw streamFailure(error, signal, baseUrl);
  }
}

/**
 * What a failure while reading a stream becomes: our errors as they are, the abort's reason once `signal`
 * aborted, a ConnectionError for anything else (the body failing).
 */
function streamFailure(error: unknown, signal: AbortSignal, baseUrl: string): unknown {
  if (error instanceof ApiError || error instanceof StreamProtocolError) return error;
  if (signal.aborted) return signal.reason;
  return new ConnectionError(
    `Connection to the API at "${baseUrl}" failed while streaming: ${describeCause(error)}`,
    { cause: error },
  );
}

/** `data` parsed as JSON, or StreamProtocolError saying what (`what`: "a stream event"). */
export function parseStreamData(data: string, what: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StreamProtocolError(`Cannot parse ${what} from the API: ${reason}`, { cause: error });
  }
}

/** The JSON value of `text`, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
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
  return new TextDecoder().decode(joinBytes(chunks).subarray(0, limit));
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
