/**
 * The session: the one place that wires the parts for every front end (one-shot, the terminal session,
 * resume, doctor, `mewcode tool`). It builds the tool runtime (registry, shell sandbox, workers,
 * pipeline), the permission policy, the transcript and, on the first run, the provider; it runs prompts as
 * AgentEvent streams, records them in the transcript, and keeps the conversation between runs.
 *
 * A one-shot session (headless, talking to a model) sends its first request before any tool code loads:
 * it offers the tools from their catalog (src/tools/catalog.ts), leaves `git status` out of the prompt,
 * builds the tool runtime once the model's response begins, and starts each worker when a call to its
 * tool begins. Every other session builds the runtime when it opens.
 *
 * ```ts
 * await using session = await openSession({ workspace, env, model, … });
 * for await (const event of session.run("why does the build fail?", { signal })) render(event);
 * for await (const event of session.compact({ signal })) render(event); // `/compact`
 * ```
 *
 * Runs compact the conversation by themselves once it passes 85 % of the model's context window
 * (src/llm/models.ts); a model whose window is not known there is never compacted automatically unless
 * `compaction.contextWindow` or `compaction.thresholdTokens` says when.
 *
 * @module
 */
import { realPathSyncOrNull } from "../common/fs.ts";
import { lazyImport } from "../common/lazy_import.ts";
import { join, resolve } from "../common/path.ts";
import type { CompactionResult } from "../agent/compaction.ts";
import type { AgentEvent } from "../agent/events.ts";
import type { AnswerContract } from "../agent/loop.ts";
import { projectDir, resolveMewcodeHome } from "../config/home.ts";
import {
  AdditionalDirectoryError,
  checkAdditionalRoots,
  resolveAdditionalDirectories,
} from "../execution/additional_roots.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import type { ProfileFinding } from "../execution/profile_checks.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import type { ExecutorKind, ToolRuntime } from "../execution/runtime.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { createProvider, providerConfigFromEnv, type ProviderEndpoint } from "../llm/create_provider.ts";
import type { Message, Provider } from "../llm/provider.ts";
import type { Approver } from "../permissions/decision.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import { configuredHooks, guardsItsScripts } from "../permissions/hook_config.ts";
import type { Rule } from "../permissions/rules.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import type { ResourceLimits } from "../sandbox/limits.ts";
import type { ProtectedPath, SandboxMode, ToolInfo } from "../tools/tool.ts";
import { gatherPromptContext } from "./repo_context.ts";
import { type ApprovalCommand, type SessionHooks, SessionPermissions } from "./session_permissions.ts";
import { LazyRuntime } from "./lazy_runtime.ts";
import {
  compactionThreshold,
  DEFAULT_COMPACTION_RATIO,
  DEFAULT_KEEP_RECENT_TURNS,
  type EarlyContext,
  OpenSession,
  SESSION_FORMAT_VERSION,
} from "./open_session.ts";
import { Transcript, type TranscriptStamp } from "./transcript.ts";
import type { Workspace } from "./workspace.ts";

export type { CompactionResult, ExecutorKind, HelperPaths, ProfileFinding, Provider, SandboxMode };
export { AdditionalDirectoryError };

export { compactionThreshold, DEFAULT_COMPACTION_RATIO, DEFAULT_KEEP_RECENT_TURNS, SESSION_FORMAT_VERSION };

/** When the session compacts its conversation (see the module doc). */
export interface CompactionOptions {
  /** The share of the context window past which a run compacts; default DEFAULT_COMPACTION_RATIO. */
  thresholdRatio?: number;
  /** The model's context window in tokens, in place of src/llm/models.ts's (which knows only Claude models). */
  contextWindow?: number;
  /** The threshold in tokens, in place of the ratio (tests force a low one); null: never automatically. */
  thresholdTokens?: number | null;
  /** The most recent model turns kept verbatim; default DEFAULT_KEEP_RECENT_TURNS. */
  keepRecentTurns?: number;
}

