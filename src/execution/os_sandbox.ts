/**
 * The OS sandbox of the shell: decides once per session, in the main process, how Bash starts a shell
 * (bubblewrap flags, shell binary, cleared environment) and checks at start-up that it can run here.
 *
 * The worker that runs Bash only executes the plan; every file-system check happens here, on paths that
 * never come from the model (the workspace root, the home directory, `.git/hooks`).
 *
 * @module
 */
import type { SandboxMode, ShellPlan } from "../tools/tool.ts";
import { shellAsGranted } from "./profiles.ts";

/** What `planShell` needs to know about the session. */
export interface PlanShellOptions {
  /** Real path of the workspace root. */
  root: string;
  mode: SandboxMode;
  /** Let the sandboxed shell use the network (`--sandbox-network`). */
  network: boolean;
  /** The user's home directory; its credential folders are hidden from the shell. */
  home: string | undefined;
  /** The environment the allowlist is taken from (usually the main process's). */
  env: Record<string, string>;
  /** The bubblewrap program; default `"bwrap"` (looked up on PATH). Tests inject a missing one. */
  bwrap?: string;
  /** Shells to try, first existing wins; default `/bin/bash`, then `/bin/sh`. */
  shells?: readonly string[];
  /** Time limit of the preflight in milliseconds; default 10000. */
  preflightTimeoutMs?: number;
}

/** The outcome of the start-up check of the sandbox. */
export type SandboxPreflight = { ok: true } | { ok: false; message: string };

const DEFAULT_SHELLS = ["/bin/bash", "/bin/sh"] as const;
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const DEFAULT_PREFLIGHT_TIMEOUT_MS = 10_000;

/** Variables copied from the parent environment when set: locale, identity and toolchain locations, no secrets. */
const ALLOWED_ENV = [
  "PATH",
  "USER",
  "LOGNAME",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_NUMERIC",
  "LC_TIME",
  "TZ",
  "JAVA_HOME",
  "GOROOT",
  "GOPATH",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "NVM_DIR",
  "PYENV_ROOT",
  "VIRTUAL_ENV",
] as const;

/** Settings that keep programs from waiting for a terminal, a pager, an editor or a password. */
const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  TERM: "dumb",
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  EDITOR: "true",
  VISUAL: "true",
  GIT_EDITOR: "true",
  GIT_TERMINAL_PROMPT: "0",
  GIT_SSH_COMMAND: "ssh -o BatchMode=yes",
  GH_PROMPT_DISABLED: "1",
  DEBIAN_FRONTEND: "noninteractive",
  PIP_NO_INPUT: "1",
  CI: "1",
  NO_COLOR: "1",
};

/** Credential folders under the home directory, replaced by an empty tmpfs inside the sandbox. */
const HIDDEN_HOME_DIRS = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gh",
  ".kube",
  ".docker",
  ".config/gcloud",
  ".azure",
];
/** Credential files under the home directory, replaced by /dev/null inside the sandbox. */
const HIDDEN_HOME_FILES = [".netrc", ".git-credentials", ".pypirc"];

/**
 * Plans how Bash starts its shell for this session: the bubblewrap wrapper for `read-only` and
 * `workspace-write`, none for `danger-full-access`; the shell; the cleared, allowlisted environment.
 * Runs the preflight for the sandboxed modes; a failure lands in `unavailable`, never a silent fallback.
 */
export async function planShell(options: PlanShellOptions): Promise<ShellPlan> {
  const shell = await findShell(options.shells ?? DEFAULT_SHELLS);
  const env = shellEnvironment(options, shell ?? "/bin/sh");
  const base = { mode: options.mode, network: options.network, env };
  if (shell === null) {
    const tried = (options.shells ?? DEFAULT_SHELLS).join(", ");
    return {
      ...base,
      wrapper: [],
      shell: "/bin/sh",
      unavailable: `Cannot run Bash: no shell found (tried ${tried}): install bash`,
    };
  }
  if (options.mode === "danger-full-access") {
    // The worker spawns the shell itself, so it must bear the name the runtime flags granted.
    return { ...base, wrapper: [], shell: await shellAsGranted(shell, options.env.PATH), unavailable: null };
  }
  const wrapper = await bubblewrapWrapper(options, env);
  const preflight = await preflightSandbox({
    wrapper,
    shell,
    mode: options.mode,
    timeoutMs: options.preflightTimeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS,
  });
  return { ...base, wrapper, shell, unavailable: preflight.ok ? null : preflight.message };
}

/**
 * Runs the sandbox once with `SHELL -c true` (a few milliseconds) and explains any failure with the fixes:
 * install bubblewrap, lift Ubuntu's AppArmor restriction on user namespaces, or choose
 * `--sandbox danger-full-access` explicitly.
 */
