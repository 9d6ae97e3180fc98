/**
 * The permission side of a session, wired from its options: the rule policy, the command hooks of every
 * event, and who answers an "ask" (the caller's approver, else the approval command, else no one). What
 * the hooks have to tell the user (a hook that failed or timed out) is collected for the session to report
 * as warnings.
 *
 * The hook runner and the approval command's module load only for a session whose settings have some
 * (`SessionPermissions.open`): most sessions have neither, and their first request waits for nothing. The
 * policy's own modules (how a call is described and evaluated: eleven modules, ~4.5 ms to load) load with
 * the first decision, or with `preparePolicy` once the model begins a call: never before the first request.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import { lazyImport } from "../common/lazy_import.ts";
import type { approvalCommandApprover } from "../permissions/approval_command.ts";
import type { CommandHooks } from "../permissions/command_hooks.ts";
import type { Approver } from "../permissions/decision.ts";
import type { HooksConfig } from "../permissions/hook_config.ts";
import type { HookPayloads, HookRunReport } from "../permissions/hook_events.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { RulePolicy } from "../permissions/policy.ts";
import type { Rule } from "../permissions/rules.ts";
import type { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import type { ProtectedPath } from "../tools/tool.ts";
import { loadShellParser } from "../permissions/shell_parser.ts";

/** The hooks of a session, as the settings give them. */
export interface SessionHooks {
  user: HooksConfig;
  repository: HooksConfig;
  sandboxRepositoryHooks: boolean;
}

/** The approval command of a session. */
export interface ApprovalCommand {
  command: string;
  timeoutMs: number;
  /** Run it in the shell sandbox (it came from a trusted repository). */
  sandboxed: boolean;
}

/** What the permission side is built from. */
export interface SessionPermissionOptions {
  mode: PermissionMode;
  rules: readonly Rule[];
  root: string;
  rootAliases: readonly string[];
  additionalDirectories: readonly string[];
  /**
   * What writes are asked about; null when the tool runtime gives them as it is built (`useProtections`,
   * a one-shot session's): no decision can be made before.
   */
  protectedPaths: readonly ProtectedPath[] | null;
  env: Readonly<Record<string, string>>;
  hooks: SessionHooks | null;
  /** The caller's approver (`mewcode tool` approves what the user typed); it wins over the command. */
  approver: Approver | null;
  approvalCommand: ApprovalCommand | null;
  /** The session, read when a hook or the approval command runs (known only once the session opened). */
  session: () => { sessionId: string; transcriptPath: string | null };
  /**
   * The shell sandbox repository hooks and commands run in: null before the tool runtime exists, a promise
   * while it loads (a session whose tools load with the first call).
   */
  sandbox: () => ShellSandbox | null | Promise<ShellSandbox>;
}

/** The modules a session's hooks and approval command need, loaded by `SessionPermissions.open`. */
export interface PermissionModules {
  CommandHooks?: typeof CommandHooks;
  approvalCommandApprover?: typeof approvalCommandApprover;
}

/** The permission side of a session. */
export class SessionPermissions {
  /** The policy the pipeline asks; it follows rule and mode changes made during the session. */
  readonly policy: RulePolicy;
  readonly approver: Approver | null;
  readonly #hooks: CommandHooks | null;
  readonly #notices: string[] = [];
  readonly #options: SessionPermissionOptions;
  /** Built from the mode and rules on the first decision after they changed. */
  #current: RulePolicy | null = null;
  #policyModule: Promise<typeof import("../permissions/policy.ts")> | null = null;
  /** The mode and rules now (the policy's getters read them). */
  readonly #state: { mode: PermissionMode; rules: readonly Rule[] };
  /** What writes are asked about (`useProtections`); null until known. */
  #protections: readonly ProtectedPath[] | null;

  /** Builds the permission side, loading the hook runner and the approval command only when configured. */
  static async open(options: SessionPermissionOptions): Promise<SessionPermissions> {
    const modules: PermissionModules = {};
    // The policy reads Bash rules with the shell parser (it loads the parser itself for Bash calls).
    if (options.rules.length > 0) await loadShellParser();
    if (options.hooks !== null && (hasHooks(options.hooks.user) || hasHooks(options.hooks.repository))) {
      modules.CommandHooks = (await lazyImport<typeof import("../permissions/command_hooks.ts")>(
        new URL("../permissions/command_hooks.ts", import.meta.url),
      )).CommandHooks;
    }
    if (options.approver === null && options.approvalCommand !== null) {
      modules.approvalCommandApprover =
        (await lazyImport<typeof import("../permissions/approval_command.ts")>(
          new URL("../permissions/approval_command.ts", import.meta.url),
        )).approvalCommandApprover;
    }
    return new SessionPermissions(options, modules);
  }

