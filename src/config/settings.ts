/**
 * The effective settings of a session, from four layers, highest priority first:
 *
 *   cli       the command-line flags (an object the CLI builds)
 *   local     <workspace>/.mewcode/settings.local.json   (the user's "always allow" choices; git-ignored)
 *   project   <workspace>/.mewcode/settings.json         (shared with the team)
 *   user      $MEWCODE_HOME/settings.json
 *
 * A single value (mode, model, provider, sandbox) comes from the highest layer that sets it; lists (rules,
 * directories, hooks) concatenate, highest layer first; `env` merges by name. The two workspace files come
 * from the repository, so they pass folder trust first (repository_screen.ts). A file that cannot be used
 * is ignored as a whole, with a warning naming it and the line.
 *
 * Most runs have no settings file and no trust record at all: they get the defaults without building the
 * settings schema (zod) or hashing anything, since the readers (settings_file.ts, trust_store.ts) and the
 * repository settings' screen (repository_screen.ts) load only when one of those files exists.
 *
 * @module
 */
import { isAbsolute, join, normalize, resolve } from "../common/path.ts";
import { assertNever } from "../common/errors.ts";
import { lazyImport } from "../common/lazy_import.ts";
import { lstatSyncOrNull, realPathSyncOrNull } from "../common/fs.ts";
import type { DirectoryTarget, IgnoredItem, RepositorySource } from "./repository_screen.ts";
import type { SettingsFileRead, SettingsWarning } from "./settings_file.ts";
import { SETTINGS_HOOK_EVENTS, TRUST_FILE } from "./settings_names.ts";
import { hookCommands } from "../permissions/hook_config.ts";
import type {
  SettingsFile,
  SettingsHookEvent,
  SettingsMatcherGroup,
  SettingsPermissionMode,
  SettingsProvider,
  SettingsSandboxMode,
} from "./settings_schema.ts";
import type { FingerprintedFile, TrustStatus } from "./trust_store.ts";
import type { ScriptFolderEntry } from "./command_scripts.ts";

export type { DirectoryTarget, IgnoredItem, SettingsWarning, TrustStatus };

/** Where a setting came from. */
export type SettingsSource = "cli" | RepositorySource | "user";

/** A value with the layer (and file, null for the command line) it came from. */
export interface Sourced<T> {
  value: T;
  source: SettingsSource;
  path: string | null;
}

/**
 * A folder added to the workspace: `value` is the absolute path used (for a repository's, the real path the
 * trust covers), `named` the path as the settings file or the command line wrote it.
 */
export interface SourcedDirectory extends Sourced<string> {
  named: string;
}

/** A permission rule string, such as `Bash(npm test *)`, with its action and where it came from. */
export interface SourcedRule {
  action: "allow" | "deny" | "ask";
  rule: string;
  source: SettingsSource;
  path: string | null;
}

/** Hooks by event, as the settings file writes them. */
export type HooksByEvent = { [E in SettingsHookEvent]?: SettingsMatcherGroup[] };

/** The settings a session uses. Unset values are null: the caller applies its defaults. */
export interface ResolvedSettings {
  /** Every rule of every applied layer, highest layer first. */
  rules: SourcedRule[];
  defaultMode: Sourced<SettingsPermissionMode> | null;
  /** Absolute paths (relative ones resolved against the workspace root). */
  additionalDirectories: SourcedDirectory[];
  sandbox: { mode: Sourced<SettingsSandboxMode> | null; network: Sourced<boolean> | null };
  model: Sourced<string> | null;
  /** The model provider, its endpoint and the variable holding its key: from the user's settings only. */
  provider: Sourced<SettingsProvider> | null;
  baseUrl: Sourced<string> | null;
  apiKeyEnv: Sourced<string> | null;
  hooks: {
    /** From the user's settings and the command line: they run as the user. */
    user: HooksByEvent;
    /** From a trusted repository's settings: they run in the shell sandbox unless `sandboxRepositoryHooks`. */
    repository: HooksByEvent;
    /** From the user's settings or the command line only; default true. */
    sandboxRepositoryHooks: boolean;
  };
  /** Variables for the tools' environment (higher layers win by name). */
  env: Record<string, string>;
  approvalCommand: Sourced<string> | null;
  /** Seconds. */
  approvalTimeout: Sourced<number> | null;
  /** Repository settings that were not applied, for a notice on stderr. */
  ignored: IgnoredItem[];
  /** Files ignored as a whole. */
  warnings: SettingsWarning[];
  /** Whether the repository's settings were applied as trusted (recorded trust or `trustOverride`). */
  trusted: boolean;
  /** The recorded trust of the folder, whatever `trustOverride` said. */
  trustStatus: TrustStatus;
  /** The fingerprint of the repository's settings files, to record when the user trusts the folder. */
  fingerprint: string;
  /** Each settings file looked at, and what became of it. */
  files: { source: Exclude<SettingsSource, "cli">; path: string; status: SettingsFileRead["status"] }[];
}

