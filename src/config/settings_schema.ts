/**
 * The settings file's shape: one zod declaration gives the TypeScript types, the validation (with the path
 * of each bad key) and the JSON Schema shipped in `schema/settings.schema.json` for editors.
 *
 * ```json
 * {
 *   "$schema": "../schema/settings.schema.json",
 *   "permissions": { "allow": ["Bash(npm test *)"], "deny": ["EditFile(.env)"], "defaultMode": "acceptEdits" },
 *   "sandbox": { "mode": "workspace-write", "network": false },
 *   "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./check.sh" }] }] }
 * }
 * ```
 *
 * The lists of names (settings_names.ts) repeat names from src/permissions/ and src/tools/ on purpose: src/config/ imports only
 * src/common/ (see the README's Architecture); tests check that the copies agree.
 *
 * @module
 */
import { z } from "zod";
import { SETTINGS_PERMISSION_MODES, SETTINGS_PROVIDERS, SETTINGS_SANDBOX_MODES } from "./settings_names.ts";

export {
  SETTINGS_HOOK_EVENTS,
  SETTINGS_PERMISSION_MODES,
  SETTINGS_PROVIDERS,
  SETTINGS_SANDBOX_MODES,
  type SettingsHookEvent,
  type SettingsPermissionMode,
  type SettingsProvider,
  type SettingsSandboxMode,
} from "./settings_names.ts";

/** A rule: a tool name, optionally followed by a specifier in parentheses. */
const RULE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*(\([\s\S]*\))?$/;
/** An environment variable name. */
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The longest one variable of `env` may be, as the `NAME=value` string a program receives, in UTF-8 bytes.
 * Linux refuses to start a program given one environment string (or argument) over 128 KiB
 * (MAX_ARG_STRLEN): the error, E2BIG, came from bubblewrap's start-up, so every Bash call failed with advice
 * to install bubblewrap or turn the sandbox off. A quarter of that leaves room for the rest.
 */
export const MAX_ENV_VARIABLE_BYTES = 32 * 1024;
/**
 * The most one file's `env` may hold in all, in bytes: every argument and variable of a program together
 * must fit in a few MB (a quarter of the stack limit, 2 MiB by default), with the allowlisted variables
 * beside them (and `TMPDIR` or `LD_*` twice, as bubblewrap's `--setenv` arguments too); three settings files at
 * this bound stay well within it.
 */
export const MAX_ENV_TOTAL_BYTES = 128 * 1024;

/** Refuses an `env` a program could not be started with (see MAX_ENV_VARIABLE_BYTES), naming the variable. */
function checkEnvSize(env: Record<string, string>, context: z.RefinementCtx): void {
  const encoder = new TextEncoder();
  let total = 0;
  let refused = false;
  for (const [name, value] of Object.entries(env)) {
    const bytes = encoder.encode(`${name}=${value}`).length;
    total += bytes;
    if (bytes <= MAX_ENV_VARIABLE_BYTES) continue;
    refused = true;
    context.addIssue({
      code: "custom",
      path: [name],
      message: `${bytes} bytes (as ${name}=…), over the ${MAX_ENV_VARIABLE_BYTES} one variable may have: ` +
        "Linux refuses to start a command whose environment holds a string over 128 KiB, so every Bash " +
        "call would fail; put the value in a file and set the variable to its path",
    });
  }
  if (!refused && total > MAX_ENV_TOTAL_BYTES) {
    context.addIssue({
      code: "custom",
      message: `${total} bytes in all (as NAME=value), over the ${MAX_ENV_TOTAL_BYTES} one file's env may ` +
        "hold: Linux starts a command only with arguments and environment within a few MB together, and " +
        "Bash calls would fail beyond; put long values in files and set the variables to their paths",
    });
  }
}

/** Whether a hook matcher compiles the way hooks use it: anchored at both ends. */
function compiles(pattern: string): boolean {
  try {
    new RegExp(`^(?:${pattern})$`);
    return true;
  } catch {
    return false;
  }
}

const RuleList = z.array(
  z.string().regex(RULE_PATTERN, 'Expected a rule such as "Bash", "Bash(npm test *)" or "EditFile(src/**)"')
    .describe('A permission rule: a tool name, optionally with a specifier, e.g. "Bash(npm test *)"'),
);

const CommandHook = z.object({
  type: z.literal("command").describe('The kind of hook; only "command" exists'),
  command: z.string().min(1).describe(
    "A shell command (run with /bin/sh -c in the workspace); the event arrives as JSON on its standard input",
  ),
  timeout: z.number().positive().max(3600).optional().describe(
    "Seconds before the command is stopped (default 60); a stopped hook is a non-blocking error",
  ),
  sandbox: z.boolean().optional().describe(
    "Run the command in the shell sandbox (the workspace writable, no network, your secrets hidden): for " +
      "a hook that runs the repository's code, such as a formatter that loads the project's config file",
  ),
}).strict();

