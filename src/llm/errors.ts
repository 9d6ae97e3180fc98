/**
 * The errors a provider stream throws. Callers branch on the class (or on `isRetryable`):
 *
 * - {@link ApiError} and its subclasses: the API (or the connection to it) failed. `message` is the API's
 *   own message, unchanged; `status` (HTTP status, or the one implied by the error type of a mid-stream
 *   `error` event) and `errorType` (`"overloaded_error"`, …) sit beside it.
 * - {@link StreamInterruptedError} (an ApiError): the stream broke after content had arrived; never retried.
 * - {@link StreamProtocolError}: the stream's events were out of order or malformed (a bug, never retried).
 * - {@link MissingApiKeyError}: the API key's variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, …) is not set;
 *   thrown before any request.
 *
 * {@link errorCategory} sorts any of them (or anything else thrown) into the few kinds a front end acts on.
 *
 * @module
 */
import { isRecord } from "../common/values.ts";

/** Response headers as a plain lookup (a `Headers` object fits). */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** What every ApiError carries besides its message. */
export interface ApiErrorOptions {
  /** HTTP status, or null for connection errors. */
  status: number | null;
  /** The API's `error.type` (`"rate_limit_error"`, …), or null when there was none. */
  errorType: string | null;
  /** Whether the request may be sent again unchanged. */
  isRetryable: boolean;
  /** How long the API asked to wait before retrying, in milliseconds (`retry-after-ms` / `retry-after`). */
  retryAfterMs?: number | null;
  /** The API's `request-id` header, for support requests. */
  requestId?: string | null;
  cause?: unknown;
}

/** The API or the connection to it failed. `message` is the API's own message. */
export class ApiError extends Error {
  // Each class names itself: a minified bundle renames classes (scripts/bundle.ts).
  override name = "ApiError";
  /** HTTP status, or null for connection errors. */
  readonly status: number | null;
  /** The API's `error.type`, or null. */
  readonly errorType: string | null;
  /** Whether sending the same request again may succeed. */
  readonly isRetryable: boolean;
  /** How long the API asked to wait before a retry, in milliseconds, or null. */
  readonly retryAfterMs: number | null;
  /** The `request-id` response header, or null. */
  readonly requestId: string | null;

  constructor(message: string, options: ApiErrorOptions) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.errorType = options.errorType;
    this.isRetryable = options.isRetryable;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.requestId = options.requestId ?? null;
  }

  /** The API's message as it gave it, with the status beside it: "Overloaded (API status 529 overloaded_error)". */
  describe(): string {
    if (this.status === null) return this.message;
    const kind = this.errorType === null ? "" : ` ${this.errorType}`;
    return `${this.message} (API status ${this.status}${kind})`;
  }

  /**
   * Builds the error for an HTTP error response, picking the subclass by status. `body` is the parsed JSON
   * body (`{type: "error", error: {type, message}}`) or its raw text. `x-should-retry` overrides the
   * status's default retryability, as the API intends.
   */
  static fromResponse(
    status: number,
    body: unknown,
    options: { headers?: HeaderLookup | null; now?: number } = {},
  ): ApiError {
    const headers = options.headers ?? null;
    const { errorType, apiMessage } = readErrorBody(body);
    const message = apiMessage ?? fallbackMessage(status, body);
    const shouldRetry = headers?.get("x-should-retry");
    const errorOptions: ApiErrorOptions = {
      status,
      errorType,
      isRetryable: shouldRetry === "true"
        ? true
        : shouldRetry === "false"
        ? false
        : isRetryableStatus(status),
      retryAfterMs: parseRetryAfter(headers, options.now ?? Date.now()),
      requestId: headers?.get("request-id") ?? null,
    };
    return createBySubclass(message, errorOptions);
  }

  /** Builds the error for a mid-stream SSE `error` event (`{type: "error", error: {type, message}}`). */
  static fromErrorEvent(data: unknown): ApiError {
    const { errorType, apiMessage } = readErrorBody(data);
    const status = errorType === null ? null : STATUS_BY_ERROR_TYPE[errorType] ?? null;
    const message = apiMessage ?? `The API sent an error event: ${JSON.stringify(data)}`;
    return createBySubclass(message, {
      status,
      errorType,
      isRetryable: status === null ? false : isRetryableStatus(status),
    });
  }
}

