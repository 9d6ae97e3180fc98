/**
 * The session: the one place that wires the parts for every front end (one-shot, the terminal session,
 * resume, doctor, `mewcode tool`). It builds the tool runtime (registry, shell sandbox, workers,
 * pipeline), the permission policy, the transcript and, on the first run, the provider; it runs prompts as
 * AgentEvent streams, records them in the transcript, and keeps the conversation between runs.
 *
 * ```ts
 * await using session = await openSession({ workspace, env, model, … });
 * for await (const event of session.run("why does the build fail?", { signal })) render(event);
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import { Conversation } from "../agent/conversation.ts";
import type { AgentEvent } from "../agent/events.ts";
import { type AnswerContract, runAgent } from "../agent/loop.ts";
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { costOf } from "../llm/prices.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import { AdditionalDirectoryError, resolveAdditionalDirectories } from "../execution/additional_roots.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import { checkWorkerProfiles, type ProfileFinding } from "../execution/profile_checks.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import { createToolRuntime, type ExecutorKind, type ToolRuntime } from "../execution/runtime.ts";
import { createProvider, providerConfigFromEnv } from "../llm/create_provider.ts";
import { emptyUsage, type Message, type Provider } from "../llm/provider.ts";
import type { Approver } from "../permissions/decision.ts";
import type { PermissionMode } from "../permissions/modes.ts";
import type { Rule } from "../permissions/rules.ts";
import type { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import { DEFAULT_MAX_PROCESSES, defaultLimits, type ResourceLimits } from "../sandbox/limits.ts";
import type { ProtectedPath, SandboxMode } from "../tools/tool.ts";
import { gatherPromptContext, type PromptContext } from "./repo_context.ts";
import { type ApprovalCommand, type SessionHooks, SessionPermissions } from "./session_permissions.ts";
import { Transcript } from "./transcript.ts";
import type { Workspace } from "./workspace.ts";

export type { ExecutorKind, HelperPaths, ProfileFinding, Provider, SandboxMode };
export { AdditionalDirectoryError, DEFAULT_MAX_PROCESSES };

/** The version recorded in every transcript. */
export const SESSION_FORMAT_VERSION = "1";

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
  /** Whether the session will talk to a model: then a missing API key fails `openSession` at once. */
  needsModel?: boolean;
  /** Where tools run; default "worker" (the sandbox). Unit tests use "direct". */
  executor?: ExecutorKind;
  /** Write a transcript; default true. */
  persist?: boolean;
  /** The id of a new session (a random UUID by default); opening fails when that session exists. */
  sessionId?: string;
  /** Continue a session: its id and its conversation (see load_session.ts); its transcript is appended to. */
  resume?: { id: string; messages: readonly Message[] };
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
  /** The tool side: registry, pipeline, shell sandbox. */
  readonly tools: ToolRuntime;
  /** The conversation so far. */
  readonly messages: Message[];
  /**
   * Runs one prompt to the end of the agent's turn; every event is recorded in the transcript. The first
   * run reads the repository's state and memory files for the system prompt (kept for the session, so the
   * prompt cache stays valid).
   */
  run(prompt: string, options: RunOptions): AsyncGenerator<AgentEvent>;
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
  // Before anything is built or written: a run without an API key cannot start.
  if (options.needsModel && options.provider === undefined) {
    providerConfigFromEnv({ get: (name) => env[name] });
  }
  const defaults = defaultLimits();
  let sandbox: ShellSandbox | null = null;
  const identity = {
    sessionId: options.resume?.id ?? options.sessionId ?? "",
    transcriptPath: null as string | null,
  };
  const permissions = new SessionPermissions({
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
    sandbox: () => sandbox,
  });
  // Real paths, checked by the runtime (never mewcode's state folder, never "/").
  const additionalRoots = await resolveAdditionalDirectories(
    options.additionalDirectories ?? [],
    workspace.root,
  );
  const tools = await createToolRuntime({
    root: workspace.root,
    rootAliases: workspace.aliases,
    additionalRoots,
    excludedPaths: await stateFolders(env),
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    policy: permissions.policy,
    hooks: permissions.preToolUseHooks(),
    afterCall: (call, input, result) => permissions.afterCall(call, input, result),
    limits: { ...defaults, ...options.limits },
    env,
    ...(options.toolEnv === undefined ? {} : { toolEnv: options.toolEnv }),
    ...(options.executor === undefined ? {} : { executor: options.executor }),
    ...(permissions.approver === null ? {} : { approver: permissions.approver }),
    ...(options.requireRead === undefined ? {} : { requireRead: options.requireRead }),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
    ...(options.helpers === undefined ? {} : { helpers: options.helpers }),
  });
  sandbox = tools.sandbox;
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
    await tools.close();
    throw error;
  }
  const session = new OpenSession(options, tools, transcript, permissions);
  identity.sessionId = session.id;
  identity.transcriptPath = session.transcriptPath;
  return session;
}

