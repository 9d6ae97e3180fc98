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
import { runAgent } from "../agent/loop.ts";
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import { checkWorkerProfiles, type ProfileFinding } from "../execution/profile_checks.ts";
import type { ToolCall } from "../execution/pipeline.ts";
import { createToolRuntime, type ExecutorKind, type ToolRuntime } from "../execution/runtime.ts";
import { createProvider, providerConfigFromEnv } from "../llm/create_provider.ts";
import type { Message, Provider } from "../llm/provider.ts";
import type { Approver } from "../permissions/decision.ts";
import { type PermissionMode, policyForMode } from "../permissions/modes.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import { DEFAULT_MAX_PROCESSES, defaultLimits, type ResourceLimits } from "../sandbox/limits.ts";
import type { ProtectedPath, SandboxMode } from "../tools/tool.ts";
import { Transcript } from "./transcript.ts";
import type { Workspace } from "./workspace.ts";

export type { ExecutorKind, HelperPaths, ProfileFinding, Provider, SandboxMode };
export { DEFAULT_MAX_PROCESSES };

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
  /** Answers "ask" decisions; without one (headless), "ask" is a denial. */
  approver?: Approver;
  /** Whether writers require a prior read of an existing file; default true (false for calls a person typed). */
  requireRead?: boolean;
  /** What writers refuse; default PROTECTED_PATHS ([] for calls a person typed). */
  protectedPaths?: readonly ProtectedPath[];
  /** Test seam: the helper programs of the shell sandbox. */
  helpers?: HelperPaths;
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
  /** Runs one prompt to the end of the agent's turn; every event is recorded in the transcript. */
  run(prompt: string, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent>;
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
  const tools = await createToolRuntime({
    root: workspace.root,
    rootAliases: workspace.aliases,
    excludedPaths: await stateFolders(env),
    readOnly: options.readOnly,
    sandbox: options.sandbox,
    sandboxNetwork: options.sandboxNetwork,
    strictLinks: options.strictLinks,
    policy: policyForMode(options.permissionMode),
    limits: { ...defaults, ...options.limits },
    env,
    ...(options.executor === undefined ? {} : { executor: options.executor }),
    ...(options.approver === undefined ? {} : { approver: options.approver }),
    ...(options.requireRead === undefined ? {} : { requireRead: options.requireRead }),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
    ...(options.helpers === undefined ? {} : { helpers: options.helpers }),
  });
  let transcript: Transcript | null = null;
  try {
    if (options.persist ?? true) {
      transcript = await Transcript.create({ home: resolveMewcodeHome(env), root: workspace.root });
    }
  } catch (error) {
    await tools.close();
    throw error;
  }
  return new OpenSession(options, tools, transcript);
}

class OpenSession implements Session {
  readonly id: string;
  readonly transcriptPath: string | null;
  readonly tools: ToolRuntime;
  #options: SessionOptions;
  #transcript: Transcript | null;
  #conversation = new Conversation();
  #provider: Provider | null;
  #started = false;
  #closed = false;

  constructor(options: SessionOptions, tools: ToolRuntime, transcript: Transcript | null) {
    this.#options = options;
    this.tools = tools;
    this.#transcript = transcript;
    this.#provider = options.provider ?? null;
    this.id = transcript?.sessionId ?? crypto.randomUUID();
    this.transcriptPath = transcript?.path ?? null;
  }

  get messages(): Message[] {
    return this.#conversation.messages;
  }

  async *run(prompt: string, options: { signal: AbortSignal }): AsyncGenerator<AgentEvent> {
    const provider = await this.#ensureProvider();
    const { workspace, model, maxTokens, maxTurns, permissionMode } = this.#options;
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
    const system = buildSystemPrompt({
      root: workspace.root,
      platform,
      date: new Date(),
      tools: this.tools.registry.listEnabled(),
      permissionMode,
    });
    for await (
      const event of runAgent({
        provider,
        pipeline: this.tools.pipeline,
        prompt,
        model,
        maxTokens,
        system,
        signal: options.signal,
        maxTurns,
        conversation: this.#conversation,
        resultDir: this.#transcript?.sessionDir ?? null,
      })
    ) {
      this.#transcript?.record(event);
      yield event;
    }
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
