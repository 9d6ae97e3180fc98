/**
 * The names settings files use (permission modes, sandbox modes, hook events, providers) and the trust
 * record's file name, without the schema: merging the layers and screening a repository's settings need
 * these lists, and a run without settings files should not build the zod schema (settings_schema.ts) or
 * read the trust store (trust_store.ts) to learn them.
 *
 * @module
 */

/** The permission modes a settings file may name (`dontAsk` denies whatever would ask). */
export const SETTINGS_PERMISSION_MODES = [
  "default",
  "acceptEdits",
  "plan",
  "dontAsk",
  "bypassPermissions",
] as const;
/** One of SETTINGS_PERMISSION_MODES. */
export type SettingsPermissionMode = typeof SETTINGS_PERMISSION_MODES[number];

/** The shell sandbox modes (the same names as `--sandbox`). */
export const SETTINGS_SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;
/** One of SETTINGS_SANDBOX_MODES. */
export type SettingsSandboxMode = typeof SETTINGS_SANDBOX_MODES[number];

/** The hook events, with Claude Code's names. */
export const SETTINGS_HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
] as const;
/** One of SETTINGS_HOOK_EVENTS. */
export type SettingsHookEvent = typeof SETTINGS_HOOK_EVENTS[number];

/** The model providers (the same names as `--provider`). */
export const SETTINGS_PROVIDERS = ["anthropic", "openai", "ollama"] as const;
/** One of SETTINGS_PROVIDERS. */
export type SettingsProvider = typeof SETTINGS_PROVIDERS[number];

/** The trust record's file name in `$MEWCODE_HOME` (trust_store.ts). */
export const TRUST_FILE = "trust.json";
