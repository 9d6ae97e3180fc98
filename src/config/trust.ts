/**
 * Folder trust, as the user manages it: what trusting a folder would enable (for a `mewcode trust`
 * command to show before asking), recording the trust for the exact settings shown, and revoking it.
 * Until a folder is trusted its own settings files may only tighten (see repository_screen.ts); a changed
 * file needs trust again (the fingerprint in trust_store.ts).
 *
 * @module
 */
import { join } from "node:path";
import type { IgnoredItem } from "./repository_screen.ts";
import { REPOSITORY_SETTINGS_FILES, resolveSettings, type SettingsWarning } from "./settings.ts";
import { writeTrustRecord } from "./trust_store.ts";
import type { TrustStatus } from "./trust_store.ts";

/** What trusting a folder changes, for the user to review. */
export interface TrustDescription {
  root: string;
  status: TrustStatus;
  /** Pass this to `trustWorkspace`: trust covers exactly the content described here. */
  fingerprint: string;
  /** The repository's settings files that exist. */
  files: string[];
  /** Every repository setting that applies only once the folder is trusted: rules, hooks, env, … */
  enables: IgnoredItem[];
  /** Repository settings that stay ignored even when trusted (bypassPermissions, API variables, …). */
  neverApplied: IgnoredItem[];
  /** Settings files that are ignored whatever the trust, because they cannot be used. */
  warnings: SettingsWarning[];
}

/** Lists exactly what trusting `root` would enable, and what would stay ignored. */
export async function describeTrust(options: { home: string; root: string }): Promise<TrustDescription> {
  const settings = await resolveSettings({ ...options, trustOverride: false });
  return {
    root: options.root,
    status: settings.trustStatus,
    fingerprint: settings.fingerprint,
    files: settings.files.filter((file) => file.source !== "user" && file.status !== "missing").map((file) =>
      file.path
    ),
    enables: settings.ignored.filter((item) => item.kind === "needs-trust"),
    neverApplied: settings.ignored.filter((item) => item.kind === "never"),
    warnings: settings.warnings,
  };
}

/**
 * Records that the user trusts `root` with the settings whose `fingerprint` they reviewed
 * (`describeTrust`). Refused when the files changed since.
 */
export async function trustWorkspace(
  options: { home: string; root: string; fingerprint: string; now?: Date },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const current = await resolveSettings({ home: options.home, root: options.root, trustOverride: false });
  if (current.fingerprint !== options.fingerprint) {
    return {
      ok: false,
      error: `Cannot trust "${options.root}": its settings files (${
        Object.values(REPOSITORY_SETTINGS_FILES).map((file) => join(options.root, file)).join(", ")
      }) changed since they were reviewed: review them again`,
    };
  }
  const written = await writeTrustRecord(options.home, options.root, {
    fingerprint: options.fingerprint,
    trustedAt: (options.now ?? new Date()).toISOString(),
  });
  return written.ok ? { ok: true } : written;
}

/** Forgets the trust of `root`; `existed` says whether it was recorded. */
export async function revokeTrust(
  options: { home: string; root: string },
): Promise<{ ok: true; existed: boolean } | { ok: false; error: string }> {
  const written = await writeTrustRecord(options.home, options.root, null);
  return written.ok ? { ok: true, existed: written.existed } : written;
}
