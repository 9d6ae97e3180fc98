import { deepStrictEqual, equal, rejects } from "node:assert/strict";
import { apiFetch, createHttp1Fetch, http1Fetch, ON_SENT } from "../../src/llm/http1_fetch.ts";
import { closedPort } from "../_fakes/closed_port.ts";

const TLS = new URL("../fixtures/tls/", import.meta.url);

/**
 * A server speaking raw bytes: each accepted connection is handed to `serve`, which reads and writes as it
 * likes. It counts the connections it accepted.
 */
function rawServer(serve: (conn: Deno.Conn, index: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const handlers: Promise<void>[] = [];
  const open = new Set<Deno.Conn>();
  const close = (conn: Deno.Conn) => {
    if (!open.delete(conn)) return;
    try {
      conn.close();
    } catch { /* closed by the handler */ }
  };
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      handlers.push(serve(conn, accepted++).catch(() => {}).finally(() => close(conn)));
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    get accepted() {
      return accepted;
    },
    /** Waits for the handlers of the connections accepted so far to end. */
    handled: () => Promise.all(handlers),
    async [Symbol.asyncDispose]() {
      listener.close();
      await loop.catch(() => {});
      // A connection the client keeps for its next request would hold its handler in a read forever.
      for (const conn of open) close(conn);
      await Promise.all(handlers);
    },
  };
}

/** Reads one request head (up to its empty line) and its Content-Length body from `conn`; null at its end. */
async function readRequest(conn: Deno.Conn): Promise<{ head: string; body: string } | null> {
  let bytes = new Uint8Array(0);
  const buffer = new Uint8Array(65536);
  for (;;) {
    const text = new TextDecoder().decode(bytes);
    const end = text.indexOf("\r\n\r\n");
    if (end !== -1) {
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (bytes.length >= end + 4 + length) {
        return { head: text.slice(0, end), body: text.slice(end + 4, end + 4 + length) };
      }
    }
    const count = await conn.read(buffer);
    if (count === null) return null;
    bytes = new Uint8Array([...bytes, ...buffer.subarray(0, count)]);
  }
}

const write = (conn: Deno.Conn, text: string) => conn.write(new TextEncoder().encode(text));

Deno.test("http1Fetch sends the request as given and reads the answer", async () => {
  const seen: { method: string; url: string; headers: Record<string, string>; body: string }[] = [];
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    seen.push({
      method: request.method,
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
    });
    return Response.json({ answer: "é" }, { status: 201, headers: { "x-request-id": "req_1" } });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const response = await http1Fetch(`${base}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "  key  " },
    body: JSON.stringify({ text: "héllo" }),
  });
  equal(response.status, 201);
  equal(response.headers.get("x-request-id"), "req_1");
  deepStrictEqual(await response.json(), { answer: "é" });
  equal(seen.length, 1);
  const [request] = seen;
  equal(request?.method, "POST");
  equal(request?.url, `${base}/v1/messages?beta=true`);
  equal(request?.body, '{"text":"héllo"}');
  equal(request?.headers["content-length"], String(new TextEncoder().encode('{"text":"héllo"}').length));
  equal(request?.headers["host"], `127.0.0.1:${server.addr.port}`);
  equal(request?.headers["x-api-key"], "key");
  equal(request?.headers["accept-encoding"], "identity");
});

Deno.test("http1Fetch streams a body as it arrives", async () => {
  const next = Promise.withResolvers<void>();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
    new Response(
      new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode("first "));
          await next.promise;
          controller.enqueue(new TextEncoder().encode("second"));
          controller.close();
        },
      }),
    ));
  const response = await http1Fetch(`http://127.0.0.1:${server.addr.port}/`);
  const reader = response.body!.getReader();
  // The first part is read while the server still holds the second: nothing waits for the whole body.
  equal(new TextDecoder().decode((await reader.read()).value), "first ");
  next.resolve();
  let rest = "";
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    rest += new TextDecoder().decode(part.value);
  }
  equal(rest, "second");
});

