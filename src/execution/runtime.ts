/**
 * Assembles what runs tool calls for one session: registry, shell plan, executor and pipeline.
 *
 * No worker starts here: the session calls `prewarm` once its first model request is on its way, for the
 * profiles its permissions can use (usable_tools.ts), so nothing competes with that request for the CPU
 * and a run that never calls a tool of a profile never pays for its worker.
 *
 * @module
 */
import { credentialPlaces, homeCodeProtections, runtimeCodeProtections } from "../common/home_credentials.ts";
import { assertNever } from "../common/errors.ts";
import type { Approver } from "../permissions/decision.ts";
import type { PreToolUseHook } from "../permissions/hooks.ts";
import { BUILTIN_TOOLS } from "../tools/mod.ts";
import { createRegistry, type ToolRegistry } from "../tools/registry.ts";
import type { AnyTool, SandboxMode, ShellPlan } from "../tools/tool.ts";
import { DirectExecutor, type ToolExecutor } from "./executor.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import { defaultLimits, type ResourceLimits } from "../sandbox/limits.ts";
import { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import { gitLayoutProtections, PROTECTED_PATHS } from "../tools/protected_paths.ts";
import { planGitProtection, userGitConfig } from "../sandbox/git_metadata.ts";
import type { ProtectedPath } from "../tools/tool.ts";
import { checkAdditionalRoots } from "./additional_roots.ts";
import { FileRecordStore } from "./file_records.ts";
import { type CallAccelerator, type PipelineOptions, type SearchedPolicy, ToolPipeline } from "./pipeline.ts";
import { profileFor, type ProfileKind, profileKind, profilesForTools } from "./profiles.ts";
import { usableTools, type UsableToolsOptions } from "./usable_tools.ts";
import { WorkerExecutor, type WorkerExecutorOptions } from "./worker_executor.ts";
import { type GrepInput, grepTool } from "../tools/grep.ts";
import { globTool } from "../tools/glob.ts";
import { mountPointsSync } from "../common/mounts.ts";
import { isWithinRoot } from "../tools/_paths.ts";
import type { GrepWalkReport } from "../tools/_grep_prepass.ts";
import type { RipgrepGrep } from "../tools/grep_ripgrep.ts";
import { lazyImport } from "../common/lazy_import.ts";

/** The order in which `prewarm` starts the profiles' workers. */
const PREWARM_ORDER: readonly ProfileKind[] = ["read-only", "writer", "shell"];

/** Where tool calls run: permission-scoped workers (the sandbox), or in-process for benchmarks. */
export type ExecutorKind = "worker" | "direct";

/** How a session's tools are set up. */
export interface RuntimeOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Offer no writers and no shell. */
  readOnly: boolean;
  sandbox: SandboxMode;
  sandboxNetwork: boolean;
  strictLinks: boolean;
  /** Decides each call; its rules, when it shows them, also reach the searches (see PipelineOptions.policy). */
  policy: SearchedPolicy;
  approver?: Approver;
  hooks?: readonly PreToolUseHook[];
  /** PostToolUse: see PipelineOptions.afterCall. */
  afterCall?: PipelineOptions["afterCall"];
  /** The environment the shell's allowlist is taken from. */
  env: Record<string, string>;
  /** Variables the settings set for the tools, added to the shell's environment. */
  toolEnv?: Readonly<Record<string, string>>;
  /** Defaults to BUILTIN_TOOLS. Tools other than the built-in ones also need a `worker.workerUrl` that loads them. */
  tools?: readonly AnyTool[];
  /** Default "worker": every call runs in a worker whose permissions follow the tool's metadata. */
  executor?: ExecutorKind;
  /** Options of the worker pool (worker entry point, bounds, grace period). */
  worker?: WorkerExecutorOptions;
  /** Whether writers require a prior read of an existing file; default true (false for calls a person typed). */
  requireRead?: boolean;
  /** Other names of the root, as the user gave it (`-C link`). */
  rootAliases?: readonly string[];
  /**
   * Real paths of folders the tools and the shell use exactly like the root (`--add-dir`): existing
   * directories, never `/`, never inside or around `excludedPaths`; `createToolRuntime` throws an
   * AdditionalDirectoryError otherwise. Default none.
   */
  additionalRoots?: readonly string[];
  /** Real paths the tools and the shell treat as outside the workspace (mewcode's state folder). */
  excludedPaths?: readonly string[];
  /** What writers refuse and the shell sees read-only; default PROTECTED_PATHS ([] for calls a person typed). */
  protectedPaths?: readonly ProtectedPath[];
  /** The shell's resource limits; the fields not given are `defaultLimits()`'s. */
  limits?: Partial<ResourceLimits>;
  /** The helper programs; default: resolved from the system directories. Tests inject missing ones. */
  helpers?: HelperPaths;
  /** Where the shell sandbox makes its private folder (ShellSandboxOptions.keptFilesIn); tests inject. */
  keptFilesIn?: string;
  /**
   * Where the shell sandbox sets aside what a call made of a path that was to stay missing
   * (ShellSandboxOptions.setAsideIn); default none: it is removed.
   */
  setAsideIn?: string;
  /**
   * Check the shell sandbox when it is first needed, not before the runtime is ready (see
   * `ShellSandboxOptions.deferPreflight`): for sessions whose first model request should not wait for it.
   */
  deferShellCheck?: boolean;
  /**
   * Let Grep search with ripgrep in the read-only sandbox when ripgrep is installed; default true. Tests and
   * benchmarks may set the worker's search budget (see `RipgrepGrepOptions.prepassBudgetMs`).
   */
  ripgrep?: boolean | { prepassBudgetMs: number };
  /**
   * The folder where Grep keeps its walks for later processes (`src/execution/walk_store.ts`); default
   * none (each process walks again).
   */
  walkStore?: string;
  /** The mount table `walkAhead` reads (see there); default "/proc/self/mountinfo". */
  mountInfoFile?: string;
}

