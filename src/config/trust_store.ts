/**
 * The record of trusted folders, `$MEWCODE_HOME/trust.json`:
 *
 * ```json
 * { "version": 1, "workspaces": { "/home/ada/app": { "fingerprint": "sha256:…", "trustedAt": "2025-…" } } }
 * ```
 *
 * A folder is trusted for the exact content of its settings files when the user trusted it: the fingerprint
 * is a SHA-256 over `.mewcode/settings.json` and `.mewcode/settings.local.json` (and, settings.ts adds, the
 * scripts their hooks run and the real paths their additional directories lead to), so a changed (or
 * added, or removed) file, script or link target needs trust again. A malformed record trusts nothing and
 * is never overwritten silently.
 *
 * @module
 */
import { join } from "node:path";
import { z } from "zod";
import { assertNever, describeError } from "../common/errors.ts";
import { readBoundedFile } from "./_bounded_read.ts";
import { writeFileAtomic } from "./_atomic_write.ts";
import { withFileLock } from "./_file_lock.ts";
import { TRUST_FILE } from "./settings_names.ts";

export { TRUST_FILE };
/** The lock file every change to the trust file holds (see `writeTrustRecord`). */
export const TRUST_LOCK_FILE = `${TRUST_FILE}.lock`;
const MAX_TRUST_BYTES = 4 * 1024 * 1024;

/** When and for which settings content a folder was trusted. */
export interface TrustRecord {
  fingerprint: string;
  /** ISO 8601. */
  trustedAt: string;
}

/** Whether a folder's settings are trusted: never trusted, trusted, or trusted before its files changed. */
export type TrustStatus = "trusted" | "changed" | "untrusted";

/** The state of one repository settings file, as the fingerprint covers it. */
export type FingerprintedFile =
  | { name: string; state: "absent" }
  | { name: string; state: "unreadable" }
  | { name: string; state: "present"; bytes: Uint8Array };

/** The trust records, or why they cannot be read. */
export type TrustRecords =
  | { ok: true; records: Map<string, TrustRecord> }
  | { ok: false; error: string };

const TrustFileSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(
    z.string(),
    z.object({ fingerprint: z.string(), trustedAt: z.string() }).strict(),
  ),
}).strict();

/** The fingerprint of a folder's settings files: `sha256:<hex>`, covering each file's name and state. */
export async function fingerprintFiles(files: readonly FingerprintedFile[]): Promise<string> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [encoder.encode("mewcode-trust-v1\n")];
  for (const file of [...files].sort((left, right) => left.name.localeCompare(right.name))) {
    const state = file.state;
    switch (state) {
      case "absent":
      case "unreadable":
        parts.push(encoder.encode(`${file.name}\n${state}\n`));
        break;
      case "present":
        parts.push(encoder.encode(`${file.name}\n${file.bytes.length}\n`), file.bytes, encoder.encode("\n"));
        break;
      default:
        return assertNever(state);
    }
  }
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
  return `sha256:${[...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** Reads `$MEWCODE_HOME/trust.json`; a missing file is an empty record. */
export async function readTrustRecords(home: string): Promise<TrustRecords> {
  const path = join(home, TRUST_FILE);
  const read = await readBoundedFile(path, { within: null, maxBytes: MAX_TRUST_BYTES });
  if (read.status === "missing") return { ok: true, records: new Map() };
  const broken = (problem: string): TrustRecords => ({
    ok: false,
    error: `Cannot read the trusted folders from "${path}": ${problem}: fix or delete the file`,
  });
  if (read.status === "refused") return broken(read.reason);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(read.bytes));
  } catch (error) {
    return broken(`it is not valid JSON (${(error as Error).message})`);
  }
  const parsed = TrustFileSchema.safeParse(value);
  if (!parsed.success) return broken(parsed.error.issues[0]?.message ?? "unexpected content");
  return { ok: true, records: new Map(Object.entries(parsed.data.workspaces)) };
}

/** The trust status of `root` for its settings' current `fingerprint`. */
export function trustStatusOf(records: TrustRecords, root: string, fingerprint: string): TrustStatus {
  if (!records.ok) return "untrusted";
  const record = records.records.get(root);
  if (record === undefined) return "untrusted";
  return record.fingerprint === fingerprint ? "trusted" : "changed";
}

/** What `writeTrustRecord` did: whether `root` had a record before, and whether the file was changed. */
export type TrustWrite = { ok: true; existed: boolean; written: boolean } | { ok: false; error: string };

/**
 * Records (or, with `record` null, removes) the trust of `root`. Refuses to replace a record file it
 * cannot read, so other folders' trust is never lost silently.
 *
 * The read, the change and the replace happen under an exclusive lock (`trust.json.lock` beside the file,
 * see _file_lock.ts), waited for at most `waitMs`: without it, two processes writing at once (a `mewcode
 * trust` here, a `--revoke` or a "don't ask again" elsewhere) each wrote back what they read, and one
 * change was lost, a revoked trust coming back among them.
 *
 * With `replacing`, the record is only changed while it still holds that fingerprint: a session that
 * updates the trust it found (after saving a rule, say) must not bring back a trust revoked meanwhile.
 */
export async function writeTrustRecord(
  home: string,
  root: string,
  record: TrustRecord | null,
  options: { replacing?: string; waitMs?: number } = {},
): Promise<TrustWrite> {
  const path = join(home, TRUST_FILE);
  const cannot = (why: string): TrustWrite => ({
    ok: false,
    error: `Cannot record the trusted folders in "${path}": ${why}`,
  });
  try {
    await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  } catch (error) {
    return cannot(describeError(error));
  }
  try {
    return await withFileLock(
      join(home, TRUST_LOCK_FILE),
      () => changeTrustRecord(path, home, root, record, options.replacing),
      { waitMs: options.waitMs },
    );
  } catch (error) {
    return cannot(describeError(error));
  }
}

/** The read-modify-write of `writeTrustRecord`, run under its lock; throws what writing throws. */
async function changeTrustRecord(
  path: string,
  home: string,
  root: string,
  record: TrustRecord | null,
  replacing: string | undefined,
): Promise<TrustWrite> {
  const current = await readTrustRecords(home);
  if (!current.ok) return current;
  const records = current.records;
  const existed = records.has(root);
  if (replacing !== undefined && records.get(root)?.fingerprint !== replacing) {
    return { ok: true, existed, written: false };
  }
  if (record === null) records.delete(root);
  else records.set(root, record);
  const workspaces = Object.fromEntries([...records].sort(([left], [right]) => left.localeCompare(right)));
  await writeFileAtomic(path, `${JSON.stringify({ version: 1, workspaces }, null, 2)}\n`, { mode: 0o600 });
  return { ok: true, existed, written: true };
}
