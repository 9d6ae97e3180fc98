/**
 * What the command line and the settings files say about a session, shared by every command that opens
 * one: the flags become the highest settings layer, the files below them are merged with folder trust
 * applied (src/config/settings.ts), and the result is the session's options plus what the user should be
 * told (ignored files, settings a not-yet-trusted repository asked for, rules that can never match).
 *
 * @module
 */
import { isAbsolute, resolve } from "../common/path.ts";
import { lazyImport } from "../common/lazy_import.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import { type ResolvedSettings, resolveSettings, type SourcedRule } from "../config/settings.ts";
import type { SettingsFile } from "../config/settings_schema.ts";
import { portHistory } from "../llm/history_port.ts";
import { redactUrl } from "../llm/redact_secrets.ts";
import type { Message } from "../llm/provider.ts";
import { missingModelMessage, type ProviderChoice, resolveProviderChoice } from "../llm/provider_choice.ts";
import type { Rule } from "../permissions/rules.ts";
import { loadShellParser } from "../permissions/shell_parser.ts";
import type { SessionOptions } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import { type CliOptions, DEFAULT_MODEL, UsageError } from "./args.ts";

/** A session's options, and the lines for stderr that explain what was (not) taken from the settings. */
export interface SessionSetup {
  options: SessionOptions;
  notices: string[];
  /** The merged settings, for commands that show them (`permissions`, `doctor`). */
  settings: ResolvedSettings;
  /**
   * The provider and model the flags and settings chose (`options.model` is its model, "" when none is
   * named: commands that talk to a model refuse to start, see {@link requireModel}).
   */
  provider: ProviderChoice;
}

/** Throws UsageError when the setup names no model for its provider (a model request would be refused). */
export function requireModel(setup: SessionSetup): void {
  const missing = missingModelMessage(setup.provider);
  if (missing !== null) throw new UsageError(missing);
}

/**
 * Throws UsageError when the API address the run would use is not an http:// or https:// URL (the settings'
 * `baseUrl`, or ANTHROPIC_BASE_URL / OPENAI_BASE_URL): every request would fail, and retrying it for
 * seconds and exiting as "try again later" (75) tells the user nothing they can fix.
 */
export function requireEndpoint(setup: SessionSetup, env: Record<string, string>): void {
  const { provider } = setup;
  const variable = provider.kind === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  const fromEnv = env[variable]?.trim() || null;
  const [source, value] = provider.baseUrl !== null
    ? ["the baseUrl setting", provider.baseUrl.trim()]
    : [variable, fromEnv];
  if (value === null || value === "") return;
  const problem = urlProblem(value);
  if (problem === null) return;
  const example = provider.kind === "anthropic" ? "https://api.anthropic.com" : "http://127.0.0.1:11434/v1";
  throw new UsageError(
    `${source} is "${redactUrl(value)}", which ${problem}: set it to the API's base URL, for example ` +
      example,
  );
}

/** Why `value` cannot be an API's base URL, or null. */
function urlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL (an http:// or https:// address, with a valid host and port)";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `is not an http:// or https:// address (its scheme is "${url.protocol.slice(0, -1)}")`;
  }
  if (url.hostname === "") return "names no host";
  return null;
}

/**
 * The session options the flags and settings decide; commands add their approver and other specifics.
 * Throws UsageError for a malformed rule on the command line.
 */
