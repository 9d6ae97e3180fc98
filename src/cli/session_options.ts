/**
 * What the command line and the settings files say about a session, shared by every command that opens
 * one: the flags become the highest settings layer, the files below them are merged with folder trust
 * applied (src/config/settings.ts), and the result is the session's options plus what the user should be
 * told (ignored files, settings a not-yet-trusted repository asked for, rules that can never match).
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { resolveMewcodeHome } from "../config/home.ts";
import { ignoredNotice } from "../config/repository_screen.ts";
import { type ResolvedSettings, resolveSettings, type SourcedRule } from "../config/settings.ts";
import type { SettingsFile } from "../config/settings_schema.ts";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "../permissions/approval_command.ts";
import { parseRule, type Rule } from "../permissions/rules.ts";
import type { SessionOptions } from "../session/session.ts";
import type { Workspace } from "../session/workspace.ts";
import { type CliOptions, DEFAULT_MODEL, UsageError } from "./args.ts";

/** A session's options, and the lines for stderr that explain what was (not) taken from the settings. */
export interface SessionSetup {
  options: SessionOptions;
  notices: string[];
  /** The merged settings, for commands that show them (`permissions`, `doctor`). */
  settings: ResolvedSettings;
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
  const rules = settings.rules.flatMap((sourced) => {
    const parsed = ruleOf(sourced);
    notices.push(...parsed.warnings);
    return parsed.rule === null ? [] : [parsed.rule];
  });
  notices.push(...trustNotices(settings));
  const approval = settings.approvalCommand;
  const options: SessionOptions = {
    workspace,
    env,
    model: settings.model?.value ?? DEFAULT_MODEL,
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
        timeoutMs: (settings.approvalTimeout?.value ?? DEFAULT_APPROVAL_TIMEOUT_MS / 1000) * 1000,
        // A trusted repository's approval command runs in the sandbox, like its hooks.
        sandboxed: approval.source === "project" || approval.source === "local",
      },
    }),
    limits: {
      ...(cli.sandboxMaxProcesses === null ? {} : { maxProcesses: cli.sandboxMaxProcesses }),
      ...(cli.sandboxMaxMemory === null ? {} : { maxMemoryBytes: cli.sandboxMaxMemory }),
    },
  };
  return { options, notices, settings };
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
    ...(cli.model === null ? {} : { model: cli.model }),
  };
}

/** A settings rule as the policy takes it; a malformed one from the command line is a usage error. */
function ruleOf(sourced: SourcedRule): { rule: Rule | null; warnings: string[] } {
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
function trustNotices(settings: ResolvedSettings): string[] {
  const notices = settings.ignored.map(ignoredNotice);
  if (settings.trustStatus === "changed" && !settings.trusted) {
    notices.push(
      "This workspace's settings files changed since you trusted them, so they only tighten until you " +
        "review them again: run mewcode trust",
    );
  }
  if (settings.ignored.some((item) => item.kind === "needs-trust")) {
    notices.push("To review what this workspace's settings would enable and trust them: mewcode trust");
  }
  return notices;
}
