/**
 * The Tool contract: what every tool declares and how it is called.
 *
 * A tool is plain data plus two functions. Everything a tool receives at run time is
 * structured-cloneable (it crosses into a worker), except the `signal`, which each side
 * builds for itself.
 *
 * @module
 */
import { z } from "zod";
import type { ShellRun } from "./_shell_run.ts";
import type { CallProgress } from "./worker_protocol.ts";

/** What a tool is about; the UI groups by it. */
export type ToolCategory = "file" | "shell" | "search" | "other";

/** The outcome of one tool call. `metadata` is for the UI and the session, never for the model. */
export interface ToolResult {
  content: string;
  isError: boolean;
  metadata: Record<string, unknown>;
  /** Set when the tool stopped its own work early: at its time limit, or because the call was cancelled. */
  stop?: ToolStop;
}

/** Why a tool stopped its own work before finishing it. */
export type ToolStop = "timed-out" | "cancelled";

/** What a file tool reports about a file it read or wrote, so the session can remember its content hash. */
export interface FileRecord {
  /** Canonical (real) path of the file. */
  path: string;
  /** SHA-256 of the file's bytes, hex. */
  hash: string;
}

/** The sandbox mode for the shell, as Codex users know it. */
export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";

/** How the Bash tool must start a shell: decided once by the main process, executed in the worker. */
export interface ShellPlan {
  mode: SandboxMode;
  /** Whether the shell may use the network. */
  network: boolean;
  /**
   * The program and arguments placed before `bash -c COMMAND` (for example `["bwrap", ...flags]`);
   * empty to run the shell directly.
   */
  wrapper: string[];
  /** Absolute path of the shell inside the sandbox (`/usr/bin/bash`, or `sh` where bash is missing). */
  shell: string;
  /** The complete environment of the shell (after clearing): an allowlist, never the API key. */
  env: Record<string, string>;
  /**
   * Shell lines run before the command, inside the sandbox: standard input from /dev/null, joining the
   * sandbox's resource limits. A failing line ends the call before the command runs.
   */
  prologue: string[];
  /** A seccomp program for bubblewrap's `--seccomp 0`, written to its standard input; null for none. */
  seccomp: Uint8Array | null;
  /** Set when the sandbox cannot run here; Bash calls then fail with this message instead of running. */
  unavailable: string | null;
  /**
   * How to keep one sandbox for many calls (the bubblewrap modes, src/tools/_shell_host.ts); absent: a
   * sandbox per call, from `wrapper`.
   */
  persistent?: PersistentShell;
}

/** A sandbox kept across Bash calls: a supervising shell in it runs each command in a fresh subshell. */
export interface PersistentShell {
  /**
   * Absolute path of `sh`, the one program the shell's worker may run: it opens `seccompFile` as fd 3 and
   * replaces itself with `wrapper` (bubblewrap takes its seccomp program from an fd, and standard input
   * carries the commands).
   */
  launcher: string;
  /** The seccomp program's file (`seccomp` as bytes), readable only by mewcode's user. */
  seccompFile: string;
  /**
   * bubblewrap and its arguments for the kept sandbox, followed by the supervisor's shell: `--as-pid-1`,
   * `--seccomp 3`, and the supervisor's shell bound in. Equal wrappers mean the same sandbox.
   */
  wrapper: string[];
  /** Path of the supervisor's shell inside the sandbox: a copy of `ShellPlan.shell` it may run, not read. */
  supervisor: string;
  /** Shell lines the supervisor runs once when the sandbox starts (the resource limits). */
  prologue: string[];
  /**
   * Folders only the sandbox's commands can change (its writable tmpfs mounts and its mqueue filesystem,
   * src/sandbox/bubblewrap.ts `scratchFolders`): a call that changes what they list ends the sandbox, so no
   * call sees what another left in /tmp, the home folder or a POSIX message queue.
   */
  scratch: string[];
}

/**
 * A path writers refuse: `path` relative to the workspace root, or with `anyDepth` a single name matched at
 * any depth (".git"), a name pattern with one `*` ("*.code-workspace": any name ending so; see
 * `isProtectedName`), or names in a row matched at any depth ("mise/config.toml"; see `isAtOrBelowNames`).
 * `reason` completes "Cannot write \"x\": " for the model.
 */
export interface ProtectedPath {
  path: string;
  anyDepth: boolean;
  /** The path names a folder (the shell sandbox can then make it read-only before it exists). */
  folder?: boolean;
  /**
   * The real path of the one root (the workspace root or an added folder) `path` is relative to; absent,
   * the entry applies in every root. The home's code folders are protected only in the root that holds
   * the home: a project's own `bin/` is the project's.
   */
  within?: string;
  reason: string;
}

