import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  readTrustRecords,
  TRUST_FILE,
  TRUST_LOCK_FILE,
  type TrustRecord,
  writeTrustRecord,
} from "../../src/config/trust_store.ts";

const WRITER = fileURLToPath(new URL("./_trust_writer.ts", import.meta.url));
const RECORD: TrustRecord = { fingerprint: "sha256:add", trustedAt: "2025-01-01T00:00:00.000Z" };

/** A temporary `$MEWCODE_HOME`, removed at the end of the test. */
async function tempHome(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "mewcode-trust-store-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

async function recordedRoots(home: string): Promise<string[]> {
  const records = await readTrustRecords(home);
  if (!records.ok) throw new Error(records.error);
  return [...records.records.keys()].sort();
}

/**
 * Runs one `_trust_writer.ts` process per list of operations, all released at once when every one has
 * started (so their changes overlap), and waits for them; returns what the failed ones printed.
 */
async function runWriters(home: string, writers: string[][]): Promise<string[]> {
  const gate = await Deno.makeTempDir({ prefix: "mewcode-trust-gate-" });
  const start = join(gate, "start");
  try {
    const children = writers.map((operations) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-check", "--allow-all", "--no-prompt", WRITER, home, start, ...operations],
        stdout: "null",
        stderr: "piped",
      }).spawn()
    );
    const deadline = performance.now() + 60_000;
    while (await countReady(gate) < writers.length && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Deno.writeTextFile(start, "");
    const outputs = await Promise.all(children.map((child) => child.output()));
    return outputs.filter((output) => !output.success).map((output) =>
      new TextDecoder().decode(output.stderr)
    );
  } finally {
    await Deno.remove(gate, { recursive: true });
  }
}

async function countReady(gate: string): Promise<number> {
  let count = 0;
  for await (const entry of Deno.readDir(gate)) if (entry.name.startsWith("start.ready.")) count++;
  return count;
}

Deno.test("writeTrustRecord from many processes at once keeps every folder each of them trusted", async () => {
  await using home = await tempHome();
  const writers = Array.from(
    { length: 8 },
    (_, writer) => Array.from({ length: 12 }, (_, index) => `add:/work/w${writer}-${index}`),
  );
  const failures = await runWriters(home.path, writers);
  deepEqual(await recordedRoots(home.path), writers.flat().map((operation) => operation.slice(4)).sort());
  deepEqual(failures, []);
});

Deno.test("writeTrustRecord: revokes racing other processes' trusts stay revoked, and those trusts stay", async () => {
  await using home = await tempHome();
  const revoked = Array.from({ length: 24 }, (_, index) => `/work/r${index}`);
  for (const root of revoked) ok((await writeTrustRecord(home.path, root, RECORD)).ok);
  const adders = Array.from(
    { length: 6 },
    (_, writer) => Array.from({ length: 12 }, (_, index) => `add:/work/a${writer}-${index}`),
  );
  const failures = await runWriters(home.path, [revoked.map((root) => `revoke:${root}`), ...adders]);
  deepEqual(await recordedRoots(home.path), adders.flat().map((operation) => operation.slice(4)).sort());
  deepEqual(failures, []);
});

Deno.test("writeTrustRecord with `replacing` does not bring back a trust revoked meanwhile", async () => {
  await using home = await tempHome();
  ok((await writeTrustRecord(home.path, "/work/app", RECORD)).ok);
  ok((await writeTrustRecord(home.path, "/work/app", null)).ok);
  const later = { fingerprint: "sha256:after", trustedAt: "2025-01-02T00:00:00.000Z" };
  deepEqual(await writeTrustRecord(home.path, "/work/app", later, { replacing: RECORD.fingerprint }), {
    ok: true,
    existed: false,
    written: false,
  });
  deepEqual(await recordedRoots(home.path), []);
  // Still trusted for the content the caller found: carried over to the new content.
  ok((await writeTrustRecord(home.path, "/work/app", RECORD)).ok);
  deepEqual(await writeTrustRecord(home.path, "/work/app", later, { replacing: RECORD.fingerprint }), {
    ok: true,
    existed: true,
    written: true,
  });
  const records = await readTrustRecords(home.path);
  equal(records.ok && records.records.get("/work/app")?.fingerprint, "sha256:after");
});

Deno.test("writeTrustRecord refuses a symbolic link planted as its lock file, and leaves its target alone", async () => {
  await using home = await tempHome();
  const target = join(home.path, "elsewhere");
  await Deno.writeTextFile(target, "keep");
  await Deno.symlink(target, join(home.path, TRUST_LOCK_FILE));
  const written = await writeTrustRecord(home.path, "/work/app", RECORD);
  ok(!written.ok);
  match(
    written.error,
    /Cannot record the trusted folders in ".*trust\.json": .*trust\.json\.lock" is a symbolic link/,
  );
  match(written.error, /remove it/);
  equal(await Deno.readTextFile(target), "keep");
  // A dangling link is not created through either.
  await Deno.remove(target);
  ok(!(await writeTrustRecord(home.path, "/work/app", RECORD)).ok);
  equal((await Deno.lstat(join(home.path, TRUST_LOCK_FILE))).isSymlink, true);
  await Deno.lstat(target).then(() => ok(false, "the link's target was made"), () => undefined);
  await Deno.lstat(join(home.path, TRUST_FILE)).then(
    () => ok(false, "trust.json was written"),
    () => undefined,
  );
});

Deno.test("writeTrustRecord refuses a lock file that is not a regular file", async () => {
  await using home = await tempHome();
  await Deno.mkdir(join(home.path, TRUST_LOCK_FILE));
  const written = await writeTrustRecord(home.path, "/work/app", RECORD);
  ok(!written.ok);
  match(written.error, /trust\.json\.lock" is not a regular file; remove it/);
});

Deno.test("writeTrustRecord waits a bounded time for a held lock, then says who holds it", async () => {
  await using home = await tempHome();
  ok((await writeTrustRecord(home.path, "/work/first", RECORD)).ok);
  // flock locks belong to the open file, so a second open in this process conflicts as another process would.
  using held = await Deno.open(join(home.path, TRUST_LOCK_FILE), { read: true });
  await held.lock(true);
  const started = performance.now();
  const written = await writeTrustRecord(home.path, "/work/app", RECORD, { waitMs: 200 });
  ok(performance.now() - started >= 200);
  ok(!written.ok);
  match(
    written.error,
    /another mewcode process has held its lock file ".*trust\.json\.lock" for over 0\.2 s/,
  );
  deepEqual(await recordedRoots(home.path), ["/work/first"]);
  // Let go meanwhile: the waiting change goes through.
  const waiting = writeTrustRecord(home.path, "/work/app", RECORD, { waitMs: 5_000 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await held.unlock();
  ok((await waiting).ok);
  deepEqual(await recordedRoots(home.path), ["/work/app", "/work/first"]);
});
