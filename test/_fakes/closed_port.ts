/**
 * A port on 127.0.0.1 that nothing listens on (it was bound, then released): for tests of what mewcode says
 * when an API does not answer.
 *
 * @module
 */

/** A local port just released, so a connection to it is refused. */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}
