/**
 * Checks that Deno enforces each worker permission profile: starts one worker per profile of the given
 * tools and tries a few operations with Deno's own APIs (workers/permission_check_worker.ts). Each must be
 * refused `/etc/hostname`, may use what its profile grants (the workspace and the folders added to it, or the
 * program the shell tool spawns), and must start at all, which it cannot when the profile exceeds the main process's flags.
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import type { ShellPlan } from "../tools/tool.ts";
import type { PermissionCheck, PermissionCheckOutcome } from "../tools/worker_protocol.ts";
import { type PermissionProfile, profilesForTools, shellProgram, type ToolAccess } from "./profiles.ts";

const CHECK_WORKER_URL = new URL("../../workers/permission_check_worker.ts", import.meta.url);
const CHECK_TIMEOUT_MS = 30_000;
/** A file outside every workspace that each tool worker must be refused. */
const OUTSIDE_FILE = "/etc/hostname";

/** One finding: the profile it is about, whether it passed, and how to fix it when it did not. */
export interface ProfileFinding {
  kind: PermissionProfile["kind"];
  ok: boolean;
  text: string;
  fix?: string;
}

type Finding = Omit<ProfileFinding, "kind">;

/** The session a check is about: its workspace root, the folders added to it, and its shell plan. */
export interface CheckedSession {
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`); default none. */
  additionalRoots?: readonly string[];
  plan: ShellPlan;
}

/** Starts a worker per profile of `tools` and reports what Deno allowed and refused. */
export async function checkWorkerProfiles(
  tools: readonly ToolAccess[],
  session: CheckedSession,
): Promise<ProfileFinding[]> {
  const findings: ProfileFinding[] = [];
  const options = { root: session.root, additionalRoots: session.additionalRoots, shell: session.plan };
  for (const profile of profilesForTools(tools, options)) {
    for (const finding of await checkProfile(profile, session)) {
      findings.push({ kind: profile.kind, ...finding });
    }
  }
  return findings;
}

/** Starts a worker with the profile's permissions and checks that Deno enforces them. */
async function checkProfile(profile: PermissionProfile, session: CheckedSession): Promise<Finding[]> {
  const grants = describeGrants(profile);
  const checks: PermissionCheck[] = [{ kind: "read-file", path: OUTSIDE_FILE }];
  const program = profile.kind === "shell" ? shellProgram(session.plan) : null;
  const added = profile.kind === "shell" ? [] : session.additionalRoots ?? [];
  if (profile.kind === "shell") {
    if (program !== null) checks.push({ kind: "spawn", program, args: ["--version"] });
  } else {
    checks.push({ kind: "read-dir", path: session.root });
    for (const folder of added) checks.push({ kind: "read-dir", path: folder });
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
  const [outside, allowed, ...addedOutcomes] = outcomes;
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
  for (const [index, folder] of added.entries()) {
    const outcome = addedOutcomes[index];
    findings.push(
      outcome?.ok === true ? { ok: true, text: `reading the added folder "${folder}" is allowed` } : {
        ok: false,
        text: `reading the added folder "${folder}" is refused (${describeOutcome(outcome)})`,
        fix: "check that the folder is readable by your user",
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
