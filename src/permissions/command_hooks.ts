/**
 * Command hooks from the settings, run on the session's events: the PreToolUse hooks the pipeline calls
 * before the permission gate, and a HookRunner for the other events.
 *
 * User hooks (your settings, the command line) run as you: `/bin/sh -c` in the workspace with your
 * environment but the provider's API key, and what they leave running is stopped when they end; one that
 * says `"sandbox": true` runs in the shell sandbox instead. A trusted repository's hooks run in the shell
 * sandbox (workspace-write, no network) through the injected runner, unless your own settings say
 * `"hooks": {"sandboxRepositoryHooks": false}`; with no sandbox, sandboxed hooks do not run at all. All get
 * MEWCODE_PROJECT_DIR (and CLAUDE_PROJECT_DIR, for scripts written for Claude Code) set to the workspace
 * root.
 *
 * Hooks of one event run one after another, in order (user hooks first): each PreToolUse hook sees the
 * input as the previous one left it.
 *
 * @module
 */
import { CommandScriptsBaseline } from "../config/command_scripts.ts";
import {
  type ConfiguredHook,
  configuredHooks,
  guardsItsScripts,
  type HookEvent,
  hookName,
  type HooksConfig,
} from "./hook_config.ts";
import {
  hookInput,
  type HookPayloads,
  type HookResult,
  type HookRunner,
  type HookRunReport,
  type HookSessionInfo,
  matchValue,
} from "./hook_events.ts";
import { interpretHookResult } from "./hook_output.ts";
import type { PreToolUseEvent, PreToolUseHook, PreToolUseOutcome } from "./hooks.ts";
import { type HostCommandRunner, type ProcessResult, runHostCommand } from "./host_command.ts";

/** Runs a command in the shell sandbox: `ShellSandbox.runCommand` fits. */
export type SandboxedCommandRunner = (
  command: string,
  options: { mode: "workspace-write"; stdin: string; timeoutMs: number; signal?: AbortSignal },
) => Promise<ProcessResult>;

/** What the hooks of a session are built from. */
export interface CommandHooksOptions {
  /** Hooks from the user's settings and the command line. */
  user: HooksConfig;
  /** Hooks from a trusted repository's settings. */
  repository: HooksConfig;
  /** Run repository hooks in the sandbox (the user's `hooks.sandboxRepositoryHooks`, default true). */
  sandboxRepositoryHooks: boolean;
  /** Real path of the workspace root: the hooks' working directory. */
  root: string;
  /** The user's environment, for hooks that run as the user. */
  env: Readonly<Record<string, string>>;
  /** The session, read at each run (its id may be known only after the hooks are built). */
  session: () => HookSessionInfo;
  /** Runs repository hooks sandboxed; null when the session has no working sandbox. */
  runSandboxed: SandboxedCommandRunner | null;
  /** Test seam: runs hooks as the user. Default runHostCommand. */
  runHost?: HostCommandRunner;
}

/** The command hooks of a session. */
export class CommandHooks implements HookRunner {
  #options: CommandHooksOptions;
  #hooks: ConfiguredHook[];
  #scripts: CommandScriptsBaseline | null;

  constructor(options: CommandHooksOptions) {
    this.#options = options;
    this.#hooks = configuredHooks(options);
    // Taken now, as the session starts: before the model's first call could change a script.
    const guarded = this.#hooks.filter((hook) => guardsItsScripts(hook, options.sandboxRepositoryHooks));
    this.#scripts = guarded.length === 0
      ? null
      : new CommandScriptsBaseline(options.root, guarded.map((hook) => hook.command));
  }

  /** Whether any hook is configured for `event`. */
  has(event: HookEvent): boolean {
    return this.#hooks.some((hook) => hook.event === event);
  }

