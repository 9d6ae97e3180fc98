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
import { resolve } from "../common/path.ts";
import { assertNever } from "../common/errors.ts";
import { type CompactionResult, conversationTokens, runCompaction } from "../agent/compaction.ts";
import { Conversation } from "../agent/conversation.ts";
import type { AgentEvent } from "../agent/events.ts";
import { type AnswerContract, type AutoCompaction, runAgent } from "../agent/loop.ts";
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { contextWindowOf } from "../llm/models.ts";
import { costOf, priceOn } from "../llm/prices.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import {
  AdditionalDirectoryError,
  checkAdditionalRoots,
  resolveAdditionalDirectories,
} from "../execution/additional_roots.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import type { ProfileFinding } from "../execution/profile_checks.ts";
import { lazyImport } from "../common/lazy_import.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import type { ExecutorKind, RuntimeOptions, ToolRuntime } from "../execution/runtime.ts";
import type { UsableToolsOptions } from "../execution/usable_tools.ts";
import type { ToolSource } from "../execution/tool_source.ts";
import { BUILTIN_TOOL_INFO } from "../tools/catalog.ts";
import { createRegistry, type ToolRegistry } from "../tools/registry.ts";
import { createProvider, providerConfigFromEnv, type ProviderEndpoint } from "../llm/create_provider.ts";
import { emptyUsage, type Message, type Provider, type Usage } from "../llm/provider.ts";
import type { Approver } from "../permissions/decision.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import type { Rule } from "../permissions/rules.ts";
import type { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import { DEFAULT_MAX_PROCESSES, defaultLimits, type ResourceLimits } from "../sandbox/limits.ts";
import type { ProtectedPath, SandboxMode, ToolInfo } from "../tools/tool.ts";
import { gatherPromptContext, type PromptContext } from "./repo_context.ts";
import { type ApprovalCommand, type SessionHooks, SessionPermissions } from "./session_permissions.ts";
import { Transcript } from "./transcript.ts";
import type { Workspace } from "./workspace.ts";

export type { CompactionResult, ExecutorKind, HelperPaths, ProfileFinding, Provider, SandboxMode };
export { AdditionalDirectoryError, DEFAULT_MAX_PROCESSES };

/** The version recorded in every transcript. */
export const SESSION_FORMAT_VERSION = "1";

/** The share of the context window past which a run compacts the conversation. */
export const DEFAULT_COMPACTION_RATIO = 0.85;
/** The most recent model turns a compaction keeps verbatim. */
export const DEFAULT_KEEP_RECENT_TURNS = 2;

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
  resume?: { id: string; messages: readonly Message[]; contextTokens?: number | null };
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
}

