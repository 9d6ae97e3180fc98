/**
 * A fake OpenAI chat completions API for tests: real HTTP/1.1 on 127.0.0.1 (a random port), answering
 * `POST /v1/chat/completions` with `stream: true` by streaming scripted turns as server-sent
 * `chat.completion.chunk`s (chunked transfer encoding, so a dropped connection is visible as one), and
 * `GET /v1/models` with a model list (for `mewcode doctor`).
 *
 * ```ts
 * import { chatError, chatTurn, startFakeOpenAi } from "../fake_anthropic/openai_server.ts";
 *
 * await using server = await startFakeOpenAi([
 *   chatError(503, "Overloaded"),
 *   chatTurn().text("Reading.").toolCall("ReadFile", { path: "/w/a.ts" }, { id: "call_1", fragment: [1, 3] }),
 *   chatTurn().text("Done.").finish("stop"),
 * ]);
 * // OPENAI_BASE_URL=server.baseUrl (…/v1), OPENAI_API_KEY=server.apiKey, or `env: server.env()`.
 * server.requests[1].body;   // the parsed JSON of the 2nd request
 * server.remaining;          // scripted responses not used yet
 * ```
 *
 * The script language is in openai_script.ts; the plumbing (reading requests, chunked bodies) is shared
 * with the Anthropic fake (_http.ts). The server answers without consuming a response, and loudly:
 * - 401 without `Authorization: Bearer <key>` (or with another key than `apiKey`), unless `apiKey` is
 *   null (a keyless server such as Ollama: any or no key);
 * - 400 for a non-JSON body, or a request the rules in openai_rules.ts reject (`validate: false` turns that
 *   off);
 * - 404 for any other path;
 * - 500 with `x-should-retry: false` when the script has run out, naming the request.
 * Requests are recorded in every case.
 *
 * @module
 */
import {
  chunk,
  closeQuietly,
  ConnectionServer,
  isDisconnect,
  parseJson,
  type RawRequest,
  readRequest,
  writeAll,
} from "./_http.ts";
import { isRecord } from "../../src/common/values.ts";
import { checkChatRequest } from "./openai_rules.ts";
import {
  type ChatErrorResponse,
  type ChatScriptedResponse,
  ChatTurnBuilder,
  type Step,
} from "./openai_script.ts";
import { seededRandom, splitBytes } from "./script.ts";

export { chatError, chatTurn, ChatTurnBuilder } from "./openai_script.ts";
export type {
  ChatErrorResponse,
  ChatScriptedResponse,
  ChatTurnOptions,
  ChatUsage,
  ToolCallOptions,
} from "./openai_script.ts";

/** One request as the server received it. */
export interface RecordedChatRequest {
  /** 1-based, in arrival order. */
  number: number;
  method: string;
  path: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or null when it was not JSON (or there was none). */
  body: unknown;
  /** When its last byte had been read (before its body was parsed), in ms since epoch (fractional). */
  receivedAt: number;
}

/** Server options. */
export interface FakeOpenAiOptions {
  /** Require this exact bearer key; null: a keyless server (any or no key); default: any non-empty key. */
  apiKey?: string | null;
  /** Enforce openai_rules.ts; true by default. */
  validate?: boolean;
  /** The ids `GET /v1/models` lists; `["fake-model"]` by default. */
  models?: readonly string[];
}

/** A running fake server; `await using` closes it. */
export interface FakeOpenAi extends AsyncDisposable {
  /** The server's origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The API's base URL, `<url>/v1` (for OPENAI_BASE_URL). */
  readonly baseUrl: string;
  /** A key the server accepts. */
  readonly apiKey: string;
  readonly requests: readonly RecordedChatRequest[];
  /** The chat completion requests only (not `GET /v1/models`). */
  readonly completions: readonly RecordedChatRequest[];
  /** Scripted responses not consumed yet. */
  readonly remaining: number;
  /** OPENAI_BASE_URL and OPENAI_API_KEY for a child process. */
  env(): Record<string, string>;
  /** Stops listening, cuts open connections and cancels pending delays. */
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a random port. */
export function startFakeOpenAi(
  script: readonly ChatScriptedResponse[],
  options: FakeOpenAiOptions = {},
): Promise<FakeOpenAi> {
  return Promise.resolve(new FakeOpenAiServer(script, options));
}

const encoder = new TextEncoder();
const COMPLETIONS_PATH = "/v1/chat/completions";

class FakeOpenAiServer implements FakeOpenAi {
  readonly url: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly requests: RecordedChatRequest[] = [];
  #script: readonly ChatScriptedResponse[];
  #next = 0;
  #options: FakeOpenAiOptions;
  #server: ConnectionServer;

  constructor(script: readonly ChatScriptedResponse[], options: FakeOpenAiOptions) {
    this.#script = script;
    this.#options = options;
    this.apiKey = options.apiKey ?? "sk-fake-openai-key";
    this.#server = new ConnectionServer((connection) => this.#serve(connection));
    this.url = this.#server.url;
    this.baseUrl = `${this.url}/v1`;
  }

  get remaining(): number {
    return this.#script.length - this.#next;
  }

  get completions(): RecordedChatRequest[] {
    return this.requests.filter((request) => request.path.split("?")[0] === COMPLETIONS_PATH);
  }

  env(): Record<string, string> {
    return { OPENAI_BASE_URL: this.baseUrl, OPENAI_API_KEY: this.apiKey };
  }