Deno.test("http1Fetch reuses a connection whose answer was read, and drops one the server closed", async () => {
  const ports: number[] = [];
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (_, info) => {
    ports.push((info.remoteAddr as Deno.NetAddr).port);
    return new Response("ok");
  });
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const fetch = createHttp1Fetch();
  for (let index = 0; index < 3; index++) equal(await (await fetch(url)).text(), "ok");
  equal(new Set(ports).size, 1, `one connection for three requests: ${ports}`);
  // An answer that was not read to its end leaves its connection closed: the next request opens another.
  const unread = await fetch(url);
  await unread.body?.cancel();
  equal(await (await fetch(url)).text(), "ok");
  equal(new Set(ports).size, 2, `a new connection after a cancelled body: ${ports}`);

  // A server that closes each connection after answering, without saying so: the next request does not
  // go to the closed connection.
  await using closing = rawServer(async (conn) => {
    if (await readRequest(conn) === null) return;
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  });
  for (let index = 0; index < 3; index++) {
    equal(await (await fetch(`${closing.url}/`)).text(), "ok");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  equal(closing.accepted, 3);
});

Deno.test("http1Fetch sends again, once, a request a waiting connection took no answer for", async () => {
  // The server answers the first request, then closes the connection on reading the second (as a server
  // whose idle limit ran out the moment it arrived): it is sent again on a new connection.
  await using server = rawServer(async (conn, index) => {
    for (let request = 0;; request++) {
      if (await readRequest(conn) === null) return;
      if (index === 0 && request === 1) return;
      await write(conn, `HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${index}`);
    }
  });
  const fetch = createHttp1Fetch();
  equal(await (await fetch(`${server.url}/`, { method: "POST", body: "{}" })).text(), "0");
  equal(await (await fetch(`${server.url}/`, { method: "POST", body: "{}" })).text(), "1");
  equal(server.accepted, 2);

  // On a new connection the same silence is an error: the request is not sent twice.
  await using silent = rawServer(async (conn) => {
    await readRequest(conn);
  });
  await rejects(
    fetch(`${silent.url}/`, { method: "POST", body: "{}" }),
    /closed the connection before it answered/,
  );
  equal(silent.accepted, 1);
});

Deno.test("http1Fetch reads every framing of a body and skips interim answers", async (t) => {
  const cases: [string, string, string | null][] = [
    [
      "chunked, with extensions and trailers",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nx-trailer: 1\r\n\r\n",
      "hello world",
    ],
    ["until the connection ends", "HTTP/1.0 200 OK\r\n\r\nall of it", "all of it"],
    [
      "after a 100 Continue",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nyes",
      "yes",
    ],
    ["no body for 204", "HTTP/1.1 204 No Content\r\n\r\n", null],
    ["an empty body for Content-Length 0", "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", ""],
  ];
  for (const [name, answer, expected] of cases) {
    await t.step(name, async () => {
      await using server = rawServer(async (conn) => {
        await readRequest(conn);
        // Byte by byte: every read of the client may end anywhere.
        for (const byte of new TextEncoder().encode(answer)) await conn.write(new Uint8Array([byte]));
      });
      const response = await createHttp1Fetch()(`${server.url}/`);
      if (expected === null) equal(response.body, null);
      else equal(await response.text(), expected);
    });
  }
});