/** An open session. Close it (or `await using`) to stop its workers and close its transcript. */
export interface Session extends AsyncDisposable {
  readonly id: string;
  /** The transcript file, or null when the session is not persisted. */
  readonly transcriptPath: string | null;
  /** The tools offered to the model: described, their code loaded or not. */
  readonly catalog: ToolRegistry<ToolInfo>;
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
    // Its SDK loads while the sandbox is checked and the prompt's context is gathered.
    provider = createProvider(providerConfigFromEnv({ get: (name) => env[name] }, options.providerEndpoint));
    provider.catch(() => {}); // Reported by the first run, which awaits it.
  }
  const defaults = defaultLimits();
  let runtime: LazyRuntime | null = null;
  const identity = {
    sessionId: options.resume?.id ?? options.sessionId ?? "",
    transcriptPath: null as string | null,
  };
  const permissions = await SessionPermissions.open({
    mode: options.permissionMode,
    rules: options.rules ?? [],
    root: workspace.root,
    rootAliases: workspace.aliases,
    additionalDirectories: options.additionalDirectories ?? [],
    protectedPaths: options.protectedPaths ?? PROTECTED_PATHS,
    env,
    hooks: options.hooks ?? null,
    approver: options.approver ?? null,
    approvalCommand: options.approvalCommand ?? null,
    session: () => identity,
    sandbox: () => runtime?.sandbox() ?? null,
  });
  const excludedPaths = await stateFolders(env);
  // Real paths, checked here (never mewcode's state folder, never "/"), and by the runtime again.
  const additionalRoots = await checkAdditionalRoots(
    await resolveAdditionalDirectories(options.additionalDirectories ?? [], workspace.root),
    { root: workspace.root, excludedPaths },
  );
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
    limits: { ...defaults, ...options.limits },
    env,
    ...(options.toolEnv === undefined ? {} : { toolEnv: options.toolEnv }),
    ...(options.executor === undefined ? {} : { executor: options.executor }),
    ...(permissions.approver === null ? {} : { approver: permissions.approver }),
    ...(options.requireRead === undefined ? {} : { requireRead: options.requireRead }),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
    ...(options.helpers === undefined ? {} : { helpers: options.helpers }),
    // A session that talks to a model checks the shell sandbox with its first use (its git status, or the
    // first Bash call), not before the first request; doctor and `mewcode tool` check it at once.
    ...(options.needsModel ? { deferShellCheck: true } : {}),
  });
  // A one-shot session builds its tools once the model answers (`OpenSession#expect`); every other one now.
  const oneShot = options.needsModel === true && options.headless === true;
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
        // A new session's id must be new; a continued one appends to its own file.
        exclusive: options.resume === undefined,
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

/**
 * A session's tool runtime, built on demand: the catalog and the checked folders are known at once, the
 * modules behind them load with `load()`.
 */
class LazyRuntime {
  readonly catalog: ToolRegistry<ToolInfo>;
  readonly additionalRoots: readonly string[];
  #options: RuntimeOptions;
  #loading: Promise<ToolRuntime> | null = null;
  #loaded: ToolRuntime | null = null;

  constructor(options: RuntimeOptions & { additionalRoots: readonly string[] }) {
    this.#options = options;
    this.additionalRoots = options.additionalRoots;
    this.catalog = createRegistry(BUILTIN_TOOL_INFO, {
      allowWrite: !options.readOnly,
      allowBash: !options.readOnly,
    });
  }

  /** The runtime if it has been built. */
  get loaded(): ToolRuntime | null {
    return this.#loaded;
  }

  /** Whether it has been asked for (it may still be loading, or have failed). */
  get started(): boolean {
    return this.#loading !== null;
  }

  /** Builds the runtime once; every caller gets the same one (or the same error). */
  load(): Promise<ToolRuntime> {
    this.#loading ??= (async () => {
      const { createToolRuntime } = await lazyImport<typeof import("../execution/runtime.ts")>(
        new URL("../execution/runtime.ts", import.meta.url),
      );
      this.#loaded = await createToolRuntime(this.#options);
      return this.#loaded;
    })();
    return this.#loading;
  }

  /** The shell sandbox, building the runtime for it if need be (a hook that runs in the sandbox). */
  sandbox(): ShellSandbox | Promise<ShellSandbox> {
    return this.#loaded?.sandbox ?? this.load().then((runtime) => runtime.sandbox);
  }

  async close(): Promise<void> {
    if (this.#loading === null) return;
    let runtime: ToolRuntime;
    try {
      runtime = await this.#loading;
    } catch {
      return; // It never started: nothing to stop.
    }
    await runtime.close();
  }
}