export async function sessionSetup(
  workspace: Workspace,
  cli: CliOptions,
  env: Record<string, string>,
): Promise<SessionSetup> {
  const home = resolveMewcodeHome(env);
  const settings = await resolveSettings({
    home,
    root: workspace.root,
    cli: cliSettings(cli),
    ...(cli.trust || env.MEWCODE_TRUST_WORKSPACE === "1" ? { trustOverride: true } : {}),
  });
  const notices = settings.warnings.map((warning) => warning.message);
  const rules = settings.rules.length === 0 ? [] : await parseRules(settings.rules, notices);
  notices.push(...await trustNotices(settings));
  const provider = chooseProvider(cli, settings, null);
  const approval = settings.approvalCommand;
  // Its module loads only for a session that has an approval command.
  const defaultApprovalTimeoutMs = approval === null ? 0 : (await lazyImport<
    typeof import("../permissions/approval_command.ts")
  >(new URL("../permissions/approval_command.ts", import.meta.url))).DEFAULT_APPROVAL_TIMEOUT_MS;
  const options: SessionOptions = {
    workspace,
    env,
    model: provider.model ?? "",
    providerEndpoint: endpointOf(provider),
    maxTokens: cli.maxTokens,
    maxTurns: cli.maxTurns,
    maxBudgetUsd: cli.maxBudgetUsd,
    permissionMode: settings.defaultMode?.value ?? "default",
    rules,
    readOnly: cli.readOnly,
    sandbox: settings.sandbox.mode?.value ?? "workspace-write",
    sandboxNetwork: settings.sandbox.network?.value ?? false,
    strictLinks: cli.strictLinks,
    persist: cli.persist,
    additionalDirectories: settings.additionalDirectories.map((directory) => directory.value),
    toolEnv: settings.env,
    hooks: settings.hooks,
    ...(approval === null ? {} : {
      approvalCommand: {
        command: approval.value,
        timeoutMs: (settings.approvalTimeout?.value ?? defaultApprovalTimeoutMs / 1000) * 1000,
        // A trusted repository's approval command runs in the sandbox, like its hooks.
        sandboxed: approval.source === "project" || approval.source === "local",
      },
    }),
    limits: {
      ...(cli.sandboxMaxProcesses === null ? {} : { maxProcesses: cli.sandboxMaxProcesses }),
      ...(cli.sandboxMaxMemory === null ? {} : { maxMemoryBytes: cli.sandboxMaxMemory }),
    },
  };
  return { options, notices, settings, provider };
}

/**
 * The setup for continuing a session: with neither `--provider` nor `--model`, the provider and model the
 * session recorded; with another provider than the recorded one, the history as that provider can take
 * it, and a notice saying what was dropped (history_port.ts).
 */
export function continuedSetup(
  setup: SessionSetup,
  cli: CliOptions,
  recorded: { provider: string | null; model: string | null; messages: readonly Message[] },
): { setup: SessionSetup; messages: Message[]; notice: string | null } {
  const provider = chooseProvider(cli, setup.settings, recorded);
  const ported = portHistory(recorded.messages, { from: recorded.provider, to: provider.kind });
  const options: SessionOptions = {
    ...setup.options,
    model: provider.model ?? "",
    providerEndpoint: endpointOf(provider),
  };
  return { setup: { ...setup, options, provider }, messages: ported.messages, notice: ported.notice };
}

/** The provider and model from the flags, the user's settings and a recorded session (provider_choice.ts). */
function chooseProvider(
  cli: CliOptions,
  settings: ResolvedSettings,
  recorded: { provider: string | null; model: string | null } | null,
): ProviderChoice {
  return resolveProviderChoice({
    cliProvider: cli.provider,
    cliModel: cli.model,
    settings: {
      provider: settings.provider?.value ?? null,
      model: settings.model?.value ?? null,
      baseUrl: settings.baseUrl?.value ?? null,
      apiKeyEnv: settings.apiKeyEnv?.value ?? null,
    },
    defaultModel: DEFAULT_MODEL,
    recorded,
  });
}

/** Where the session's provider finds its key and endpoint. */
function endpointOf(choice: ProviderChoice): NonNullable<SessionOptions["providerEndpoint"]> {
  return { kind: choice.kind, baseUrl: choice.baseUrl, apiKeyEnv: choice.apiKeyEnv };
}

