/**
 * What a repository's own settings files (`.mewcode/settings.json`, `.mewcode/settings.local.json`) may
 * change: the security core of folder trust. A cloned repository is written by someone else, so:
 *
 *   always applied            deny and ask rules; a permission mode or sandbox no looser than the one it
 *                             replaces; the network turned off
 *   applied once trusted      allow rules, hooks, env, additionalDirectories, the approval command and its
 *                             timeout, the model, a looser permission mode (acceptEdits) or sandbox
 *                             (workspace-write over read-only, danger-full-access, the network)
 *   never applied             bypassPermissions; API endpoints, keys and provider variables in env;
 *                             `hooks.sandboxRepositoryHooks` (only the user decides how repository hooks run);
 *                             `provider`, `baseUrl`, `apiKeyEnv`, and a `model` that would change the
 *                             provider the user's settings choose: one with a `provider/` prefix, or a
 *                             plain one (an anthropic model) when their model's prefix chose another (where
 *                             the conversation and the key go, and so which provider the user's `baseUrl`
 *                             and `apiKeyEnv` serve, is the user's choice)
 *
 * @module
 */
import { SETTINGS_HOOK_EVENTS, SETTINGS_PROVIDERS, type SettingsProvider } from "./settings_names.ts";
import type {
  SettingsFile,
  SettingsHooks,
  SettingsPermissionMode,
  SettingsSandboxMode,
} from "./settings_schema.ts";

/** The settings layers that come from the repository. */
export type RepositorySource = "project" | "local";

/** Why a repository item was not applied: the folder is not trusted, or a repository may never set it. */
export type IgnoredKind = "needs-trust" | "never";

/** One repository setting that was not applied, for a notice on stderr and for `describeTrust`. */
export interface IgnoredItem {
  /** The setting and its value, e.g. `permissions.allow "Bash(*)"`. */
  item: string;
  reason: string;
  kind: IgnoredKind;
  source: RepositorySource;
  path: string;
}

/**
 * Where a repository's additional directory leads, as settings.ts resolved it when it read the settings
 * (the trust fingerprint covers it): `mewcode trust` and the notices show it next to the path as written.
 */
export interface DirectoryTarget {
  /** Its real path; null when it leads to nothing. */
  real: string | null;
  /** Whether the real path is outside the workspace: a grant to the repository's authors. */
  outsideWorkspace: boolean;
}

/** The values a repository layer would replace (from the layers below it, or the built-in defaults). */
export interface ScreenBaseline {
  defaultMode: SettingsPermissionMode;
  sandboxMode: SettingsSandboxMode;
  network: boolean;
  /** The `provider` setting (null: not set). */
  provider: SettingsProvider | null;
  /** The `model` setting (null: not set). */
  model: string | null;
}

/** How permissive each mode is: a repository may replace a mode only with one no higher. */
const MODE_LOOSENESS: Record<SettingsPermissionMode, number> = {
  plan: 0,
  dontAsk: 0,
  default: 1,
  acceptEdits: 2,
  bypassPermissions: 3,
};
const SANDBOX_LOOSENESS: Record<SettingsSandboxMode, number> = {
  "read-only": 0,
  "workspace-write": 1,
  "danger-full-access": 2,
};

/** Environment variables a repository may never set: API endpoints and keys, providers, loaders. */
const NEVER_ENV = [
  /^(ANTHROPIC|CLAUDE|MEWCODE|DENO)_/,
  /(^|_)(API_KEY|AUTH_TOKEN|BASE_URL)$/,
  /^(LD_|DYLD_)/,
];

const NEEDS_TRUST = "not applied until you trust this folder (--trust, or MEWCODE_TRUST_WORKSPACE=1)";
const NEVER = "a repository may never set this, even when trusted: set it in your user settings " +
  "($MEWCODE_HOME/settings.json) or on the command line";

/** The stderr line for an ignored item: `Not applied from "<file>": <item>: <reason>`. */
export function ignoredNotice(item: IgnoredItem): string {
  return `Not applied from "${item.path}": ${item.item}: ${item.reason}`;
}