/** 400: the request was invalid (the message says what). */
export class InvalidRequestError extends ApiError {
  override name = "InvalidRequestError";
}
/** 401 or 403: the API key is missing, wrong, or not allowed to do this. */
export class AuthenticationError extends ApiError {
  override name = "AuthenticationError";
}
/** 429: too many requests or tokens; retried after `retry-after`. */
export class RateLimitError extends ApiError {
  override name = "RateLimitError";
}
/** 529: the API is overloaded; retried. */
export class OverloadedError extends ApiError {
  override name = "OverloadedError";
}
/** 5xx other than 529: the API failed; retried. */
export class ServerError extends ApiError {
  override name = "ServerError";
}

/** The API could not be reached, or the connection dropped; retried when no content had arrived yet. */
export class ConnectionError extends ApiError {
  override name = "ConnectionError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { status: null, errorType: null, isRetryable: true, cause: options.cause });
  }
}

/**
 * The API sent nothing for the idle timeout (120 s by default): a stalled connection or server. Retried once
 * only (`decideRetry`): five attempts of two minutes each kept a script waiting ten minutes for nothing.
 */
export class StalledError extends ConnectionError {
  override name = "StalledError";
}

/**
 * The stream broke (an `error` event, a dropped connection) after content had arrived. Never retried:
 * the consumer keeps what it received and must not execute tool calls of the broken message.
 * `cause` is the underlying ApiError.
 */
export class StreamInterruptedError extends ApiError {
  override name = "StreamInterruptedError";
  constructor(cause: ApiError) {
    super(`Response stream interrupted after content arrived: ${cause.message}`, {
      status: cause.status,
      errorType: cause.errorType,
      isRetryable: false,
      requestId: cause.requestId,
      cause,
    });
  }
}

/** The stream's events broke the protocol (out of order, wrong delta type, malformed data). */
export class StreamProtocolError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "StreamProtocolError";
  }

  /** The message alone: it already says what broke. */
  describe(): string {
    return this.message;
  }
}

/**
 * The most characters one response may stream (text, thinking, tool input): a model's longest answer is a
 * few hundred thousand. A broken or hostile endpoint that streams gigabytes would otherwise fill the heap,
 * and V8 aborts the whole process past its limit, taking the run's result and transcript end with it.
 */
export const MAX_RESPONSE_CHARACTERS = 32 * 1024 * 1024;

/** The error of a response past MAX_RESPONSE_CHARACTERS. */
export function responseTooLong(): StreamProtocolError {
  return new StreamProtocolError(
    `The API's response is longer than ${MAX_RESPONSE_CHARACTERS} characters, far past any model's answer: ` +
      "the endpoint (ANTHROPIC_BASE_URL, or the provider's base URL) is broken or not a model API; check it",
  );
}

/**
 * The error of a 2xx answer that is a web page (`content-type: text/html`), not the API's: a captive portal,
 * a login page of a proxy, or a base URL that points at a website. Not retried: the next answer is the same
 * page.
 */
export function webPageError(baseUrl: string, contentType: string): ApiError {
  return new ApiError(
    `The API at "${baseUrl}" answered with a web page (${contentType.split(";")[0]?.trim()}), not the API: ` +
      "a captive portal or a proxy's login page is in the way, or the base URL points at a website; check " +
      "the network and the base URL (ANTHROPIC_BASE_URL, OPENAI_BASE_URL or the baseUrl setting)",
    { status: null, errorType: null, isRetryable: false },
  );
}

/** Whether a response's content type is a web page's (HTML). */
export function isWebPage(contentType: string | null): boolean {
  return contentType !== null && /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType);
}

/** The variable that should hold the API key (ANTHROPIC_API_KEY by default) is not set, or empty. */
export class MissingApiKeyError extends Error {
  /** The environment variable that is not set. */
  readonly variable: string;