Deno.test("http1Fetch refuses malformed answers with what was wrong", async (t) => {
  const cases: [string, string, RegExp][] = [
    [
      "not HTTP",
      "SSH-2.0-OpenSSH_9.6\r\n\r\n",
      /did not answer in HTTP\/1\.1: it sent "SSH-2\.0-OpenSSH_9\.6"/,
    ],
    [
      "two lengths",
      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd",
      /invalid Content-Length: "3, 4"/,
    ],
    ["a header without a name", "HTTP/1.1 200 OK\r\n: x\r\n\r\n", /malformed header line/],
    [
      "closed in the headers",
      "HTTP/1.1 200 OK\r\nx-a: 1\r\n",
      /closed the connection in the middle of its answer's headers/,
    ],
  ];
  for (const [name, answer, expected] of cases) {
    await t.step(name, async () => {
      await using server = rawServer(async (conn) => {
        await readRequest(conn);
        await write(conn, answer);
      });
      await rejects(createHttp1Fetch()(`${server.url}/`), expected);
    });
  }
  await t.step("a body cut short", async () => {
    await using server = rawServer(async (conn) => {
      await readRequest(conn);
      await write(conn, "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel");
    });
    const response = await createHttp1Fetch()(`${server.url}/`);
    await rejects(response.text(), /closed the connection before the answer's body ended/);
  });
});

Deno.test("http1Fetch refuses a header value that would start another header, sending nothing", async () => {
  await using server = rawServer(async (conn) => {
    await readRequest(conn);
  });
  for (const value of ["key\r\nx-injected: 1", "key\nx", "key\0"]) {
    await rejects(
      createHttp1Fetch()(`${server.url}/`, { headers: { authorization: value } }),
      (error: Error) =>
        error instanceof TypeError &&
        /"authorization" header's value holds a line break or NUL/.test(error.message) &&
        !error.message.includes("key"),
    );
  }
  equal(server.accepted, 0);
});

Deno.test("http1Fetch stops at the signal: waiting for the answer, and in the middle of its body", async () => {
  const serverSaw: string[] = [];
  await using server = rawServer(async (conn, index) => {
    await readRequest(conn);
    if (index === 1) await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart");
    // The client's closing ends this read.
    serverSaw.push(await conn.read(new Uint8Array(10)) === null ? "closed" : "data");
  });
  const fetch = createHttp1Fetch();
  const waiting = new AbortController();
  const answer = fetch(`${server.url}/`, { signal: waiting.signal });
  setTimeout(() => waiting.abort(new Error("stopped while waiting")), 50);
  await rejects(answer, /stopped while waiting/);

  const reading = new AbortController();
  const response = await fetch(`${server.url}/`, { signal: reading.signal });
  const reader = response.body!.getReader();
  equal(new TextDecoder().decode((await reader.read()).value), "part");
  reading.abort(new Error("stopped while reading"));
  await rejects(reader.read(), /stopped while reading/);
  await rejects(fetch(`${server.url}/`, { signal: reading.signal }), /stopped while reading/);
  await server.handled();
  deepStrictEqual(serverSaw, ["closed", "closed"]);
  equal(server.accepted, 2);
});

Deno.test("http1Fetch speaks TLS with the certificates it trusts, and leaves the rest to Deno's fetch", async () => {
  const [cert, key, ca] = await Promise.all(
    ["server.pem", "server.key", "ca.pem"].map((name) => Deno.readTextFile(new URL(name, TLS))),
  );
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: cert!, key: key!, onListen: () => {} },
    () => new Response("secret"),
  );
  const url = `https://localhost:${server.addr.port}/`;
  equal(await (await createHttp1Fetch({ caCerts: [ca!] })(url)).text(), "secret");

  // Not trusted: the socket's handshake fails, and the request (and every later one to that origin) goes to
  // the fallback, which reports its own error.
  const fallen: string[] = [];
  const untrusting = createHttp1Fetch({
    fallback: (input) => {
      fallen.push(String(input));
      return Promise.reject(new TypeError("fallback refused it too"));
    },
  });
  await rejects(untrusting(url), /fallback refused it too/);
  await rejects(untrusting(url), /fallback refused it too/);
  deepStrictEqual(fallen, [url, url]);
});

Deno.test("http1Fetch leaves an origin it cannot connect to to Deno's fetch", async () => {
  const url = `http://127.0.0.1:${closedPort()}/`;
  const fallen: string[] = [];
  const fetch = createHttp1Fetch({
    fallback: (input) => {
      fallen.push(String(input));
      return Promise.resolve(new Response("from the fallback"));
    },
  });
  equal(await (await fetch(url)).text(), "from the fallback");
  deepStrictEqual(fallen, [url]);
  // Deno's fetch, the default fallback, says why in its error's cause.
  await rejects(createHttp1Fetch()(url), (error: Error) => /Connection refused/.test(String(error.cause)));
});

