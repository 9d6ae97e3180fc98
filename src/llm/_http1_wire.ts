/**
 * HTTP/1.1 on one socket, for http1_fetch.ts: a request's bytes, and an answer read from the socket (its
 * head, then its body by the framing its head gives, RFC 9112), on a {@link Connection} that keeps what was
 * read ahead.
 *
 * @module
 */
import { concatBytes } from "../common/bytes.ts";

/** An answer's head (status line and headers) may hold this many bytes. */
const MAX_HEAD_BYTES = 64 * 1024;

/** How much is read from the socket at a time. */
const READ_SIZE = 64 * 1024;

/** Statuses whose response has no body, whatever its headers say. */
export const NO_BODY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/** One socket and what has been read from it but not yet taken. */
export class Connection {
  readonly conn: Deno.Conn;
  /** Bytes read from the socket for the request it carries now. */
  received = 0;
  idleSince = 0;
  #buffer = new Uint8Array(READ_SIZE);
  #start = 0;
  #end = 0;
  /** The read started while the connection waited for its next request. */
  #pending: Promise<number | null> | null = null;
  #closed = false;

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  /** Waits for the next request: an unreferenced read shows the server closing it. */
  park(): void {
    this.idleSince = performance.now();
    this.#start = this.#end = 0;
    this.conn.unref();
    const pending = this.conn.read(this.#buffer);
    this.#pending = pending;
    // Settled while still waiting (not taken by the next answer's first read): the server closed the
    // connection, or sent what nobody asked for. It is closed, and never taken again.
    const settled = () => {
      if (this.#pending === pending) this.close();
    };
    pending.then(settled, settled);
  }

  /** Takes the connection out of waiting, for a request. */
  unpark(): void {
    this.received = 0;
    this.conn.ref();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // Already closed by the other side's error.
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether bytes are buffered that no answer has taken. */
  get hasLeftover(): boolean {
    return this.#end > this.#start;
  }

  async write(bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.length) written += await this.conn.write(bytes.subarray(written));
  }

  /** One line without its line break (CRLF or LF), as Latin-1; null at the connection's end. */
  async readLine(limit: number): Promise<string | null> {
    for (;;) {
      const newline = this.#buffer.subarray(this.#start, this.#end).indexOf(0x0a);
      if (newline !== -1) {
        const end = this.#start + newline;
        const line = latin1(
          this.#buffer.subarray(
            this.#start,
            end > this.#start && this.#buffer[end - 1] === 0x0d ? end - 1 : end,
          ),
        );
        this.#start = end + 1;
        return line;
      }
      if (this.#end - this.#start >= limit) {
        throw new Error(`the server sent a line longer than ${limit} bytes`);
      }
      if (!await this.#fill()) return null;
    }
  }

  /** Up to `limit` bytes (a copy), as soon as any are there; null at the connection's end. */
  async readBytes(limit: number): Promise<Uint8Array | null> {
    if (this.#start === this.#end && !await this.#fill()) return null;
    const end = Math.min(this.#end, this.#start + limit);
    const bytes = this.#buffer.slice(this.#start, end);
    this.#start = end;
    return bytes;
  }

  /** Reads more into the buffer; false at the connection's end. */
  async #fill(): Promise<boolean> {
    if (this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buffer.length) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    const pending = this.#pending;
    this.#pending = null;
    const count = await (pending ?? this.conn.read(this.#buffer.subarray(this.#end)));
    if (count === null) return false;
    this.#end += count;
    this.received += count;
    return true;
  }
}

/** A request as it is written: its method, and its head (host and framing set here) and body as bytes. */
export interface EncodedRequest {
  method: string;
  bytes: Uint8Array;
}

/**
 * The request `fetch(url, init)` would send, as HTTP/1.1 bytes: a TypeError for a method, header or body it
 * cannot write (a header value with a line break or NUL would end the header and start another).
 */
export function encodeRequest(url: URL, init: RequestInit): EncodedRequest {
  const method = (init.method ?? "GET").toUpperCase();
  if (!/^[A-Z]+$/.test(method)) throw new TypeError(`"${method}" is not an HTTP method`);
  const body = encodeBody(init.body);
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  let hasEncoding = false;
  for (const [name, value] of headerEntries(init.headers)) {
    const lower = name.toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower)) throw new TypeError(`"${name}" is not a header name`);
    if (/[\r\n\0]/.test(value)) {
      throw new TypeError(
        `The "${lower}" header's value holds a line break or NUL, which would end the header`,
      );
    }
    if (/[\u0100-\uffff]/.test(value)) {
      throw new TypeError(`The "${lower}" header's value holds a character beyond Latin-1`);
    }
    if (
      lower === "host" || lower === "content-length" || lower === "transfer-encoding" ||
      lower === "connection"
    ) {
      continue;
    }
    if (lower === "accept-encoding") hasEncoding = true;
    lines.push(`${lower}: ${value.trim()}`);
  }
  if (!hasEncoding) lines.push("accept-encoding: identity");
  if (body !== null || method === "POST" || method === "PUT" || method === "PATCH") {
    lines.push(`content-length: ${body?.length ?? 0}`);
  }
  const head = latin1Bytes(lines.join("\r\n") + "\r\n\r\n");
  return { method, bytes: body === null ? head : concatBytes(head, body) };
}

function encodeBody(body: RequestInit["body"]): Uint8Array | null {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  throw new TypeError("A request body must be a string or a Uint8Array");
}

function headerEntries(headers: HeadersInit | undefined): [string, string][] {
  if (headers === undefined) return [];
  if (Array.isArray(headers)) return headers.map(([name, value]) => [name, value]);
  if (typeof (headers as Headers).entries === "function") return [...(headers as Headers).entries()];
  return Object.entries(headers as Record<string, string>);
}

/** An answer's status line and headers (names lower-cased, in the order sent). */
export interface Head {
  status: number;
  statusText: string;
  headers: [string, string][];
  http10: boolean;
}

/** The answer's status line and headers, skipping interim (1xx) answers. */
export async function readHead(connection: Connection): Promise<Head> {
  for (;;) {
    const statusLine = await connection.readLine(MAX_HEAD_BYTES);
    if (statusLine === null) throw new Error("the server closed the connection before it answered");
    const status = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: (.*))?$/.exec(statusLine);
    if (status === null) {
      throw new Error(
        `the server did not answer in HTTP/1.1: it sent ${JSON.stringify(statusLine.slice(0, 80))}`,
      );
    }
    const headers: [string, string][] = [];
    let size = statusLine.length;
    for (;;) {
      const line = await connection.readLine(MAX_HEAD_BYTES);
      if (line === null) {
        throw new Error("the server closed the connection in the middle of its answer's headers");
      }
      if (line === "") break;
      size += line.length;
      if (size > MAX_HEAD_BYTES) {
        throw new Error(`the server's answer has more than ${MAX_HEAD_BYTES} bytes of headers`);
      }
      const colon = line.indexOf(":");
      const name = line.slice(0, colon);
      if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\0\r\n]/.test(line)) {
        throw new Error(`the server sent a malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
      }
      headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
    }
    const code = Number(status[2]);
    if (code === 101) throw new Error("the server switched protocols, which no request asked for");
    if (code < 200) continue;
    if (code > 599) throw new Error(`the server answered with status ${code}, which HTTP does not define`);
    return { status: code, statusText: status[3] ?? "", headers, http10: status[1] === "0" };
  }
}

/** How an answer's body ends: no body, a length, chunks, or the connection's end. */
export type Framing =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "until-close" };

/** How the body's end is known (RFC 9112 section 6.3); conflicting or malformed lengths are refused. */
export function bodyFraming(head: Head, method: string): Framing {
  if (method === "HEAD" || NO_BODY_STATUSES.has(head.status)) return { kind: "none" };
  const values = (name: string) => head.headers.filter(([key]) => key === name).map(([, value]) => value);
  const codings = values("transfer-encoding").join(",").split(",").map((part) => part.trim().toLowerCase())
    .filter((part) => part !== "");
  if (codings.length > 0) return codings.at(-1) === "chunked" ? { kind: "chunked" } : { kind: "until-close" };
  const lengths = new Set(values("content-length").join(",").split(",").map((part) => part.trim()));
  // No Content-Length (nor an empty one): the body ends with the connection.
  if (lengths.size === 1 && lengths.has("")) return { kind: "until-close" };
  const [length = ""] = lengths;
  if (lengths.size > 1 || !/^\d{1,15}$/.test(length)) {
    throw new Error(
      `the server's answer has an invalid Content-Length: ${
        JSON.stringify(values("content-length").join(", "))
      }`,
    );
  }
  return Number(length) === 0 ? { kind: "none" } : { kind: "length", length: Number(length) };
}

/** Whether the connection may carry another request after this answer (HTTP/1.0 must ask for it). */
export function wantsKeepAlive(head: Head): boolean {
  const tokens = head.headers.filter(([name]) => name === "connection")
    .flatMap(([, value]) => value.toLowerCase().split(",").map((token) => token.trim()));
  return head.http10 ? tokens.includes("keep-alive") : !tokens.includes("close");
}

/** The body's bytes as they arrive, by `framing` (not "none"). */
export function bodyChunks(connection: Connection, framing: Framing): AsyncGenerator<Uint8Array> {
  if (framing.kind === "length") return lengthBody(connection, framing.length);
  if (framing.kind === "chunked") return chunkedBody(connection);
  return untilCloseBody(connection);
}

const closedEarly = () => new Error("the server closed the connection before the answer's body ended");

async function* lengthBody(connection: Connection, length: number): AsyncGenerator<Uint8Array> {
  let left = length;
  while (left > 0) {
    const bytes = await connection.readBytes(Math.min(left, READ_SIZE));
    if (bytes === null) throw closedEarly();
    left -= bytes.length;
    yield bytes;
  }
}

async function* chunkedBody(connection: Connection): AsyncGenerator<Uint8Array> {
  for (;;) {
    const sizeLine = await connection.readLine(4096);
    if (sizeLine === null) throw closedEarly();
    const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(sizeLine);
    if (size === null) {
      throw new Error(`the server sent a malformed chunk size: ${JSON.stringify(sizeLine.slice(0, 40))}`);
    }
    const hex = size[1] ?? "";
    if (hex.replace(/^0+/, "") === "") {
      // The last chunk: trailer fields (ignored) up to an empty line.
      for (
        let line = await connection.readLine(MAX_HEAD_BYTES);
        line !== "";
        line = await connection.readLine(MAX_HEAD_BYTES)
      ) {
        if (line === null) throw closedEarly();
      }
      return;
    }
    yield* lengthBody(connection, parseInt(hex, 16));
    const end = await connection.readLine(2);
    if (end === null) throw closedEarly();
    if (end !== "") throw new Error("the server sent a chunk longer than its size");
  }
}

async function* untilCloseBody(connection: Connection): AsyncGenerator<Uint8Array> {
  for (
    let bytes = await connection.readBytes(READ_SIZE);
    bytes !== null;
    bytes = await connection.readBytes(READ_SIZE)
  ) {
    yield bytes;
  }
}

function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let start = 0; start < bytes.length; start += 8192) {
    text += String.fromCharCode(...bytes.subarray(start, start + 8192));
  }
  return text;
}

function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index++) bytes[index] = text.charCodeAt(index);
  return bytes;
}
