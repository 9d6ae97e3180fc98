/**
 * A fake Anthropic Messages API for tests: real HTTP/1.1 on 127.0.0.1 (a random port), answering
 * `POST /v1/messages` with `stream: true` by streaming scripted turns as server-sent events
 * (`event: X\ndata: {...}\n\n`, chunked transfer encoding, so a dropped connection is visible as one).
 *
 * ```ts
 * import { httpError, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
 *
 * await using server = await startFakeAnthropic([
 *   httpError(529, "overloaded_error", "Overloaded"),
 *   turn().text("Reading.").toolUse("ReadFile", { path: "/w/a.ts" }, { id: "toolu_1", fragment: [1, 3] }),
 *   turn().text("Done.").stop("end_turn"),
 * ]);
 * // Point the client at it: ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=server.apiKey
 * // (or `env: { ...server.env() }` for a child process).
 * server.requests[1].body;   // the parsed JSON of the 2nd request (model, system, tools, messages, …)
 * server.requests[1].headers; // lower-cased header names
 * server.remaining;          // scripted responses not used yet (assert 0 at the end)
 * ```
 *
 * The script language (turn(), httpError(), delays, drops, error events, JSON fragments split inside
 * escapes and surrogate pairs, byte-level chunking) is documented in script.ts. Each request consumes the
 * next scripted response. The server answers without consuming a response, and loudly:
 * - 401 `authentication_error` without `x-api-key` or `Authorization: Bearer` (or with a wrong key when
 *   `apiKey` was given);
 * - 400 `invalid_request_error` without `anthropic-version`, for a non-JSON body, without `stream: true`,
 *   or for a conversation the real API would reject (see conversation_rules.ts; `validate: false` turns
 *   that off);
 * - 500 `api_error` with `x-should-retry: false` when the script has run out, naming the request.
 * Requests are recorded in every case. `sent` records each event written, with its time (ms since epoch).
 *
 * Recipes:
 * - a safe call that should start before the stream ends: `turn().toolUse("Grep", …).delay(500).stop("tool_use")`,
 *   then compare the tool's start time with `server.sent.find((e) => e.event === "message_stop").at`;
 * - a slow stream (benchmarks): `turn({ paceMs: 50 })`;
 * - retries: `httpError(529, "overloaded_error", "Overloaded")`, or 429 with `{ headers: { "retry-after": "1" } }`;
 * - broken streams: `turn().text("Partial").errorEvent("overloaded_error", "Overloaded")`, `.drop()`, `.cut()`;
 * - malformed tool input: `turn().rawToolUse("ReadFile", '{"path": "/w/a', { id: "toolu_bad" })`;
 * - the conversation the client sent back: `server.requests[n].body.messages` (the fake already rejects,
 *   with a 400, a tool_use without its tool_result, results out of place, or empty text blocks);
 * - prompt caching: `cacheBreakpoints(server.requests[n].body)` lists where `cache_control` sits, e.g.
 *   `["tools.5", "system.0", "messages.2.content.1"]` (the fake rejects malformed ones and more than 4).
 *
 * @module
 */
import {
  chunk,
  closeQuietly,
  ConnectionServer,
  type ErrorAnswer,
  isDisconnect,
  parseJson,
  preciseNow,
  type RawRequest,
  readRequest,
  writeAll,
  writeError,
} from "./_http.ts";
import { isRecord } from "../../src/common/values.ts";
import { checkMessagesRequest } from "./conversation_rules.ts";
import { type HttpErrorResponse, seededRandom, splitBytes, type Step, TurnBuilder } from "./script.ts";

export { httpError, splitFragments, turn, TurnBuilder } from "./script.ts";
export { cacheBreakpoints } from "./conversation_rules.ts";
export type {
  FragmentSize,
  HttpErrorResponse,
  ScriptedResponse,
  ToolUseOptions,
  TurnOptions,
  TurnUsage,
} from "./script.ts";

/** One request as the server received it. */
export interface RecordedRequest {
  /** 1-based, in arrival order. */
  number: number;
  method: string;
  /** As in the request line: the whole URL when the request came to the server as a proxy. */
  path: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or null when it was not JSON. */
  body: unknown;
  /** When its last byte had been read (before its body was parsed), in ms since epoch (fractional). */
  receivedAt: number;
}

/** One event the server wrote. */
export interface SentEvent {
  request: number;
  event: string;
  /** When it was written, in ms since epoch (fractional). */
  at: number;
}

/** Server options. */
export interface FakeAnthropicOptions {
  /** Require this exact key (as `x-api-key` or a bearer token); any non-empty key is accepted when omitted. */
  apiKey?: string;
  /** Enforce the API's conversation rules (conversation_rules.ts); true by default. */
  validate?: boolean;
  /**
   * Keep a connection open for the next request after a streamed answer, as the real API does (benchmarks:
   * the client then pays for one connection, not one per turn). Default false: every answer closes it.
   */
  keepAlive?: boolean;
}

