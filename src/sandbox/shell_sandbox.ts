/**
 * The sandbox of the shell for one session: decides in the main process how Bash starts a shell, checks
 * at start-up that it works here, and guards each call (protected paths decided again before it, what it
 * must not leave behind checked after it). The worker that runs Bash only executes the plan it is given.
 *
 *   read-only, workspace-write   bubblewrap: see bubblewrap.ts for the mounts (the folders added with
 *                                `--add-dir` are bound, protected and scanned like the workspace); a seccomp filter against
 *                                Unix sockets and io_uring (seccomp.ts); resource limits (limits.ts)
 *   danger-full-access           bubblewrap with only a PID namespace where it works (so commands cannot
 *                                read mewcode's environment through /proc), else the shell directly
 *
 * In the bubblewrap modes, Bash keeps one sandbox across calls (src/tools/_shell_host.ts; its files here, in
 * kept_sandbox.ts): the plan of each call carries `persistent`, and a call whose plan differs from the one
 * the kept sandbox was started with gets a new one. Placeholders the kept sandbox has mounted stay in the
 * workspace while it lives (`#livePlaceholders`); an empty one still plans as missing.
 *
 * A sandbox that cannot start is reported in `unavailable`, never replaced by a weaker one silently.
 *
 * The start-up check (bubblewrap once with `SHELL -c true`) costs a process start, and a session that runs
 * a prompt would pay it before its first model request, right before the prompt's own `git status` in the
 * sandbox. With `deferPreflight` it runs when it is first needed instead: before the first shell call, and,
 * to say why, when a command of mewcode's own (`runCommand`) does not succeed. A session that never runs
 * Bash pays for one bubblewrap start (its git status), not two. Until the check has run the plan reads as
 * available; a failed check makes every later call see the failure, as if it had failed at start-up.
 *
 * @module
 */
import type { ProtectedPath, SandboxMode, ShellPlan } from "../tools/tool.ts";
import { formatBytes } from "../common/size.ts";
import {
  bubblewrapArguments,
  isAtOrBelow,
  processIsolationArguments,
  scratchFolders,
  SUPERVISOR_PATH,
} from "./bubblewrap.ts";
import {
  diffGitFindings,
  type GitScan,
  planGitProtection,
  removePlaceholders,
  revertAppeared,
  scanGitMetadata,
} from "./git_metadata.ts";
import { describeHelpers, type HelperPaths, resolveHelpers } from "./helpers.ts";
import {
  describeLimits,
  type LimitCounters,
  type LimitPlan,
  openLimits,
  PROLOGUE_FAILED,
  type ResourceLimits,
} from "./limits.ts";
import { type CommandResult, runSandboxedCommand } from "./sandboxed_command.ts";
import { type MachineView, machineView, protectedTopLevel } from "./shell_policy.ts";
import { closeInheritedDescriptors, INSTALL_HINT, preflight } from "./shell_startup.ts";
import {
  isEmptyDirectory,
  type KeptSandboxFiles,
  prepareKeptSandboxFiles,
  removeKeptSandboxFiles,
} from "./kept_sandbox.ts";
import { UNIX_SOCKET_FILTER_SUMMARY, unixSocketFilter } from "./seccomp.ts";