const MatcherGroup = z.object({
  matcher: z.string().refine(compiles, "Expected a valid regular expression").optional().describe(
    "Which tool names (or, for SessionStart, which sources) the hooks run for: a regular expression that " +
      'must match the whole name, such as "Bash" or "EditFile|WriteFile"; empty or "*" for all',
  ),
  hooks: z.array(CommandHook).describe("The commands to run, in order"),
}).strict();

const EventHooks = (event: string) => z.array(MatcherGroup).optional().describe(`Hooks that run on ${event}`);

/** The settings file: `$MEWCODE_HOME/settings.json`, `.mewcode/settings.json`, `.mewcode/settings.local.json`. */
export const SettingsFileSchema = z.object({
  $schema: z.string().optional().describe("The JSON Schema of this file, for editors"),
  permissions: z.object({
    allow: RuleList.optional().describe("Calls that run without asking"),
    deny: RuleList.optional().describe("Calls that never run; checked before ask and allow"),
    ask: RuleList.optional().describe("Calls that always need approval, even when an allow rule matches"),
    defaultMode: z.enum(SETTINGS_PERMISSION_MODES).optional().describe(
      "The permission mode when --permission-mode is not given",
    ),
    additionalDirectories: z.array(z.string().min(1)).optional().describe(
      "Directories outside the workspace the tools may use: absolute, or relative to the workspace",
    ),
    approvalCommand: z.string().min(1).optional().describe(
      "A command that answers each permission question: it reads the question as JSON on standard input " +
        'and prints {"decision": "allow" | "deny", "reason": "…"}',
    ),
    approvalTimeout: z.number().positive().max(3600).optional().describe(
      "Seconds the approval command may take before the call is denied (default 60)",
    ),
  }).strict().optional().describe("Permission rules and mode"),
  sandbox: z.object({
    mode: z.enum(SETTINGS_SANDBOX_MODES).optional().describe("The shell sandbox, as --sandbox"),
    network: z.boolean().optional().describe("Let the sandboxed shell use the network, as --sandbox-network"),
  }).strict().optional().describe("The shell sandbox"),
  model: z.string().min(1).optional().describe("The model, as --model"),
  provider: z.enum(SETTINGS_PROVIDERS).optional().describe(
    "The model provider, as --provider: anthropic, openai (any OpenAI-compatible API) or ollama; read " +
      "only from your user settings",
  ),
  baseUrl: z.string().regex(/^https?:\/\/\S+$/, "Expected an http:// or https:// URL").optional().describe(
    "The provider's API endpoint, e.g. http://127.0.0.1:11434/v1 (over OPENAI_BASE_URL or " +
      "ANTHROPIC_BASE_URL); applies to the provider these settings choose; read only from your user settings",
  ),
  apiKeyEnv: z.string().regex(ENV_NAME_PATTERN, "Expected an environment variable name").optional().describe(
    "The environment variable that holds the provider's API key, e.g. OPENROUTER_API_KEY (instead of " +
      "OPENAI_API_KEY or ANTHROPIC_API_KEY); read only from your user settings",
  ),
  hooks: z.object({
    PreToolUse: EventHooks("PreToolUse, before the permission check: they may block or change a call"),
    PostToolUse: EventHooks("PostToolUse, after a call completed"),
    UserPromptSubmit: EventHooks("UserPromptSubmit, before a prompt reaches the model"),
    Stop: EventHooks("Stop, when the agent finishes its turn"),
    SessionStart: EventHooks("SessionStart, when a session starts or resumes"),
    sandboxRepositoryHooks: z.boolean().optional().describe(
      "Run a trusted repository's hooks inside the shell sandbox (default true); read only from your " +
        "user settings",
    ),
  }).strict().optional().describe("Commands that run on events, with Claude Code's contract"),
  env: z.record(
    z.string().regex(ENV_NAME_PATTERN, "Expected an environment variable name"),
    z.string(),
  ).superRefine(checkEnvSize).optional().describe("Environment variables for the tools"),
}).strict().meta({
  title: "mewcode settings",
  description: "Settings of mewcode, the terminal coding agent",
});

/** A parsed settings file. */
export type SettingsFile = z.infer<typeof SettingsFileSchema>;
/** The `hooks` object of a settings file. */
export type SettingsHooks = NonNullable<SettingsFile["hooks"]>;
/** The hooks of one event: matcher groups. */
export type SettingsMatcherGroup = z.infer<typeof MatcherGroup>;

/** The JSON Schema of the settings file, as committed in `schema/settings.schema.json`. */
export function settingsJsonSchemaText(): string {
  const schema = z.toJSONSchema(SettingsFileSchema, { target: "draft-2020-12", io: "input" });
  return `${JSON.stringify(schema, null, 2)}\n`;
}