/** A running fake server; `await using` closes it. */
export interface FakeAnthropic extends AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:41234` (for ANTHROPIC_BASE_URL). */
  readonly url: string;
  /** A key the server accepts. */
  readonly apiKey: string;
  readonly requests: readonly RecordedRequest[];
  readonly sent: readonly SentEvent[];
  /** Scripted responses not consumed yet. */
  readonly remaining: number;
  /** ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY for a child process. */
  env(): Record<string, string>;
  /** Stops listening, cuts open connections and cancels pending delays. */
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a random port. */
export function startFakeAnthropic(
  script: readonly (TurnBuilder | HttpErrorResponse)[],
  options: FakeAnthropicOptions = {},
): Promise<FakeAnthropic> {
  return Promise.resolve(new FakeAnthropicServer(script, options));
}

const encoder = new TextEncoder();

class FakeAnthropicServer implements FakeAnthropic {
  readonly url: string;
  readonly apiKey: string;
  readonly requests: RecordedRequest[] = [];
  readonly sent: SentEvent[] = [];
  #script: readonly (TurnBuilder | HttpErrorResponse)[];
  #next = 0;
  #options: FakeAnthropicOptions;
  #server: ConnectionServer;

  constructor(script: readonly (TurnBuilder | HttpErrorResponse)[], options: FakeAnthropicOptions) {
    this.#script = script;
    this.#options = options;
    this.apiKey = options.apiKey ?? "sk-ant-fake-test-key";
    this.#server = new ConnectionServer((connection) => this.#serve(connection));
    this.url = this.#server.url;
  }

  get remaining(): number {
    return this.#script.length - this.#next;
  }

  env(): Record<string, string> {
    return { ANTHROPIC_BASE_URL: this.url, ANTHROPIC_API_KEY: this.apiKey };
  }

  close(): Promise<void> {
    return this.#server.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #serve(connection: Deno.TcpConn): Promise<void> {
    try {
      while (await this.#answer(connection) && this.#options.keepAlive === true) {
        // The client may send its next request on this connection.
      }
    } catch (error) {
      // A client that hangs up, or close(), ends the connection; anything else is a bug in the fake.
      if (!isDisconnect(error) && !this.#server.closing.aborted) throw error;
    }
  }

  /** Reads one request and answers it; true when a whole stream was written (the connection is reusable). */
  async #answer(connection: Deno.TcpConn): Promise<boolean> {
    const request = await readRequest(connection);
    if (request === null) return false;
    const number = this.requests.length + 1;
    const body = parseJson(request.body);
    this.requests.push({ number, ...request, body });
    const rejection = this.#reject(request, body);
    if (rejection !== null) {
      await writeError(connection, number, rejection);
      return false;
    }
    const response = this.#script[this.#next];
    if (response === undefined) {
      await writeError(connection, number, {
        status: 500,
        errorType: "api_error",
        message: `Fake Anthropic server: no scripted response left for request ${number} ` +
          `(${this.#script.length} scripted): the client sent more requests than the test expected`,
        headers: { "x-should-retry": "false" },
      });
      return false;
    }
    this.#next++;
    if (!(response instanceof TurnBuilder)) {
      await writeError(connection, number, response);
      return false;
    }
    const model = isRecord(body) && typeof body.model === "string" ? body.model : "";
    return await this.#stream(connection, number, response, model);
  }

  #reject(request: RawRequest, body: unknown): ErrorAnswer | null {
    const invalid = (message: string): ErrorAnswer => ({
      status: 400,
      errorType: "invalid_request_error",
      message,
    });
    // A proxy's request names the whole URL ("POST http://host/v1/messages"): the server serves as one too.
    const path = request.path.replace(/^https?:\/\/[^/]+/, "").split("?")[0];
    if (request.method !== "POST" || path !== "/v1/messages") {
      return {
        status: 404,
        errorType: "not_found_error",
        message: `Not found: ${request.method} ${request.path}`,
      };
    }
    const bearer = request.headers.authorization?.match(/^Bearer (.+)$/)?.[1];
    const key = request.headers["x-api-key"] ?? bearer;
    if (key === undefined || key === "") {
      return { status: 401, errorType: "authentication_error", message: "x-api-key header is required" };
    }
    if (this.#options.apiKey !== undefined && key !== this.#options.apiKey) {
      return { status: 401, errorType: "authentication_error", message: "invalid x-api-key" };
    }
    if (request.headers["anthropic-version"] === undefined) {
      return invalid("anthropic-version: header is required");
    }
    if (body === null) return invalid("Request body is not valid JSON");
    if (!isRecord(body) || body.stream !== true) {
      return invalid("The fake Anthropic server only answers streaming requests (stream: true)");
    }
    if (this.#options.validate === false) return null;
    const problem = checkMessagesRequest(body);
    return problem === null ? null : invalid(problem);
  }

  async #stream(
    connection: Deno.TcpConn,
    number: number,
    builder: TurnBuilder,
    model: string,
  ): Promise<boolean> {
    const steps: Step[] = builder.compile({ request: number, model });
    const connectionHeader = this.#options.keepAlive === true ? "keep-alive" : "close";
    if (builder.options.headDelayMs !== undefined) await this.#sleep(builder.options.headDelayMs);
    await writeAll(
      connection,
      encoder.encode(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n" +
          `request-id: req_fake_${number}\r\ntransfer-encoding: chunked\r\nconnection: ${connectionHeader}\r\n\r\n`,
      ),
    );
    const { paceMs, byteChunks } = builder.options;
    const nextPiece = seededRandom(number);
    for (const step of steps) {
      switch (step.kind) {
        case "delay":
          await this.#sleep(step.ms);
          break;
        case "drop":
          closeQuietly(connection);
          return false;
        case "end":
          await writeAll(connection, encoder.encode("0\r\n\r\n"));
          return true;
        case "event": {
          if (paceMs !== undefined) await this.#sleep(paceMs);
          const data = typeof step.data === "string" ? step.data : JSON.stringify(step.data);
          const bytes = encoder.encode(`event: ${step.name}\ndata: ${data}\n\n`);
          for (const piece of byteChunks === undefined ? [bytes] : splitBytes(bytes, byteChunks, nextPiece)) {
            await writeAll(connection, chunk(piece));
          }
          this.sent.push({ request: number, event: step.name, at: preciseNow() });
          break;
        }
      }
    }
    // A script without an end step leaves the body unterminated: the connection cannot carry another answer.
    return false;
  }

  #sleep(ms: number): Promise<void> {
    const signal = this.#server.closing;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