  constructor(options: { variable?: string; provider?: "anthropic" | "openai" | "ollama" } = {}) {
    const provider = options.provider ?? "anthropic";
    const variable = options.variable ?? (provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    const api = provider === "anthropic" ? "the Anthropic API" : `the ${provider} provider's API`;
    const endpoint = provider === "anthropic"
      ? "ANTHROPIC_BASE_URL for a proxy"
      : "OPENAI_BASE_URL or the baseUrl setting for another server";
    // One line that gets a new user going: where a key comes from, how to set it, what checks the rest.
    const obtain = provider === "anthropic"
      ? "create one at https://console.anthropic.com/settings/keys and "
      : "";
    super(
      `Cannot call ${api}: ${variable} is not set: ${obtain}export ${variable}=<your key> (and ${endpoint}); ` +
        "mewcode doctor checks the rest",
    );
    this.name = "MissingApiKeyError";
    this.variable = variable;
  }

  /** The message alone: it already says what to do. */
  describe(): string {
    return this.message;
  }
}

/** Whether an HTTP status is worth retrying unchanged: 408, 409, 429 and every 5xx (529 included). */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date) into milliseconds;
 * null when absent, unparseable or negative.
 */
export function parseRetryAfter(headers: HeaderLookup | null, now: number): number | null {
  const milliseconds = headers?.get("retry-after-ms");
  if (milliseconds != null && milliseconds.trim() !== "") {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers?.get("retry-after")?.trim();
  if (retryAfter == null || retryAfter === "") return null;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/** The status each API error type stands for, so mid-stream errors classify like HTTP ones. */
const STATUS_BY_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function createBySubclass(message: string, options: ApiErrorOptions): ApiError {
  const status = options.status;
  if (status === 400) return new InvalidRequestError(message, options);
  if (status === 401 || status === 403) return new AuthenticationError(message, options);
  if (status === 429) return new RateLimitError(message, options);
  if (status === 529) return new OverloadedError(message, options);
  if (status !== null && status >= 500) return new ServerError(message, options);
  return new ApiError(message, options);
}

function readErrorBody(body: unknown): { errorType: string | null; apiMessage: string | null } {
  if (!isRecord(body)) return { errorType: null, apiMessage: null };
  const inner = isRecord(body.error) ? body.error : body;
  return {
    errorType: typeof inner.type === "string" && inner.type !== "error" ? inner.type : null,
    apiMessage: typeof inner.message === "string" && inner.message !== "" ? inner.message : null,
  };
}

function fallbackMessage(status: number, body: unknown): string {
  const text = typeof body === "string" ? body.trim() : body == null ? "" : JSON.stringify(body);
  if (text === "") return `The API answered with status ${status} and no error message`;
  const excerpt = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return `The API answered with status ${status}: ${excerpt}`;
}

/**
 * What kind of failure ended a run, for front ends and exit codes:
 *   authentication  the API refused the credentials (401, 403), or there were none
 *   unavailable     the API stayed unreachable or overloaded (429, 408, 5xx, 529, connection errors, and
 *                   streams that broke for one of these reasons)
 *   api             the API refused the request itself (400, 402, 404, 413, …, and unknown error types)
 *   internal        anything else: a protocol violation, a bug
 */
export type ErrorCategory = "authentication" | "unavailable" | "api" | "internal";

/**
 * The category of anything thrown. A broken stream (StreamInterruptedError) counts as what broke it; a
 * connection error has no status and is `unavailable`.
 */
export function errorCategory(error: unknown): ErrorCategory {
  if (error instanceof MissingApiKeyError) return "authentication";
  if (!(error instanceof ApiError)) return "internal";
  if (error instanceof StreamInterruptedError && error.cause instanceof ApiError) {
    return errorCategory(error.cause);
  }
  if (error instanceof ConnectionError) return "unavailable";
  const status = error.status;
  if (status === 401 || status === 403) return "authentication";
  if (status !== null && (status === 408 || status === 429 || status >= 500)) return "unavailable";
  return "api";
}