/** What settings are resolved for. */
export interface ResolveSettingsOptions {
  /** mewcode's state folder (`$MEWCODE_HOME`). */
  home: string;
  /** Real path of the workspace root. */
  root: string;
  /** The command-line flags as settings; they win over every file. */
  cli?: SettingsFile;
  /**
   * true: treat the folder as trusted for this run (`--trust`, `MEWCODE_TRUST_WORKSPACE=1`); false: as not
   * trusted; undefined: as `$MEWCODE_HOME/trust.json` says. Headless runs never trust implicitly.
   */
  trustOverride?: boolean;
}

/** The repository's settings files, relative to the workspace root. */
export const REPOSITORY_SETTINGS_FILES = {
  project: join(".mewcode", "settings.json"),
  local: join(".mewcode", "settings.local.json"),
} as const satisfies Record<RepositorySource, string>;

/**
 * The fingerprint (trust_store.ts `fingerprintFiles`) of a workspace with neither settings file, which
 * is what most workspaces are: known without hashing (a test checks it against `fingerprintFiles`).
 */
export const NO_SETTINGS_FINGERPRINT =
  "sha256:10471581002a47c0c94d90a149601d269083817076cd3ff2716b0312b5337e23";

/**
 * The repository's settings files as read once, the fingerprint of exactly those bytes, and where their
 * additional directories lead (which the fingerprint covers too).
 */
export interface RepositorySettingsRead {
  files: { source: RepositorySource; read: SettingsFileRead }[];
  fingerprint: string;
  /** By each `permissions.additionalDirectories` entry as written. */
  directories: ReadonlyMap<string, DirectoryTarget>;
}

/**
 * Reads the workspace's settings files (each once: the fingerprint covers the bytes that are used). With
 * the workspace at $HOME, `.mewcode/settings.json` is the user's own file and is left to the user layer.
 */
export async function readRepositorySettings(
  options: { home: string; root: string },
): Promise<RepositorySettingsRead> {
  const { readSettingsFile } = await settingsFileModule();
  const userReal = realPathSyncOrNull(join(options.home, "settings.json"));
  const files: RepositorySettingsRead["files"] = [];
  for (const source of ["project", "local"] as const) {
    const path = join(options.root, REPOSITORY_SETTINGS_FILES[source]);
    if (userReal !== null && realPathSyncOrNull(path) === userReal) continue;
    files.push({ source, read: await readSettingsFile(path, { within: options.root }) });
  }
  return { files, ...await repositoryFingerprint(files, options.root) };
}

/**
 * The fingerprint of repository files whose bytes are known (for a file mewcode is about to write), of
 * the workspace scripts their hooks and approval command run, and of where their additional directories
 * lead: trusting the settings trusts what those scripts hold and where those folders lead now, and a
 * change of one (a `git pull` that edits a script or repoints a symbolic link) needs trust again.
 */
export async function fingerprintRepositoryBytes(
  files: readonly { source: RepositorySource; read: SettingsFileRead }[],
  root: string,
): Promise<string> {
  return (await repositoryFingerprint(files, root)).fingerprint;
}