class OpenSession implements Session {
  readonly id: string;
  readonly transcriptPath: string | null;
  readonly tools: ToolRuntime;
  #options: SessionOptions;
  #transcript: Transcript | null;
  #conversation: Conversation;
  #provider: Provider | null;
  #started = false;
  #context: { prompt: PromptContext; hooks: string[] } | null = null;
  #permissions: SessionPermissions;
  #closed = false;

  constructor(
    options: SessionOptions,
    tools: ToolRuntime,
    transcript: Transcript | null,
    permissions: SessionPermissions,
  ) {
    this.#options = options;
    this.#permissions = permissions;
    this.tools = tools;
    this.#transcript = transcript;
    this.#provider = options.provider ?? null;
    this.#conversation = new Conversation(options.resume?.messages ?? []);
    this.id = transcript?.sessionId ?? options.resume?.id ?? options.sessionId ?? crypto.randomUUID();
    this.transcriptPath = transcript?.path ?? null;
  }

  get messages(): Message[] {
    return this.#conversation.messages;
  }

  async *run(prompt: string, options: RunOptions): AsyncGenerator<AgentEvent> {
    const provider = await this.#ensureProvider();
    const { workspace, model, maxTokens, maxTurns } = this.#options;
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
      const gathered = await gatherPromptContext({
        root: workspace.root,
        home: resolveMewcodeHome(this.#options.env),
        sandbox: this.tools.sandbox,
        signal: options.signal,
      });
      const source = this.#options.resume === undefined ? "startup" : "resume";
      const hooks = await this.#permissions.sessionStart(source, options.signal);
      this.#context = { prompt: gathered, hooks };
      for (const notice of gathered.memory.notices) yield this.#record({ type: "warning", message: notice });
    }
    const system = this.#systemPrompt(platform, this.#context);
    const submitted = await this.#permissions.submitPrompt(prompt, options.signal);
    yield* this.#notices();
    if ("refused" in submitted) {
      yield* this.#refuse(submitted.refused);
      return;
    }
    for await (
      const event of runAgent({
        provider,
        pipeline: this.tools.pipeline,
        prompt: submitted.prompt,
        model,
        maxTokens,
        system,
        signal: options.signal,
        maxTurns,
        costOf: (usage) => costOf(usage, model),
        maxBudgetUsd: this.#options.maxBudgetUsd ?? null,
        conversation: this.#conversation,
        resultDir: this.#transcript?.sessionDir ?? null,
        beforeStop: (active) => this.#permissions.beforeStop(active, options.signal),
        ...(options.answer === undefined ? {} : { answer: options.answer }),
      })
    ) {
      yield this.#record(event);
      yield* this.#notices();
    }
  }

  /** What the hooks had to tell the user, as warnings. */
  *#notices(): Generator<AgentEvent> {
    for (const message of this.#permissions.takeNotices()) yield this.#record({ type: "warning", message });
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
      tools: this.tools.registry.listEnabled(),
      permissionMode,
      sandbox,
      sandboxNetwork,
      headless: headless ?? false,
      repository: context.prompt.repository,
      memory: context.prompt.memory,
      additionalDirectories: this.tools.additionalRoots,
    });
    const parts = [base];
    if (context.hooks.length > 0) {
      parts.push(`# Context from SessionStart hooks\n${context.hooks.join("\n")}`);
    }
    if (systemPrompt?.append !== undefined) parts.push(systemPrompt.append);
    return parts.join("\n\n");
  }

  runTool(call: ToolCall, options: { signal: AbortSignal }): Promise<CallResult> {
    return this.tools.pipeline.run(call, options);
  }

  finish(): Promise<string[]> {
    return this.tools.finish();
  }

  checkWorkers(): Promise<ProfileFinding[]> {
    return checkWorkerProfiles(this.tools.registry.listEnabled(), {
      root: this.#options.workspace.root,
      additionalRoots: this.tools.additionalRoots,
      plan: this.tools.sandbox.plan,
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.tools.close();
    } finally {
      this.#transcript?.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #ensureProvider(): Promise<Provider> {
    this.#provider ??= await createProvider(
      providerConfigFromEnv({ get: (name) => this.#options.env[name] }),
    );
    return this.#provider;
  }
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
