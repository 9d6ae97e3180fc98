/**
 * A separate mewcode process changing `trust.json`, for trust_store_test.ts: waits until the file named by
 * its second argument exists (so that every writer starts at once), then applies each operation in turn,
 * `add:<root>` or `revoke:<root>`, through `writeTrustRecord`. Prints each failure and goes on; exits 1 at the
 * end when one failed.
 *
 * Usage: deno run --allow-all _trust_writer.ts <home> <start file> <operation>…
 *
 * @module
 */
import { writeTrustRecord } from "../../src/config/trust_store.ts";
import { exists } from "../_fakes/exists.ts";

const [home, startFile, ...operations] = Deno.args;
if (home === undefined || startFile === undefined) throw new Error("usage: <home> <start file> <operation>…");

await Deno.writeTextFile(`${startFile}.ready.${Deno.pid}`, "");
while (!await exists(startFile)) await new Promise((resolve) => setTimeout(resolve, 2));

let failed = false;
for (const operation of operations) {
  const [kind, root] = operation.split(/:(.*)/s);
  if (root === undefined || (kind !== "add" && kind !== "revoke")) {
    throw new Error(`bad operation ${operation}`);
  }
  const record = kind === "add"
    ? { fingerprint: `sha256:${kind}`, trustedAt: new Date().toISOString() }
    : null;
  const written = await writeTrustRecord(home, root, record);
  if (!written.ok) {
    console.error(written.error);
    failed = true;
  }
}
if (failed) Deno.exit(1);