async function repositoryFingerprint(
  files: readonly { source: RepositorySource; read: SettingsFileRead }[],
  root: string,
): Promise<Omit<RepositorySettingsRead, "files">> {
  const fingerprinted = files.map(({ source, read }) => fingerprintedFile(source, read));
  const directories = new Map<string, DirectoryTarget>();
  if (fingerprinted.every((file) => file.state === "absent") && fingerprinted.length === 2) {
    // Both absent: the names are "project" and "local" (the only RepositorySource values).
    return { fingerprint: NO_SETTINGS_FINGERPRINT, directories };
  }
  const loaded = files.flatMap(({ read }) => read.status === "loaded" ? [read.settings] : []);
  const commands = loaded.flatMap(settingsCommands);
  if (commands.length > 0) {
    const scripts = await commandScriptsModule();
    const { files, folders } = await scripts.watchedCommandScripts(root, commands);
    for (const folder of folders) fingerprinted.push(...await fingerprintedFolder(scripts, root, folder));
    for (const file of files) fingerprinted.push(await fingerprintedScript(scripts, root, file));
  }
  for (const settings of loaded) {
    for (const directory of settings.permissions?.additionalDirectories ?? []) {
      if (directories.has(directory)) continue;
      const target = directoryTarget(directory, root);
      directories.set(directory, target);
      const name = `directory:${directory}`;
      fingerprinted.push(
        target.real === null
          ? { name, state: "absent" }
          : { name, state: "present", bytes: new TextEncoder().encode(target.real) },
      );
    }
  }
  return { fingerprint: await (await trustStoreModule()).fingerprintFiles(fingerprinted), directories };
}

/** Where an additional directory of the repository's settings leads now: its real path, as merge() names it. */
function directoryTarget(directory: string, root: string): DirectoryTarget {
  const real = realPathSyncOrNull(namedDirectoryPath(directory, root));
  const inside = real !== null && (root === "/" || real === root || real.startsWith(`${root}/`));
  return { real, outsideWorkspace: real !== null && !inside };
}

/** An additional directory as a settings layer names it: absolute, or relative to the workspace root. */
function namedDirectoryPath(directory: string, root: string): string {
  return isAbsolute(directory) ? normalize(directory) : resolve(root, directory);
}

/** The commands a settings file's hooks and approval command run. */
function settingsCommands(settings: SettingsFile): string[] {
  const hooks = hookCommands(settings.hooks);
  const approval = settings.permissions?.approvalCommand;
  return approval === undefined ? hooks : [...hooks, approval];
}

/**
 * Every file of a script folder (a folder a hook changes to), below it too, and each folder of it that
 * cannot be listed, as the walk of the state of a hook's scripts finds them (command_scripts.ts
 * `scriptFolderEntries`: at most 2,000 entries, folders counted with files). Links are read as what they
 * lead to.
 */
async function fingerprintedFolder(
  scripts: CommandScriptsModule,
  root: string,
  path: string,
): Promise<FingerprintedFile[]> {
  const entries = await scripts.scriptFolderEntries(root, path);
  const fingerprinted = await Promise.all(entries.map((entry) => fingerprintedEntry(scripts, root, entry)));
  return fingerprinted.filter((file) => file !== null);
}

/** A script folder's entry, for the fingerprint: a file's bytes, a folder that cannot be listed, or none. */
async function fingerprintedEntry(
  scripts: CommandScriptsModule,
  root: string,
  entry: ScriptFolderEntry,
): Promise<FingerprintedFile | null> {
  switch (entry.kind) {
    case "folder":
      return null;
    case "unreadable-folder":
      return { name: `script:${entry.path}`, state: "unreadable" };
    case "file":
      return await fingerprintedScript(scripts, root, entry.path);
    default:
      return assertNever(entry.kind);
  }
}

/** The most bytes of a script fingerprinted; a larger one counts as unreadable, and is not read. */
const MAX_SCRIPT_BYTES = 16 * 1024 * 1024;

/** A script the settings run, for the fingerprint: its bytes (up to 16 MiB), or unreadable. */
async function fingerprintedScript(
  scripts: CommandScriptsModule,
  root: string,
  path: string,
): Promise<FingerprintedFile> {
  const name = `script:${path}`;
  const bytes = await scripts.readScriptBytes(join(root, path), MAX_SCRIPT_BYTES);
  return bytes === null ? { name, state: "unreadable" } : { name, state: "present", bytes };
}