  close(): Promise<void> {
    return this.#server.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #serve(connection: Deno.TcpConn): Promise<void> {
    try {
      const request = await readRequest(connection);
      if (request === null) return;
      const number = this.requests.length + 1;
      const body = parseJson(request.body);
      this.requests.push({ number, ...request, body });
      const rejection = this.#reject(request, body);
      if (rejection !== null) return await writeChatError(connection, rejection);
      if (request.method === "GET") return await this.#listModels(connection);
      const response = this.#script[this.#next];
      if (response === undefined) {
        return await writeChatError(connection, {
          status: 500,
          type: "server_error",
          message: `Fake chat completions server: no scripted response left for request ${number} ` +
            `(${this.#script.length} scripted): the client sent more requests than the test expected`,
          headers: { "x-should-retry": "false" },
        });
      }
      this.#next++;
      if (!(response instanceof ChatTurnBuilder)) {
        return await writeChatError(connection, fromScript(response));
      }
      const model = isRecord(body) && typeof body.model === "string" ? body.model : "";
      await this.#stream(connection, response.compile({ request: number, model }), response, number);
    } catch (error) {
      if (!isDisconnect(error) && !this.#server.closing.aborted) throw error;
    }
  }

  #reject(request: RawRequest, body: unknown): ErrorToWrite | null {
    const path = request.path.split("?")[0];
    const isModels = request.method === "GET" && path === "/v1/models";
    if (!isModels && !(request.method === "POST" && path === COMPLETIONS_PATH)) {
      return {
        status: 404,
        type: "invalid_request_error",
        message: `Unknown request URL: ${request.method} ${request.path}`,
      };
    }
    if (this.#options.apiKey !== null) {
      const key = request.headers.authorization?.match(/^Bearer (.+)$/)?.[1];
      if (
        key === undefined || key === "" ||
        (this.#options.apiKey !== undefined && key !== this.#options.apiKey)
      ) {
        return {
          status: 401,
          type: "invalid_request_error",
          code: "invalid_api_key",
          message: "Incorrect API key provided",
        };
      }
    }
    if (isModels) return null;
    if (body === null) {
      return { status: 400, type: "invalid_request_error", message: "We could not parse the JSON body" };
    }
    if (this.#options.validate === false) {
      return isRecord(body) && body.stream === true
        ? null
        : { status: 400, type: "invalid_request_error", message: "Only streaming requests are answered" };
    }
    const problem = checkChatRequest(body);
    return problem === null ? null : { status: 400, type: "invalid_request_error", message: problem };
  }

  async #listModels(connection: Deno.TcpConn): Promise<void> {
    const data = (this.#options.models ?? ["fake-model"]).map((id) => ({
      id,
      object: "model",
      created: 1_700_000_000,
      owned_by: "fake",
    }));
    await writeJson(connection, 200, { object: "list", data }, {});
  }

  async #stream(
    connection: Deno.TcpConn,
    steps: Step[],
    builder: ChatTurnBuilder,
    number: number,
  ): Promise<void> {
    await writeAll(
      connection,
      encoder.encode(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n" +
          `x-request-id: req_fake_${number}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
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
          return;
        case "end":
          await writeAll(connection, encoder.encode("0\r\n\r\n"));
          return;
        case "event": {
          if (paceMs !== undefined) await this.#sleep(paceMs);
          const data = typeof step.data === "string" ? step.data : JSON.stringify(step.data);
          const bytes = encoder.encode(`data: ${data}\n\n`);
          for (const piece of byteChunks === undefined ? [bytes] : splitBytes(bytes, byteChunks, nextPiece)) {
            await writeAll(connection, chunk(piece));
          }
          break;
        }
      }
    }
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

/** An error response to write. */
interface ErrorToWrite {
  status: number;
  type: string;
  message: string;
  code?: string | null;
  headers?: Record<string, string>;
  rawBody?: string | null;
}

function fromScript(response: ChatErrorResponse): ErrorToWrite {
  return { ...response };
}

/** Writes an error in OpenAI's shape `{error: {message, type, param, code}}` (or `rawBody` as text). */
async function writeChatError(connection: Deno.TcpConn, answer: ErrorToWrite): Promise<void> {
  if (answer.rawBody != null) {
    return await writeBody(
      connection,
      answer.status,
      encoder.encode(answer.rawBody),
      "text/plain",
      answer.headers ?? {},
    );
  }
  const body = {
    error: { message: answer.message, type: answer.type, param: null, code: answer.code ?? null },
  };
  await writeJson(connection, answer.status, body, answer.headers ?? {});
}

function writeJson(
  connection: Deno.TcpConn,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<void> {
  return writeBody(connection, status, encoder.encode(JSON.stringify(body)), "application/json", headers);
}

async function writeBody(
  connection: Deno.TcpConn,
  status: number,
  bytes: Uint8Array,
  contentType: string,
  extra: Record<string, string>,
): Promise<void> {
  const headers = {
    "content-type": contentType,
    "x-request-id": `req_fake_${status}`,
    ...extra,
    "content-length": String(bytes.length),
    connection: "close",
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await writeAll(
    connection,
    encoder.encode(`HTTP/1.1 ${status} ${status < 400 ? "OK" : "Error"}\r\n${head}\r\n`),
  );
  await writeAll(connection, bytes);
}
