/**
 * Saves the user's "always allow" (or deny, or ask) choices in `.mewcode/settings.local.json`, and makes
 * sure git ignores that file through `.mewcode/.gitignore` (the user's own .gitignore is never touched).
 *
 * The local file is part of the folder's trust fingerprint (a repository could ship one), so saving a rule
 * changes the fingerprint: when the folder was trusted for the content just read, and still is as the trust
 * is written, the trust is recorded again for the new content (mewcode wrote the change, at the user's
 * request). In a folder that is not trusted, a saved allow rule applies once the user trusts the folder.
 *
 * @module
 */
import { join } from "node:path";
import { lstatOrNull } from "../common/fs.ts";
import { readBoundedFile } from "./_bounded_read.ts";
import { writeFileAtomic } from "./_atomic_write.ts";
import { fingerprintRepositoryBytes, readRepositorySettings, REPOSITORY_SETTINGS_FILES } from "./settings.ts";
import type { SettingsFile } from "./settings_schema.ts";
import { readTrustRecords, trustStatusOf, writeTrustRecord } from "./trust_store.ts";

/** The rules to add, by action. */
export interface LocalRules {
  allow?: readonly string[];
  deny?: readonly string[];
  ask?: readonly string[];
}

/** What saving rules did. */
export interface SavedLocalRules {
  path: string;
  /** Rules that were not in the file yet. */
  added: string[];
  /** Rules taken out of the file (`remove`). */
  removed: string[];
  /** Whether the folder is trusted for the new content (so saved allow rules apply in the next session). */
  trusted: boolean;
  /** Set when `.mewcode/.gitignore` could not be updated: a line for the user. */
  gitignoreNote: string | null;
}

const GITIGNORE_ENTRY = "settings.local.json";
const MAX_GITIGNORE_BYTES = 64 * 1024;

/**
 * Adds `rules` to the workspace's `.mewcode/settings.local.json` (and takes `remove` out of it), keeping
 * everything else in it.
 */
export async function saveLocalRules(
  options: { home: string; root: string; rules: LocalRules; remove?: LocalRules; now?: Date },
): Promise<{ ok: true; value: SavedLocalRules } | { ok: false; error: string }> {
  const { home, root } = options;
  const directory = join(root, ".mewcode");
  const path = join(root, REPOSITORY_SETTINGS_FILES.local);
  const fail = (problem: string) => ({
    ok: false as const,
    error: `Cannot save the rule in "${path}": ${problem}`,
  });
  const info = await lstatOrNull(directory);
  if (info !== null && !info.isDirectory) {
    return fail(
      `"${directory}" is not a directory (a symbolic link or a file): remove it or save the rule by hand`,
    );
  }
  try {
    if (info === null) await Deno.mkdir(directory, { mode: 0o755 });
  } catch (error) {
    return fail((error as Error).message);
  }
  const before = await readRepositorySettings({ home, root });
  const records = await readTrustRecords(home);
  const wasTrusted = trustStatusOf(records, root, before.fingerprint) === "trusted";
  const local = before.files.find((file) => file.source === "local");
  if (local === undefined) return fail("it is your user settings file: add the rule there");
  let settings: SettingsFile = {};
  if (local.read.status === "ignored") {
    return fail(`${local.read.warning.problem}: fix or delete the file, then try again`);
  }
  if (local.read.status === "loaded") settings = local.read.settings;

  const permissions = { ...settings.permissions };
  const added: string[] = [];
  for (const action of ["allow", "deny", "ask"] as const) {
    const existing = permissions[action] ?? [];
    const fresh = (options.rules[action] ?? []).filter((rule, index, all) =>
      !existing.includes(rule) && all.indexOf(rule) === index
    );
    if (fresh.length === 0) continue;
    permissions[action] = [...existing, ...fresh];
    added.push(...fresh);
  }
  const removed: string[] = [];
  for (const action of ["allow", "deny", "ask"] as const) {
    const unwanted = options.remove?.[action] ?? [];
    const existing = permissions[action] ?? [];
    const kept = existing.filter((rule) => !unwanted.includes(rule));
    if (kept.length === existing.length) continue;
    removed.push(...existing.filter((rule) => unwanted.includes(rule)));
    permissions[action] = kept;
  }
  const changed = added.length > 0 || removed.length > 0;
  const text = `${JSON.stringify({ ...settings, permissions }, null, 2)}\n`;
  try {
    if (changed) await writeFileAtomic(path, text, { mode: 0o644 });
  } catch (error) {
    return fail((error as Error).message);
  }
  const gitignoreNote = await ensureGitIgnored(root, directory);
  let trusted = wasTrusted;
  if (wasTrusted && changed) {
    const bytes = new TextEncoder().encode(text);
    const after = before.files.map((file) =>
      file.source === "local"
        ? { source: file.source, read: { status: "loaded" as const, path, settings, bytes } }
        : file
    );
    // Only the trust found above is carried over to the new content: one revoked meanwhile (by `mewcode
    // trust --revoke` elsewhere) stays revoked.
    const written = await writeTrustRecord(home, root, {
      fingerprint: await fingerprintRepositoryBytes(after, root),
      trustedAt: (options.now ?? new Date()).toISOString(),
    }, { replacing: before.fingerprint });
    trusted = written.ok && written.written;
  }
  return { ok: true, value: { path, added, removed, trusted, gitignoreNote } };
}

/** Adds `settings.local.json` to `.mewcode/.gitignore` unless an entry is there; a note when it cannot. */
async function ensureGitIgnored(root: string, directory: string): Promise<string | null> {
  const path = join(directory, ".gitignore");
  const info = await lstatOrNull(path);
  const cannot = (why: string) =>
    `Could not add "${GITIGNORE_ENTRY}" to "${path}" (${why}): add it yourself so git does not commit it`;
  if (info !== null && !info.isFile) return cannot("it is not a regular file");
  let current = "";
  if (info !== null) {
    const read = await readBoundedFile(path, { within: root, maxBytes: MAX_GITIGNORE_BYTES });
    if (read.status === "refused") return cannot(read.reason);
    if (read.status === "read") current = new TextDecoder().decode(read.bytes);
  }
  const lines = current.split(/\r?\n/).map((line) => line.trim());
  if (lines.includes(GITIGNORE_ENTRY) || lines.includes(`/${GITIGNORE_ENTRY}`)) return null;
  const separator = current === "" || current.endsWith("\n") ? "" : "\n";
  try {
    await writeFileAtomic(path, `${current}${separator}${GITIGNORE_ENTRY}\n`, { mode: 0o644 });
  } catch (error) {
    return cannot((error as Error).message);
  }
  return null;
}
