/**
 * Command hooks as the settings describe them (Claude Code's shape), and which hooks an event runs:
 *
 * ```json
 * { "PreToolUse": [{ "matcher": "Bash|EditFile", "hooks": [{ "type": "command", "command": "./check.sh", "timeout": 60 }] }] }
 * ```
 *
 * @module
 */

/** The hook events, with Claude Code's names (they are the keys of the settings' `hooks` object). */
export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"] as const;
/** One of HOOK_EVENTS. */
export type HookEvent = typeof HOOK_EVENTS[number];

/** One command hook. */
export interface CommandHookConfig {
  type: "command";
  /** Run with `/bin/sh -c` in the workspace. */
  command: string;
  /** Seconds; default DEFAULT_HOOK_TIMEOUT_SECONDS. */
  timeout?: number | undefined;
  /** Run in the shell sandbox even as a user hook (a repository's hooks run there anyway). */
  sandbox?: boolean | undefined;
}

/** Hooks that run when the matcher matches. */
export interface HookMatcherGroup {
  /** A regular expression the whole tool name (SessionStart: the source) must match; empty or "*": all. */
  matcher?: string | undefined;
  hooks: readonly CommandHookConfig[];
}

/** Hooks by event. */
export type HooksConfig = { readonly [E in HookEvent]?: readonly HookMatcherGroup[] | undefined };

/** Where a hook came from: it decides how the hook runs. */
export type HookOrigin = "user" | "repository";

/** Seconds a hook may run before it is stopped. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;

/** A configured hook, ready to run. */
export interface ConfiguredHook {
  event: HookEvent;
  origin: HookOrigin;
  command: string;
  timeoutMs: number;
  /** The hook asked for the shell sandbox (`"sandbox": true`). */
  sandbox: boolean;
  /** Whether the hook runs for a tool name (or a SessionStart source); always true for the other events. */
  matches(value: string | null): boolean;
}

/** Flattens the hooks of both origins, user hooks first, each with its compiled matcher. */
export function configuredHooks(config: { user: HooksConfig; repository: HooksConfig }): ConfiguredHook[] {
  const hooks: ConfiguredHook[] = [];
  for (const origin of ["user", "repository"] as const) {
    for (const event of HOOK_EVENTS) {
      for (const group of config[origin][event] ?? []) {
        const matches = compileMatcher(group.matcher);
        for (const hook of group.hooks) {
          hooks.push({
            event,
            origin,
            command: hook.command,
            timeoutMs: Math.round((hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS) * 1000),
            sandbox: hook.sandbox === true,
            matches,
          });
        }
      }
    }
  }
  return hooks;
}

/**
 * A matcher as a test: empty, missing or "*" matches everything; otherwise a regular expression that must
 * match the whole value ("Bash" does not match "BashOutput"). A pattern that does not compile (the
 * settings schema rejects those) matches only itself, literally.
 */
export function compileMatcher(matcher: string | undefined): (value: string | null) => boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return () => true;
  let pattern: RegExp | null = null;
  try {
    pattern = new RegExp(`^(?:${matcher})$`);
  } catch {
    pattern = null;
  }
  return (value) => value === null || (pattern === null ? value === matcher : pattern.test(value));
}

/** A hook's name in messages: its command, on one line, shortened. */
export function hookName(command: string): string {
  const line = command.trim().replace(/\s+/g, " ");
  return JSON.stringify(line.length > 60 ? `${line.slice(0, 57)}...` : line);
}

/**
 * Whether what a hook runs in the workspace must stay as it was when the session started (its scripts are
 * protected paths, and it does not run once they changed: src/config/command_scripts.ts): a hook that runs
 * as the user, whose scripts would run outside any sandbox; and a PreToolUse hook, which decides the model's
 * calls wherever it runs. Any other hook in the shell sandbox can do no more than a Bash call, so the folder
 * it changes to (`cd web && npx prettier --write .`) stays the model's to edit.
 */
export function guardsItsScripts(
  hook: Pick<ConfiguredHook, "event" | "origin" | "sandbox">,
  sandboxRepositoryHooks: boolean,
): boolean {
  const sandboxed = hook.sandbox || (hook.origin === "repository" && sandboxRepositoryHooks);
  return !sandboxed || hook.event === "PreToolUse";
}

/**
 * The command of every hook of a config, by event (the settings' `hooks` object too, whose other keys, such
 * as `sandboxRepositoryHooks`, hold no groups).
 */
export function hookCommands(config: object | undefined): string[] {
  if (config === undefined) return [];
  return Object.values(config).flatMap((groups) =>
    Array.isArray(groups)
      ? (groups as readonly HookMatcherGroup[]).flatMap((group) => group.hooks.map((hook) => hook.command))
      : []
  );
}
