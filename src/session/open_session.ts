/**
 * The open session behind `openSession` (session.ts): its runs, compactions and tool calls, the
 * conversation and the transcript between runs, and when its tools get ready.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { CompactionResult } from "../agent/compaction.ts";
import { Conversation, conversationTokens } from "../agent/conversation.ts";
import type { AgentEvent } from "../agent/events.ts";
import type { AutoCompaction, RunAgentOptions } from "../agent/loop_options.ts";
import { firstTurnRequest } from "../agent/turn_request.ts";
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { contextWindowOf } from "../llm/models.ts";
import { costOf, priceOn } from "../llm/prices.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import type { ProfileFinding } from "../execution/profile_checks.ts";
import { lazyImport, lazyModule } from "../common/lazy_import.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import type { ToolRuntime } from "../execution/runtime.ts";
import type { UsableToolsOptions } from "../execution/usable_tools.ts";
import type { ToolSource } from "../execution/tool_source.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { createProvider, providerConfigFromEnv } from "../llm/create_provider.ts";
import { emptyUsage, type Message, type Provider, type Usage } from "../llm/provider.ts";
import { StartedRequest } from "../llm/started_request.ts";
import type { ToolInfo } from "../tools/tool.ts";
import { wholeToolDenials, withoutHiddenTools } from "./offered_tools.ts";
import { gatherPromptContext, type PromptContext } from "./repo_context.ts";
import type { SessionPermissions } from "./session_permissions.ts";
import type { LazyRuntime } from "./lazy_runtime.ts";
import type { Transcript } from "./transcript.ts";
import type { CompactionOptions, RunOptions, Session, SessionOptions } from "./session.ts";

/** The version recorded in every transcript. */
export const SESSION_FORMAT_VERSION = "1";

/** The share of the context window past which a run compacts the conversation. */
export const DEFAULT_COMPACTION_RATIO = 0.85;
/** The most recent model turns a compaction keeps verbatim. */
export const DEFAULT_KEEP_RECENT_TURNS = 2;

/** The prompt's context, gathered from the moment the session opens (see `earlyContext`). */
export interface EarlyContext {
  promise: Promise<PromptContext>;
  /** Stops its git status (the run was interrupted, or the session closed first). */
  controller: AbortController;
}

// Not on the way to a session's first request: `StartedRequest` sends it, the loop loads once it is answered.
const loadLoop = lazyModule<typeof import("../agent/loop.ts")>(new URL("../agent/loop.ts", import.meta.url));
const loadCompaction = lazyModule<typeof import("../agent/compaction.ts")>(
  new URL("../agent/compaction.ts", import.meta.url),
);

export class OpenSession implements Session {
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
  /** A run has started: the next ones send their requests from the loop. */
  #ranBefore = false;
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

  /** The tools offered to the model now: the enabled ones but those a deny rule names whole (`Bash`). */
  offeredTools(): ToolInfo[] {
    const hidden = wholeToolDenials(this.permissions.policy.rules);
    return this.catalog.listEnabled().filter((tool) => !hidden.has(tool.name));
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
    const run: RunAgentOptions = {
      provider,
      pipeline: withoutHiddenTools(this.#tools, () => wholeToolDenials(this.permissions.policy.rules)),
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
    };
    // A one-shot session's run sends its first request before the loop loads; an interactive session's
    // tools and loop load while the person types, so it has nothing to gain.
    const first = this.#ranBefore || !this.#loadsOnFirstCall ? null : firstTurnRequest(run);
    this.#ranBefore = true;
    const started = first === null ? null : new StartedRequest(provider, first, options.signal);
    // Its tools build once it is on the wire, while the model works on its first token: a response that
    // begins with a call then finds them ready.
    if (started !== null) void started.sent.then(() => this.#expect(undefined));
    try {
      if (options.watched !== true) await started?.responded;
      const { runAgent } = await loadLoop();
      for await (const event of runAgent(started === null ? run : { ...run, provider: started.provider })) {
        this.#observe(event);
        if (event.type === "request-start" && !this.#loadsOnFirstCall) this.#schedulePrewarm();
        yield this.#record(event);
        yield* this.#notices();
      }
    } finally {
      started?.discard();
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
      this.permissions.preparePolicy();
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
   * In a one-shot session: its first request was sent or the model's response began (`name` undefined), or a
   * call to the tool `name` began. The runtime is built once the first request has been written
   * (`StartedRequest.sent`: building it then can no longer hold the request back, and the model's time to its
   * first token leaves time to load), or at the latest once a response begins (`StreamOptions.onResponse`).
   * Then, in a repository large enough to be worth it, only the worker of the searches starts, to walk the
   * workspace while the model writes (`ToolRuntime.walkAhead`): a session's first search is most often its
   * first call. Each other worker starts when a call to its tool begins, while the call's input streams, so a
   * text answer in a small repository starts none. A failure to build is the first call's to report.
   */
  #expect(name: string | undefined): void {
    if (this.#closed) return;
    if (name !== undefined) this.permissions.preparePolicy();
    this.#runtime.load().then(
      (runtime) => {
        if (this.#closed) return;
        return name === undefined
          ? runtime.walkAhead(this.#usable(), { onlyLargeRepository: true })
          : runtime.prewarm(this.#usable(), name);
      },
      () => undefined,
    );
  }

  async *compact(options: { signal: AbortSignal }): AsyncGenerator<AgentEvent, CompactionResult> {
    if (this.#running) throw new TypeError("Cannot compact the conversation while a run is going on");
    this.#running = true;
    try {
      const provider = await this.#ensureProvider();
      const system = yield* this.#prepare(provider, options.signal);
      const { runCompaction } = await loadCompaction();
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
      tools: this.offeredTools(),
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
    let runtime: ToolRuntime;
    try {
      runtime = await this.#runtime.load();
    } catch {
      return []; // It could not be built (each call said so): nothing ran either.
    }
    return await runtime.finish();
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