/** The prompt's context, gathered from the moment the session opens (see `earlyContext`). */
interface EarlyContext {
  promise: Promise<PromptContext>;
  /** Stops its git status (the run was interrupted, or the session closed first). */
  controller: AbortController;
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

class OpenSession implements Session {
  readonly id: string;
  readonly transcriptPath: string | null;
  #runtime: LazyRuntime;
  #options: SessionOptions;
  #transcript: Transcript | null;
  #conversation: Conversation;
  #provider: Provider | null;
  /** The provider being built since the session opened, until the first run takes it. */
  #providerStart: Promise<Provider> | null;
  #earlyContext: EarlyContext | null;
  /** The workers' start, scheduled once the first request is on its way (not in a one-shot session). */
  #prewarm: { timer: ReturnType<typeof setTimeout> | null } | null = null;
  /** What the runs call tools through: the pipeline, or what builds it (a one-shot session's). */
  #tools: ToolSource;
  /** A one-shot session: its tools load once the model answers, each worker with its tool's first call. */
  #loadsOnFirstCall: boolean;
  #started = false;
  #context: { prompt: PromptContext; hooks: string[] } | null = null;
  readonly permissions: SessionPermissions;
  #closed = false;
  /** A run or a compaction is going on (its generator has not finished). */
  #running = false;
  /** The automatic compaction threshold in tokens, or null for none. */
  #compactionThreshold: number | null;
  #keepRecentTurns: number;
  /** The conversation's size in tokens as of the last complete response; null when unknown. */
  #contextTokens: number | null;
  /** The usage of the last response, until its request-end tells whether it was complete. */
  #lastUsage: Usage | null = null;

  constructor(
    options: SessionOptions,
    runtime: LazyRuntime,
    transcript: Transcript | null,
    permissions: SessionPermissions,
    early: { provider: Promise<Provider> | null; context: EarlyContext | null },
  ) {
    this.#options = options;
    this.#providerStart = early.provider;
    this.#earlyContext = early.context;
    this.permissions = permissions;
    this.#runtime = runtime;
    this.#loadsOnFirstCall = runtime.loaded === null;
    this.#tools = runtime.loaded?.pipeline ?? {
      registry: runtime.catalog,
      expect: (name) => this.#expect(name),
      load: async () => (await this.toolRuntime()).pipeline,
    };
    this.#transcript = transcript;
    this.#provider = options.provider ?? null;
    this.#conversation = new Conversation(options.resume?.messages ?? []);
    this.#compactionThreshold = compactionThreshold(options.model, options.compaction ?? {});
    this.#keepRecentTurns = options.compaction?.keepRecentTurns ?? DEFAULT_KEEP_RECENT_TURNS;
    this.#contextTokens = options.resume?.contextTokens ?? null;
    this.id = transcript?.sessionId ?? options.resume?.id ?? options.sessionId ?? crypto.randomUUID();
    this.transcriptPath = transcript?.path ?? null;
  }

  get messages(): Message[] {
    return this.#conversation.messages;
  }

  get catalog(): ToolRegistry<ToolInfo> {
    return this.#runtime.catalog;
  }

  get toolsStarted(): boolean {
    return this.#runtime.started;
  }

