import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import {
  ApiError,
  AuthenticationError,
  InvalidRequestError,
  MissingApiKeyError,
  OverloadedError,
  parseRetryAfter,
  RateLimitError,
  ServerError,
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