/** Reads every layer, applies folder trust and merges them. Never throws for a bad file. */
export async function resolveSettings(options: ResolveSettingsOptions): Promise<ResolvedSettings> {
  const { home, root } = options;
  const userPath = join(home, "settings.json");
  const unset = withoutFiles(options, userPath);
  if (unset !== null) return unset;
  const { readSettingsFile } = await settingsFileModule();
  const { readTrustRecords, trustStatusOf } = await trustStoreModule();
  const { screenRepositorySettings } = await repositoryScreenModule();
  const user = await readSettingsFile(userPath, { within: null });
  const { files: repository, fingerprint, directories } = await readRepositorySettings({ home, root });
  const records = await readTrustRecords(home);
  const trustStatus = trustStatusOf(records, root, fingerprint);
  const trusted = options.trustOverride ?? trustStatus === "trusted";

  const warnings: SettingsWarning[] = [];
  if (!records.ok) {
    warnings.push({
      path: join(home, "trust.json"),
      line: null,
      problem: records.error,
      message: records.error,
    });
  }
  const files: ResolvedSettings["files"] = [];
  const layers: Layer[] = [];
  const ignored: IgnoredItem[] = [];
  const use = (source: Exclude<SettingsSource, "cli">, read: SettingsFileRead): SettingsFile | null => {
    files.push({ source, path: read.path, status: read.status });
    if (read.status === "ignored") warnings.push(read.warning);
    return read.status === "loaded" ? read.settings : null;
  };
  const userSettings = use("user", user);
  if (userSettings !== null) layers.push({ source: "user", path: userPath, settings: userSettings });
  for (const { source, read } of repository) {
    const settings = use(source, read);
    if (settings === null) continue;
    const below = merge(layers, root);
    const screened = screenRepositorySettings(settings, {
      trusted,
      source,
      path: read.path,
      directories,
      baseline: {
        defaultMode: below.defaultMode?.value ?? "default",
        sandboxMode: below.sandbox.mode?.value ?? "workspace-write",
        network: below.sandbox.network?.value ?? false,
        // What the user's layers chose: a repository layer below could not change the provider (the screen).
        provider: below.provider?.value ?? null,
        model: below.model?.value ?? null,
      },
    });
    ignored.push(...screened.ignored);
    layers.push({ source, path: read.path, settings: screened.kept, directories });
  }
  if (options.cli !== undefined) layers.push({ source: "cli", path: null, settings: options.cli });
  return { ...merge(layers, root), ignored, warnings, trusted, trustStatus, fingerprint, files };
}

/**
 * The settings when none of their files exists (the user's and the repository's settings, the trust
 * record): exactly what reading them would give, without loading their readers; null when one exists.
 */
function withoutFiles(options: ResolveSettingsOptions, userPath: string): ResolvedSettings | null {
  const { home, root } = options;
  const repository = (["project", "local"] as const).map((source) => ({
    source,
    path: join(root, REPOSITORY_SETTINGS_FILES[source]),
  }));
  const paths = [userPath, ...repository.map((file) => file.path), join(home, TRUST_FILE)];
  // lstat: a symbolic link, even a broken one, is a file the readers must look at. Synchronous, as every
  // look-up before the first request: an asynchronous one waited for a thread of Deno's pool (_bounded_read.ts).
  if (paths.some((path) => lstatSyncOrNull(path) !== null)) return null;
  const layers = options.cli === undefined
    ? []
    : [{ source: "cli" as const, path: null, settings: options.cli }];
  return {
    ...merge(layers, root),
    ignored: [],
    warnings: [],
    // No record trusts nothing; the flags may still say to trust the folder.
    trusted: options.trustOverride ?? false,
    trustStatus: "untrusted",
    fingerprint: NO_SETTINGS_FINGERPRINT,
    files: [
      { source: "user", path: userPath, status: "missing" },
      ...repository.map(({ source, path }) => ({ source, path, status: "missing" as const })),
    ],
  };
}

function settingsFileModule(): Promise<typeof import("./settings_file.ts")> {
  return lazyImport<typeof import("./settings_file.ts")>(new URL("./settings_file.ts", import.meta.url));
}

type CommandScriptsModule = typeof import("./command_scripts.ts");

function commandScriptsModule(): Promise<CommandScriptsModule> {
  return lazyImport<CommandScriptsModule>(new URL("./command_scripts.ts", import.meta.url));
}