/** Whether a repository may set the environment variable `name` (once trusted). */
export function repositoryMaySetEnv(name: string): boolean {
  return !NEVER_ENV.some((pattern) => pattern.test(name.toUpperCase()));
}

/**
 * Splits a repository layer into what applies and what is ignored, given whether the folder is trusted
 * and the values the layer would replace. Pure.
 */
export function screenRepositorySettings(
  settings: SettingsFile,
  options: {
    trusted: boolean;
    baseline: ScreenBaseline;
    source: RepositorySource;
    path: string;
    /** Where each `permissions.additionalDirectories` entry leads, by the entry as written. */
    directories?: ReadonlyMap<string, DirectoryTarget>;
  },
): { kept: SettingsFile; ignored: IgnoredItem[] } {
  const { trusted, baseline } = options;
  const ignored: IgnoredItem[] = [];
  const ignore = (item: string, kind: IgnoredKind, reason = kind === "never" ? NEVER : NEEDS_TRUST) =>
    ignored.push({ item, reason, kind, source: options.source, path: options.path });
  const kept: SettingsFile = {};

  const permissions = settings.permissions;
  if (permissions !== undefined) {
    const keptPermissions: NonNullable<SettingsFile["permissions"]> = {};
    if (permissions.deny !== undefined) keptPermissions.deny = permissions.deny;
    if (permissions.ask !== undefined) keptPermissions.ask = permissions.ask;
    if (permissions.allow !== undefined) {
      if (trusted) keptPermissions.allow = permissions.allow;
      else for (const rule of permissions.allow) ignore(`permissions.allow ${quote(rule)}`, "needs-trust");
    }
    const mode = permissions.defaultMode;
    if (mode !== undefined) {
      const item = `permissions.defaultMode ${quote(mode)}`;
      if (mode === "bypassPermissions") ignore(item, "never");
      else if (trusted || MODE_LOOSENESS[mode] <= MODE_LOOSENESS[baseline.defaultMode]) {
        keptPermissions.defaultMode = mode;
      } else {
        ignore(item, "needs-trust", `it is looser than "${baseline.defaultMode}": ${NEEDS_TRUST}`);
      }
    }
    if (permissions.additionalDirectories !== undefined) {
      if (trusted) keptPermissions.additionalDirectories = permissions.additionalDirectories;
      else {
        for (const directory of permissions.additionalDirectories) {
          ignore(directoryItem(directory, options.directories?.get(directory)), "needs-trust");
        }
      }
    }
    if (permissions.approvalCommand !== undefined) {
      if (trusted) keptPermissions.approvalCommand = permissions.approvalCommand;
      else ignore(`permissions.approvalCommand ${quote(permissions.approvalCommand)}`, "needs-trust");
    }
    if (permissions.approvalTimeout !== undefined) {
      if (trusted) keptPermissions.approvalTimeout = permissions.approvalTimeout;
      else ignore(`permissions.approvalTimeout ${permissions.approvalTimeout}`, "needs-trust");
    }
    kept.permissions = keptPermissions;
  }

  const sandbox = settings.sandbox;
  if (sandbox !== undefined) {
    const keptSandbox: NonNullable<SettingsFile["sandbox"]> = {};
    if (sandbox.mode !== undefined) {
      if (trusted || SANDBOX_LOOSENESS[sandbox.mode] <= SANDBOX_LOOSENESS[baseline.sandboxMode]) {
        keptSandbox.mode = sandbox.mode;
      } else {
        ignore(
          `sandbox.mode ${quote(sandbox.mode)}`,
          "needs-trust",
          `it is looser than "${baseline.sandboxMode}": ${NEEDS_TRUST}`,
        );
      }
    }
    if (sandbox.network !== undefined) {
      if (trusted || !sandbox.network || baseline.network) keptSandbox.network = sandbox.network;
      else ignore("sandbox.network true", "needs-trust", `it turns the network on: ${NEEDS_TRUST}`);
    }
    kept.sandbox = keptSandbox;
  }

  if (settings.model !== undefined) {
    const item = `model ${quote(settings.model)}`;
    const chosen = providerChosen(baseline.provider, baseline.model);
    const wouldChoose = providerChosen(baseline.provider, settings.model);
    if (choosesProvider(settings.model)) {
      ignore(item, "never", `its provider prefix would choose the provider: ${NEVER}`);
    } else if (wouldChoose !== chosen) {
      // The user's baseUrl and apiKeyEnv follow the provider: switching it would send the key elsewhere.
      ignore(
        item,
        "never",
        `it would switch the provider from ${chosen}, which your settings choose, to ${wouldChoose}: ${NEVER}`,
      );
    } else if (trusted) kept.model = settings.model;
    else ignore(item, "needs-trust");
  }
  if (settings.provider !== undefined) ignore(`provider ${quote(settings.provider)}`, "never");
  if (settings.baseUrl !== undefined) ignore(`baseUrl ${quote(settings.baseUrl)}`, "never");
  if (settings.apiKeyEnv !== undefined) ignore(`apiKeyEnv ${quote(settings.apiKeyEnv)}`, "never");

  if (settings.hooks !== undefined) {
    const keptHooks: SettingsHooks = {};
    if (settings.hooks.sandboxRepositoryHooks !== undefined) {
      ignore(`hooks.sandboxRepositoryHooks ${settings.hooks.sandboxRepositoryHooks}`, "never");
    }
    for (const event of SETTINGS_HOOK_EVENTS) {
      const groups = settings.hooks[event];
      if (groups === undefined) continue;
      if (trusted) {
        keptHooks[event] = groups;
        continue;
      }
      for (const group of groups) {
        const matcher = group.matcher === undefined ? "" : ` (matcher ${quote(group.matcher)})`;
        for (const hook of group.hooks) {
          ignore(`hooks.${event}${matcher} ${quote(hook.command)}`, "needs-trust");
        }
      }
    }
    kept.hooks = keptHooks;
  }

  if (settings.env !== undefined) {
    const keptEnv: Record<string, string> = {};
    for (const [name, value] of Object.entries(settings.env)) {
      const item = `env.${name} ${quote(value)}`;
      if (!repositoryMaySetEnv(name)) ignore(item, "never");
      else if (trusted) keptEnv[name] = value;
      else ignore(item, "needs-trust");
    }
    kept.env = keptEnv;
  }
  return { kept, ignored };
}

