/**
 * A server whose every error repeats the Authorization header it got, as some providers' do: 401
 * `{"error":{"message":"invalid key: <header>"}}` or a 400 plain-text body. For tests that the key never
 * leaves a provider in an error.
 *
 * @module
 */
import { equal, match, ok } from "node:assert/strict";
import { AuthenticationError, InvalidRequestError } from "../../src/llm/errors.ts";

/** How the server answers: a JSON 401, or a plain-text 400. */
export type EchoFormat = "json-401" | "text-400";

/** The running server. */
export interface KeyEchoServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** How many requests arrived. */
  readonly requestCount: number;
}

/** Starts the server on 127.0.0.1 with a random port. */
export function startKeyEchoServer(format: EchoFormat): KeyEchoServer {
  let requestCount = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    requestCount++;
    await request.body?.cancel();
    const authorization = request.headers.get("authorization") ?? "";
    if (format === "text-400") return new Response(`bad request from ${authorization}`, { status: 400 });
    return Response.json({ error: { message: `invalid key: ${authorization}` } }, { status: 401 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get requestCount() {
      return requestCount;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * Asserts that the errors a provider gave for the server's answers (its stream's, its model list's) are of
 * the kind the status means, name the key only as `<the API key>`, and hold it nowhere.
 */
export function assertKeyHidden(format: EchoFormat, apiKey: string, errors: readonly unknown[]): void {
  for (const thrown of errors) {
    ok(thrown instanceof (format === "json-401" ? AuthenticationError : InvalidRequestError), String(thrown));
    match(thrown.message, /Bearer <the API key>/);
    equal(`${thrown.describe()}${thrown.stack}`.includes(apiKey), false, thrown.message);
  }
}