export async function preflightSandbox(
  options: { wrapper: readonly string[]; shell: string; mode: SandboxMode; timeoutMs?: number },
): Promise<SandboxPreflight> {
  const [program, ...flags] = options.wrapper;
  if (program === undefined) return { ok: true };
  const prefix = `Cannot run Bash in the "${options.mode}" sandbox`;
  const fixes = "install bubblewrap (apt-get install bubblewrap); on Ubuntu 23.10 or later also allow " +
    "unprivileged user namespaces (sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor " +
    "profile for bwrap); or choose --sandbox danger-full-access explicitly to run commands without a sandbox";
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(program, {
      args: [...flags, options.shell, "-c", "true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      clearEnv: true,
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS),
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: false, message: `${prefix}: bubblewrap ("${program}") is not installed: ${fixes}` };
    }
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `${prefix}: cannot start bubblewrap ("${program}"): ${reason}: ${fixes}` };
  }
  if (output.success) return { ok: true };
  const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").slice(0, 3).join("; ");
  const detail = stderr === "" ? `exit code ${output.code}` : stderr;
  const namespaces = /namespace|uid map|setting up|Operation not permitted|Permission denied/i.test(stderr)
    ? " (the kernel refused to create the sandbox's namespaces)"
    : "";
  return {
    ok: false,
    message: `${prefix}: bubblewrap failed its start-up check${namespaces}: ${detail}: ${fixes}`,
  };
}

/** Summarises a shell plan for `mewcode doctor`: backend, mode, network, shell and the preflight result. */
export function describeShellPlan(plan: ShellPlan): string {
  const backend = plan.wrapper.length === 0
    ? "none (commands run unsandboxed)"
    : `bubblewrap (${plan.wrapper[0]})`;
  const lines = [
    `Shell sandbox: ${plan.mode}`,
    `  backend: ${backend}`,
    `  network: ${
      plan.network || plan.wrapper.length === 0 ? "allowed" : "off (--sandbox-network allows it)"
    }`,
    `  shell: ${plan.shell}`,
    `  environment: cleared; passed: ${Object.keys(plan.env).sort().join(", ")}`,
    plan.unavailable === null ? "  preflight: ok" : `  preflight: FAILED: ${plan.unavailable}`,
  ];
  return lines.join("\n");
}

async function findShell(candidates: readonly string[]): Promise<string | null> {
  for (const candidate of candidates) {
    const info = await statOrNull(candidate);
    if (info !== null && info.isFile) return candidate;
  }
  return null;
}

function shellEnvironment(options: PlanShellOptions, shell: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ALLOWED_ENV) {
    const value = options.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  if (env.LANG === undefined && env.LC_ALL === undefined) env.LANG = "C.UTF-8";
  if (options.home !== undefined) env.HOME = options.home;
  env.SHELL = shell;
  return { ...env, ...NON_INTERACTIVE_ENV };
}

async function bubblewrapWrapper(options: PlanShellOptions, env: Record<string, string>): Promise<string[]> {
  const root = options.root;
  const flags = [
    options.bwrap ?? "bwrap",
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(options.network ? [] : ["--unshare-net"]),
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
    "--tmpfs",
    "/tmp",
  ];
  if (options.mode === "read-only") {
    flags.push("--ro-bind", root, root);
  } else {
    flags.push("--bind", root, root);
    const git = `${root}/.git`;
    // Binding .git onto itself makes it a mount point, so it cannot be renamed away and replaced by a
    // .git with hooks of the model's choosing.
    if ((await statOrNull(git))?.isDirectory) flags.push("--bind", git, git);
    for (const protectedPath of [`${git}/hooks`, `${git}/config`, `${root}/.mewcode`]) {
      if (await statOrNull(protectedPath) !== null) flags.push("--ro-bind", protectedPath, protectedPath);
    }
  }
  // After the workspace, so a workspace that is the home directory (or contains it) does not uncover them.
  if (options.home !== undefined) {
    for (const name of HIDDEN_HOME_DIRS) {
      const path = `${options.home}/${name}`;
      if ((await statOrNull(path))?.isDirectory) flags.push("--tmpfs", path);
    }
    for (const name of HIDDEN_HOME_FILES) {
      const path = `${options.home}/${name}`;
      if ((await statOrNull(path))?.isFile) flags.push("--ro-bind", "/dev/null", path);
    }
  }
  flags.push("--clearenv");
  for (const [name, value] of Object.entries(env)) flags.push("--setenv", name, value);
  flags.push("--chdir", root);
  return flags;
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}