/** What a session is opened with. */
export interface SessionOptions {
  workspace: Workspace;
  /** The environment: the API key and endpoint, MEWCODE_HOME, HOME and the shell's allowlist. */
  env: Record<string, string>;
  model: string;
  maxTokens: number;
  /** The most model requests per run; null for no limit. */
  maxTurns: number | null;
  permissionMode: PermissionMode;
  /** The permission rules of every settings layer. */
  rules?: readonly Rule[];
  /** Directories outside the workspace the tools may use by the same rules (`--add-dir`). */
  additionalDirectories?: readonly string[];
  /** Variables the settings set for the tools' environment. */
  toolEnv?: Readonly<Record<string, string>>;
  /** Command hooks from the settings. */
  hooks?: SessionHooks;
  /**
   * Sees each call once its hooks have passed, before the permission gate and before it runs (the
   * interactive session keeps the text of a file a WriteFile or EditFile is about to change, for its diff).
   */
  observeCall?: (call: { id: string; name: string; input: unknown }) => Promise<void>;
  /** Answers "ask" decisions when no `approver` is given (`--approval-command`). */
  approvalCommand?: ApprovalCommand;
  /** Offer no writers and no shell. */
  readOnly: boolean;
  sandbox: SandboxMode;
  sandboxNetwork: boolean;
  strictLinks: boolean;
  /** The shell's resource limits; unset fields take the defaults. */
  limits?: Partial<ResourceLimits>;
  /**
   * Default: built from the environment on the first run (so commands that never run need no API key);
   * its configuration (the API key) is checked when the session opens.
   */
  provider?: Provider;
  /** Which provider to build, and the settings that say where its key and endpoint are; anthropic by default. */
  providerEndpoint?: ProviderEndpoint;
  /** Whether the session will talk to a model: then a missing API key fails `openSession` at once. */
  needsModel?: boolean;
  /** Where tools run; default "worker" (the sandbox). Unit tests use "direct". */
  executor?: ExecutorKind;
  /** Write a transcript; default true. */
  persist?: boolean;
  /** The id of a new session (a random UUID by default); opening fails when that session exists. */
  sessionId?: string;
  /**
   * Continue a session: its id and its conversation (see load_session.ts; `contextTokens` as it reports,
   * so the first run knows whether to compact); its transcript is appended to.
   */
  resume?: {
    id: string;
    messages: readonly Message[];
    contextTokens?: number | null;
    /** What the transcript was when `messages` were read from it: opening fails if another run wrote to it. */
    stamp?: TranscriptStamp;
  };
  /** When runs compact the conversation; the defaults of CompactionOptions when absent. */
  compaction?: CompactionOptions;
  /** Replace mewcode's system prompt, and add text to its end. */
  systemPrompt?: { replace?: string; append?: string };
  /** No one is at the terminal: the system prompt says so (no questions back, nothing can be approved). */
  headless?: boolean;
  /** No model request starts once a run has cost this many US dollars; needs a priced model. */
  maxBudgetUsd?: number | null;
  /** Answers "ask" decisions; without one (headless), "ask" is a denial. */
  approver?: Approver;
  /** Whether writers require a prior read of an existing file; default true (false for calls a person typed). */
  requireRead?: boolean;
  /** What writers refuse; default PROTECTED_PATHS ([] for calls a person typed). */
  protectedPaths?: readonly ProtectedPath[];
  /** Test seam: the helper programs of the shell sandbox. */
  helpers?: HelperPaths;
}

/** One run's options. */
export interface RunOptions {
  signal: AbortSignal;
  /** The answer must be given through this tool (structured output); see runAgent. */
  answer?: AnswerContract;
  /**
   * Someone watches the run's progress live (a status line on a terminal): its first events come as soon as
   * its first request is sent. Otherwise a one-shot session's first run yields nothing until the model's
   * response has begun, so that loading the agent loop cannot hold that request back (`StartedRequest`).
   */
  watched?: boolean;
}

/** An open session. Close it (or `await using`) to stop its workers and close its transcript. */
export interface Session extends AsyncDisposable {
  readonly id: string;
  /** The transcript file, or null when the session is not persisted. */
  readonly transcriptPath: string | null;
  /** The tools this session has (enabled by its options): described, their code loaded or not. */
  readonly catalog: ToolRegistry<ToolInfo>;
  /** The tools offered to the model now: the catalog's but those a deny rule names whole (`Bash`). */
  offeredTools(): ToolInfo[];
  /** The tool side (registry, pipeline, shell sandbox), built now if it has not been. */
  toolRuntime(): Promise<ToolRuntime>;
  /** Whether the tool side has been built or is being built (a one-shot session's, once the model answers). */
  readonly toolsStarted: boolean;
  /** The permission side: the live policy (rules and mode can change during the session), hooks, approver. */
  readonly permissions: SessionPermissions;
  /** The conversation so far. */
  readonly messages: Message[];
  /** The model of the next request. */
  readonly model: string;
  /** Uses another model (of the same provider) from the next request on (`/model`). */
  setModel(model: string): void;
  /**
   * Runs one prompt to the end of the agent's turn; every event is recorded in the transcript. The first
   * run reads the repository's state and memory files for the system prompt (kept for the session, so the
   * prompt cache stays valid).
   */
  run(prompt: string, options: RunOptions): AsyncGenerator<AgentEvent>;
  /**
   * Compacts the conversation now (`/compact`): the older turns are replaced by a summary the model writes,
   * the most recent ones kept verbatim. Its events are recorded like a run's; nothing to compact, a failure
   * or an interruption is a `warning` event and leaves the conversation as it was. Not while a run goes on.
   */
  compact(options: { signal: AbortSignal }): AsyncGenerator<AgentEvent, CompactionResult>;
  /** Runs one tool call through the whole pipeline, outside any model turn (`mewcode tool`). */
  runTool(call: ToolCall, options: { signal: AbortSignal }): Promise<CallResult>;
  /** The end-of-session checks (git metadata that gained hooks or commands): lines for the user. */
  finish(): Promise<string[]>;
  /** Starts one worker per permission profile and reports what Deno enforces (`mewcode doctor`). */
  checkWorkers(): Promise<ProfileFinding[]>;
  close(): Promise<void>;
}

