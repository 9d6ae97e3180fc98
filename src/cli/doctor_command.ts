/**
 * `mewcode doctor`: checks what the sandbox needs on this machine and says how to fix what is missing.
 *
 * It prints the Deno version, the workspace and its trust, the shell sandbox (backend, mode, preflight),
 * and starts one tool worker per permission profile to show that Deno enforces it: each must be refused
 * `/etc/hostname`, may use what its profile grants (the workspace, or the program the shell tool spawns),
 * and must start at all, which it cannot when the profile exceeds the main process's runtime flags.
 *
 * @module
 */
import { type PermissionProfile, profilesForTools, shellProgram } from "../execution/profiles.ts";
import { sessionRegistry } from "../execution/runtime.ts";
import { describeError } from "../tools/errors.ts";
import type { ShellPlan } from "../tools/tool.ts";
import type { PermissionCheck, PermissionCheckOutcome } from "../../workers/permission_check_worker.ts";
import { defaultLimits } from "../sandbox/limits.ts";
import type { HelperPaths } from "../sandbox/helpers.ts";
import { ShellSandbox } from "../sandbox/shell_sandbox.ts";
import { PROTECTED_PATHS } from "../tools/protected_paths.ts";
import type { CliOptions } from "./args.ts";
import { runtimeOptionsFrom, type Workspace } from "./runtime_options.ts";

const CHECK_WORKER_URL = new URL("../../workers/permission_check_worker.ts", import.meta.url);
const CHECK_TIMEOUT_MS = 30_000;
/** A file outside every workspace that each tool worker must be refused. */
const OUTSIDE_FILE = "/etc/hostname";

/** One line of the report: a check, whether it passed, and how to fix it when it did not. */
interface Finding {
  ok: boolean;
  text: string;
  fix?: string;
}

/** What `runDoctor` checks; `helpers`, `env` and `print` are injectable for tests. */
export interface DoctorInput {
  workspace: Workspace;
  options: CliOptions;
  /** Default: resolved from the system directories. */
  helpers?: HelperPaths;
  /** Default: the process environment. */
  env?: Record<string, string>;
  /** Default: standard output. */
  print?: (text: string) => void;
}

/** Runs the checks, prints the report on stdout, and returns 0 when everything works, else 1. */
export async function runDoctor(input: DoctorInput): Promise<number> {
  const { workspace, options } = input;
  const root = workspace.root;
  const env = input.env ?? readEnvironment();
  const lines: string[] = ["mewcode doctor", ""];
  const problems: string[] = [];

  lines.push(`Deno: ${Deno.version.deno} (V8 ${Deno.version.v8}, TypeScript ${Deno.version.typescript})`);
  lines.push(
    `Workspace: ${root}${workspace.aliases.length ? ` (also named ${workspace.aliases.join(", ")})` : ""}`,
  );
  lines.push(
    "  trust: not configured (every folder is treated as untrusted; folder trust arrives with the permissions issue)",
  );
  const runtime = await runtimeOptionsFrom(workspace, options, env);
  if ((runtime.excludedPaths ?? []).length > 0) {
    lines.push(
      `  mewcode's state (outside the workspace for every tool): ${runtime.excludedPaths!.join(", ")}`,
    );
  }

  const sandbox = await ShellSandbox.open({
    root,
    mode: options.sandbox,
    network: options.sandboxNetwork,
    env,
    limits: runtime.limits ?? defaultLimits(),
    excluded: runtime.excludedPaths ?? [],
    protectedPaths: PROTECTED_PATHS,
    ...(input.helpers === undefined ? {} : { helpers: input.helpers }),
  });
  try {
    const plan = sandbox.plan;
    lines.push(...sandbox.describe());
    if (options.readOnly) {
      lines.push("  note: --read-only offers no Bash, so this session does not need the shell sandbox");
    } else if (plan.unavailable !== null) {
      problems.push(plan.unavailable);
    }

    lines.push("Tool workers (permissions derived from each tool's metadata):");
    const registry = sessionRegistry({ readOnly: options.readOnly });
    for (const profile of profilesForTools(registry.listEnabled(), { root, shell: plan })) {
      for (const finding of await checkProfile(profile, { root, plan })) {
        lines.push(`  ${profile.kind}: ${finding.ok ? "ok" : "FAILED"}: ${finding.text}`);
        if (!finding.ok) problems.push(`${profile.kind} tool worker: ${finding.text}: ${finding.fix ?? ""}`);
      }
    }
  } finally {
    await sandbox.close();
  }

  lines.push("");
  if (problems.length === 0) {
    lines.push("Everything works.");
  } else {
    lines.push(`${problems.length} problem${problems.length === 1 ? "" : "s"} to fix:`);
    for (const problem of problems) lines.push(`  - ${problem}`);
  }
  (input.print ?? console.log)(lines.join("\n"));
  return problems.length === 0 ? 0 : 1;
}