  /** One PreToolUseHook per configured PreToolUse command, for the pipeline, in order. */
  preToolUseHooks(): PreToolUseHook[] {
    return this.#hooks.filter((hook) => hook.event === "PreToolUse").map((hook) => ({
      name: hookName(hook.command),
      run: (event, options) => this.#runPreToolUse(hook, event, options),
    }));
  }

  /** Runs every hook of `event` whose matcher matches, in order, and reports what they mean together. */
  async run<E extends HookEvent>(
    event: E,
    payload: HookPayloads[E],
    options: { signal?: AbortSignal } = {},
  ): Promise<HookRunReport> {
    const value = matchValue(event, payload);
    const results: HookResult[] = [];
    for (const hook of this.#hooks) {
      if (hook.event !== event || !hook.matches(value)) continue;
      if (options.signal?.aborted) break;
      results.push(await this.#runOne(hook, event, payload, options.signal));
    }
    return summarize(results);
  }

  async #runPreToolUse(
    hook: ConfiguredHook,
    event: PreToolUseEvent,
    options: { signal: AbortSignal },
  ): Promise<PreToolUseOutcome> {
    if (!hook.matches(event.toolName)) return { action: "continue" };
    const result = await this.#runOne(hook, "PreToolUse", {
      toolName: event.toolName,
      toolInput: event.input,
      toolUseId: event.callId,
    }, options.signal);
    if (result.status === "blocked") {
      return { action: "block", reason: result.blockReason ?? "the hook blocked the call" };
    }
    return {
      action: "continue",
      ...(result.updatedInput === null ? {} : { input: result.updatedInput }),
      ...(result.decision === null ? {} : { decision: result.decision }),
      ...(result.notices.length === 0 ? {} : { notices: result.notices }),
    };
  }

  async #runOne<E extends HookEvent>(
    hook: ConfiguredHook,
    event: E,
    payload: HookPayloads[E],
    signal: AbortSignal | undefined,
  ): Promise<HookResult> {
    const { root } = this.#options;
    const stdin = JSON.stringify(hookInput(event, payload, { ...this.#options.session(), cwd: root }));
    const identity = { name: hookName(hook.command), origin: hook.origin, timeoutMs: hook.timeoutMs };
    const signalOption = signal === undefined ? {} : { signal };
    let result: ProcessResult;
    const changed = guardsItsScripts(hook, this.#options.sandboxRepositoryHooks)
      ? await this.#scripts?.changed(hook.command) ?? null
      : null;
    if (changed !== null) {
      // Fails closed: a PreToolUse hook that cannot vouch for the call blocks it.
      result = event === "PreToolUse"
        ? {
          status: "exited",
          code: 2,
          stdout: "",
          stderr: `The hook ${identity.name}: ${changed}`,
          durationMs: 0,
        }
        : { status: "failed", message: changed };
    } else if (hook.sandbox || (hook.origin === "repository" && this.#options.sandboxRepositoryHooks)) {
      const runSandboxed = this.#options.runSandboxed;
      result = runSandboxed === null
        ? {
          status: "failed",
          message: hook.origin === "repository"
            ? "repository hooks run only in the shell sandbox, which is not available here " +
              '(set "hooks": {"sandboxRepositoryHooks": false} in your user settings to run them unsandboxed)'
            : 'this hook says "sandbox": true, and the shell sandbox is not available here',
        }
        : await runSandboxed(`${projectDirExports(root)}\n${hook.command}`, {
          mode: "workspace-write",
          stdin,
          timeoutMs: hook.timeoutMs,
          ...signalOption,
        });
    } else {
      const runHost = this.#options.runHost ?? runHostCommand;
      result = await runHost(hook.command, {
        cwd: root,
        env: { ...this.#options.env, MEWCODE_PROJECT_DIR: root, CLAUDE_PROJECT_DIR: root },
        stdin,
        timeoutMs: hook.timeoutMs,
        ...signalOption,
      });
    }
    return interpretHookResult(event, identity, result);
  }
}

/** What the results of one event's hooks mean together. */
function summarize(results: HookResult[]): HookRunReport {
  const blockers = results.filter((result) => result.blockReason !== null && result.status === "blocked");
  const stoppers = results.filter((result) => result.stopReason !== null);
  return {
    results,
    blocked: blockers.length === 0 ? null : {
      hooks: blockers.map((result) => result.hook),
      reason: blockers.map((result) => result.blockReason).join("\n"),
    },
    context: results.flatMap((result) => result.context),
    notices: results.flatMap((result) => result.notices),
    stop: stoppers.length === 0 ? null : {
      hooks: stoppers.map((result) => result.hook),
      reason: stoppers.map((result) => result.stopReason).join("\n"),
    },
  };
}

/** Shell lines that set the project directory variables inside the sandbox (its environment is fixed). */
function projectDirExports(root: string): string {
  const quoted = `'${root.replaceAll("'", `'"'"'`)}'`;
  return `MEWCODE_PROJECT_DIR=${quoted} CLAUDE_PROJECT_DIR=${quoted}; export MEWCODE_PROJECT_DIR CLAUDE_PROJECT_DIR`;
}