/** Opens a session: the tool runtime, the transcript (unless `persist` is false) and its first record. */
export async function openSession(options: SessionOptions): Promise<Session> {
  const { workspace, env } = options;
  // Before anything is built or written: settings that cannot work, a run without an API key.
  compactionThreshold(options.model, options.compaction ?? {});
  let provider: Promise<Provider> | null = null;
  if (options.needsModel && options.provider === undefined) {
    // Its module loads while the sandbox is checked and the prompt's context is gathered.
    provider = createProvider(providerConfigFromEnv({ get: (name) => env[name] }, options.providerEndpoint));
    provider.catch(() => {}); // Reported by the first run, which awaits it.
  }
  let runtime: LazyRuntime | null = null;
  const identity = {
    sessionId: options.resume?.id ?? options.sessionId ?? "",
    transcriptPath: null as string | null,
  };
  // A one-shot session builds its tools once the model answers (`OpenSession#expect`); every other one now.
  const oneShot = options.needsModel === true && options.headless === true;
  // A one-shot session gathers its protected paths with its tools: nothing can decide on a write before.
  const protectedPaths = oneShot ? null : await sessionProtectedPaths(options);
  const permissions = await SessionPermissions.open({
    mode: options.permissionMode,
    rules: options.rules ?? [],
    root: workspace.root,
    rootAliases: workspace.aliases,
    additionalDirectories: options.additionalDirectories ?? [],
    protectedPaths,
    // Hooks and the approval command that run as the user get everything but the provider's API key.
    env: withoutApiKeys(env, options.providerEndpoint?.apiKeyEnv ?? null),
    hooks: options.hooks ?? null,
    approver: options.approver ?? null,
    approvalCommand: options.approvalCommand ?? null,
    session: () => identity,
    sandbox: () => runtime?.sandbox() ?? null,
  });
  const excludedPaths = stateFolders(env);
  // Real paths, checked here (never mewcode's state folder, never "/"), and by the runtime again.
  const additionalRoots = await checkAdditionalRoots(
    await resolveAdditionalDirectories(options.additionalDirectories ?? [], workspace.root),
    { root: workspace.root, excludedPaths },
  );
  // Grep's walks outlive the process with the session's other state (`persist: false` keeps nothing).
  const walkStore = options.persist ?? true ? await projectFolder(env, workspace.root, "walks") : null;
  // What a call made of a protected path that was to stay missing is kept there (the user may have made it).
  const setAsideIn = options.persist ?? true ? await projectFolder(env, workspace.root, "set-aside") : null;
  runtime = new LazyRuntime({
    root: workspace.root,
    rootAliases: workspace.aliases,
    additionalRoots,
    excludedPaths,
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    policy: permissions.policy,
    hooks: [...permissions.preToolUseHooks(), ...observerHook(options.observeCall)],
    afterCall: (call, input, result) => permissions.afterCall(call, input, result),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    env,
    ...(options.toolEnv === undefined ? {} : { toolEnv: options.toolEnv }),
    ...(options.executor === undefined ? {} : { executor: options.executor }),
    ...(permissions.approver === null ? {} : { approver: permissions.approver }),
    ...(options.requireRead === undefined ? {} : { requireRead: options.requireRead }),
    ...(protectedPaths === null ? { protections: () => sessionProtectedPaths(options) } : { protectedPaths }),
    ...(options.helpers === undefined ? {} : { helpers: options.helpers }),
    // A session that talks to a model checks the shell sandbox with its first use (its git status, or the
    // first Bash call), not before the first request; doctor and `mewcode tool` check it at once.
    ...(options.needsModel ? { deferShellCheck: true } : {}),
    ...(walkStore === null ? {} : { walkStore }),
    ...(setAsideIn === null ? {} : { setAsideIn }),
    onLoad: (built) => permissions.useProtections(built.protectedPaths),
  });
  if (!oneShot) await runtime.load();
  // A headless session runs its prompt at once: read the repository while the transcript is created.
  const context = options.needsModel && options.headless ? earlyContext(options, runtime) : null;
  let transcript: Transcript | null = null;
  try {
    if (options.persist ?? true) {
      const id = options.resume?.id ?? options.sessionId;
      transcript = await Transcript.create({
        home: resolveMewcodeHome(env),
        root: workspace.root,
        ...(id === undefined ? {} : { sessionId: id }),
        // A new session's id must be new; a continued one appends to its own file, as it was read.
        exclusive: options.resume === undefined,
        ...(options.resume?.stamp === undefined ? {} : { expected: options.resume.stamp }),
      });
    }
  } catch (error) {
    context?.controller.abort();
    await context?.promise;
    await runtime.close();
    throw error;
  }
  const session = new OpenSession(options, runtime, transcript, permissions, { provider, context });
  identity.sessionId = session.id;
  identity.transcriptPath = session.transcriptPath;
  return session;
}

