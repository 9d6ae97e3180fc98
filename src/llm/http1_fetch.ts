/**
 * The API's requests over HTTP/1.1 on Deno's own sockets, in the shape of `fetch` (the part of it the API
 * clients use, _api_http.ts). Deno's fetch loads its scripts (headers, requests, responses, streams) and
 * builds its HTTP client on a process's first call, ~15 ms of the main thread before the request leaves; a
 * socket is open and the request written ~7 ms after the call. Measured in alternating runs, a one-shot
 * prompt reached the server ~11 ms sooner. The Response and its stream are built once the answer's head
 * arrives, while the model writes.
 *
 * ```ts
 * const response = await http1Fetch("https://api.anthropic.com/v1/messages", { method: "POST", headers, body, signal });
 * ```
 *
 * What it does:
 * - one request per connection at a time, `Connection` kept alive: a connection whose answer was read to its
 *   end waits (at most {@link IDLE_REUSE_MS}) for the next request to its origin. While it waits, a read is
 *   pending on it (unreferenced: it never keeps the process alive), so a server's closing is seen at once and
 *   the connection dropped. A request on a reused connection that gets not one byte back (the server closed it
 *   as the request left) is sent once more on a new connection;
 * - TLS with the certificates Deno trusts (DENO_CERT, DENO_TLS_CA_STORE, as its fetch), ALPN `http/1.1`;
 * - bodies framed by `Content-Length`, chunked, or the connection's end; `Accept-Encoding: identity`, so the
 *   body is never compressed;
 * - the signal closes the connection and rejects (or errors the body stream) with its reason, at any point;
 * - header values holding a line break or NUL are refused before anything is sent (they would end the
 *   header and start another), without quoting the value (it may be the key).
 *
 * What it leaves to Deno's fetch (`apiFetch` picks): a run with a proxy in its environment (HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY in either case, which Deno's fetch honours with NO_PROXY), and an origin it could
 * not connect to: the request (and every later one to that origin) goes through Deno's fetch, which tries
 * each address a name resolves to where a socket tries the first, and reports its own error.
 *
 * @module
 */
import { once } from "../common/once.ts";
import {
  bodyChunks,
  bodyFraming,
  Connection,
  type EncodedRequest,
  encodeRequest,
  NO_BODY_STATUSES,
  readHead,
  wantsKeepAlive,
} from "./_http1_wire.ts";

/** How long a connection whose answer was read to its end is kept for the next request. */
export const IDLE_REUSE_MS = 30_000;

/** The variables Deno's fetch takes a proxy from. */
const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/**
 * A request's own option beside RequestInit's: called once its bytes were written to the connection, before
 * any answer (the caller may then do what would otherwise hold the request back). Deno's fetch, which does not
 * tell, never calls it.
 */
export const ON_SENT: unique symbol = Symbol("mewcode.onSent");

/** What a request of {@link Http1Fetch} takes: RequestInit's options and {@link ON_SENT}. */
export type Http1Init = RequestInit & { [ON_SENT]?: () => void };

/** The `fetch` this module provides: a URL and the options the API clients pass. */
export type Http1Fetch = (input: string | URL, init?: Http1Init) => Promise<Response>;

/** Options of {@link createHttp1Fetch}. */
export interface Http1FetchOptions {
  /** PEM certificates trusted besides Deno's (tests use a certificate of their own). */
  caCerts?: string[];
  /** The fetch used where a socket is not (see the module doc); the global one by default. */
  fallback?: typeof fetch;
}

/**
 * The fetch for the API's requests: sockets (the shared {@link http1Fetch}), or Deno's fetch when `env`
 * names a proxy or cannot be read.
 */
export function apiFetch(env: { get(name: string): string | undefined } = Deno.env): Http1Fetch {
  try {
    if (PROXY_VARIABLES.every((name) => (env.get(name) ?? "") === "")) return http1Fetch;
  } catch {
    // No permission to read the environment: Deno's fetch still reads the proxy settings itself.
  }
  return fetch;
}

/** A fetch over sockets with its own idle connections (see the module doc). */
export function createHttp1Fetch(options: Http1FetchOptions = {}): Http1Fetch {
  const idle = new Map<string, Connection[]>();
  const viaFallback = new Set<string>();
  const fallback = options.fallback ?? ((input, init) => fetch(input, init));

  return async function http1(input: string | URL, init: Http1Init = {}): Promise<Response> {
    const url = requestUrl(input);
    // Once, though a request that a waiting connection lost is written again.
    const sent = once(init[ON_SENT]);
    const signal = init.signal ?? null;
    signal?.throwIfAborted();
    const request = encodeRequest(url, init);
    if (viaFallback.has(url.origin)) return fallback(input, init);
    for (let attempt = 0;; attempt++) {
      let connection = takeIdle(idle, url.origin);
      // A connection that waited since its last answer may have been closed as the request left.
      const waited = connection !== null;
      if (connection === null) {
        try {
          connection = await abortable(openConnection(url, options.caCerts), signal, (late) => late.close());
        } catch {
          if (signal?.aborted) throw signal.reason;
          viaFallback.add(url.origin);
          return fallback(input, init);
        }
      }
      try {
        return await exchange(connection, request, signal, sent, (done) => release(idle, url.origin, done));
      } catch (error) {
        connection.close();
        if (signal?.aborted) throw signal.reason;
        if (waited && connection.received === 0 && attempt === 0) continue;
        throw error;
      }
    }
  };
}