  toolRuntime(): Promise<ToolRuntime> {
    if (this.#closed) return Promise.reject(new TypeError("Cannot use the tools of a closed session"));
    return this.#runtime.load();
  }

  get model(): string {
    return this.#options.model;
  }

  setModel(model: string): void {
    this.#options = { ...this.#options, model };
    this.#compactionThreshold = compactionThreshold(model, this.#options.compaction ?? {});
  }

  async *run(prompt: string, options: RunOptions): AsyncGenerator<AgentEvent> {
    this.#running = true;
    try {
      yield* this.#run(prompt, options);
    } finally {
      this.#running = false;
    }
  }

  async *#run(prompt: string, options: RunOptions): AsyncGenerator<AgentEvent> {
    const provider = await this.#ensureProvider();
    const { model, maxTokens, maxTurns } = this.#options;
    const system = yield* this.#prepare(provider, options.signal);
    const submitted = await this.permissions.submitPrompt(prompt, options.signal);
    yield* this.#notices();
    if ("refused" in submitted) {
      yield* this.#refuse(submitted.refused);
      return;
    }
    const compaction = this.#autoCompaction();
    for await (
      const event of runAgent({
        provider,
        pipeline: this.#tools,
        prompt: submitted.prompt,
        model,
        maxTokens,
        system,
        signal: options.signal,
        maxTurns,
        costOf: (usage) => priceOn(provider.name, model) === null ? null : costOf(usage, model),
        maxBudgetUsd: this.#options.maxBudgetUsd ?? null,
        conversation: this.#conversation,
        resultDir: this.#transcript?.sessionDir ?? null,
        beforeStop: (active) => this.permissions.beforeStop(active, options.signal),
        ...(options.answer === undefined ? {} : { answer: options.answer }),
        ...(compaction === null ? {} : { compaction }),
      })
    ) {
      this.#observe(event);
      if (event.type === "request-start" && !this.#loadsOnFirstCall) this.#schedulePrewarm();
      yield this.#record(event);
      yield* this.#notices();
    }
  }

  /**
   * Starts the tool workers the permissions can use, once, after the first request was sent (a timer
   * runs after the request's start): they never delay it, and their start overlaps the model's answer.
   */
  #schedulePrewarm(): void {
    if (this.#prewarm !== null || this.#closed) return;
    const timer = setTimeout(() => {
      if (this.#prewarm !== null) this.#prewarm.timer = null;
      void this.#runtime.loaded?.prewarm(this.#usable());
    }, 0);
    this.#prewarm = { timer };
  }

  /** What decides which tools the permissions can let run (see usable_tools.ts). */
  #usable(): UsableToolsOptions {
    const permissions = this.permissions;
    return {
      mode: permissions.mode,
      rules: permissions.policy.rules,
      canAsk: permissions.approver !== null,
      hooksMayDecide: permissions.preToolUseHooks().length > 0,
    };
  }

  /**
   * In a one-shot session: the model's response began (`name` undefined), or a call to the tool `name`
   * began. The runtime is built once the model answers (its request is long gone by then, and what it
   * writes before a call leaves time to load), without workers: each one starts when a call to its tool
   * begins, while the call's input streams, so a text answer starts none. A failure to build is the first
   * call's to report.
   */
  #expect(name: string | undefined): void {
    if (this.#closed) return;
    this.#runtime.load().then(
      (runtime) => this.#closed || name === undefined ? undefined : runtime.prewarm(this.#usable(), name),
      () => undefined,
    );
  }

  async *compact(options: { signal: AbortSignal }): AsyncGenerator<AgentEvent, CompactionResult> {
    if (this.#running) throw new TypeError("Cannot compact the conversation while a run is going on");
    this.#running = true;
    try {
      const provider = await this.#ensureProvider();
      const system = yield* this.#prepare(provider, options.signal);
      const steps = runCompaction({
        provider,
        model: this.#options.model,
        maxTokens: this.#options.maxTokens,
        system,
        messages: this.#conversation.messages,
        keepRecentTurns: this.#keepRecentTurns,
        signal: options.signal,
        turn: 0,
        trigger: "manual",
        // Between runs the summary request is a run of its own.
        addUsage: (usage) => ({ ...usage, requests: 1 }),
        apply: (messages) => this.#conversation.replace(messages),
      });
      let step = await steps.next();
      while (!step.done) {
        this.#observe(step.value);
        yield this.#record(step.value);
        step = await steps.next();
      }
      const notice = compactionNotice(step.value);
      if (notice !== null) yield this.#record({ type: "warning", message: notice });
      return step.value;
    } finally {
      this.#running = false;
    }
  }

  /** Automatic compaction for the next run, or null when the session has no threshold. */
  #autoCompaction(): AutoCompaction | null {
    if (this.#compactionThreshold === null) return null;
    return {
      thresholdTokens: this.#compactionThreshold,
      keepRecentTurns: this.#keepRecentTurns,
      contextTokens: this.#contextTokens,
    };
  }

  /** Follows the conversation's size across runs, from the events (see AutoCompaction.contextTokens). */
  #observe(event: AgentEvent): void {
    if (event.type === "usage") this.#lastUsage = event.usage;
    if (event.type === "request-end" && !event.partial && this.#lastUsage !== null) {
      this.#contextTokens = conversationTokens(this.#lastUsage);
    }
    if (event.type === "compaction") this.#contextTokens = null;
  }

