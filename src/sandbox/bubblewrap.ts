/**
 * The bubblewrap command line of the sandboxed shell, built from decisions made elsewhere (what to hide,
 * what to protect, which limits to join). Pure: no file-system access here.
 *
 * The order of the mounts matters, since a later mount covers an earlier one:
 *   1. the system read-only (`/`), fresh /dev, /proc (read-only, so no host sysctl can be written even
 *      as root), private /tmp and /var/tmp, and an empty /run (no host sockets);
 *   2. secrets of the system hidden (/dev/null over each file, an empty tmpfs over each folder);
 *   3. every home folder replaced by an empty tmpfs, the user's home recreated empty, and the toolchain
 *      folders under it bound back read-only;
 *   4. the workspace and the folders added to it (writable in workspace-write), and, where one contains a
 *      home folder, that folder hidden again (credentials hidden when the workspace is the home itself),
 *      as are the system secrets of step 2 inside one of them;
 *   5. protected paths inside the workspace and the added folders: bound onto themselves read-only, or an
 *      empty read-only tmpfs where a protected folder does not exist yet; `.git` bound onto itself so it
 *      cannot be replaced;
 *   6. mewcode's own state folder hidden wherever it became visible again;
 *   7. the cgroup files the shell joins its limits through, writable;
 *   8. for a sandbox kept across calls, the supervisor's shell (see `supervisorCopy`).
 *
 * @module
 */
import { describeError } from "../common/errors.ts";

/**
 * Where a kept sandbox's supervising shell lies inside it: in the sandbox's own /dev (a fresh tmpfs), where
 * nothing of the host is hidden by it.
 */
export const SUPERVISOR_PATH = "/dev/.mewcode-shell";

/** Where the sandbox's mqueue filesystem is mounted, as on most hosts: one entry per POSIX message queue. */
const MQUEUE_PATH = "/dev/mqueue";