/** The flags the user gave, as the highest settings layer (a flag not given leaves the files to decide). */
function cliSettings(cli: CliOptions): SettingsFile {
  const permissions: NonNullable<SettingsFile["permissions"]> = {
    ...(cli.allowedTools.length === 0 ? {} : { allow: cli.allowedTools }),
    ...(cli.disallowedTools.length === 0 ? {} : { deny: cli.disallowedTools }),
    ...(cli.permissionMode === null ? {} : { defaultMode: cli.permissionMode }),
    // Relative to where the user typed the command, not to the workspace.
    ...(cli.addDirs.length === 0 ? {} : {
      additionalDirectories: cli.addDirs.map((dir) => isAbsolute(dir) ? dir : resolve(dir)),
    }),
    ...(cli.approvalCommand === null ? {} : { approvalCommand: cli.approvalCommand }),
  };
  const sandbox: NonNullable<SettingsFile["sandbox"]> = {
    ...(cli.sandbox === null ? {} : { mode: cli.sandbox }),
    ...(cli.sandboxNetwork === null ? {} : { network: cli.sandboxNetwork }),
  };
  return {
    ...(Object.keys(permissions).length === 0 ? {} : { permissions }),
    ...(Object.keys(sandbox).length === 0 ? {} : { sandbox }),
    // --model and --provider are not a layer: with the files' model and provider they decide the provider
    // (provider_choice.ts), which must tell a model from the command line from one in the files.
  };
}

/**
 * The settings' rules as the policy takes them, their warnings added to `notices`. The rule parser, with the
 * pattern compilers, and the shell parser that reads Bash rules load only for a session that has rules.
 */
async function parseRules(sourced: readonly SourcedRule[], notices: string[]): Promise<Rule[]> {
  const [{ parseRule }] = await Promise.all([
    lazyImport<typeof import("../permissions/rules.ts")>(new URL("../permissions/rules.ts", import.meta.url)),
    loadShellParser(),
  ]);
  return sourced.flatMap((rule) => {
    const parsed = ruleOf(rule, parseRule);
    notices.push(...parsed.warnings);
    return parsed.rule === null ? [] : [parsed.rule];
  });
}

/** A settings rule as the policy takes it; a malformed one from the command line is a usage error. */
function ruleOf(
  sourced: SourcedRule,
  parseRule: typeof import("../permissions/rules.ts").parseRule,
): { rule: Rule | null; warnings: string[] } {
  const parsed = parseRule(sourced.rule);
  const where = sourced.path === null ? "" : ` in "${sourced.path}"`;
  if (!parsed.ok) {
    if (sourced.source === "cli") throw new UsageError(parsed.error);
    return { rule: null, warnings: [`${parsed.error}${where}; the rule is ignored`] };
  }
  const rule: Rule = {
    ...parsed.value,
    action: sourced.action,
    source: { layer: sourced.source, ...(sourced.path === null ? {} : { path: sourced.path }) },
  };
  return { rule, warnings: parsed.warnings.map((warning) => `${warning}${where}`) };
}

/** What the user should know about the workspace's own settings and its trust. */
async function trustNotices(settings: ResolvedSettings): Promise<string[]> {
  // Only a workspace with settings files has anything ignored: the screen's module loads for those alone.
  const notices = settings.ignored.length === 0 ? [] : settings.ignored.map(
    (await lazyImport<typeof import("../config/repository_screen.ts")>(
      new URL("../config/repository_screen.ts", import.meta.url),
    )).ignoredNotice,
  );
  if (settings.trustStatus === "changed" && !settings.trusted) {
    notices.push(
      "This workspace's settings files (or the scripts they run, or where their added directories lead) " +
        "changed since you trusted them, so they only tighten until you review them again: run mewcode trust",
    );
  }
  if (settings.ignored.some((item) => item.kind === "needs-trust")) {
    notices.push("To review what this workspace's settings would enable and trust them: mewcode trust");
  }
  return notices;
}
