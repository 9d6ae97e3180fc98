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
 * workspace while it lives (`#livePlaceholders`); an empty one still plans as a placeholder. Sessions in the
 * same workspace at once (aliases fired in parallel) each remove only the placeholders they made: an empty
 * folder found in place is left alone unless it was made again since (`#foundPlaceholders`).
 *
 * A sandbox that cannot start is reported in `unavailable`, never replaced by a weaker one silently.
 *
 * This class decides when a call's plan is made and keeps what plans are made from. call_plan.ts makes them
 * (the mounts and protected paths of one call), shell_startup.ts checks that a plan starts, git_watch.ts
 * keeps the git metadata to compare at the end, shell_sandbox_report.ts says what the sandbox does for
 * `mewcode doctor`, and shell_sandbox_options.ts holds what opens it.
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
import { type CredentialPlace, credentialPlaces, isCredentialPath } from "../common/home_credentials.ts";
import type { SandboxMode, ShellPlan } from "../tools/tool.ts";
import {
  type CallProtection,
  type CommandOverride,
  isRemade,
  noProtection,
  ownPlaceholders,
  planCall,
  type PlannedCall,
  protectionNow,
} from "./call_plan.ts";
import { removePlaceholders, revertAppeared, userGitConfig } from "./git_metadata.ts";
import { type HelperPaths, resolveHelpers } from "./helpers.ts";
import { type LimitCounters, limitNotes, type LimitPlan, openLimits, PROLOGUE_FAILED } from "./limits.ts";
import { type CommandResult, runSandboxedCommand } from "./sandboxed_command.ts";
import { type MachineView, machineView, setAsideMade } from "./shell_policy.ts";
import { describeSetAside, SESSION_SET_ASIDE_BYTES, type SetAsideBudget } from "./_set_aside.ts";
import { shellSandboxReport } from "./shell_sandbox_report.ts";
import {
  checkStart,
  closeInheritedDescriptors,
  fullAccessWrapper,
  INSTALL_HINT,
  preflight,
} from "./shell_startup.ts";
import {
  keptSandboxCaveats,
  type KeptSandboxFiles,
  prepareKeptSandboxFiles,
  recordPlaceholders,
  removeKeptSandboxFiles,
} from "./kept_sandbox.ts";
import { GitWatch } from "./git_watch.ts";
import { type KeptCommandOptions, KeptCommands, type KeptPlan } from "./kept_command.ts";
import { changedDirenvFiles, type DirenvRecord, recordDirenvFiles } from "./direnv_files.ts";
import { plannedAtTop, whyNestedMatters } from "./_nested_protected.ts";
import { checkObjectFiles } from "./git_packs.ts";
import { changedHookTasks, type HookTaskRecord, recordHookTasks } from "./git_hook_tasks.ts";
import { basename, dirname } from "../common/path.ts";
import { lstatSyncOrNull } from "../common/fs.ts";
import { recordUnfinished, takeUnfinished, type UnfinishedEntry } from "./_unfinished_set_aside.ts";
import { checkEarlierSessions, type EarlierChecks, recordGitBaseline } from "./_unchecked_git_scan.ts";
import type { HeldRecord } from "./_locked_records.ts";
import { sandboxFilter } from "./seccomp.ts";
import { EntryProbe } from "./_entry_probe.ts";
import { ParsedConfigs } from "./_git_layout.ts";
import type { ShellCall, ShellSandboxOptions } from "./shell_sandbox_options.ts";