/** A deny or ask rule as a search tool applies it to each file (see `ToolCallContext.deniedReads`). */
export interface DeniedReadRule {
  /** As users write it: "ReadFile(.env)". */
  rule: string;
  /** Where it was written: "--disallowedTools", "project settings (…)". */
  origin: string;
  /** Its path pattern, compiled in the worker by `compilePathPattern` exactly as the policy compiles it. */
  specifier: string;
  /** An ask rule: a direct read of a file it covers asks first. Absent: a deny rule. */
  asks?: boolean;
}

/** The deny and ask rules a search applies file by file, with the folder their "~/" patterns start from. */
export interface DeniedReads {
  /** Real path of the user's home folder, as the policy resolves it. */
  home: string;
  rules: readonly DeniedReadRule[];
}

/** The structured-cloneable part of a tool's context: what crosses into a worker. */
export interface ToolCallContext {
  /** Real path of the workspace root. */
  root: string;
  /**
   * Other absolute names of the root, as the user named it (for example through a symlink); a path under an
   * alias means the same path under `root`. Default none.
   */
  rootAliases?: readonly string[];
  /**
   * Real paths of folders outside the root that the tools use exactly like it (`--add-dir`): the file tools
   * accept a path whose real path lies in the root or in one of them, and the workers may read (writers:
   * write) them. Default none.
   */
  additionalRoots?: readonly string[];
  /**
   * Real paths inside the root that the tools treat as outside the workspace (mewcode's own state folder
   * when the workspace contains it). Default none.
   */
  excludedPaths?: readonly string[];
  /**
   * The deny and ask rules with a path that the search tools (Glob, Grep) apply to every file they would
   * list or search: a file a direct call on it would be denied or asked about (`ReadFile(.env)`, also
   * through a symlink) is left out and counted, so its contents and name never reach the model through a
   * search of a folder above it without the user's say. Absent or empty: none. See `searchDenials` in
   * src/permissions/evaluate_file.ts.
   */
  deniedReads?: DeniedReads;
  /**
   * What writers refuse to change (git metadata, mewcode's settings, editor folders). Default
   * `PROTECTED_PATHS`; an empty list only for calls a person typed.
   */
  protectedPaths?: readonly ProtectedPath[];
  /**
   * Workspace-relative paths (a file, or a folder and everything under it) the user explicitly allowed
   * writers to change although they are protected. Default none.
   */
  allowedProtectedPaths?: readonly string[];
  /** The call's time limit in milliseconds, enforced by the executor (and by tools with their own, like Bash). */
  timeoutMs: number;
  /** Hashes of the files this session has read or written, by canonical path. */
  fileRecords: Readonly<Record<string, string>>;
  /**
   * Whether overwriting or editing an existing file requires that this session read it first (default
   * true). Off only for calls a person typed (`mewcode tool`), who is the authority on the file's content.
   */
  requireRead?: boolean;
  /** Refuse to read files that have more than one hard link. */
  strictLinks: boolean;
  /** How to start a shell; only Bash uses it. */
  shell: ShellPlan;
}

/** Everything `execute` receives. */
export interface ToolContext extends ToolCallContext {
  /** Aborted when the call is cancelled or times out. */
  signal: AbortSignal;
  /**
   * Keeps the shell's sandbox across calls, where the caller offers it (a tool worker does, for its
   * lifetime): Bash runs in it when the plan allows (`ShellPlan.persistent`). Without it, each Bash call
   * starts a sandbox of its own.
   */
  shellRunner?: ShellRunner;
  /** Tells the caller how the call is going before its result (see `CallProgress`); absent, nobody listens. */
  progress?: (progress: CallProgress) => void;
}