/** How a session's shell sandbox is set up. */
export interface ShellSandboxOptions {
  /** Real path of the workspace root. */
  root: string;
  /**
   * Real paths of the folders added to the workspace (`--add-dir`): bound like it (read-write in
   * workspace-write), with the same protected paths and git metadata guard. Default none.
   */
  additionalRoots?: readonly string[];
  mode: SandboxMode;
  /** Let the sandboxed shell use the network (`--sandbox-network`). */
  network: boolean;
  /** The parent environment: PATH, HOME and the allowlisted variables are taken from it. */
  env: Readonly<Record<string, string>>;
  /** Variables the settings set for the tools (`env`): added to the shell's environment as they are. */
  extraEnv?: Readonly<Record<string, string>>;
  limits: ResourceLimits;
  /** Real paths the tools treat as outside the workspace (mewcode's state folder): hidden from the shell. */
  excluded: readonly string[];
  /** The workspace's protected paths (PROTECTED_PATHS): read-only for the shell. */
  protectedPaths: readonly ProtectedPath[];
  /** Default: resolved from the system directories and PATH. Tests inject missing helpers. */
  helpers?: HelperPaths;
  /** Where the kept sandbox's private folder is made; default the system's temporary folder (tests inject). */
  keptFilesIn?: string;
  /** Time limit of the start-up check in milliseconds; default 10000. */
  preflightTimeoutMs?: number;
  /** Default: the running architecture's filter. Tests pass null to see the sandbox refuse to start. */
  seccomp?: Uint8Array | null;
  /**
   * Run the start-up check when it is first needed rather than in `open` (see the module doc); default
   * false. Only the bubblewrap modes defer it; danger-full-access needs it to choose its wrapper.
   */
  deferPreflight?: boolean;
}

/** The plan of one call, and what to do once it has ended. */
export interface ShellCall {
  plan: ShellPlan;
  /**
   * Undoes the call's placeholders (unless it ran in the sandbox kept across calls, which keeps them
   * mounted) and checks what it must not leave behind; returns notes for the model.
   */
  finish(ran?: { keptSandbox: boolean }): Promise<string[]>;
}

const DEFAULT_PREFLIGHT_TIMEOUT_MS = 10_000;

/** The shell sandbox of a session. */
export class ShellSandbox {
  readonly root: string;
  /** The folders added to the workspace, bound like it. */
  readonly additionalRoots: readonly string[];
  readonly mode: SandboxMode;
  readonly network: boolean;
  readonly helpers: HelperPaths;
  #plan: ShellPlan;
  #caveats: string[];
  #options: ShellSandboxOptions;
  #view: MachineView;
  #limits: LimitPlan | null;
  #seccomp: Uint8Array | null;
  #isolated: boolean;
  /**
   * The git metadata before the first shell call of each scanned folder (the root, then each added folder
   * that no other root contains); null until then.
   */
  #snapshots: { root: string; scan: GitScan }[] | null = null;
  /**
   * The deferred start-up check: null when `open` ran it. `outcome` once it started, `verdict` once it
   * ended (null: bubblewrap works; else why not).
   */
  #deferred: { outcome: Promise<string | null> | null; verdict?: string | null } | null = null;
  /**
   * The files of a sandbox kept across Bash calls (the seccomp program, the supervisor's shell); null when
   * each call gets a sandbox of its own (danger-full-access, no `sh`, or the files could not be made).
   */
  #kept: KeptSandboxFiles | null;
  /**
   * Placeholders a kept sandbox may still have mounted: they stay (empty folders in the workspace) while it
   * lives, and an empty folder among them still counts as missing when the next call is planned.
   */
  #livePlaceholders = new Set<string>();
  #closed = false;

  private constructor(
    options: ShellSandboxOptions,
    parts: {
      helpers: HelperPaths;
      view: MachineView;
      limits: LimitPlan | null;
      seccomp: Uint8Array | null;
      plan: ShellPlan;
      isolated: boolean;
      caveats: string[];
      kept?: KeptSandboxFiles | null;
    },
  ) {
    this.root = options.root;
    this.additionalRoots = options.additionalRoots ?? [];
    this.mode = options.mode;
    this.network = options.network;
    this.helpers = parts.helpers;
    this.#plan = parts.plan;
    this.#caveats = parts.caveats;
    this.#options = options;
    this.#view = parts.view;
    this.#limits = parts.limits;
    this.#seccomp = parts.seccomp;
    this.#isolated = parts.isolated;
    this.#kept = parts.kept ?? null;
  }

  /**
   * The plan as of the start of the session (protected paths as they were then). With a deferred start-up
   * check that has not run, it reads as available: `prepareCall` and `preflight` give the check's verdict.
   */
  get plan(): ShellPlan {
    return this.#plan;
  }