function repositoryScreenModule(): Promise<typeof import("./repository_screen.ts")> {
  return lazyImport<typeof import("./repository_screen.ts")>(
    new URL("./repository_screen.ts", import.meta.url),
  );
}

function trustStoreModule(): Promise<typeof import("./trust_store.ts")> {
  return lazyImport<typeof import("./trust_store.ts")>(new URL("./trust_store.ts", import.meta.url));
}

type Merged = Omit<
  ResolvedSettings,
  "ignored" | "warnings" | "trusted" | "trustStatus" | "fingerprint" | "files"
>;

/** One settings layer; a repository's carries where its additional directories led when it was read. */
interface Layer {
  source: SettingsSource;
  path: string | null;
  settings: SettingsFile;
  directories?: ReadonlyMap<string, DirectoryTarget>;
}

/** Merges layers given lowest priority first. */
function merge(layers: readonly Layer[], root: string): Merged {
  const merged: Merged = {
    rules: [],
    defaultMode: null,
    additionalDirectories: [],
    sandbox: { mode: null, network: null },
    model: null,
    provider: null,
    baseUrl: null,
    apiKeyEnv: null,
    hooks: { user: {}, repository: {}, sandboxRepositoryHooks: true },
    env: {},
    approvalCommand: null,
    approvalTimeout: null,
  };
  // Lists are built lowest layer first and reversed at the end: highest layer first.
  for (const { source, path, settings, directories } of layers) {
    const sourced = <T>(value: T): Sourced<T> => ({ value, source, path });
    const permissions = settings.permissions ?? {};
    // Reversed as a whole below, so each layer keeps allow, deny, ask in file order.
    for (const action of ["ask", "deny", "allow"] as const) {
      for (const rule of [...permissions[action] ?? []].reverse()) {
        merged.rules.push({ action, rule, source, path });
      }
    }
    if (permissions.defaultMode !== undefined) merged.defaultMode = sourced(permissions.defaultMode);
    for (const directory of [...permissions.additionalDirectories ?? []].reverse()) {
      // A repository's folder is added by the real path its trust covers, not by the path as written,
      // which could lead elsewhere by the time the session opens it.
      const real = directories?.get(directory)?.real ?? null;
      merged.additionalDirectories.push({
        ...sourced(real ?? namedDirectoryPath(directory, root)),
        named: directory,
      });
    }
    if (permissions.approvalCommand !== undefined) {
      merged.approvalCommand = sourced(permissions.approvalCommand);
    }
    if (permissions.approvalTimeout !== undefined) {
      merged.approvalTimeout = sourced(permissions.approvalTimeout);
    }
    if (settings.sandbox?.mode !== undefined) merged.sandbox.mode = sourced(settings.sandbox.mode);
    if (settings.sandbox?.network !== undefined) merged.sandbox.network = sourced(settings.sandbox.network);
    if (settings.model !== undefined) merged.model = sourced(settings.model);
    // Repository layers never reach this with a provider, endpoint or key variable: the screen drops them.
    if (settings.provider !== undefined) merged.provider = sourced(settings.provider);
    if (settings.baseUrl !== undefined) merged.baseUrl = sourced(settings.baseUrl);
    if (settings.apiKeyEnv !== undefined) merged.apiKeyEnv = sourced(settings.apiKeyEnv);
    Object.assign(merged.env, settings.env ?? {});
    const hooks = settings.hooks ?? {};
    const fromRepository = source === "project" || source === "local";
    // Repository layers never reach this with sandboxRepositoryHooks: the screen drops it.
    if (!fromRepository && hooks.sandboxRepositoryHooks !== undefined) {
      merged.hooks.sandboxRepositoryHooks = hooks.sandboxRepositoryHooks;
    }
    const target = fromRepository ? merged.hooks.repository : merged.hooks.user;
    for (const event of SETTINGS_HOOK_EVENTS) {
      const groups = hooks[event];
      if (groups !== undefined) target[event] = [...groups, ...target[event] ?? []];
    }
  }
  merged.rules.reverse();
  merged.additionalDirectories.reverse();
  return merged;
}

function fingerprintedFile(name: string, read: SettingsFileRead): FingerprintedFile {
  if (read.status === "missing") return { name, state: "absent" };
  if (read.bytes === null) return { name, state: "unreadable" };
  return { name, state: "present", bytes: read.bytes };
}
