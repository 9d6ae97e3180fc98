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
import {
  AdditionalDirectoryError,
  type HelperPaths,
  openSession,
  type Session,
  stateFolders,
} from "../session/session.ts";
import type { CliOptions } from "./args.ts";
import type { Workspace } from "../session/workspace.ts";
import { sessionSetup } from "./session_options.ts";

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
  const state = await stateFolders(env);
  if (state.length > 0) {
    lines.push(`  mewcode's state (outside the workspace for every tool): ${state.join(", ")}`);
  }

  const print = input.print ?? console.log;
  let opened: Session;
  try {
    opened = await openSession({
      ...(await sessionSetup(workspace, options, env)).options,
      persist: false,
      ...(input.helpers === undefined ? {} : { helpers: input.helpers }),
    });
  } catch (error) {
    if (!(error instanceof AdditionalDirectoryError)) throw error;
    lines.push(`  added folders: FAILED: ${error.message}`, "", "1 problem to fix:", `  - ${error.message}`);
    print(lines.join("\n"));
    return 1;
  }
  await using session = opened;
  const added = session.tools.additionalRoots;
  if (added.length > 0) {
    lines.push(`  added folders (the tools and the shell use them like the workspace): ${added.join(", ")}`);
  }
  const sandbox = session.tools.sandbox;
  const plan = sandbox.plan;
  lines.push(...sandbox.describe());
  if (options.readOnly) {
    lines.push("  note: --read-only offers no Bash, so this session does not need the shell sandbox");
  } else if (plan.unavailable !== null) {
    problems.push(plan.unavailable);
  }

  lines.push("Tool workers (permissions derived from each tool's metadata):");
  for (const finding of await session.checkWorkers()) {
    lines.push(`  ${finding.kind}: ${finding.ok ? "ok" : "FAILED"}: ${finding.text}`);
    if (!finding.ok) problems.push(`${finding.kind} tool worker: ${finding.text}: ${finding.fix ?? ""}`);
  }

  lines.push("");
  if (problems.length === 0) {
    lines.push("Everything works.");
  } else {
    lines.push(`${problems.length} problem${problems.length === 1 ? "" : "s"} to fix:`);
    for (const problem of problems) lines.push(`  - ${problem}`);
  }
  print(lines.join("\n"));
  return problems.length === 0 ? 0 : 1;
}

function readEnvironment(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
