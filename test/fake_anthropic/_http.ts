/**
 * The HTTP/1.1 plumbing of the fake Anthropic server: reading a request from a TCP connection, writing
 * JSON error responses and chunked bodies. Hand-written so the fake controls every byte (a dropped
 * connection is a chunked body without its terminator).
 *
 * @module
 */

const encoder = new TextEncoder();

/** An error response to write. */
export interface ErrorAnswer {
  status: number;
  errorType: string;
  message: string;
  headers?: Record<string, string>;
  rawBody?: string | null;
}

/** A request as read from the socket. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /**
   * When the request's last byte had been read, in ms since epoch (fractional): before the body is decoded or
   * parsed, which is the server's work, not the client's.
   */
  receivedAt: number;
}

/** Writes an error response in the API's JSON shape (or `rawBody` verbatim). */
export async function writeError(
  connection: Deno.TcpConn,
  number: number,
  answer: ErrorAnswer,
): Promise<void> {
  const requestId = `req_fake_${number}`;
  const body = answer.rawBody ??
    JSON.stringify({
      type: "error",
      error: { type: answer.errorType, message: answer.message },
      request_id: requestId,
    });
  const bytes = encoder.encode(body);
  const headers = {
    "content-type": answer.rawBody == null ? "application/json" : "text/plain",
    "request-id": requestId,
    ...answer.headers,
    "content-length": String(bytes.length),
    connection: "close",
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await writeAll(connection, encoder.encode(`HTTP/1.1 ${answer.status} Error\r\n${head}\r\n`));
  await writeAll(connection, bytes);
}

/** Reads one HTTP/1.1 request (Content-Length or chunked body); null when the client closed first. */
export async function readRequest(connection: Deno.TcpConn): Promise<RawRequest | null> {
  let buffer = new Uint8Array(0);
  const readMore = async (): Promise<boolean> => {
    const piece = new Uint8Array(64 * 1024);
    const count = await connection.read(piece);
    if (count === null) return false;
    const joined = new Uint8Array(buffer.length + count);
    joined.set(buffer);
    joined.set(piece.subarray(0, count), buffer.length);
    buffer = joined;
    return true;
  };
  let headerEnd = -1;
  while ((headerEnd = indexOfCrlfCrlf(buffer)) === -1) {
    if (!await readMore()) return null;
  }
  const [requestLine = "", ...lines] = new TextDecoder().decode(buffer.subarray(0, headerEnd)).split("\r\n");
  const [method = "", path = ""] = requestLine.split(" ");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyStart = headerEnd + 4;
  if (headers["transfer-encoding"]?.includes("chunked")) {
    while (!endsChunked(buffer.subarray(bodyStart))) {
      if (!await readMore()) return null;
    }
    const receivedAt = preciseNow();
    return { method, path, headers, body: decodeChunked(buffer.subarray(bodyStart)), receivedAt };
  }
  const length = Number(headers["content-length"] ?? "0");
  while (buffer.length - bodyStart < length) {
    if (!await readMore()) return null;
  }
  const receivedAt = preciseNow();
  return {
    method,
    path,
    headers,
    body: new TextDecoder().decode(buffer.subarray(bodyStart, bodyStart + length)),
    receivedAt,
  };
}

function indexOfCrlfCrlf(bytes: Uint8Array): number {
  for (let index = 0; index + 3 < bytes.length; index++) {
    if (
      bytes[index] === 13 && bytes[index + 1] === 10 && bytes[index + 2] === 13 && bytes[index + 3] === 10
    ) {
      return index;
    }
  }
  return -1;
}

function endsChunked(bytes: Uint8Array): boolean {
  return new TextDecoder().decode(bytes).endsWith("0\r\n\r\n");
}

function decodeChunked(bytes: Uint8Array): string {
  const parts: Uint8Array[] = [];
  let offset = 0;
  const text = new TextDecoder("latin1");
  while (offset < bytes.length) {
    const lineEnd = text.decode(bytes.subarray(offset)).indexOf("\r\n");
    const size = parseInt(text.decode(bytes.subarray(offset, offset + lineEnd)), 16);
    if (!(size > 0)) break;
    parts.push(bytes.subarray(offset + lineEnd + 2, offset + lineEnd + 2 + size));
    offset += lineEnd + 2 + size + 2;
  }
  const joined = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let position = 0;
  for (const part of parts) {
    joined.set(part, position);
    position += part.length;
  }
  return new TextDecoder().decode(joined);
}

/** Frames bytes as one chunk of a chunked body. */
export function chunk(bytes: Uint8Array): Uint8Array {
  const head = encoder.encode(`${bytes.length.toString(16)}\r\n`);
  const framed = new Uint8Array(head.length + bytes.length + 2);
  framed.set(head);
  framed.set(bytes, head.length);
  framed.set([13, 10], head.length + bytes.length);
  return framed;
}

/** Writes all bytes, looping over partial writes. */
export async function writeAll(connection: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length;) offset += await connection.write(bytes.subarray(offset));
}

/** Closes a connection that may already be closed. */
export function closeQuietly(connection: Deno.TcpConn): void {
  try {
    connection.close();
  } catch {
    // Already closed.
  }
}

/** Whether an error means the peer went away. */
export function isDisconnect(error: unknown): boolean {
  return error instanceof Deno.errors.BrokenPipe || error instanceof Deno.errors.ConnectionReset ||
    error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted;
}

/**
 * The TCP side both fake servers share: listens on 127.0.0.1 at a random port, hands each connection to
 * `serve`, and on `close` stops listening, cuts open connections and waits for every handler.
 */
export class ConnectionServer {
  readonly url: string;
  #listener: Deno.TcpListener;
  #connections = new Set<Deno.TcpConn>();
  #tasks = new Set<Promise<void>>();
  #closing = new AbortController();
  #accepting: Promise<void>;

  constructor(serve: (connection: Deno.TcpConn) => Promise<void>) {
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.url = `http://127.0.0.1:${this.#listener.addr.port}`;
    this.#accepting = this.#accept(serve);
  }

  /** Aborted once `close` has begun: handlers stop waiting and ignore the errors of cut connections. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    this.#listener.close();
    for (const connection of this.#connections) closeQuietly(connection);
    await this.#accepting;
    await Promise.allSettled([...this.#tasks]);
  }

  async #accept(serve: (connection: Deno.TcpConn) => Promise<void>): Promise<void> {
    try {
      for await (const connection of this.#listener) {
        this.#connections.add(connection);
        // Small writes (byte-level chunking) must not wait for delayed ACKs.
        connection.setNoDelay(true);
        const task = serve(connection).finally(() => {
          closeQuietly(connection);
          this.#connections.delete(connection);
          this.#tasks.delete(task);
        });
        this.#tasks.add(task);
      }
    } catch (error) {
      if (!this.#closing.signal.aborted) throw error;
    }
  }
}

/** A request body parsed as JSON, or null when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Milliseconds since epoch with sub-millisecond precision, so that benchmarks can time short gaps. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