/** The running tool side of a session. */
export interface ToolRuntime extends AsyncDisposable {
  registry: ToolRegistry;
  pipeline: ToolPipeline;
  executor: ToolExecutor;
  /** The shell sandbox; its `plan` is the plan as of the start of the session. */
  sandbox: ShellSandbox;
  shell: ShellPlan;
  /** The folders added to the workspace, checked: real paths, without duplicates or the root. */
  additionalRoots: readonly string[];
  /**
   * What writers refuse unless the call's permission named it: the protected paths given, with the git
   * metadata the repository's layout puts elsewhere and the home's and mewcode's own code folders, which
   * only building the runtime finds. The permission policy asks about the same (`SessionPermissions`).
   */
  protectedPaths: readonly ProtectedPath[];
  files: FileRecordStore;
  /** The end-of-session checks (git metadata that gained hooks or commands); lines for the user. */
  finish(): Promise<string[]>;
  /**
   * Starts a worker for each profile of the tools these permissions can let run (only `toolName`'s, when
   * given), one after the other, unless one runs already, and loads Grep's ripgrep modules when Grep is one
   * of them; resolves when they are ready (never rejects). Nothing with the direct executor.
   */
  prewarm(permissions: UsableToolsOptions, toolName?: string): Promise<void>;
  /**
   * When Glob or Grep can run: starts their worker (unless one runs already) and has it walk the workspace
   * while no call runs, so that the first search lists only what changed since (`src/tools/_prewalk.ts`).
   * `prewarm` without a tool's name does this too. Nothing with the direct executor, nor when another file
   * system is mounted inside the workspace; with `onlyLargeRepository` (a one-shot session, which starts no
   * worker for a text answer otherwise), nothing unless the workspace root is a git repository whose index
   * holds some 2,000 files or more (`WALK_AHEAD_MIN_INDEX_BYTES`), and only at the first such ask (a one-shot
   * session asks at each response's start).
   */
  walkAhead(permissions: UsableToolsOptions, options?: { onlyLargeRepository?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * The size of a git index from which a one-shot session walks its workspace ahead: an entry takes 62 bytes
 * and its path, so some 2,000 tracked files. A smaller tree is walked in tens of milliseconds, less than the
 * walk ahead's worker costs to start (and ~15 MB of memory for a run that may answer with text only).
 */
export const WALK_AHEAD_MIN_INDEX_BYTES = 200_000;

/**
 * The size of the git index of a repository whose `.git` folder is at `root`, or 0 (none; a `.git` file of a
 * linked worktree or a submodule is not followed).
 */
function gitIndexBytes(root: string): number {
  try {
    if (!Deno.lstatSync(`${root}/.git`).isDirectory) return 0;
    const index = Deno.lstatSync(`${root}/.git/index`);
    return index.isFile ? index.size : 0;
  } catch {
    return 0;
  }
}

/** mewcode's own program folder: the checkout or the installed package. */
const PROGRAM_FOLDER = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** The tools a session offers: everything, or only the read-only tools with `readOnly`. */
export function sessionRegistry(options: { readOnly: boolean; tools?: readonly AnyTool[] }): ToolRegistry {
  return createRegistry(options.tools ?? BUILTIN_TOOLS, {
    allowWrite: !options.readOnly,
    allowBash: !options.readOnly,
  });
}

/** Builds the registry, plans the shell sandbox, starts the executor and assembles the pipeline. */
export async function createToolRuntime(options: RuntimeOptions): Promise<ToolRuntime> {
  const additionalRoots = await checkAdditionalRoots(options.additionalRoots ?? [], {
    root: options.root,
    excludedPaths: options.excludedPaths ?? [],
  });
  const registry = sessionRegistry(options);
  const roots = [options.root, ...additionalRoots];
  const base = options.protectedPaths ?? PROTECTED_PATHS;
  const { gitMetadata, homeCode } = await runtimeProtections(roots, options.env, base);
  const protectedPaths = [...base, ...gitMetadata, ...homeCode];
  // The file tools treat the home's credentials as outside the workspace when it holds the home, as the
  // shell sandbox hides them (`src/common/home_credentials.ts`).
  const credentials = credentialPlaces(roots, options.env.HOME);
  const excludedPaths = [...options.excludedPaths ?? [], ...credentials.map((place) => place.path)];
  const sandbox = await ShellSandbox.open({
    root: options.root,
    additionalRoots,
    mode: options.sandbox,
    network: options.sandboxNetwork,
    env: options.env,
    ...(options.toolEnv === undefined ? {} : { extraEnv: options.toolEnv }),
    limits: { ...defaultLimits(), ...options.limits },
    excluded: options.excludedPaths ?? [],
    // The session's own additions (the scripts its hooks run) are bound read-only too.
    protectedPaths: [...options.protectedPaths ?? PROTECTED_PATHS, ...homeCode],
    ...(options.helpers === undefined ? {} : { helpers: options.helpers }),
    ...(options.keptFilesIn === undefined ? {} : { keptFilesIn: options.keptFilesIn }),
    ...(options.setAsideIn === undefined ? {} : { setAsideIn: options.setAsideIn }),
    ...(options.deferShellCheck ? { deferPreflight: true } : {}),
  });
  const shell = sandbox.plan;
  let executor: ToolExecutor;
  try {
    executor = createExecutor(options);
  } catch (error) {
    // The sandbox holds cgroups and the kept sandbox's files: nothing may outlive a runtime that failed.
    await sandbox.close();
    throw error;
  }
  const files = new FileRecordStore();
  const accelerator = options.ripgrep === false
    ? null
    : grepAccelerator(executor, sandbox, options.ripgrep, options.walkStore);
  const profileOptions = { root: options.root, additionalRoots, shell };
  const usable = (permissions: UsableToolsOptions, toolName?: string): AnyTool[] => {
    const enabled = registry.listEnabled().filter((tool) => toolName === undefined || tool.name === toolName);
    // Reads come first in most sessions: their worker starts first.
    return usableTools(enabled, permissions)
      .sort((a, b) => PREWARM_ORDER.indexOf(profileKind(a)) - PREWARM_ORDER.indexOf(profileKind(b)));
  };
  // The worker of the searches walks the workspace while the model writes, so that the first Glob or Grep
  // lists only what changed since. Asked right after its start was (the message waits for it to be ready):
  // the reads' worker starts first.
  let walkedAhead = false;
  // The search tool of `tools` whose worker walks ahead, or null: none of them, one walk asked for already,
  // or one that cannot help or could stall. A file system mounted inside the workspace may be a network one
  // whose listing stalls: a walk nobody asked for must not hold the worker the first call needs (the calls
  // walk it when asked). A small repository is walked in milliseconds: starting a worker for that is not
  // worth its memory (see `walkAhead`).
  const walksAhead = (tools: readonly AnyTool[], onlyLargeRepository: boolean): AnyTool | null => {
    const searchTool = tools.find((tool) => tool === globTool || tool === grepTool);
    if (walkedAhead || searchTool === undefined) return null;
    const mounts = mountPointsSync(options.mountInfoFile) ?? [];
    if (roots.some((root) => mounts.some((point) => point !== root && isWithinRoot(root, point)))) {
      return null;
    }
    if (onlyLargeRepository && gitIndexBytes(options.root) < WALK_AHEAD_MIN_INDEX_BYTES) return null;
    return searchTool;
  };
  const startWalkAhead = (workers: WorkerExecutor, searchTool: AnyTool): void => {
    walkedAhead = true;
    // Grep's runtime takes the walk's report once the worker sends it (`RipgrepGrep.walkedAhead`).
    workers.prewalk(
      profileFor(searchTool, profileOptions),
      { root: options.root, additionalRoots, excludedPaths },
      accelerator === null ? undefined : (report) => accelerator.walkedAhead(report, options.root),
    );
  };
  const prewarm = async (permissions: UsableToolsOptions, toolName?: string): Promise<void> => {
    if (!(executor instanceof WorkerExecutor)) return;
    const tools = usable(permissions, toolName);
    const warming = executor.prewarm(profilesForTools(tools, profileOptions));
    const searchTool = toolName === undefined ? walksAhead(tools, false) : null;
    if (searchTool !== null) startWalkAhead(executor, searchTool);
    // A call of `toolName` is on its way: its schema's first parse compiles the parser (measured ~3 ms for
    // Grep's), paid here instead of by the call. An empty input fails, but takes the same path first.
    if (toolName !== undefined) { for (const tool of tools) tool.inputSchema.safeParse({}); }
    await Promise.all([warming, tools.includes(grepTool) ? accelerator?.prepare?.() : undefined]);
  };
  // A one-shot session asks at each response's start; the first answer holds for the session (the repository's
  // size and mounts, read again each turn, cost ~0.1 ms of every turn's critical path).
  let askedOnce = false;
  const walkAhead = async (
    permissions: UsableToolsOptions,
    walkOptions: { onlyLargeRepository?: boolean } = {},
  ): Promise<void> => {
    if (!(executor instanceof WorkerExecutor)) return;
    if (walkOptions.onlyLargeRepository === true) {
      if (askedOnce) return;
      askedOnce = true;
    }
    const searches = usable(permissions).filter((tool) => tool === globTool || tool === grepTool);
    const searchTool = walksAhead(searches, walkOptions.onlyLargeRepository === true);
    if (searchTool === null) return;
    const warming = executor.prewarm(profilesForTools(searches, profileOptions));
    startWalkAhead(executor, searchTool);
    await warming;
  };
  const pipeline = new ToolPipeline({
    registry,
    executor,
    ...(accelerator === null ? {} : { accelerator }),
    policy: options.policy,
    // The policy of a session resolves "~/" from the same variable (src/session/session_permissions.ts).
    home: options.env.HOME ?? "/",
    files,
    root: options.root,
    strictLinks: options.strictLinks,
    shell: sandbox,
    requireRead: options.requireRead ?? true,
    rootAliases: options.rootAliases ?? [],
    additionalRoots,
    excludedPaths,
    protectedPaths,
    ...(options.approver ? { approver: options.approver } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.afterCall ? { afterCall: options.afterCall } : {}),
  });
  const close = async () => {
    await accelerator?.close?.();
    await executor.close();
    await sandbox.close();
  };
  return {
    registry,
    pipeline,
    executor,
    sandbox,
    shell,
    additionalRoots,
    protectedPaths,
    files,
    finish: () => sandbox.endOfSession(),
    prewarm,
    walkAhead,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * What writers refuse of each root's git metadata besides `base`'s names: what the shell sandbox pins before
 * each call (`planGitProtection`, with the `core.hooksPath` of the user's global config too), read once:
 * the config that names it is protected for the whole session. A `.git` file's git directory, a bare
 * repository's config and hooks, included config files and the folders of hooks are refused like `.git`.
 */
/**
 * What a runtime protects beyond `base` (the session's protected paths), found in the roots (real paths, the
 * workspace first): the git metadata the repository's layout puts elsewhere (a `.git` file's git directory,
 * the `core.hooksPath` folder), and the home's folders of code the user runs later when a root holds the home,
 * with the code mewcode itself runs in any root (both read-only in the sandbox as well). With no `base` (a
 * call a person typed), git metadata is not protected, as `.git` is not.
 */
export async function runtimeProtections(
  roots: readonly string[],
  env: Readonly<Record<string, string>>,
  base: readonly ProtectedPath[],
): Promise<{ gitMetadata: ProtectedPath[]; homeCode: ProtectedPath[] }> {
  const homeCode = [
    ...homeCodeProtections(roots, env.HOME),
    ...runtimeCodeProtections(roots, { env, denoBinary: Deno.execPath(), program: PROGRAM_FOLDER }),
  ];
  const gitMetadata = base.length === 0 ? [] : await gitMetadataProtections(roots, env, base);
  return { gitMetadata, homeCode };
}

async function gitMetadataProtections(
  roots: readonly string[],
  env: Readonly<Record<string, string>>,
  base: readonly ProtectedPath[],
): Promise<ProtectedPath[]> {
  const user = userGitConfig(env);
  const protections: ProtectedPath[] = [];
  for (const root of roots) {
    const plan = await planGitProtection(root, { user });
    protections.push(...gitLayoutProtections({
      root,
      paths: [...plan.readOnly, ...plan.placeholders, ...plan.mustNotAppear],
      hooksFolders: plan.hooksFolders,
      hookFiles: plan.hookFiles,
    }, base));
  }
  return protections;
}

/**
 * Grep through ripgrep where ripgrep is installed (`src/tools/grep_ripgrep.ts`): the worker still walks and
 * decides, ripgrep searches the contents in the read-only shell sandbox, and any doubt falls back to the worker.
 * Its modules load when a Grep call begins (`prepare`, from `prewarm`, while the call's input streams), or
 * with the first call: a session that never greps never reads them.
 */
/** Grep's accelerator, which also takes the report of the walk ahead of the calls (`_prewalk.ts`). */
interface GrepAccelerator extends CallAccelerator {
  walkedAhead(report: GrepWalkReport, root: string): void;
}

function grepAccelerator(
  executor: ToolExecutor,
  sandbox: ShellSandbox,
  tuning: RuntimeOptions["ripgrep"],
  walkStore: string | undefined,
): GrepAccelerator | null {
  const rg = sandbox.helpers.rg;
  if (rg === null) return null;
  let loaded: RipgrepGrep | null = null;
  // A walk ahead's report that came before Grep's modules loaded: given to them once they have.
  let walked: { report: GrepWalkReport; root: string } | null = null;
  let loading: Promise<RipgrepGrep> | null = null;
  let largeRepository: boolean | null = null;
  const load = async (): Promise<RipgrepGrep> => {
    const [{ RipgrepGrep }, { runRipgrep }, { WalkStore }] = await Promise.all([
      lazyImport<typeof import("../tools/grep_ripgrep.ts")>(
        new URL("../tools/grep_ripgrep.ts", import.meta.url),
      ),
      lazyImport<typeof import("../sandbox/ripgrep_command.ts")>(
        new URL("../sandbox/ripgrep_command.ts", import.meta.url),
      ),
      lazyImport<typeof import("./walk_store.ts")>(new URL("./walk_store.ts", import.meta.url)),
    ]);
    loaded = new RipgrepGrep({
      ...(typeof tuning === "object" ? { prepassBudgetMs: tuning.prepassBudgetMs } : {}),
      ...(walkStore === undefined ? {} : { keeper: new WalkStore(walkStore) }),
      runWorker: (input, context, signal, progress) =>
        executor.execute({ tool: grepTool, input, context }, { signal, progress }),
      runRipgrep: (search, options) =>
        runRipgrep(sandbox, { rg, cat: sandbox.helpers.cat, ...search }, options),
    });
    if (walked !== null) loaded.walkedAhead(walked.report, walked.root);
    walked = null;
    return loaded;
  };
  return {
    walkedAhead: (report, root) => {
      if (loaded === null) walked = { report, root };
      else loaded.walkedAhead(report, root);
    },
    run: async (request, options) => {
      if (request.tool !== grepTool) return null;
      const grep = loaded ?? await (loading ??= load());
      return await grep.run(request.input as GrepInput, request.context, options.signal);
    },
    prepare: async () => {
      // In a repository large enough for ripgrep to search, the sandbox it searches in starts meanwhile
      // (~20-50 ms), for the call not to wait for it. A small tree is searched in the worker (see
      // `SMALL_TREE_FILES`), and a kept sandbox there would only hold memory.
      largeRepository ??= gitIndexBytes(sandbox.root) >= WALK_AHEAD_MIN_INDEX_BYTES;
      if (largeRepository) sandbox.warmKeptCommands();
      const grep = await (loading ??= load()).catch(() => null);
      grep?.warmUp();
    },
    // Before the first Grep there is nothing to forget.
    changed: () => loaded?.forget(),
    close: async () => await loaded?.idle(),
  };
}

function createExecutor(options: RuntimeOptions): ToolExecutor {
  const kind = options.executor ?? "worker";
  switch (kind) {
    case "worker":
      return new WorkerExecutor(options.worker ?? {});
    case "direct":
      return new DirectExecutor();
    default:
      return assertNever(kind);
  }
}