/** Starts a worker with the profile's permissions and checks that Deno enforces them. */
async function checkProfile(
  profile: PermissionProfile,
  session: { root: string; plan: ShellPlan },
): Promise<Finding[]> {
  const grants = describeGrants(profile);
  const checks: PermissionCheck[] = [{ kind: "read-file", path: OUTSIDE_FILE }];
  const program = profile.kind === "shell" ? shellProgram(session.plan) : null;
  if (profile.kind === "shell") {
    if (program !== null) checks.push({ kind: "spawn", program, args: ["--version"] });
  } else {
    checks.push({ kind: "read-dir", path: session.root });
  }
  const outcomes = await runChecks(profile, checks);
  if (!Array.isArray(outcomes)) {
    return [{
      ok: false,
      text: `a worker with ${grants} cannot start: ${outcomes.error}`,
      fix:
        "run mewcode through scripts/mewcode or the compiled binary, which pass --unstable-worker-options " +
        "and --no-prompt; a worker's grants must lie within the main process's --allow-* flags " +
        "(scripts/runtime_flags.txt)",
    }];
  }
  const findings: Finding[] = [];
  const [outside, allowed] = outcomes;
  findings.push(
    outside !== undefined && !outside.ok && outside.name === "NotCapable"
      ? { ok: true, text: `${grants}: reading ${OUTSIDE_FILE} is refused by Deno (NotCapable)` }
      : {
        ok: false,
        text: `${grants}: reading ${OUTSIDE_FILE} was not refused by Deno (${describeOutcome(outside)})`,
        fix: "use Deno 2.x with worker permissions (--unstable-worker-options); mewcode pins Deno 2.9.6",
      },
  );
  if (profile.kind === "shell" && program === null) {
    findings.push({ ok: true, text: "spawns nothing: the shell sandbox is unavailable (see above)" });
  } else if (allowed !== undefined) {
    const what = program === null ? "reading the workspace" : `spawning "${program}"`;
    findings.push(
      allowed.ok ? { ok: true, text: `${what} is allowed` } : {
        ok: false,
        text: `${what} is refused (${describeOutcome(allowed)})`,
        fix: program === null
          ? "check that the workspace is readable by your user"
          : `the shell tool spawns "${program}", which the main process's --allow-run must allow ` +
            "(scripts/runtime_flags.txt)",
      },
    );
  }
  return findings;
}

async function runChecks(
  profile: PermissionProfile,
  checks: PermissionCheck[],
): Promise<PermissionCheckOutcome[] | { error: string }> {
  let worker: Worker;
  try {
    worker = new Worker(CHECK_WORKER_URL, {
      type: "module",
      name: `mewcode-doctor-${profile.kind}`,
      deno: { permissions: profile.permissions },
    });
  } catch (error) {
    return { error: describeError(error) };
  }
  const { promise, resolve } = Promise.withResolvers<PermissionCheckOutcome[] | { error: string }>();
  const timer = setTimeout(
    () => resolve({ error: `it did not answer within ${CHECK_TIMEOUT_MS} ms` }),
    CHECK_TIMEOUT_MS,
  );
  worker.onmessage = (event: MessageEvent<PermissionCheckOutcome[]>) => resolve(event.data);
  worker.onerror = (event) => {
    event.preventDefault();
    resolve({ error: event.message });
  };
  try {
    worker.postMessage(checks);
    return await promise;
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}

function describeGrants(profile: PermissionProfile): string {
  const granted = Object.entries(profile.permissions)
    .filter(([, value]) => value !== false)
    .map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  return granted.length === 0 ? "no permissions" : granted.join(", ");
}

function describeOutcome(outcome: PermissionCheckOutcome | undefined): string {
  if (outcome === undefined) return "no answer";
  return outcome.ok ? "it succeeded" : `${outcome.name}: ${outcome.message}`;
}

function readEnvironment(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