/** Runs shell commands in a sandbox kept across calls (src/tools/_shell_host.ts). */
export interface ShellRunner {
  run(
    plan: ShellPlan & { persistent: PersistentShell },
    command: string,
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<ShellRun>;
}

/** What `validateInput` may look at: no I/O, only the input and the root. */
export interface ValidationContext {
  root: string;
}

/** JSON Schema of a tool's input as the Anthropic API expects it. */
export interface InputJsonSchema {
  type: "object";
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

/** A tool as the registry, the pipeline and the workers see it. */
export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  readonly category: ToolCategory;
  /** The zod schema: the TypeScript type, the validation and the JSON Schema in one declaration. */
  readonly inputSchema: z.ZodType<Input>;
  /** The JSON Schema derived from `inputSchema`, sent to the API. */
  readonly jsonSchema: InputJsonSchema;
  isReadOnly(): boolean;
  isDestructive(): boolean;
  isConcurrencySafe(input: Input): boolean;
  /** Semantic checks the schema cannot express; returns the message for the model, or null. */
  validateInput(input: Input, context: ValidationContext): string | null;
  /** The hard time limit of one call in milliseconds; the executor stops the call past it. */
  timeoutMs(input: Input): number;
  execute(context: ToolContext, input: Input): Promise<ToolResult>;
}

/**
 * What runs a tool's calls, without its input schema: the tool worker loads only these, and no zod (which
 * costs a worker ~45 ms and ~4 MB of heap to load). The input has been validated by the time it comes.
 */
export interface ToolRunner<Input = unknown> {
  readonly name: string;
  execute(context: ToolContext, input: Input): Promise<ToolResult>;
}

/**
 * A tool's `execute` that loads its runner with the first call made in this process. The main process runs
 * the tools in workers, which load the runners themselves: it never loads a runner, nor node:fs with it
 * (see `_shared.ts`). Tests and the direct executor call `execute` here.
 */
export function loadedOnCall<Input>(load: () => Promise<ToolRunner<Input>>): ToolRunner<Input>["execute"] {
  let loading: Promise<ToolRunner<Input>> | null = null;
  return async (context, input) => (await (loading ??= load())).execute(context, input);
}

/**
 * What is known of a tool without loading its code: enough to offer it to the model, list it, and derive
 * its worker's profile. Every Tool is one; the catalog (catalog.ts) has one for each built-in tool.
 */
export type ToolInfo = Pick<
  Tool<unknown>,
  "name" | "description" | "category" | "jsonSchema" | "isReadOnly" | "isDestructive"
>;

/** A tool whose input type has been erased, as stored in the registry. */
// deno-lint-ignore no-explicit-any -- the registry holds tools of every input type; callers validate first
export type AnyTool = Tool<any>;

/** What `defineTool` accepts: the required parts plus optional overrides of the defaults. */
export interface ToolDefinition<Input> {
  name: string;
  description: string;
  category: ToolCategory;
  inputSchema: z.ZodType<Input>;
  /** Default false. */
  isReadOnly?: boolean;
  /** Default `!isReadOnly`. */
  isDestructive?: boolean;
  /** Default false: running alongside other calls is opt-in, even for read-only tools. */
  isConcurrencySafe?: (input: Input) => boolean;
  /** Default: no semantic checks. */
  validateInput?: (input: Input, context: ValidationContext) => string | null;
  /** Default `DEFAULT_TOOL_TIMEOUT_MS`. */
  timeoutMs?: (input: Input) => number;
  execute: (context: ToolContext, input: Input) => Promise<ToolResult>;
}

/** The hard time limit of a call whose tool does not set its own. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Builds a Tool from a definition, filling conservative defaults.
 * Throws a TypeError at definition time for an invalid name, description or schema.
 */
export function defineTool<Input>(definition: ToolDefinition<Input>): Tool<Input> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new TypeError(`Cannot define tool "${definition.name}": names are letters, digits and _`);
  }
  if (definition.description.trim() === "") {
    throw new TypeError(`Cannot define tool "${definition.name}": the description is empty`);
  }
  const jsonSchema = toInputJsonSchema(definition.name, definition.inputSchema);
  const readOnly = definition.isReadOnly ?? false;
  const destructive = definition.isDestructive ?? !readOnly;
  if (readOnly && destructive) {
    throw new TypeError(`Cannot define tool "${definition.name}": a read-only tool cannot be destructive`);
  }
  const concurrencySafe = definition.isConcurrencySafe ?? (() => false);
  const validate = definition.validateInput ?? (() => null);
  const timeoutMs = definition.timeoutMs ?? (() => DEFAULT_TOOL_TIMEOUT_MS);
  return {
    name: definition.name,
    description: definition.description,
    category: definition.category,
    inputSchema: definition.inputSchema,
    jsonSchema,
    isReadOnly: () => readOnly,
    isDestructive: () => destructive,
    isConcurrencySafe: (input) => concurrencySafe(input),
    validateInput: (input, context) => validate(input, context),
    timeoutMs: (input) => timeoutMs(input),
    execute: (context, input) => definition.execute(context, input),
  };
}

function toInputJsonSchema(name: string, schema: z.ZodType): InputJsonSchema {
  const converted = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
  if (
    converted.type !== "object" || typeof converted.properties !== "object" || converted.properties === null
  ) {
    throw new TypeError(`Cannot define tool "${name}": the input schema must be a zod object`);
  }
  const { $schema: _ignored, ...rest } = converted;
  return {
    ...rest,
    type: "object",
    properties: withoutSafeIntegerBounds(converted.properties as Record<string, unknown>),
    required: Array.isArray(converted.required) ? converted.required.map(String) : [],
  };
}

/** Drops the ±2^53 bounds zod adds to every `.int()`: noise for the model, not a real constraint. */
function withoutSafeIntegerBounds(properties: Record<string, unknown>): Record<string, unknown> {
  const cleaned: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (typeof property !== "object" || property === null) {
      cleaned[name] = property;
      continue;
    }
    const copy = { ...property as Record<string, unknown> };
    if (copy.maximum === Number.MAX_SAFE_INTEGER) delete copy.maximum;
    if (copy.minimum === Number.MIN_SAFE_INTEGER) delete copy.minimum;
    cleaned[name] = copy;
  }
  return cleaned;
}

// The result builders live in results.ts, which loads without zod (the agent loop uses them too).
export { errorResult, stoppedResult, textResult } from "./results.ts";