Deno.test("apiFetch takes Deno's fetch when the environment names a proxy", () => {
  const env = (values: Record<string, string>) => ({ get: (name: string) => values[name] });
  equal(apiFetch(env({})), http1Fetch);
  equal(apiFetch(env({ NO_PROXY: "example.com", HTTPS_PROXY: "" })), http1Fetch);
  for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    equal(apiFetch(env({ [name]: "http://proxy.internal:3128" })), fetch, name);
  }
  equal(
    apiFetch({
      get: () => {
        throw new Deno.errors.NotCapable("env");
      },
    }),
    fetch,
  );
});

Deno.test("http1Fetch's waiting connections never keep a process alive, nor let it end while it waits", async () => {
  // A process whose only work is its requests: the second waits 300 ms for its answer on the connection the
  // first left waiting. It must wait for it, then end without being stopped.
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    if (new URL(request.url).pathname === "/slow") await new Promise((resolve) => setTimeout(resolve, 300));
    return new Response(new URL(request.url).pathname);
  });
  const script = `
    import { http1Fetch } from ${
    JSON.stringify(new URL("../../src/llm/http1_fetch.ts", import.meta.url).href)
  };
    const base = "http://127.0.0.1:${server.addr.port}";
    // Not awaited at the top level, which would keep the process running by itself, as main.ts runs.
    (async () => {
      console.log(await (await http1Fetch(base + "/fast")).text());
      console.log(await (await http1Fetch(base + "/slow")).text());
    })();
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", script],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  equal(new TextDecoder().decode(output.stderr), "");
  equal(new TextDecoder().decode(output.stdout), "/fast\n/slow\n");
  equal(output.code, 0);
});

Deno.test("http1Fetch reads the answer a server sent before it stopped reading the request", async () => {
  // A server refusing a request too large answers once it read the head, and closes: the rest of the body
  // breaks the pipe, and the answer says why (not "Broken pipe").
  await using server = rawServer(async (conn) => {
    await conn.read(new Uint8Array(4096));
    await write(
      conn,
      "HTTP/1.1 413 Payload Too Large\r\ncontent-length: 7\r\nconnection: close\r\n\r\ntoo big",
    );
  });
  const response = await createHttp1Fetch()(`${server.url}/`, {
    method: "POST",
    body: new Uint8Array(16 << 20),
  });
  equal(response.status, 413);
  equal(await response.text(), "too big");
});

Deno.test("http1Fetch refuses URLs it cannot send to, sending nothing", async () => {
  await using server = rawServer(async (conn) => {
    await readRequest(conn);
  });
  const { port } = new URL(server.url);
  await rejects(createHttp1Fetch()(`http://user:secret@127.0.0.1:${port}/`), /user name or password/);
  await rejects(createHttp1Fetch()(`ftp://127.0.0.1:${port}/`), /only http: and https:/);
  equal(server.accepted, 0);
});

Deno.test("http1Fetch says when the request was written, before any answer, once through a resend", async () => {
  // The server answers only once the client said it sent the request; the second request on the kept
  // connection is lost (the server closes it on reading it) and written again on a new one.
  const told = { count: 0, signal: Promise.withResolvers<void>() };
  await using server = rawServer(async (conn, index) => {
    for (let request = 0;; request++) {
      if (await readRequest(conn) === null) return;
      if (index === 0 && request === 1) return;
      await told.signal.promise;
      await write(conn, `HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok`);
    }
  });
  const fetch = createHttp1Fetch();
  const onSent = () => {
    told.count++;
    told.signal.resolve();
  };
  equal(
    await (await fetch(`${server.url}/`, { method: "POST", body: "{}", [ON_SENT]: onSent })).text(),
    "ok",
  );
  equal(told.count, 1);
  equal(
    await (await fetch(`${server.url}/`, { method: "POST", body: "{}", [ON_SENT]: onSent })).text(),
    "ok",
  );
  equal(told.count, 2);
  equal(server.accepted, 2);
  // A request never written (a header refused) says nothing.
  await rejects(fetch(`${server.url}/`, { headers: { "x-bad": "a\nb" }, [ON_SENT]: onSent }));
  equal(told.count, 2);
});