/** `input` as a URL fetch would send to, or a TypeError. */
function requestUrl(input: string | URL): URL {
  const url = new URL(input);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Cannot send a request to "${url.protocol}" URLs, only http: and https:`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new TypeError("Cannot send a request to a URL with a user name or password in it");
  }
  return url;
}

/** The process's shared fetch over sockets, whose idle connections every client reuses. */
export const http1Fetch: Http1Fetch = createHttp1Fetch();

/** A connection to `url`'s origin, TLS shaken hands for https: (its certificate errors surface here). */
async function openConnection(url: URL, caCerts: string[] | undefined): Promise<Connection> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (url.protocol === "http:") {
    const conn = await Deno.connect({ hostname, port: Number(url.port || 80) });
    conn.setNoDelay(true);
    return new Connection(conn);
  }
  const conn = await Deno.connectTls({
    hostname,
    port: Number(url.port || 443),
    ...(caCerts === undefined ? {} : { caCerts }),
    alpnProtocols: ["http/1.1"],
  });
  try {
    await conn.handshake();
  } catch (error) {
    conn.close();
    throw error;
  }
  return new Connection(conn);
}

/** An idle connection to `origin` that can take a request, or null. */
function takeIdle(idle: Map<string, Connection[]>, origin: string): Connection | null {
  const waiting = idle.get(origin);
  for (let connection = waiting?.pop(); connection !== undefined; connection = waiting?.pop()) {
    if (!connection.closed && performance.now() - connection.idleSince < IDLE_REUSE_MS) {
      connection.unpark();
      return connection;
    }
    connection.close();
  }
  return null;
}

/** After an answer ended: the connection waits for the next request if it can, or is closed. */
function release(
  idle: Map<string, Connection[]>,
  origin: string,
  done: { connection: Connection; reusable: boolean },
): void {
  const { connection, reusable } = done;
  if (!reusable || connection.closed || connection.hasLeftover) {
    connection.close();
    return;
  }
  connection.park();
  const waiting = idle.get(origin) ?? [];
  waiting.push(connection);
  idle.set(origin, waiting);
}

/**
 * `promise`, or the signal's reason should it abort first; `discard` gets what the promise brings after
 * that (a connection made too late is closed).
 */
function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | null,
  discard?: (late: T) => void,
): Promise<T> {
  if (signal === null) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) discard?.(value);
        else resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Writes the request (then calls `sent`), reads the answer's head and returns the Response, whose body streams
 * from the connection; `done` gets the connection once the answer ended (reusable when read to its end).
 */
async function exchange(
  connection: Connection,
  request: EncodedRequest,
  signal: AbortSignal | null,
  sent: () => void,
  done: (result: { connection: Connection; reusable: boolean }) => void,
): Promise<Response> {
  const onAbort = () => connection.close();
  signal?.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  const finish = (reusable: boolean) => {
    if (finished) return;
    finished = true;
    signal?.removeEventListener("abort", onAbort);
    done({ connection, reusable: reusable && !signal?.aborted });
  };
  try {
    // A server may answer and close before it read the whole request (a 413 for one too large): its answer
    // says more than the broken write, which is thrown only when there is none.
    const writeError = await connection.write(request.bytes).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    if (writeError === null) sent();
    const head = await readHead(connection).catch((readError) => {
      throw writeError === null ? readError : writeError.error;
    });
    const framing = bodyFraming(head, request.method);
    const keepAlive = writeError === null && framing.kind !== "until-close" && wantsKeepAlive(head);
    const init = { status: head.status, statusText: head.statusText, headers: new Headers(head.headers) };
    if (framing.kind === "none") {
      finish(keepAlive);
      // A status that may have a body gets an empty one, as from Deno's fetch.
      return new Response(NO_BODY_STATUSES.has(head.status) ? null : "", init);
    }
    const chunks = bodyChunks(connection, framing);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) {
            finish(keepAlive);
            controller.close();
          } else {
            controller.enqueue(next.value);
          }
        } catch (error) {
          finish(false);
          controller.error(signal?.aborted ? signal.reason : error);
        }
      },
      cancel() {
        finish(false);
      },
    });
    return new Response(body, init);
  } catch (error) {
    finish(false);
    throw error;
  }
}