  /** Said plainly in `mewcode doctor` and the README when a guarantee does not hold here. */
  get caveats(): readonly string[] {
    return this.#caveats;
  }

  /** Why Bash cannot run here, or null (also while a deferred start-up check has not run). */
  get unavailable(): string | null {
    return this.plan.unavailable ?? this.#deferred?.verdict ?? null;
  }

  /**
   * Resolves the helpers, decides what the shell sees, sets up the limits and runs the start-up check (or,
   * with `deferPreflight`, leaves it for when it is needed).
   */
  static async open(options: ShellSandboxOptions): Promise<ShellSandbox> {
    const helpers = options.helpers ?? await resolveHelpers({
      root: options.root,
      additionalRoots: options.additionalRoots ?? [],
      path: options.env.PATH,
    });
    const shell = helpers.bash ?? helpers.sh;
    const machine = await machineView({
      root: options.root,
      additionalRoots: options.additionalRoots ?? [],
      env: options.env,
      shell: shell ?? "/bin/sh",
      excluded: options.excluded,
    });
    const view = { ...machine, env: { ...machine.env, ...options.extraEnv } };
    const caveats: string[] = [];
    const base = {
      mode: options.mode,
      network: options.mode === "danger-full-access" || options.network,
      env: view.env,
      shell: shell ?? "/bin/sh",
    };
    const unavailable = (message: string): Promise<ShellSandbox> =>
      Promise.resolve(
        new ShellSandbox(options, {
          helpers,
          view,
          limits: null,
          seccomp: null,
          isolated: false,
          caveats,
          plan: { ...base, wrapper: [], prologue: [], seccomp: null, unavailable: message },
        }),
      );
    if (shell === null) {
      return unavailable("Cannot run Bash: no shell found in the system directories: install bash");
    }
    const timeoutMs = options.preflightTimeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS;
    if (options.mode === "danger-full-access") {
      let wrapper: string[] = [];
      if (helpers.bwrap !== null) {
        const isolated = processIsolationArguments({
          bwrap: helpers.bwrap,
          root: options.root,
          env: view.env,
        });
        const check = await preflight({
          plan: { wrapper: isolated, shell, seccomp: null },
          timeoutMs,
          mode: options.mode,
        });
        if (check === null) wrapper = isolated;
      }
      if (wrapper.length === 0) {
        caveats.push(
          "danger-full-access runs commands without a PID namespace (bubblewrap is not available): they can " +
            "read mewcode's environment, including the API key, through /proc/<pid>/environ, and background " +
            "processes started with setsid can outlive the call",
        );
      } else {
        caveats.push(
          "danger-full-access: commands can read and write everything your user can (files, network, " +
            "credentials); only mewcode's own process is out of their sight (a PID namespace)",
        );
      }
      return new ShellSandbox(options, {
        helpers,
        view,
        limits: null,
        seccomp: null,
        isolated: wrapper.length > 0,
        caveats,
        plan: {
          ...base,
          wrapper,
          prologue: ["exec </dev/null", closeInheritedDescriptors(shell)],
          seccomp: null,
          unavailable: null,
        },
      });
    }
    if (helpers.bwrap === null) {
      return unavailable(
        `Cannot run Bash in the "${options.mode}" sandbox: bubblewrap (bwrap) was not found in the system ` +
          `directories: ${INSTALL_HINT}`,
      );
    }
    const seccomp = options.seccomp === undefined ? unixSocketFilter() : options.seccomp;
    if (seccomp === null) {
      return unavailable(
        `Cannot run Bash in the "${options.mode}" sandbox: no seccomp filter against Unix sockets exists for ` +
          `${Deno.build.arch}, and the sandbox does not start without it: choose --sandbox danger-full-access ` +
          "explicitly to run commands without a sandbox",
      );
    }
    const limits = await openLimits({ limits: options.limits });
    for (const enforcement of [limits.processes, limits.memory]) {
      if (!enforcement.enforced) caveats.push(`resource limit not enforced: ${enforcement.why}`);
    }
    // The supervisor of a kept sandbox is a bash script.
    const kept = helpers.sh === null || helpers.bash === null ? null : await prepareKeptSandboxFiles({
      shell,
      seccomp,
      ...(options.keptFilesIn === undefined ? {} : { directory: options.keptFilesIn }),
    });
    if (kept === null) {
      const why = helpers.bash === null
        ? "bash is not installed"
        : helpers.sh === null
        ? "no sh found in the system directories"
        : "its files could not be made";
      caveats.push(
        `each Bash call starts a sandbox of its own (about 20 ms; a kept sandbox needs bash: ${why})`,
      );
    }
    if (helpers.bash === null) {
      caveats.push(
        "sh closes only descriptors 3 to 9 it inherited: one above 9 left open by mewcode's parent reaches commands",
      );
    }
    const sandbox = new ShellSandbox(options, {
      helpers,
      view,
      limits,
      seccomp,
      isolated: true,
      caveats,
      kept,
      plan: { ...base, wrapper: [], prologue: [], seccomp, unavailable: null },
    });
    const protection = await sandbox.#protection();
    const plan = sandbox.#callPlan(protection);
    const ready = () =>
      new ShellSandbox(options, { helpers, view, limits, seccomp, isolated: true, caveats, kept, plan });
    if (options.deferPreflight) {
      const deferred = ready();
      deferred.#deferred = { outcome: null };
      return deferred;
    }
    const check = await checkStart(plan, timeoutMs, options.mode);
    // bubblewrap created the placeholders' mount points on the host.
    await removePlaceholders(protection.placeholders);
    if (check.failure !== null) {
      await limits.close();
      if (kept !== null) await removeKeptSandboxFiles(kept);
      return unavailable(check.failure);
    }
    const opened = ready();
    // Given up before the session's plan is taken for its workers' permissions.
    if (check.keptFailure !== null) await opened.#giveUpKeptSandbox(check.keptFailure);
    return opened;
  }