  /** Use `open`, which loads `modules` as the options need them; throws TypeError when one is missing. */
  constructor(options: SessionPermissionOptions, modules: PermissionModules) {
    this.#options = options;
    this.#protections = options.protectedPaths;
    const state = this.#state = { mode: options.mode, rules: options.rules };
    this.policy = {
      get mode() {
        return state.mode;
      },
      get rules() {
        return state.rules;
      },
      evaluate: async (request) => (await this.#policyNow()).evaluate(request),
      decide: async (request) => (await this.#policyNow()).decide(request),
    };
    const runSandboxed = async (
      command: string,
      run: { mode: "workspace-write"; stdin: string; timeoutMs: number; signal?: AbortSignal },
    ) => {
      const sandbox = await options.sandbox();
      if (sandbox === null) throw new Error("the shell sandbox is not running");
      return await sandbox.runCommand(command, run);
    };
    const hooks =
      options.hooks !== null && (hasHooks(options.hooks.user) || hasHooks(options.hooks.repository))
        ? options.hooks
        : null;
    if (hooks !== null && modules.CommandHooks === undefined) {
      throw new TypeError("SessionPermissions needs the CommandHooks module for the configured hooks");
    }
    this.#hooks = hooks === null || modules.CommandHooks === undefined ? null : new modules.CommandHooks({
      user: hooks.user,
      repository: hooks.repository,
      sandboxRepositoryHooks: hooks.sandboxRepositoryHooks,
      root: options.root,
      env: options.env,
      session: options.session,
      runSandboxed,
    });
    const command = options.approvalCommand;
    const approvalCommandApprover = modules.approvalCommandApprover;
    if (options.approver === null && command !== null && approvalCommandApprover === undefined) {
      throw new TypeError("SessionPermissions needs the approval command module for the approval command");
    }
    this.approver = options.approver ??
      (command === null || approvalCommandApprover === undefined ? null : approvalCommandApprover({
        command: command.command,
        cwd: options.root,
        env: options.env,
        sessionId: () => options.session().sessionId,
        timeoutMs: command.timeoutMs,
        ...(command.sandboxed
          ? { run: (text, run) => runSandboxed(text, { mode: "workspace-write", ...run }) }
          : {}),
      }));
  }

  /** The permission mode now. */
  get mode(): PermissionMode {
    return this.#state.mode;
  }

  /** Rules added during the session ("don't ask again", /permissions); they apply to the next decision. */
  addRules(rules: readonly Rule[]): void {
    this.#state.rules = [...rules, ...this.#state.rules];
    this.#current = null;
  }

  /** Removes rules (by text and action) added or loaded; returns how many were removed. */
  removeRules(matches: (rule: Rule) => boolean): number {
    const kept = this.#state.rules.filter((rule) => !matches(rule));
    const removed = this.#state.rules.length - kept.length;
    this.#state.rules = kept;
    this.#current = null;
    return removed;
  }

  /**
   * The protected paths writes are asked about from now on: the session's, with those the tool runtime
   * found when it was built (`ToolRuntime.protectedPaths`: git metadata where the layout puts it, the home's
   * code folders), so that those too are asked about and a rule naming one allows it, as for `.git`.
   */
  useProtections(paths: readonly ProtectedPath[]): void {
    this.#protections = paths;
    this.#current = null;
  }

  /** Switches the permission mode for the next decisions. */
  setMode(mode: PermissionMode): void {
    this.#state.mode = mode;
    this.#current = null;
  }