export type { ShellCall, ShellSandboxOptions };

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
  /** The git metadata of the session's folders before the first shell call; null until then. */
  #watch: GitWatch | null = null;
  #watchStart: Promise<GitWatch> | null = null;
  /** The task runners' files the git hooks run (`package.json` for `npm test`), as of the watch's start. */
  #hookTasks: Promise<HookTaskRecord[]> | null = null;
  #direnvFiles: Promise<DirenvRecord[]> | null = null;
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
  /** What the session's calls may still set aside (`_set_aside.ts`). */
  readonly #setAsideBudget: SetAsideBudget = { bytes: SESSION_SET_ASIDE_BYTES };
  /** The end checks of earlier sessions killed before them (`_unchecked_git_scan.ts`), run once. */
  #earlierChecks: Promise<EarlierChecks> | null = null;
  /** What this session's end compares with, kept in case it never comes (`_unchecked_git_scan.ts`). */
  #baselineRecord: Promise<HeldRecord | null> | null = null;
  /** The lines about what an earlier session's interrupted end left, once set aside (`#setAsideLeftovers`). */
  #leftovers: Promise<string[]> | null = null;
  /** Empty folders first found where a placeholder goes (the user's, or another session's): their identity. */
  #foundPlaceholders = new Map<string, string>();
  #closed = false;
  /** The sandbox kept across mewcode's own read-only commands (`runCommand` with `keep`). */
  readonly #keptCommands = new KeptCommands();
  /** The folders bound read-only whole the model was last told of (`#readOnlyWholeNote`). */
  #readOnlyWholeSaid = "";
  /**
   * Whether commands may create user namespaces: only where bubblewrap cannot start with `--disable-userns`
   * and can without it (`#startCheck`).
   */
  #userNamespaces: boolean;
  /** The git config files the plans of this session's calls read, kept parsed while unchanged. */
  readonly #parsedConfigs = new ParsedConfigs();

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
      userNamespaces?: boolean;
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
    this.#userNamespaces = parts.userNamespaces ?? false;
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
      const { wrapper, caveat } = await fullAccessWrapper({
        bwrap: helpers.bwrap,
        root: options.root,
        env: view.env,
        shell,
        timeoutMs,
      });
      caveats.push(caveat);
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
    const seccomp = options.seccomp === undefined ? sandboxFilter() : options.seccomp;
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
    caveats.push(...keptSandboxCaveats({ bash: helpers.bash, sh: helpers.sh, kept: kept !== null }));
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
    const ready = () =>
      new ShellSandbox(options, {
        helpers,
        view,
        limits,
        seccomp,
        isolated: true,
        caveats,
        kept,
        plan: sandbox.#callPlan(protection),
        userNamespaces: sandbox.#userNamespaces,
      });
    if (options.deferPreflight) {
      const deferred = ready();
      deferred.#deferred = { outcome: null };
      return deferred;
    }
    const check = await sandbox.#startCheck(protection, timeoutMs);
    // bubblewrap created the placeholders' mount points on the host.
    await sandbox.#remove(ownPlaceholders(protection));
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
    if (this.plan.unavailable !== null || this.plan.wrapper.length === 0) {
      return { plan: this.plan, finish: () => Promise.resolve([]) };
    }
    if (this.mode !== "workspace-write") {
      // Nothing can be written, so nothing to protect; but a credential the user made since the session's view
      // was taken is hidden in this mode too (an untrusted repository's settings may choose it).
      const hiddenNow = this.#newCredentials(
        credentialPlaces([this.root, ...this.additionalRoots], this.#view.home),
      );
      const plan = hiddenNow.length === 0 ? this.plan : this.#callPlan({ ...noProtection(), hiddenNow });
      return { plan, finish: () => Promise.resolve([]) };
    }
    await this.#startWatch();
    const protection = await this.#protection();
    const { plan, readOnlyWhole } = this.#plannedCall(protection);
    const wholeNote = this.#readOnlyWholeNote(readOnlyWhole);
    // The kept sandbox keeps its placeholders mounted; those this plan no longer has may go (a plan that
    // differs gets a new sandbox).
    const current = new Set(protection.created);
    const dropped = [...this.#livePlaceholders].filter((path) => !current.has(path));
    for (const path of dropped) this.#livePlaceholders.delete(path);
    await this.#remove(dropped);
    const before = this.#counters();
    return {
      plan,
      finish: async (ran) => {
        const notes: string[] = [];
        if (ran?.keptSandbox === true) {
          for (const path of ownPlaceholders(protection)) this.#livePlaceholders.add(path);
        } else {
          await this.#removePlaceholders(ownPlaceholders(protection));
        }
        const roots = [this.root, ...this.additionalRoots];
        const setAsideIn = this.#options.setAsideIn ?? null;
        const budget = this.#setAsideBudget;
        // Listed now, after the command: what it made is there to see.
        const probe = new EntryProbe(roots);
        const mustNotAppear = protection.mustNotAppear.filter((path) => probe.mayExist(path));
        const mustNotBeMade = protection.mustNotBeMade.filter((path) => probe.mayExist(path));
        for (const appeared of await revertAppeared(mustNotAppear, roots, setAsideIn, budget)) {
          notes.push(
            isCredentialPath(appeared.planned)
              ? `"${appeared.path}" (a ${appeared.type}), which appeared during the command, ` +
                `${describeSetAside(appeared.outcome)}: the workspace holds the home folder, whose ` +
                "credentials and start-up files are the user's (their shell, git or editor reads and runs " +
                "them); tell the user what you need instead"
              : `${appeared.message}. Do not create git metadata; tell the user what you need instead`,
          );
        }
        for (const made of await setAsideMade(mustNotBeMade, roots, setAsideIn, budget)) {
          notes.push(
            `"${made.path}" (a ${made.type}), which appeared during the command, ` +
              `${describeSetAside(made.outcome)}: it is a protected path or on the way to one (another ` +
              "agent's or an editor's settings, a script a hook runs, code of the home), which the user's own " +
              "programs run outside any sandbox; tell the user what you need instead",
          );
        }
        if (this.#limits !== null) notes.push(...limitNotes(this.#limits.limits, before, this.#counters()));
        if (wholeNote !== null) notes.push(wholeNote);
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
      /**
       * Run it in the read-only sandbox kept across such commands (kept_command.ts), where there is one and
       * it is free: for frequent commands without input (ripgrep's searches). Else in one of its own.
       */
      keep?: boolean;
    },
  ): Promise<CommandResult> {
    const seccomp = this.#commandFilter();
    if (seccomp === null) {
      return {
        status: "failed",
        message: this.unavailable ?? "bubblewrap is not available to sandbox the command",
      };
    }
    if (options.keep === true && options.mode === "read-only" && (options.stdin ?? "") === "") {
      const kept = this.#keptCommandPlan(seccomp);
      const run: KeptCommandOptions = {
        timeoutMs: options.timeoutMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
        ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
      };
      const result = kept === null ? null : await this.#keptCommands.run(kept, command, run);
      if (result !== null) return result;
    }
    const protection = options.mode === "workspace-write" ? await this.#protection(true) : noProtection();
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
      await this.#removePlaceholders(ownPlaceholders(protection));
      const roots = [this.root, ...this.additionalRoots];
      const setAsideIn = this.#options.setAsideIn ?? null;
      await revertAppeared(protection.mustNotAppear, roots, setAsideIn, this.#setAsideBudget);
      await setAsideMade(protection.mustNotBeMade, roots, setAsideIn, this.#setAsideBudget);
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
   * Starts the read-only sandbox kept for mewcode's own commands (`runCommand` with `keep`) if none runs,
   * so that the next such command finds it ready: for the time before a Grep call can run.
   */
  warmKeptCommands(): void {
    const seccomp = this.#commandFilter();
    if (this.#closed || seccomp === null) return;
    const kept = this.#keptCommandPlan(seccomp);
    if (kept !== null) this.#keptCommands.warm(kept);
  }

  /** The seccomp program of mewcode's own commands; null where bubblewrap cannot sandbox them here. */
  #commandFilter(): Uint8Array | null {
    const seccomp = this.#seccomp ?? sandboxFilter();
    const works = this.mode === "danger-full-access" ? this.#isolated : this.unavailable === null;
    return this.helpers.bwrap === null || !works ? null : seccomp;
  }

  /** The plan of the kept sandbox of mewcode's own read-only commands; null where none can be kept. */
  #keptCommandPlan(seccomp: Uint8Array): KeptPlan | null {
    const plan = this.#callPlan(noProtection(), { mode: "read-only", network: false, seccomp, keep: true });
    return plan.persistent === undefined ? null : { ...plan, persistent: plan.persistent };
  }

  /**
   * Before a file tool writes: the git metadata's snapshot, once, as before the first shell call. WriteFile
   * alone can lay a folder out as a git directory with a config that runs commands; without a snapshot, a
   * session without shell calls reported nothing at its end.
   */
  async beforeWrite(): Promise<void> {
    await this.#startWatch();
  }

  /** Takes the git metadata's first snapshot, once (callers in parallel wait for the same one). */
  async #startWatch(): Promise<void> {
    // Before the first scan, which would take what an interrupted session left for the user's own.
    await (this.#leftovers ??= this.#setAsideLeftovers());
    // Before the first scan too, which would take what a killed session changed for the user's own.
    await (this.#earlierChecks ??= this.#checkEarlierSessions());
    this.#watchStart ??= GitWatch.start(
      [this.root, ...this.additionalRoots],
      userGitConfig(this.#options.env),
      this.#nestedNames(),
    );
    this.#watch ??= await this.#watchStart;
    const watch = this.#watch;
    this.#hookTasks ??= recordHookTasks([this.root, ...this.additionalRoots], {
      nestedDotGits: watch.dotGits,
      user: userGitConfig(this.#options.env),
    });
    const hookTasks = await this.#hookTasks;
    this.#direnvFiles ??= recordDirenvFiles(
      watch.named.filter((path) => basename(path) === ".envrc"),
      [this.root, ...this.additionalRoots],
    );
    const direnv = await this.#direnvFiles;
    // Once all three are taken: a session killed later has its end's comparisons run by the next one.
    const recordIn = this.#options.setAsideIn ?? null;
    this.#baselineRecord ??= recordIn === null
      ? Promise.resolve(null)
      : recordGitBaseline(recordIn, watch.baselines, { hookTasks, direnv });
    await this.#baselineRecord;
  }

  /**
   * The end-of-session check: git metadata anywhere in the workspace that gained hooks or command-running
   * configuration since the first shell call or file write; task runners' files a git hook runs that changed
   * (`package.json` for husky's `npm test`); packs and commit graphs written since that git finds do not
   * match the objects; the protected entries of any depth made since in a subfolder
   * (`api/.vscode`), which no mount could keep from being made: those are set aside; and the files an
   * `.envrc` has direnv load that changed (`.env` for `dotenv`). First, the same git checks for each earlier
   * session in the workspace that was killed before its own (`_unchecked_git_scan.ts`).
   * Lines for the user; empty when nothing changed.
   */
  async endOfSession(): Promise<string[]> {
    const leftovers = await (this.#leftovers ??= this.#setAsideLeftovers());
    const earlier = await (this.#earlierChecks ??= this.#checkEarlierSessions());
    if (this.#watch === null) {
      const lines = [...leftovers, ...earlier.lines, ...await this.#checkEarlierObjects(earlier)];
      await earlier.done();
      return lines;
    }
    const { lines, madeNamed, objectFiles } = await this.#watch.end(this.root);
    lines.unshift(...leftovers, ...earlier.lines);
    const git = this.helpers.git;
    lines.push(...await changedHookTasks(await this.#hookTasks ?? [], this.root));
    lines.push(...await this.#checkEarlierObjects(earlier));
    if (git !== null) {
      lines.push(
        ...await checkObjectFiles(objectFiles, {
          git,
          root: this.root,
          run: (command, timeoutMs) => this.runCommand(command, { mode: "read-only", timeoutMs }),
        }),
      );
    }
    const roots = [this.root, ...this.additionalRoots];
    const setAsideIn = this.#options.setAsideIn ?? null;
    // A root's own `.vscode` is planned as a placeholder (an empty folder on the host during the session).
    const made = madeNamed.filter((path) =>
      !plannedAtTop(path, { roots, protectedPaths: this.#options.protectedPaths })
    );
    const record = setAsideIn === null || made.length === 0
      ? null
      : await recordUnfinished(setAsideIn, identified(made));
    const setAside: SetAsideLine[] = [];
    for (const path of made) {
      const [entry] = await setAsideMade([path], roots, setAsideIn, this.#setAsideBudget);
      if (entry === undefined) continue;
      setAside.push({
        failed: entry.outcome.kind === "failed",
        line: `"${entry.path}" (a ${entry.type}) appeared during the session and ${
          describeSetAside(entry.outcome)
        }: ${
          whyNestedMatters(entry.path, { atTop: roots.includes(dirname(entry.path)) })
        }; look at what it holds before you put it back`,
      });
    }
    await record?.done();
    lines.push(...listedAtMost(setAside, setAsideIn));
    lines.push(...await changedDirenvFiles(await this.#direnvFiles ?? [], this.root));
    await (await this.#baselineRecord)?.done();
    await earlier.done();
    return lines;
  }

  /** The packs and commit graphs the earlier sessions killed before their end checks wrote, checked by git. */
  async #checkEarlierObjects(earlier: EarlierChecks): Promise<string[]> {
    const git = this.helpers.git;
    if (git === null) return [];
    const lines: string[] = [];
    for (const { prefix, files } of earlier.objectFiles) {
      const checked = await checkObjectFiles(files, {
        git,
        root: this.root,
        run: (command, timeoutMs) => this.runCommand(command, { mode: "read-only", timeoutMs }),
      });
      lines.push(...checked.map((line) => `${prefix}; since then: ${line}`));
    }
    return lines;
  }

  /** The end checks of the earlier sessions in the workspace that ended before theirs. Lines for the user. */
  #checkEarlierSessions(): Promise<EarlierChecks> {
    const folder = this.#options.setAsideIn ?? null;
    if (folder === null) {
      return Promise.resolve({ lines: [], objectFiles: [], done: () => Promise.resolve() });
    }
    return checkEarlierSessions(folder, {
      roots: [this.root, ...this.additionalRoots],
      user: userGitConfig(this.#options.env),
    });
  }

  /**
   * Sets aside what an earlier session in the workspace found at its end and could not set aside before its
   * process was gone (`_unfinished_set_aside.ts`): each entry still there as the same file. Lines for the user.
   */
  async #setAsideLeftovers(): Promise<string[]> {
    const setAsideIn = this.#options.setAsideIn ?? null;
    if (setAsideIn === null) return [];
    const roots = [this.root, ...this.additionalRoots];
    const setAside: SetAsideLine[] = [];
    for (const left of await takeUnfinished(setAsideIn)) {
      const now = lstatSyncOrNull(left.path);
      if (now === null || now.dev !== left.dev || now.ino !== left.ino) continue;
      const [entry] = await setAsideMade([left.path], roots, setAsideIn, this.#setAsideBudget);
      if (entry === undefined) continue;
      setAside.push({
        failed: entry.outcome.kind === "failed",
        line:
          `"${entry.path}" (a ${entry.type}) appeared during an earlier session here, which ended before ` +
          `it was set aside, and ${describeSetAside(entry.outcome)} now: ${
            whyNestedMatters(entry.path, { atTop: roots.includes(dirname(entry.path)) })
          }; look at what it holds before you put it back`,
      });
    }
    return listedAtMost(setAside, setAsideIn);
  }

  /** The names of the protected paths that apply at any depth, but `.git` (git_metadata.ts covers it). */
  #nestedNames(): string[] {
    const names = this.#options.protectedPaths
      .filter((entry) => entry.anyDepth && entry.path.toLowerCase() !== ".git")
      .map((entry) => entry.path.toLowerCase());
    return [...new Set(names)];
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
    await this.#remove(live);
    // Empty folders found in place of a placeholder and made anew since: by this session's sandboxes (a
    // kept sandbox's replacement starts after the call's end), once another session removed its own.
    const remade = [...this.#foundPlaceholders].filter(([path, identity]) => isRemade(path, identity));
    await this.#remove(remade.map(([path]) => path));
    await this.#keptCommands.close();
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

  /** The report of `mewcode doctor`. */
  describe(): string[] {
    return shellSandboxReport({
      plan: this.plan,
      mode: this.mode,
      helpers: this.helpers,
      view: this.#view,
      additionalRoots: this.additionalRoots,
      kept: this.#kept !== null,
      seccomp: this.#seccomp !== null,
      limits: this.#limits,
      isolated: this.#isolated,
      preflight: this.#preflightLine(),
      caveats: this.caveats,
    });
  }

  /** Removes placeholders after a call, except those a kept sandbox may still have mounted. */
  async #removePlaceholders(paths: readonly string[]): Promise<void> {
    await this.#remove(paths.filter((path) => !this.#livePlaceholders.has(path)));
  }

  /** Removes placeholders (those still empty) and takes those gone off the kept folder's record. */
  async #remove(paths: readonly string[]): Promise<void> {
    await removePlaceholders(paths, [this.root, ...this.additionalRoots]);
    if (this.#kept !== null && paths.length > 0) recordPlaceholders(this.#kept, { gone: paths });
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
    try {
      const check = await this.#startCheck(
        protection,
        this.#options.preflightTimeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS,
      );
      if (check.keptFailure !== null) await this.#giveUpKeptSandbox(check.keptFailure);
      if (this.#deferred !== null) this.#deferred.verdict = check.failure;
      return check.failure;
    } finally {
      // bubblewrap created the placeholders' mount points on the host.
      await this.#removePlaceholders(ownPlaceholders(protection));
    }
  }

  /**
   * The start-up check of the plan as it would be now. Where bubblewrap cannot start with `--disable-userns`
   * (older than 0.8.0) but can without it, commands may create user namespaces from then on, and `doctor`
   * says so: a weaker sandbox, but one that runs, as it did before bubblewrap had the option.
   */
  async #startCheck(
    protection: CallProtection,
    timeoutMs: number,
  ): Promise<{ failure: string | null; keptFailure: string | null }> {
    const check = await checkStart(this.#callPlan(protection), timeoutMs, this.mode);
    if (check.failure === null || this.#userNamespaces) return check;
    // One start tells (a sandbox per call): without a user namespace of its own, bubblewrap started as root
    // or set-user-ID also runs where the kernel refuses user namespaces.
    this.#userNamespaces = true;
    const { persistent: _kept, ...perCall } = this.#callPlan(protection);
    const allowing = await preflight({ plan: perCall, timeoutMs, mode: this.mode }) === null
      ? await checkStart(this.#callPlan(protection), timeoutMs, this.mode)
      : check;
    if (allowing.failure !== null) {
      this.#userNamespaces = false;
      return check;
    }
    this.#plan = { ...this.#callPlan(protection), unavailable: this.#plan.unavailable };
    this.#caveats.push(
      "commands can create user namespaces of their own (kernel attack surface): bubblewrap cannot start " +
        `here with --disable-userns (${check.failure.replace(`: ${INSTALL_HINT}`, "")}); bubblewrap 0.8.0 ` +
        "or later has it",
    );
    return allowing;
  }

  /** The credentials present now that the session's view did not hide (the user made them since). */
  #newCredentials(places: readonly CredentialPlace[]): { path: string; kind: "file" | "directory" }[] {
    return places.filter((place) =>
      place.state === "present" && !this.#livePlaceholders.has(place.path) &&
      !this.#view.hiddenInWorkspace.some((hidden) => hidden.path === place.path)
    ).map(({ path, kind }) => ({ path, kind }));
  }

  /** The protected paths as they are now; with `always`, also when the session's own mode needs none. */
  async #protection(always = false): Promise<CallProtection> {
    if (this.mode !== "workspace-write" && !always) return noProtection();
    const credentials = credentialPlaces([this.root, ...this.additionalRoots], this.#view.home);
    const protection = await protectionNow({
      roots: [this.root, ...this.additionalRoots],
      dotGits: this.#watch?.dotGits ?? [],
      nested: this.#watch?.named ?? [],
      protectedPaths: this.#options.protectedPaths,
      livePlaceholders: this.#livePlaceholders,
      // A missing credential folder is this session's placeholder on the host once a kept sandbox mounted it:
      // still missing, as far as the user's files go.
      missingCredentials: credentials.filter((place) =>
        place.state === "missing" || this.#livePlaceholders.has(place.path)
      ),
      newCredentials: this.#newCredentials(credentials),
      user: userGitConfig(this.#options.env),
      parsedConfigs: this.#parsedConfigs,
    });
    for (const { path, identity } of protection.found) {
      if (!this.#foundPlaceholders.has(path)) this.#foundPlaceholders.set(path, identity);
    }
    // On record before bubblewrap makes them, for the session that sweeps up after one killed.
    if (this.#kept !== null) recordPlaceholders(this.#kept, { made: protection.created });
    return protection;
  }

  /** The plan of one call (see `planCall`), from the sandbox as it is now. */
  #callPlan(
    protection: CallProtection,
    override: CommandOverride | null = null,
  ): ShellPlan {
    return this.#plannedCall(protection, override).plan;
  }

  /** The plan of one call, and the folders it binds read-only whole (see `planCall`). */
  #plannedCall(
    protection: CallProtection,
    override: CommandOverride | null = null,
  ): PlannedCall {
    const planning = {
      plan: this.plan,
      view: this.#view,
      helpers: this.helpers,
      root: this.root,
      additionalRoots: this.additionalRoots,
      mode: this.mode,
      network: this.network,
      limits: this.#limits,
      seccomp: this.#seccomp,
      kept: this.#kept,
      userNamespaces: this.#userNamespaces,
    };
    return planCall(planning, protection, override);
  }

  /**
   * What the model is told when a call's plan binds folders read-only whole (too many protected entries for
   * a mount each): once for each set of folders, null when told already or there are none.
   */
  #readOnlyWholeNote(folders: readonly string[]): string | null {
    const key = folders.join("\0");
    if (key === this.#readOnlyWholeSaid) return null;
    this.#readOnlyWholeSaid = key;
    if (folders.length === 0) return null;
    const listed = folders.slice(0, MAX_LISTED_WHOLE).map((folder) => `"${folder}"`).join(", ");
    const rest = folders.length - MAX_LISTED_WHOLE;
    return `These folders are read-only to commands as a whole: ${listed}${
      rest > 0 ? ` and ${rest} more` : ""
    }. They hold more protected entries (editor or agent settings, git metadata) than the sandbox can ` +
      "make read-only one by one (bubblewrap takes at most 9,000 arguments, and Linux limits their length); " +
      "write elsewhere, or tell the user what you need there";
  }

  #counters(): LimitCounters {
    return this.#limits?.counters() ?? { processLimitHits: 0, memoryKills: 0 };
  }
}

/** The folders bound read-only whole a note names; the rest are counted. */
const MAX_LISTED_WHOLE = 10;

/** A line about an entry set aside at the end of a session; `failed` when it is still in the workspace. */
interface SetAsideLine {
  line: string;
  failed: boolean;
}

/**
 * Entries set aside at a session's end that are each said on a line of their own: more than a session that
 * makes one of every protected name has (some 40). A model that makes
 * thousands of them (20,000 `.vscode` folders take two seconds) would otherwise bury the lines that matter
 * above them (a hook planted in a nested repository) under a screenful per hundred; the rest are counted.
 */
const MAX_LISTED_SET_ASIDE = 50;

/** The first MAX_LISTED_SET_ASIDE lines and every failure, then one line counting the rest. */
function listedAtMost(setAside: readonly SetAsideLine[], folder: string | null): string[] {
  const listed = setAside.filter((entry, index) => entry.failed || index < MAX_LISTED_SET_ASIDE);
  const rest = setAside.length - listed.length;
  if (rest === 0) return listed.map((entry) => entry.line);
  const where = folder === null ? "removed" : `moved into "${folder}" (or removed, past the limits)`;
  return [
    ...listed.map((entry) => entry.line),
    `${rest} more entries of protected names (editor, agent, direnv or mise settings) that appeared in ` +
    `subfolders were ${where} the same way: so many in one session were most likely made to bury the ` +
    "lines above; look at what they hold before you put any back",
  ];
}

/** Each path that exists, with the device and inode it has now. */
function identified(paths: readonly string[]): UnfinishedEntry[] {
  const entries: UnfinishedEntry[] = [];
  for (const path of paths) {
    const info = lstatSyncOrNull(path);
    if (info !== null) entries.push({ path, dev: info.dev, ino: info.ino ?? 0 });
  }
  return entries;
}
