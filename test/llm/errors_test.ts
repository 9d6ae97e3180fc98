import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  type ErrorCategory,
  errorCategory,
  InvalidRequestError,
  MissingApiKeyError,
  OverloadedError,
  parseRetryAfter,
  RateLimitError,
  ServerError,
  StalledError,
  StreamInterruptedError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";

const body = (type: string, message: string) => ({ type: "error", error: { type, message } });

Deno.test("ApiError.fromResponse picks the subclass by status and keeps the API's message verbatim", async (t) => {
  const cases: [number, string, new (...args: never[]) => ApiError, boolean][] = [
    [400, "invalid_request_error", InvalidRequestError, false],
    [401, "authentication_error", AuthenticationError, false],
    [403, "permission_error", AuthenticationError, false],
    [404, "not_found_error", ApiError, false],
    [429, "rate_limit_error", RateLimitError, true],
    [500, "api_error", ServerError, true],
    [502, "api_error", ServerError, true],
    [529, "overloaded_error", OverloadedError, true],
  ];
  for (const [status, type, subclass, retryable] of cases) {
    await t.step(String(status), () => {
      const error = ApiError.fromResponse(status, body(type, `messages.0: the message for ${status}`));
      ok(error instanceof subclass);
      equal(error.message, `messages.0: the message for ${status}`);
      deepStrictEqual([error.status, error.errorType, error.isRetryable], [status, type, retryable]);
    });
  }
});

Deno.test("ApiError.fromResponse reads retry-after, request-id and x-should-retry from the headers", () => {
  const headers = new Headers({ "retry-after": "1", "request-id": "req_123", "x-should-retry": "false" });
  const error = ApiError.fromResponse(429, body("rate_limit_error", "Slow down"), { headers });
  deepStrictEqual([error.retryAfterMs, error.requestId, error.isRetryable], [1000, "req_123", false]);
  const forced = ApiError.fromResponse(400, {}, { headers: new Headers({ "x-should-retry": "true" }) });
  equal(forced.isRetryable, true);
});

Deno.test("ApiError.fromResponse describes a body without an error message", () => {
  equal(
    ApiError.fromResponse(502, "<html>Bad gateway</html>").message,
    "The API answered with status 502: <html>Bad gateway</html>",
  );
  equal(ApiError.fromResponse(503, "").message, "The API answered with status 503 and no error message");
});

Deno.test("ApiError.fromErrorEvent classifies a mid-stream error by its type", () => {
  const error = ApiError.fromErrorEvent(body("overloaded_error", "Overloaded"));
  ok(error instanceof OverloadedError);
  deepStrictEqual([error.message, error.status, error.isRetryable], ["Overloaded", 529, true]);
  const unknown = ApiError.fromErrorEvent(body("brand_new_error", "Something"));
  deepStrictEqual([unknown.status, unknown.isRetryable, unknown.errorType], [null, false, "brand_new_error"]);
});

Deno.test("parseRetryAfter reads milliseconds, seconds and HTTP dates", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  deepStrictEqual(parseRetryAfter(new Headers({ "retry-after-ms": "1500", "retry-after": "9" }), now), 1500);
  deepStrictEqual(parseRetryAfter(new Headers({ "retry-after": "2.5" }), now), 2500);
  deepStrictEqual(
    parseRetryAfter(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now),
    3000,
  );
  deepStrictEqual(parseRetryAfter(new Headers({ "retry-after": "soon" }), now), null);
  deepStrictEqual(parseRetryAfter(new Headers({ "retry-after": "-1" }), now), null);
  deepStrictEqual(parseRetryAfter(new Headers(), now), null);
});

Deno.test("MissingApiKeyError names ANTHROPIC_API_KEY", () => {
  match(new MissingApiKeyError().message, /ANTHROPIC_API_KEY is not set/);
});

Deno.test("errorCategory sorts failures into authentication, unavailable, api and internal", async (t) => {
  const response = (status: number, type: string, headers: Record<string, string> = {}) =>
    ApiError.fromResponse(status, body(type, `status ${status}`), { headers: new Headers(headers) });
  const cases: [string, unknown, ErrorCategory][] = [
    ["401", response(401, "authentication_error"), "authentication"],
    ["403", response(403, "permission_error"), "authentication"],
    ["a missing API key", new MissingApiKeyError(), "authentication"],
    ["429", response(429, "rate_limit_error"), "unavailable"],
    ["408", response(408, "timeout_error"), "unavailable"],
    ["500", response(500, "api_error"), "unavailable"],
    [
      "500 that must not be retried",
      response(500, "api_error", { "x-should-retry": "false" }),
      "unavailable",
    ],
    ["503", response(503, "api_error"), "unavailable"],
    ["529", response(529, "overloaded_error"), "unavailable"],
    ["a connection error", new ConnectionError("Connection refused"), "unavailable"],
    [
      "a mid-stream overloaded_error",
      ApiError.fromErrorEvent(body("overloaded_error", "Overloaded")),
      "unavailable",
    ],
    [
      "a stream broken by overload",
      new StreamInterruptedError(ApiError.fromErrorEvent(body("overloaded_error", "Overloaded"))),
      "unavailable",
    ],
    ["a dropped stream", new StreamInterruptedError(new ConnectionError("Connection reset")), "unavailable"],
    [
      "a stream broken by an invalid request",
      new StreamInterruptedError(ApiError.fromErrorEvent(body("invalid_request_error", "Bad"))),
      "api",
    ],
    ["400", response(400, "invalid_request_error"), "api"],
    ["402", response(402, "billing_error"), "api"],
    ["404", response(404, "not_found_error"), "api"],
    ["413", response(413, "request_too_large"), "api"],
    ["400 marked retryable", response(400, "invalid_request_error", { "x-should-retry": "true" }), "api"],
    ["an unknown mid-stream error type", ApiError.fromErrorEvent(body("brand_new_error", "New")), "api"],
    ["a protocol error", new StreamProtocolError("Event out of order"), "internal"],
    ["a TypeError", new TypeError("Cannot read properties of undefined"), "internal"],
    ["a thrown string", "boom", "internal"],
  ];
  for (const [name, error, category] of cases) {
    await t.step(name, () => equal(errorCategory(error), category));
  }
});

Deno.test("each error class names itself, not through its class's own name, which the bundle minifies", () => {
  const options = { status: 500, errorType: null, isRetryable: false };
  const made: [{ name: string }, () => Error][] = [
    [ApiError, () => new ApiError("m", options)],
    [InvalidRequestError, () => new InvalidRequestError("m", options)],
    [AuthenticationError, () => new AuthenticationError("m", options)],
    [RateLimitError, () => new RateLimitError("m", options)],
    [OverloadedError, () => new OverloadedError("m", options)],
    [ServerError, () => new ServerError("m", options)],
    [ConnectionError, () => new ConnectionError("m")],
    [StalledError, () => new StalledError("m")],
    [StreamInterruptedError, () => new StreamInterruptedError(new ServerError("m", options))],
    [StreamProtocolError, () => new StreamProtocolError("m")],
    [MissingApiKeyError, () => new MissingApiKeyError()],
  ];
  for (const [errorClass, make] of made) {
    const name = errorClass.name;
    // As esbuild's minifier leaves a class without --keep-names (scripts/bundle.ts).
    Object.defineProperty(errorClass, "name", { value: "Xy", configurable: true });
    try {
      equal(make().name, name);
    } finally {
      Object.defineProperty(errorClass, "name", { value: name, configurable: true });
    }
  }
});