  /** Loads the policy's modules ahead of the first decision (a call the model began); never rejects. */
  preparePolicy(): void {
    void this.#loadPolicy().catch(() => {
      // The first decision reports it.
    });
  }

  #loadPolicy(): Promise<typeof import("../permissions/policy.ts")> {
    return this.#policyModule ??= lazyImport<typeof import("../permissions/policy.ts")>(
      new URL("../permissions/policy.ts", import.meta.url),
    );
  }

  /** The policy of the current mode and rules. */
  async #policyNow(): Promise<RulePolicy> {
    const { createPolicy } = await this.#loadPolicy();
    const options = this.#options;
    // Fail closed: a policy without the session's protections would let writes through that must be asked.
    if (this.#protections === null) {
      throw new TypeError("No permission decision before the session's protected paths are known");
    }
    return this.#current ??= createPolicy({
      mode: this.#state.mode,
      rules: this.#state.rules,
      root: options.root,
      rootAliases: options.rootAliases,
      home: options.env.HOME ?? "/",
      additionalDirectories: options.additionalDirectories,
      protectedPaths: this.#protections,
    });
  }

  /** The PreToolUse hooks for the pipeline; their notices are kept for the user. */
  preToolUseHooks(): PreToolUseHook[] {
    return (this.#hooks?.preToolUseHooks() ?? []).map((hook) => ({
      name: hook.name,
      run: async (event, options) => {
        const outcome = await hook.run(event, options);
        if (outcome.action === "continue") this.#notices.push(...(outcome.notices ?? []));
        return outcome;
      },
    }));
  }

  /** PostToolUse: runs after each call; returns what a blocking hook wants the model to know, or null. */
  async afterCall(call: ToolCall, input: unknown, result: CallResult): Promise<string | null> {
    if (this.#hooks === null || !this.#hooks.has("PostToolUse")) return null;
    const report = await this.#run("PostToolUse", {
      toolName: call.name,
      toolInput: input,
      toolUseId: call.id,
      toolResponse: { content: result.result.content, is_error: result.result.isError },
    });
    return report?.blocked
      ? `PostToolUse hook feedback (${report.blocked.hooks.join(", ")}): ${report.blocked.reason}`
      : null;
  }

  /**
   * UserPromptSubmit: the prompt as the model gets it (with the hooks' added context), or why the hooks
   * refused it.
   */
  async submitPrompt(prompt: string, signal: AbortSignal): Promise<{ prompt: string } | { refused: string }> {
    if (this.#hooks === null || !this.#hooks.has("UserPromptSubmit")) return { prompt };
    const report = await this.#run("UserPromptSubmit", { prompt }, signal);
    if (report?.blocked) {
      return { refused: `A UserPromptSubmit hook refused the prompt: ${report.blocked.reason}` };
    }
    if (report?.stop) {
      return { refused: `A UserPromptSubmit hook stopped the session: ${report.stop.reason}` };
    }
    return { prompt: withContext(prompt, report?.context ?? []) };
  }

  /** SessionStart: context the hooks add for the model (for the system prompt). */
  async sessionStart(source: "startup" | "resume", signal: AbortSignal): Promise<string[]> {
    if (this.#hooks === null || !this.#hooks.has("SessionStart")) return [];
    return (await this.#run("SessionStart", { source }, signal))?.context ?? [];
  }

  /**
   * Stop: called when the agent would end its turn; returns what the model must do before it may stop (a
   * hook blocked the stop), or null to stop.
   */
  async beforeStop(active: boolean, signal: AbortSignal): Promise<string | null> {
    if (this.#hooks === null || !this.#hooks.has("Stop")) return null;
    const report = await this.#run("Stop", { stopHookActive: active }, signal);
    if (report === null || report.stop !== null || report.blocked === null) return null;
    return report.blocked.reason;
  }

  /** What the hooks had to tell the user since the last call; emptied. */
  takeNotices(): string[] {
    return this.#notices.splice(0);
  }

  async #run<E extends "PostToolUse" | "UserPromptSubmit" | "SessionStart" | "Stop">(
    event: E,
    payload: HookPayloads[E],
    signal?: AbortSignal,
  ): Promise<HookRunReport | null> {
    try {
      const report = await this.#hooks!.run(event, payload, signal === undefined ? {} : { signal });
      this.#notices.push(...report.notices);
      return report;
    } catch (error) {
      this.#notices.push(`The ${event} hooks could not run: ${describeError(error)}`);
      return null;
    }
  }
}

/** Whether a hooks configuration has any hook at all. */
function hasHooks(config: HooksConfig): boolean {
  return Object.values(config).some((groups) => groups !== undefined && groups.length > 0);
}

function withContext(prompt: string, context: readonly string[]): string {
  const text = context.filter((line) => line.trim() !== "");
  if (text.length === 0) return prompt;
  return `${prompt}\n\n<hook-context>\n${text.join("\n")}\n</hook-context>`;
}