/**
 * An additional directory as `mewcode trust` shows it: the path as written, then, unless that says it
 * already, where it leads (in full: a shortened path could hide where) and whether that is outside.
 */
function directoryItem(directory: string, target: DirectoryTarget | undefined): string {
  const item = `permissions.additionalDirectories ${quote(directory)}`;
  if (target === undefined) return item;
  if (target.real === null) return `${item} (no such directory)`;
  const leads = target.real === directory ? "" : ` -> ${JSON.stringify(target.real)}`;
  return `${item}${leads}${target.outsideWorkspace ? " (outside the workspace)" : ""}`;
}

/** Whether a model id starts with a provider's name and a slash (`ollama/qwen3`), which picks that provider. */
function choosesProvider(model: string): boolean {
  return prefixProvider(model) !== null;
}

/** The provider a model id's `provider/` prefix names, or null. */
function prefixProvider(model: string): SettingsProvider | null {
  const slash = model.indexOf("/");
  if (slash <= 0 || model.slice(slash + 1).trim() === "") return null;
  const prefix = model.slice(0, slash);
  return SETTINGS_PROVIDERS.find((provider) => provider === prefix) ?? null;
}

/**
 * The provider settings choose (as provider_choice.ts does): their `provider`, else their model's prefix,
 * else anthropic.
 */
function providerChosen(provider: SettingsProvider | null, model: string | null): SettingsProvider {
  return provider ?? (model === null ? null : prefixProvider(model)) ?? "anthropic";
}

/** A value for a notice: JSON-quoted, long values shortened. */
function quote(value: string): string {
  const shown = value.length > 120 ? `${value.slice(0, 117)}...` : value;
  return JSON.stringify(shown);
}