  /**
   * Runs the start-up check now if it was deferred and has not run yet; returns why Bash cannot run here,
   * or null when it can (the check runs once per session).
   */
  async preflight(): Promise<string | null> {
    if (this.#deferred === null) return this.plan.unavailable;
    this.#deferred.outcome ??= this.#deferredPreflight();
    return await this.#deferred.outcome;
  }

  /** Decides the plan of one call: the protected paths as they are now. */
  async prepareCall(): Promise<ShellCall> {
    const failure = await this.preflight();
    if (failure !== null) {
      return { plan: { ...this.plan, unavailable: failure }, finish: () => Promise.resolve([]) };
    }
    if (this.plan.unavailable !== null || this.plan.wrapper.length === 0 || this.mode !== "workspace-write") {
      return { plan: this.plan, finish: () => Promise.resolve([]) };
    }
    this.#snapshots ??= await this.#scan();
    const protection = await this.#protection();
    const plan = this.#callPlan(protection);
    // The kept sandbox keeps its placeholders mounted; those this plan no longer has may go (a plan that
    // differs gets a new sandbox).
    const current = new Set(protection.placeholders);
    const dropped = [...this.#livePlaceholders].filter((path) => !current.has(path));
    for (const path of dropped) this.#livePlaceholders.delete(path);
    await removePlaceholders(dropped);
    const before = this.#counters();
    return {
      plan,
      finish: async (ran) => {
        const notes: string[] = [];
        if (ran?.keptSandbox === true) {
          for (const path of protection.placeholders) this.#livePlaceholders.add(path);
        } else {
          await this.#removePlaceholders(protection.placeholders);
        }
        for (const appeared of await revertAppeared(protection.mustNotAppear)) {
          notes.push(`${appeared.message}. Do not create git metadata; tell the user what you need instead`);
        }
        notes.push(...this.#limitNotes(before, this.#counters()));
        return notes;
      },
    };
  }

  /**
   * Runs a command mewcode itself needs (a trusted repository's hook, reading the repository with git) in
   * a sandbox with `mode`'s view of the workspace and no network, whatever the session's own shell mode:
   * the same mounts, seccomp filter, limits and git metadata guard as Bash. Fails (never runs unsandboxed)
   * where bubblewrap cannot run.
   */
  async runCommand(
    command: string,
    options: {
      mode: "read-only" | "workspace-write";
      stdin?: string;
      timeoutMs: number;
      signal?: AbortSignal;
      /** Output kept per stream, in characters; default 1 MiB (ripgrep's report for Grep can be larger). */
      maxOutputChars?: number;
      /** Takes standard output as it arrives instead of the result (see `SandboxedCommand.onStdout`). */
      onStdout?: (bytes: Uint8Array) => void;
    },
  ): Promise<CommandResult> {
    const seccomp = this.#seccomp ?? unixSocketFilter();
    const works = this.mode === "danger-full-access" ? this.#isolated : this.unavailable === null;
    if (this.helpers.bwrap === null || seccomp === null || !works) {
      return {
        status: "failed",
        message: this.unavailable ?? "bubblewrap is not available to sandbox the command",
      };
    }
    const protection = options.mode === "workspace-write"
      ? await this.#protection(true)
      : { keepInPlace: [], readOnly: [], placeholders: [], mustNotAppear: [] };
    const plan = this.#callPlan(protection, { mode: options.mode, network: false, seccomp });
    let result: CommandResult;
    try {
      result = await runSandboxedCommand(plan, {
        command,
        stdin: options.stdin ?? "",
        timeoutMs: options.timeoutMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
        ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
      });
    } finally {
      await this.#removePlaceholders(protection.placeholders);
      await revertAppeared(protection.mustNotAppear);
    }
    // A deferred check has not proven bubblewrap yet: a command that never started may mean it cannot run
    // here, and the check then says so, with the fixes (a timeout or an interruption is not that). One that
    // started in the sandbox proved it, whatever its exit code (ripgrep exits 1 without a match): the
    // check, which builds the session's own sandbox with its placeholder folders, is not run for it.
    const started = result.status === "exited" && result.started && result.code !== PROLOGUE_FAILED;
    if (this.#deferred !== null && !started && result.status !== "timed-out" && !options.signal?.aborted) {
      const failure = await this.preflight();
      if (failure !== null) return { status: "failed", message: failure };
    }
    return result;
  }

  /**
   * The end-of-session check: git metadata anywhere in the workspace that gained hooks or command-running
   * configuration since the first shell call. Lines for the user; empty when nothing changed.
   */
  async endOfSession(): Promise<string[]> {
    if (this.#snapshots === null) return [];
    const lines: string[] = [];
    for (const { root, scan } of this.#snapshots) {
      const diff = diffGitFindings(scan, await scanGitMetadata(root));
      // Findings are relative to the folder scanned: say which added folder they are in.
      const where = root === this.root ? "" : `In the added folder "${root}": `;
      for (const change of diff.changes) lines.push(`${where}${change.message}`);
      if (diff.notice !== null) lines.push(`${where}${diff.notice}`);
    }
    return lines;
  }

  /** The report of `mewcode doctor`. */
  describe(): string[] {
    const plan = this.plan;
    const lines = [`Shell sandbox: ${plan.mode}`];
    const backend = plan.wrapper.length === 0
      ? "none (commands run unsandboxed)"
      : this.mode === "danger-full-access"
      ? `bubblewrap (${plan.wrapper[0]}), PID namespace only`
      : `bubblewrap (${plan.wrapper[0]})`;
    lines.push(`  backend: ${backend}`);
    if (plan.wrapper.length > 0) {
      lines.push(
        this.#kept !== null && this.mode !== "danger-full-access"
          ? `  calls: one sandbox kept across calls (started by ${this.helpers.sh}); each command runs in a fresh ` +
            "bash, its processes are killed after it, and one that leaves files in /tmp or the home folder " +
            "gets the next call a new sandbox"
          : "  calls: a new sandbox for each call",
      );
    }
    lines.push(`  shell: ${plan.shell}`);
    lines.push("  helper programs (system directories first, never from the workspace):");
    lines.push(...describeHelpers(this.helpers).map((line) => `  ${line}`));
    if (this.mode !== "danger-full-access") {
      lines.push(
        `  network: ${plan.network ? "allowed (--sandbox-network)" : "off (--sandbox-network allows it)"}`,
      );
      lines.push(`  seccomp: ${this.#seccomp === null ? "none" : UNIX_SOCKET_FILTER_SUMMARY}`);
      lines.push(
        `  home: every home folder is an empty tmpfs (${this.#view.homeRoots.join(", ") || "none found"}); ` +
          `read-only toolchains: ${this.#view.exposed.join(", ") || "none"}`,
      );
      lines.push(
        `  hidden: ${[...this.#view.hiddenDirectories, ...this.#view.hiddenFiles].join(", ") || "nothing"} ` +
          "(host sockets and system secrets); /tmp and /var/tmp are private; /proc is read-only",
      );
      if (this.#view.excluded.length > 0) {
        lines.push(`  mewcode's state hidden: ${this.#view.excluded.join(", ")}`);
      }
      if (this.additionalRoots.length > 0) {
        lines.push(
          `  added folders (bound like the workspace, ${
            plan.mode === "read-only" ? "read-only" : "writable"
          }): ` +
            this.additionalRoots.join(", "),
        );
      }
      lines.push(
        `  protected in the workspace${this.additionalRoots.length > 0 ? " and the added folders" : ""}: ` +
          "git metadata (config, hooks, gitdir pointers), .mewcode, editor folders",
      );
      if (this.#limits !== null) {
        lines.push(
          "  limits:",
          ...describeLimits(this.#limits).map((line) => `  ${line}`),
        );
      }
    }
    lines.push(`  environment: cleared; passed: ${Object.keys(plan.env).sort().join(", ")}`);
    lines.push(
      this.#isolated || plan.wrapper.length > 0
        ? "  API key: not reachable (not in the shell's environment; mewcode's /proc entry is not visible)"
        : "  API key: READABLE by commands through /proc/<mewcode pid>/environ (no PID namespace)",
    );
    lines.push(this.#preflightLine());
    for (const caveat of this.caveats) lines.push(`  note: ${caveat}`);
    return lines;
  }

  /**
   * Removes the session's cgroups (once a deferred start-up check still running has ended), the files of the
   * kept sandbox and its placeholders. The kept sandbox ends by itself once its worker is gone (its standard
   * input closes).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#deferred?.outcome;
    const live = [...this.#livePlaceholders];
    this.#livePlaceholders.clear();
    await removePlaceholders(live);
    if (this.#kept !== null) await removeKeptSandboxFiles(this.#kept);
    await this.#limits?.close();
  }

  /**
   * Gives the kept sandbox up after it failed its start-up check where a sandbox per call passes it (its
   * supervisor's copy of bash lies in a temporary folder mounted noexec, say): each call then gets a sandbox
   * of its own, as without bash, and `doctor` says why.
   */
  async #giveUpKeptSandbox(failure: string): Promise<void> {
    if (this.#kept === null) return;
    await removeKeptSandboxFiles(this.#kept);
    this.#kept = null;
    const { persistent: _kept, ...perCall } = this.#plan;
    this.#plan = perCall;
    this.#caveats.push(
      `each Bash call starts a sandbox of its own (about 20 ms): the sandbox kept across calls cannot start here: ${
        failure.replace(`: ${INSTALL_HINT}`, "")
      }`,
    );
  }

  /** Removes placeholders after a call, except those a kept sandbox may still have mounted. */
  async #removePlaceholders(paths: readonly string[]): Promise<void> {
    await removePlaceholders(paths.filter((path) => !this.#livePlaceholders.has(path)));
  }

  /** The start-up check's line of the `mewcode doctor` report. */
  #preflightLine(): string {
    const failure = this.unavailable;
    if (failure !== null) return `  preflight: FAILED: ${failure}`;
    if (this.#deferred != null && this.#deferred.verdict === undefined) {
      return "  preflight: not run yet (it runs before the first command)";
    }
    return "  preflight: ok";
  }

  /** The deferred start-up check: the session's plan as it would be now, run once with `SHELL -c true`. */
  async #deferredPreflight(): Promise<string | null> {
    const protection = await this.#protection();
    const plan = this.#callPlan(protection);
    try {
      const check = await checkStart(
        plan,
        this.#options.preflightTimeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS,
        this.mode,
      );
      if (check.keptFailure !== null) await this.#giveUpKeptSandbox(check.keptFailure);
      if (this.#deferred !== null) this.#deferred.verdict = check.failure;
      return check.failure;
    } finally {
      // bubblewrap created the placeholders' mount points on the host.
      await this.#removePlaceholders(protection.placeholders);
    }
  }

  /** The protected paths as they are now; with `always`, also when the session's own mode needs none. */
  async #protection(always = false): Promise<{
    keepInPlace: string[];
    readOnly: string[];
    placeholders: string[];
    mustNotAppear: string[];
  }> {
    if (this.mode !== "workspace-write" && !always) {
      return { keepInPlace: [], readOnly: [], placeholders: [], mustNotAppear: [] };
    }
    const keepInPlace: string[] = [];
    const readOnly: string[] = [];
    const placeholders: string[] = [];
    const mustNotAppear: string[] = [];
    const dotGits = (this.#snapshots ?? []).flatMap((snapshot) => snapshot.scan.dotGits);
    // The same protection in every root; each plan covers only what lies in its own root.
    for (const root of [this.root, ...this.additionalRoots]) {
      const nestedDotGits = dotGits.filter((path) => isAtOrBelow(path, root));
      const git = await planGitProtection(root, { nestedDotGits });
      const topLevel = protectedTopLevel(root, this.#options.protectedPaths);
      keepInPlace.push(...git.keepInPlace);
      readOnly.push(...git.readOnly, ...topLevel.readOnly);
      placeholders.push(...git.placeholders, ...topLevel.placeholders);
      mustNotAppear.push(...git.mustNotAppear);
    }
    // A placeholder that a kept sandbox has mounted is an empty folder on the host: it is still a missing
    // protected folder (else every call would see a new plan). Anything put in it makes it the user's.
    const ours = readOnly.filter((path) => this.#livePlaceholders.has(path) && isEmptyDirectory(path));
    // With folders nested in one another, a mount must still never hide one made before it; and the same
    // paths must always give the same plan (a kept sandbox is reused only for an equal one).
    return {
      keepInPlace: shallowestFirst(keepInPlace),
      readOnly: shallowestFirst(readOnly.filter((path) => !ours.includes(path))),
      placeholders: shallowestFirst([...placeholders, ...ours]),
      mustNotAppear: shallowestFirst(mustNotAppear),
    };
  }

  /** Scans the git metadata of the root and of each added folder that no other of them contains. */
  async #scan(): Promise<{ root: string; scan: GitScan }[]> {
    const roots = [this.root, ...this.additionalRoots];
    const outermost = roots.filter((root) =>
      !roots.some((other) => other !== root && isAtOrBelow(root, other))
    );
    return await Promise.all(outermost.map(async (root) => ({ root, scan: await scanGitMetadata(root) })));
  }

  #callPlan(
    protection: { keepInPlace: string[]; readOnly: string[]; placeholders: string[] },
    override: { mode: "read-only" | "workspace-write"; network: boolean; seccomp: Uint8Array } | null = null,
  ): ShellPlan {
    const view = this.#view;
    const seccomp = override?.seccomp ?? this.#seccomp;
    const mounts = {
      bwrap: this.helpers.bwrap!,
      root: this.root,
      additionalRoots: this.additionalRoots,
      mode: override?.mode ?? (this.mode === "read-only" ? "read-only" : "workspace-write"),
      network: override?.network ?? this.network,
      hiddenFiles: view.hiddenFiles,
      hiddenDirectories: view.hiddenDirectories,
      homeRoots: view.homeRoots,
      home: view.home,
      exposed: view.exposed,
      hiddenInWorkspace: view.hiddenInWorkspace,
      keepInPlace: protection.keepInPlace,
      readOnly: protection.readOnly,
      placeholders: protection.placeholders,
      excluded: view.excluded,
      writableFiles: this.#limits?.writableFiles ?? [],
      seccomp: seccomp !== null,
      env: view.env,
    } as const;
    const { persistent: _sessionKept, ...base } = this.plan;
    // What every shell of the sandbox runs first, a kept sandbox's supervisor included.
    const setup = [closeInheritedDescriptors(base.shell), ...(this.#limits?.prologue ?? [])];
    const plan: ShellPlan = {
      ...base,
      wrapper: bubblewrapArguments(mounts),
      prologue: ["exec </dev/null", ...setup],
      seccomp,
      unavailable: null,
    };
    // mewcode's own commands (`override`) each get a sandbox: they are few, and run outside the Bash worker.
    const kept = this.#kept;
    if (override !== null || kept === null || seccomp === null || this.helpers.sh === null) return plan;
    return {
      ...plan,
      persistent: {
        launcher: this.helpers.sh,
        seccompFile: kept.seccompFile,
        wrapper: bubblewrapArguments({ ...mounts, supervisorCopy: kept.supervisorCopy }),
        supervisor: SUPERVISOR_PATH,
        prologue: setup,
        scratch: scratchFolders(mounts),
      },
    };
  }

  #counters(): LimitCounters {
    return this.#limits?.counters() ?? { processLimitHits: 0, memoryKills: 0 };
  }

  #limitNotes(before: LimitCounters, after: LimitCounters): string[] {
    const limits = this.#limits?.limits;
    if (limits === undefined) return [];
    const notes: string[] = [];
    if (after.processLimitHits > before.processLimitHits) {
      notes.push(
        `The command reached the sandbox's limit of ${limits.maxProcesses} processes; process creation ` +
          "failed. Run fewer processes at once (for example fewer parallel jobs)",
      );
    }
    if (after.memoryKills > before.memoryKills) {
      notes.push(
        `A process of the command was killed for going over the sandbox's memory limit of ` +
          `${formatBytes(limits.maxMemoryBytes)}. Use less memory (smaller inputs, fewer parallel jobs)`,
      );
    }
    return notes;
  }
}

/**
 * The start-up check of a plan. When the plan keeps a sandbox across calls and that fails, a sandbox per
 * call is checked too: if it works, only the kept sandbox is given up (`keptFailure`).
 */
async function checkStart(
  plan: ShellPlan,
  timeoutMs: number,
  mode: SandboxMode,
): Promise<{ failure: string | null; keptFailure: string | null }> {
  const failure = await preflight({ plan, timeoutMs, mode });
  if (failure === null || plan.persistent === undefined) return { failure, keptFailure: null };
  const { persistent: _kept, ...perCall } = plan;
  const perCallFailure = await preflight({ plan: perCall, timeoutMs, mode });
  return perCallFailure === null
    ? { failure: null, keptFailure: failure }
    : { failure: perCallFailure, keptFailure: null };
}

/** Distinct paths, shallowest first (then by name): a later mount may only go below an earlier one. */
function shallowestFirst(paths: readonly string[]): string[] {
  const depth = (path: string): number => path.split("/").length;
  return [...new Set(paths)].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}