function earlyContext(options: SessionOptions, runtime: LazyRuntime): EarlyContext {
  const controller = new AbortController();
  const promise = gatherPromptContext({
    root: options.workspace.root,
    home: resolveMewcodeHome(options.env),
    // A one-shot session does not wait for a sandbox to start before its first request: no git status.
    sandbox: runtime.loaded?.sandbox ?? null,
    signal: controller.signal,
  });
  return { promise, controller };
}

/**
 * The paths a session protects before its runtime adds what it finds (the repository's git layout, the home's
 * code: `runtimeProtections`): the given ones (default PROTECTED_PATHS), and the workspace scripts a hook or
 * the approval command runs, protected like `.mewcode`.
 */
export async function sessionProtectedPaths(
  options: Pick<SessionOptions, "workspace" | "protectedPaths" | "hooks" | "approvalCommand">,
): Promise<ProtectedPath[]> {
  const commands = [
    ...guardedHookCommands(options.hooks),
    ...(options.approvalCommand === undefined || options.approvalCommand === null
      ? []
      : [options.approvalCommand.command]),
  ];
  const [given, scripts] = await Promise.all([
    options.protectedPaths ?? lazyImport<typeof import("../tools/protected_paths.ts")>(
      new URL("../tools/protected_paths.ts", import.meta.url),
    ).then((module) => module.PROTECTED_PATHS),
    commands.length === 0 ? [] : lazyImport<typeof import("../config/command_scripts.ts")>(
      new URL("../config/command_scripts.ts", import.meta.url),
    ).then((module) => module.commandScriptProtections(options.workspace.root, commands)),
  ]);
  return [...given, ...scripts];
}

/** The commands of the hooks whose scripts must stay as they are (`guardsItsScripts`). */
function guardedHookCommands(hooks: SessionHooks | undefined): string[] {
  if (hooks === undefined) return [];
  return configuredHooks(hooks)
    .filter((hook) => guardsItsScripts(hook, hooks.sandboxRepositoryHooks))
    .map((hook) => hook.command);
}

/** The call observer as a hook that only looks: it never blocks, changes nor decides. */
function observerHook(
  observe: SessionOptions["observeCall"],
): PreToolUseHook[] {
  if (observe === undefined) return [];
  return [{
    name: "mewcode",
    run: async (event) => {
      await observe({ id: event.callId, name: event.toolName, input: event.input });
      return { action: "continue" };
    },
  }];
}

/** A folder of the workspace's state (`$MEWCODE_HOME/projects/<slug>/<name>`); null without a home. */
async function projectFolder(
  env: Record<string, string>,
  root: string,
  name: string,
): Promise<string | null> {
  try {
    return join(await projectDir(resolve(resolveMewcodeHome(env)), root), name);
  } catch {
    return null;
  }
}

/**
 * mewcode's state folder (`$MEWCODE_HOME`, other sessions' transcripts), which the tools treat as outside
 * the workspace even when the workspace contains it: its real path, and the path as named when they differ.
 */
/** The variables that hold a provider's API key: the default ones, and the one the settings name. */
const API_KEY_VARIABLES = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"];

/**
 * `env` without the provider's API keys: a command configured to run as the user (a formatter hook, an
 * approval script) may load the repository's code (a formatter's project config is code), which has no
 * business with the key mewcode pays with.
 */
export function withoutApiKeys(
  env: Record<string, string>,
  apiKeyEnv: string | null,
): Record<string, string> {
  const names = new Set([...API_KEY_VARIABLES, ...(apiKeyEnv === null ? [] : [apiKeyEnv])]);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.has(name)));
}

export function stateFolders(env: Record<string, string>): string[] {
  let home: string;
  try {
    home = resolve(resolveMewcodeHome(env));
  } catch {
    return [];
  }
  // Synchronous: before the first request, an asynchronous look-up waited for a thread of Deno's pool.
  const real = realPathSyncOrNull(home);
  if (real === null) return [home];
  return real === home ? [real] : [real, home];
}