/** Everything the command line is built from. */
export interface BubblewrapOptions {
  /** Absolute path of bwrap. */
  bwrap: string;
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`): bound exactly like it. Default none. */
  additionalRoots?: readonly string[];
  mode: "read-only" | "workspace-write";
  network: boolean;
  /** Files replaced by /dev/null (shadow files, ssh host keys). */
  hiddenFiles: readonly string[];
  /** Folders replaced by an empty tmpfs (/run, the user's runtime folder). */
  hiddenDirectories: readonly string[];
  /** Home folders replaced by an empty tmpfs (/home, /root, $HOME). */
  homeRoots: readonly string[];
  /** The user's home, recreated empty inside the sandbox; undefined when there is none. */
  home: string | undefined;
  /**
   * Paths under the home roots or the hidden folders bound back read-only: toolchains (~/.cargo/bin,
   * ~/.rustup, …), PATH entries, the target of /etc/resolv.conf.
   */
  exposed: readonly string[];
  /** Paths hidden again after the workspace bind when the workspace contains them (credentials). */
  hiddenInWorkspace: readonly { path: string; kind: "file" | "directory" }[];
  /**
   * Folders to bind onto themselves, writable, so they cannot be renamed away (`.git`); bound right after the
   * roots, with the folders above every hidden path inside them (`pinnedFolders`).
   */
  keepInPlace: readonly string[];
  /** Existing protected paths inside the workspace and the added folders, bound onto themselves read-only. */
  readOnly: readonly string[];
  /** Protected folders that do not exist yet: an empty read-only tmpfs is mounted there for the call. */
  placeholders: readonly string[];
  /** Real paths hidden by an empty tmpfs after everything else (mewcode's state folder). */
  excluded: readonly string[];
  /** Files bound writable (the cgroups' `cgroup.procs`). */
  writableFiles: readonly string[];
  /** Whether a seccomp program arrives on standard input (`--seccomp 0`, or fd 3 for a kept sandbox). */
  seccomp: boolean;
  /**
   * Whether commands may create user namespaces of their own. Default false: the sandbox gets a user
   * namespace of its own (`--unshare-user`, which bubblewrap makes anyway when not run as root) in which no
   * other can be made (`--disable-userns`). Inside one, a process holds every capability over new mount,
   * network and other namespaces: kernel code through which many local privilege escalations have gone, and
   * which no command of a coding agent needs. True only where bubblewrap cannot start so (one older than
   * 0.8.0 does not know the option).
   */
  userNamespaces?: boolean;
  /**
   * For a sandbox kept across calls: the host path of the supervisor's shell copy (mode 0111), bound at
   * `SUPERVISOR_PATH`; the supervisor runs as the sandbox's process 1 (`--as-pid-1`: nothing else in the
   * sandbox holds its pipes) and the seccomp program comes from fd 3. Default none: one sandbox per call.
   */
  supervisorCopy?: string;
  /**
   * The complete environment of the shell. bubblewrap must be started with exactly this environment (it
   * hands its own on): only `setIdSafeArguments` of it go into the arguments.
   */
  env: Readonly<Record<string, string>>;
  /**
   * The bytes all writable tmpfs mounts may hold together (`scratch`): shared among /tmp, /var/tmp, /dev/shm
   * and the home folders, with a little for each hidden folder. Default none: the kernel's, half the
   * machine's memory each.
   */
  scratchBytes?: number;
}

/** The bwrap program and its arguments, ready to be followed by `SHELL -c SCRIPT`. */
export function bubblewrapArguments(options: BubblewrapOptions): string[] {
  const { root } = options;
  const args = [
    options.bwrap,
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(options.network ? [] : ["--unshare-net"]),
    // Run as root, the user namespace maps root alone onto itself: files of other users show as nobody's,
    // which changes nothing for a process without capabilities.
    ...(options.userNamespaces === true ? [] : ["--unshare-user", "--disable-userns"]),
    // Run as root, bwrap keeps every capability, and CAP_SYS_ADMIN can remount "/" read-write.
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // A fresh procfs still writes the host's /proc/sys (as root: any sysctl); read-only closes it.
    "--remount-ro",
    "/proc",
    ...scratch(options, "/tmp", SCRATCH_SHARES.tmp),
    ...scratch(options, "/var/tmp", SCRATCH_SHARES.varTmp),
  ];
  for (const directory of options.hiddenDirectories) args.push(...emptied(options, directory));
  // What the system needs from a hidden folder (NixOS's /run/current-system, resolv.conf's target) comes back.
  for (const path of options.exposed) {
    if (options.hiddenDirectories.some((directory) => isAtOrBelow(path, directory))) {
      args.push("--ro-bind", path, path);
    }
  }
  for (const file of options.hiddenFiles) args.push("--ro-bind", "/dev/null", file);
  const homeShare = SCRATCH_SHARES.homes / Math.max(1, options.homeRoots.length);
  const hideHomes = (roots: readonly string[]) => {
    for (const home of roots) args.push(...scratch(options, home, homeShare));
    if (options.home !== undefined && roots.some((home) => isAtOrBelow(options.home!, home))) {
      args.push("--dir", options.home);
    }
    for (const path of options.exposed) {
      if (roots.some((home) => isAtOrBelow(path, home))) args.push("--ro-bind", path, path);
    }
  };
  // Shallowest first, so that a folder added inside another is bound after it and not covered by it.
  const roots = [root, ...options.additionalRoots ?? []].sort((a, b) => depth(a) - depth(b));
  const inRoots = (path: string) => roots.some((folder) => isAtOrBelow(path, folder));
  hideHomes(options.homeRoots.filter((home) => !inRoots(home)));
  for (const folder of roots) {
    args.push(options.mode === "read-only" ? "--ro-bind" : "--bind", folder, folder);
  }
  // Folders that must stay where they are, bound onto themselves (a mount point cannot be renamed) before
  // anything is mounted inside them (a bind taken later would show the host's folder over those mounts).
  if (options.mode === "workspace-write") {
    for (const path of pinnedFolders(options, roots)) args.push("--bind", path, path);
  }
  // A workspace that contains home folders (for example "/home") would show them again.
  const homesInRoots = options.homeRoots.filter((home) => !roots.includes(home) && inRoots(home));
  hideHomes(homesInRoots);
  // An added folder inside a home folder hidden just now comes back.
  for (const folder of roots) {
    if (homesInRoots.some((home) => isAtOrBelow(folder, home))) {
      args.push(options.mode === "read-only" ? "--ro-bind" : "--bind", folder, folder);
    }
  }
  // Protected paths are bound read-only before anything is hidden: a protected file or folder that holds a
  // credential (`~/.bashrc` when the workspace is the home, a toolchain folder with a token inside) would
  // otherwise show the credential again, bound over its hiding.
  if (options.mode === "workspace-write") {
    for (const path of options.readOnly) args.push("--ro-bind", path, path);
    for (const path of options.placeholders) args.push("--tmpfs", path, "--remount-ro", path);
  }
  for (const hidden of options.hiddenInWorkspace) {
    if (hidden.kind === "directory") args.push(...emptied(options, hidden.path));
    else args.push("--ro-bind", "/dev/null", hidden.path);
  }
  // A bound folder that contains system secrets (`--add-dir /etc`) would show them again: hide them again.
  for (const directory of options.hiddenDirectories) {
    if (!inRoots(directory) || roots.some((folder) => isAtOrBelow(folder, directory))) continue;
    args.push(...emptied(options, directory));
    for (const path of options.exposed) {
      if (isAtOrBelow(path, directory)) args.push("--ro-bind", path, path);
    }
  }
  for (const file of options.hiddenFiles) {
    if (inRoots(file)) args.push("--ro-bind", "/dev/null", file);
  }
  for (const path of options.excluded) args.push(...emptied(options, path));
  for (const file of options.writableFiles) args.push("--bind", file, file);
  const kept = options.supervisorCopy !== undefined;
  if (kept) args.push("--ro-bind", options.supervisorCopy!, SUPERVISOR_PATH);
  // /dev is read-only (its devices still work) but for a /dev/shm of its own: bubblewrap's /dev is a tmpfs
  // of half the machine's memory, which a command could fill, and in a kept sandbox what a command left there
  // would outlive it (`scratchFolders` watches /dev/shm).
  args.push(...scratch(options, "/dev/shm", SCRATCH_SHARES.shm));
  // The sandbox's POSIX message queues (its own IPC namespace's), listed there: in a kept sandbox one a
  // command left would outlive it (`scratchFolders` watches /dev/mqueue).
  args.push("--mqueue", MQUEUE_PATH, "--remount-ro", "/dev");
  if (kept) args.push("--as-pid-1");
  if (options.seccomp) args.push("--seccomp", kept ? "3" : "0");
  args.push(...setIdSafeArguments(options.env), "--chdir", root);
  return args;
}

/**
 * The variables glibc removes from the environment of a set-user-ID program (its secure mode), as bubblewrap
 * is on some systems: loader, allocator, locale and resolver settings and TMPDIR. Paths and switches, never
 * credentials.
 */
const DROPPED_FOR_SET_ID =
  /^(?:LD_\w*|MALLOC_\w*|GLIBC_TUNABLES|GCONV_PATH|GETCONF_DIR|HOSTALIASES|LOCALDOMAIN|LOCPATH|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR)$/;

/**
 * `--setenv` for the variables of `env` a set-user-ID bubblewrap would not hand on. The rest of the
 * environment reaches the shell through bubblewrap's own environment, not its arguments: a process's
 * arguments are readable by every local user (`ps`, /proc/<pid>/cmdline) for as long as it runs, a kept
 * sandbox's bubblewrap the whole session, and the tools' environment holds what users put in settings' `env`
 * (`NPM_TOKEN`, `GITHUB_TOKEN`). An environment is readable only by its owner.
 */
function setIdSafeArguments(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env)
    .filter(([name]) => DROPPED_FOR_SET_ID.test(name))
    .flatMap(([name, value]) => ["--setenv", name, value]);
}

/**
 * The folders of a kept sandbox whose entries only its commands can change: every writable tmpfs it mounts
 * (/tmp, /var/tmp, /dev/shm, the home and hidden folders, the hidden folders in the workspace), each folder
 * bubblewrap made inside one of them on the way to a mount point or for the user's home, and its mqueue
 * filesystem (the POSIX message queues of its IPC namespace, which outlive their processes). The
 * supervisor lists them when the sandbox starts and after every call: a difference means a command left
 * something behind that a fresh sandbox would not have, and the next call gets a new sandbox. What lies
 * inside the workspace and the added folders is theirs, never listed.
 */
export function scratchFolders(options: BubblewrapOptions): string[] {
  const roots = [options.root, ...options.additionalRoots ?? []];
  const areas = [
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    ...options.hiddenDirectories,
    ...options.homeRoots,
    ...options.excluded,
    ...options.hiddenInWorkspace.filter((hidden) => hidden.kind === "directory").map((hidden) => hidden.path),
  ];
  const folders = new Set([...areas, MQUEUE_PATH]);
  const destinations = [...roots, ...options.exposed, ...options.hiddenDirectories, ...options.homeRoots];
  if (options.home !== undefined) destinations.push(options.home);
  for (const destination of destinations) {
    if (roots.some((root) => destination !== root && isAtOrBelow(destination, root))) continue;
    for (const area of areas) {
      if (destination === area || !isAtOrBelow(destination, area)) continue;
      // Every folder strictly between the area and the destination was made by bubblewrap in the area.
      for (
        let folder = parentOf(destination);
        folder !== area && isAtOrBelow(folder, area);
        folder = parentOf(folder)
      ) {
        folders.add(folder);
      }
    }
  }
  // The user's home is made with --dir inside a home folder's tmpfs: a plain folder, written like the rest.
  if (options.home !== undefined && areas.some((area) => isAtOrBelow(options.home!, area))) {
    folders.add(options.home);
  }
  return [...folders].filter((folder) => !roots.includes(folder)).sort();
}

/**
 * `keepInPlace`, and every folder between a root and what is hidden, read-only or a placeholder inside it
 * (the home's credentials, the system folders and files a bound folder holds, mewcode's state folder),
 * shallowest first. A mount pins only its own path: renaming a folder above it carries the mount along, and
 * the hidden content shows under the new name (`mv .cargo .cargo2` then `cat .cargo2/credentials.toml`), or a
 * planted copy takes the old name (`mv state state2; mkdir -p state/mc`, then mewcode's next start reads
 * settings the model wrote; `mv .julia j; mkdir -p .julia/config` for a missing credential folder). Pinned,
 * each folder on the way fails the rename with EBUSY.
 */
function pinnedFolders(options: BubblewrapOptions, roots: readonly string[]): string[] {
  const pinned = new Set(options.keepInPlace);
  // And the folders above what is bound read-only (a script a hook runs, `scripts/hook.sh`) or covered by a
  // placeholder (`~/.julia/config`): renamed away, it would leave room for another of that name, and mewcode,
  // removing the placeholder after the call by its path, would follow a symlink put in its place.
  const hidden = [
    ...options.hiddenInWorkspace.map((entry) => entry.path),
    ...options.hiddenDirectories,
    ...options.hiddenFiles,
    ...options.excluded,
    ...options.readOnly,
    ...options.placeholders,
  ];
  for (const path of hidden) {
    const root = roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
    if (root === undefined) continue;
    for (
      let folder = parentOf(path);
      folder !== root && isAtOrBelow(folder, root);
      folder = parentOf(folder)
    ) {
      pinned.add(folder);
    }
  }
  return [...pinned].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * How `scratchBytes` is shared among the writable tmpfs mounts that hold files: the home folders' share is
 * split among them. A tmpfs holds its files in memory: without a size, each could take half the machine's
 * memory, and where no memory cgroup charges them to the sandbox (`src/sandbox/limits.ts`), a command filling
 * them would push the host into its OOM killer. Together within the sandbox's memory limit, a full one fails
 * the write with ENOSPC instead.
 */
const SCRATCH_SHARES = { tmp: 1 / 2, varTmp: 1 / 8, shm: 1 / 8, homes: 1 / 4 } as const;

/** Bytes of the tmpfs over a hidden folder (/run, mewcode's state folder): room for lock files, not for data. */
export const HIDDEN_TMPFS_BYTES = 1024 * 1024;

/** A writable tmpfs at `path` holding its `share` of `scratchBytes` when given. */
function scratch(options: BubblewrapOptions, path: string, share: number): string[] {
  return options.scratchBytes === undefined
    ? ["--tmpfs", path]
    : ["--size", String(Math.floor(options.scratchBytes * share)), "--tmpfs", path];
}

/** The empty tmpfs that hides a folder, small when the sandbox has a memory limit. */
function emptied(options: BubblewrapOptions, path: string): string[] {
  return options.scratchBytes === undefined
    ? ["--tmpfs", path]
    : ["--size", String(HIDDEN_TMPFS_BYTES), "--tmpfs", path];
}

function parentOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at <= 0 ? "/" : path.slice(0, at);
}

/**
 * The wrapper of `danger-full-access`: no file-system or network restriction, only a PID namespace with
 * its own /proc, so that commands cannot read mewcode's environment or memory through /proc/<pid>, and
 * background processes end with the call. Start bubblewrap with `env` as its environment (see
 * `BubblewrapOptions.env`).
 */
export function processIsolationArguments(
  options: { bwrap: string; root: string; env: Readonly<Record<string, string>> },
): string[] {
  const args = [
    options.bwrap,
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--bind",
    "/",
    "/",
    "--dev-bind",
    "/dev",
    "/dev",
    "--proc",
    "/proc",
    ...setIdSafeArguments(options.env),
    "--chdir",
    options.root,
  ];
  return args;
}

function depth(path: string): number {
  return path.split("/").length;
}

/** Whether `path` is `folder` or below it (normalised absolute paths). */
export function isAtOrBelow(path: string, folder: string): boolean {
  if (folder === "/") return true;
  return path === folder || path.startsWith(`${folder}/`);
}

/**
 * The program and arguments that start a kept sandbox (`PersistentShell`): `sh` opens the seccomp program
 * as fd 3 and replaces itself with bubblewrap, which runs the supervisor's shell with `shellArguments`
 * (`-c SCRIPT bash`). `sh` stays only until it has opened the file: the child process is bubblewrap.
 */
export function keptSandboxCommand(
  kept: { launcher: string; seccompFile: string; wrapper: readonly string[]; supervisor: string },
  shellArguments: readonly string[],
): { program: string; args: string[] } {
  const script = 'exec 3<"$1" || exit 126; shift; exec "$@"';
  return {
    program: kept.launcher,
    args: ["-c", script, "sh", kept.seccompFile, ...kept.wrapper, kept.supervisor, ...shellArguments],
  };
}

/** How long a kept sandbox given up while it starts may take to be built before it is killed anyway. */
const BUILD_WAIT_MS = 5_000;

/**
 * Starts a kept sandbox (`keptSandboxCommand`) with its three streams piped and its environment `env`
 * alone; the child, or why it could not start.
 */
export function spawnKeptSandbox(
  kept: { launcher: string; seccompFile: string; wrapper: readonly string[]; supervisor: string },
  shellArguments: readonly string[],
  env: Record<string, string>,
): Deno.ChildProcess | { failed: string } {
  const { program, args } = keptSandboxCommand(kept, shellArguments);
  try {
    return new Deno.Command(program, {
      args,
      clearEnv: true,
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    return { failed: `${program}: ${describeError(error)}` };
  }
}

/**
 * Waits until a kept sandbox says it runs (`ready` resolves; it rejects when the sandbox exited first), at
 * most `limitMs`, or until `signal` aborts. Given up, it still waits (at most `BUILD_WAIT_MS`) until the
 * sandbox is built, for the kill that follows: killed between its clone and the go-ahead it gives its child,
 * bubblewrap leaves that child waiting forever, before any sandbox is in place, holding the pipes (a model
 * asking for a 10 to 25 ms timeout left one behind every ten calls). Built, the sandbox dies whole.
 */
export async function waitForStart(
  ready: Promise<unknown>,
  options: { limitMs: number; signal?: AbortSignal },
): Promise<"ready" | "exited" | "timed-out" | "cancelled"> {
  const settled = ready.then(() => "ready" as const, () => "exited" as const);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort = () => {};
  const gaveUp = new Promise<"timed-out" | "cancelled">((resolve) => {
    timer = setTimeout(() => resolve("timed-out"), Math.max(0, options.limitMs));
    onAbort = () => resolve("cancelled");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
  });
  try {
    const outcome = await Promise.race([settled, gaveUp]);
    if (outcome === "timed-out" || outcome === "cancelled") {
      let waited: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => waited = setTimeout(resolve, BUILD_WAIT_MS))]);
      clearTimeout(waited);
    }
    return outcome;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Kills a kept sandbox's bubblewrap (and with it the whole sandbox, its PID namespace) unless it has exited,
 * waits until it has, and lets go of its pipes once their readers (`pumps`) have read what was left.
 */
export async function killKeptSandbox(
  sandbox: {
    alive: boolean;
    child: Deno.ChildProcess;
    exited: Promise<unknown>;
    stdin: WritableStreamDefaultWriter<Uint8Array>;
    pumps: readonly Promise<unknown>[];
  },
): Promise<void> {
  if (sandbox.alive) {
    try {
      sandbox.child.kill("SIGKILL");
    } catch {
      // Exited meanwhile.
    }
  }
  await sandbox.exited;
  await sandbox.stdin.close().catch(() => undefined);
  await Promise.all(sandbox.pumps);
}
