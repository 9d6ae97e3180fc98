/**
 * A server that answers every request with a web page and status 200, as a captive portal or a proxy's
 * login page does in front of an API.
 *
 * @module
 */

/** The server: its address, and how many requests it answered. */
export interface WebPageServer extends AsyncDisposable {
  url: string;
  readonly requests: number;
}

/** Starts the server on 127.0.0.1; `contentType` is the page's content type. */
export function serveWebPage(contentType = "text/html; charset=utf-8"): WebPageServer {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    requests++;
    await request.arrayBuffer();
    return new Response("<html><body>Sign in to the network</body></html>", {
      headers: { "content-type": contentType },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get requests() {
      return requests;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