  /**
   * What a run or a compaction needs first: the session-start record (once), the repository's state and
   * memory files with the SessionStart hooks (once, kept for the session so the prompt cache stays valid),
   * and the system prompt built from them.
   */
  async *#prepare(provider: Provider, signal: AbortSignal): AsyncGenerator<AgentEvent, string> {
    const { workspace, model } = this.#options;
    const platform = `${Deno.build.os} ${Deno.build.arch}`;
    if (!this.#started) {
      this.#started = true;
      this.#transcript?.append({
        type: "session-start",
        sessionId: this.id,
        root: workspace.root,
        model,
        platform,
        provider: provider.name,
        version: SESSION_FORMAT_VERSION,
      });
    }
    if (this.#context === null) {
      const gathered = await this.#gather(signal);
      const source = this.#options.resume === undefined ? "startup" : "resume";
      const hooks = await this.permissions.sessionStart(source, signal);
      this.#context = { prompt: gathered, hooks };
      for (const notice of gathered.memory.notices) yield this.#record({ type: "warning", message: notice });
    }
    return this.#systemPrompt(platform, this.#context);
  }

  /** The repository's state and memory files: gathered since the session opened, or now. */
  async #gather(signal: AbortSignal): Promise<PromptContext> {
    const early = this.#earlyContext;
    if (early === null) {
      return await gatherPromptContext({
        root: this.#options.workspace.root,
        home: resolveMewcodeHome(this.#options.env),
        sandbox: this.#runtime.loaded?.sandbox ?? null,
        signal,
      });
    }
    this.#earlyContext = null;
    const abort = () => early.controller.abort();
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
    try {
      return await early.promise;
    } finally {
      signal.removeEventListener("abort", abort);
    }
  }

  /** What the hooks had to tell the user, as warnings. */
  *#notices(): Generator<AgentEvent> {
    for (const message of this.permissions.takeNotices()) yield this.#record({ type: "warning", message });
  }

  /** A run a UserPromptSubmit hook refused: it ends before any request. */
  *#refuse(message: string): Generator<AgentEvent> {
    yield this.#record({
      type: "error",
      turn: 0,
      name: "PromptRefused",
      message,
      category: "internal",
      error: null,
    });
    yield this.#record({
      type: "turn-end",
      reason: "error",
      turns: 0,
      text: "",
      message,
      totals: { ...emptyUsage(), requests: 0 },
      costUsd: null,
      durationMs: 0,
    });
  }

  #record(event: AgentEvent): AgentEvent {
    this.#transcript?.record(event);
    return event;
  }

  #systemPrompt(platform: string, context: { prompt: PromptContext; hooks: string[] }): string {
    const { workspace, permissionMode, sandbox, sandboxNetwork, headless, systemPrompt } = this.#options;
    const base = systemPrompt?.replace ?? buildSystemPrompt({
      root: workspace.root,
      platform,
      date: new Date(),
      tools: this.catalog.listEnabled(),
      permissionMode,
      sandbox,
      sandboxNetwork,
      headless: headless ?? false,
      repository: context.prompt.repository,
      memory: context.prompt.memory,
      additionalDirectories: this.#runtime.additionalRoots,
    });
    const parts = [base];
    if (context.hooks.length > 0) {
      parts.push(`# Context from SessionStart hooks\n${context.hooks.join("\n")}`);
    }
    if (systemPrompt?.append !== undefined) parts.push(systemPrompt.append);
    return parts.join("\n\n");
  }

  async runTool(call: ToolCall, options: { signal: AbortSignal }): Promise<CallResult> {
    return await (await this.toolRuntime()).pipeline.run(call, options);
  }

  async finish(): Promise<string[]> {
    // Tools that never loaded never ran: nothing in the workspace can have changed through them.
    if (!this.#runtime.started) return [];
    return await (await this.#runtime.load()).finish();
  }

  async checkWorkers(): Promise<ProfileFinding[]> {
    const { checkWorkerProfiles } = await lazyImport<typeof import("../execution/profile_checks.ts")>(
      new URL("../execution/profile_checks.ts", import.meta.url),
    );
    const runtime = await this.toolRuntime();
    return await checkWorkerProfiles(runtime.registry.listEnabled(), {
      root: this.#options.workspace.root,
      additionalRoots: runtime.additionalRoots,
      plan: runtime.sandbox.plan,
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const early = this.#earlyContext;
    this.#earlyContext = null;
    early?.controller.abort();
    await early?.promise;
    if (this.#prewarm?.timer != null) clearTimeout(this.#prewarm.timer);
    try {
      await this.#runtime.close();
    } finally {
      this.#transcript?.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #ensureProvider(): Promise<Provider> {
    const started = this.#providerStart;
    this.#providerStart = null;
    if (started !== null) this.#provider ??= await started;
    this.#provider ??= await createProvider(
      providerConfigFromEnv({ get: (name) => this.#options.env[name] }, this.#options.providerEndpoint),
    );
    return this.#provider;
  }
}

/**
 * The automatic compaction threshold in tokens for a model, or null for none: `thresholdTokens` when given,
 * else `thresholdRatio` of the context window (`contextWindow`, else the model's in src/llm/models.ts).
 * Throws RangeError for settings that cannot work.
 */
export function compactionThreshold(model: string, options: CompactionOptions): number | null {
  const { thresholdTokens, thresholdRatio = DEFAULT_COMPACTION_RATIO, contextWindow, keepRecentTurns } =
    options;
  if (keepRecentTurns !== undefined && (!Number.isInteger(keepRecentTurns) || keepRecentTurns < 1)) {
    throw new RangeError(
      `Invalid compaction setting: keepRecentTurns must be 1 or more, got ${keepRecentTurns}`,
    );
  }
  if (thresholdTokens !== undefined) {
    if (thresholdTokens !== null && !(thresholdTokens > 0)) {
      throw new RangeError(
        `Invalid compaction setting: thresholdTokens must be positive, got ${thresholdTokens}`,
      );
    }
    return thresholdTokens;
  }
  if (!(thresholdRatio > 0 && thresholdRatio <= 1)) {
    throw new RangeError(
      `Invalid compaction setting: thresholdRatio must be above 0 and at most 1, got ${thresholdRatio}`,
    );
  }
  if (contextWindow !== undefined && !(contextWindow > 0)) {
    throw new RangeError(`Invalid compaction setting: contextWindow must be positive, got ${contextWindow}`);
  }
  const window = contextWindow ?? contextWindowOf(model);
  return window === null ? null : Math.floor(window * thresholdRatio);
}

/** What the user should be told about a manual compaction that did not happen; null when it did. */
function compactionNotice(result: CompactionResult): string | null {
  switch (result.status) {
    case "compacted":
      return null;
    case "nothing-to-compact":
      return `Nothing to compact: ${result.reason}`;
    case "failed":
      return `Cannot compact the conversation: ${result.reason}; it is unchanged`;
    case "aborted":
      return "The compaction was interrupted; the conversation is unchanged";
    default:
      return assertNever(result);
  }
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

/**
 * mewcode's state folder (`$MEWCODE_HOME`, other sessions' transcripts), which the tools treat as outside
 * the workspace even when the workspace contains it: its real path, and the path as named when they differ.
 */
export async function stateFolders(env: Record<string, string>): Promise<string[]> {
  let home: string;
  try {
    home = resolve(resolveMewcodeHome(env));
  } catch {
    return [];
  }
  try {
    const real = await Deno.realPath(home);
    return real === home ? [real] : [real, home];
  } catch {
    return [home];
  }
}
