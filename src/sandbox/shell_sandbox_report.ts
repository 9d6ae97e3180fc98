/**
 * The shell sandbox's part of `mewcode doctor`: what the sandbox does here, said plainly, from the facts
 * `ShellSandbox` gathered when it opened (shell_sandbox.ts).
 *
 * @module
 */
import { describeProtectedPaths } from "../tools/protected_paths_text.ts";
import type { SandboxMode, ShellPlan } from "../tools/tool.ts";
import { describeHelpers, type HelperPaths } from "./helpers.ts";
import { describeLimits, type LimitPlan } from "./limits.ts";
import { SANDBOX_FILTER_SUMMARY } from "./seccomp.ts";
import type { MachineView } from "./shell_policy.ts";

/** What the report says. */
export interface SandboxReportFacts {
  plan: ShellPlan;
  mode: SandboxMode;
  helpers: HelperPaths;
  view: MachineView;
  additionalRoots: readonly string[];
  /** Whether one sandbox is kept across Bash calls. */
  kept: boolean;
  /** Whether the seccomp filter applies. */
  seccomp: boolean;
  limits: LimitPlan | null;
  /** Whether commands run in a PID namespace of their own. */
  isolated: boolean;
  /** The start-up check's line. */
  preflight: string;
  /** Guarantees that do not hold here. */
  caveats: readonly string[];
}

/** The lines of the report. */
export function shellSandboxReport(facts: SandboxReportFacts): string[] {
  const { plan, mode, helpers, view, additionalRoots } = facts;
  const lines = [`Shell sandbox: ${plan.mode}`];
  const backend = plan.wrapper.length === 0
    ? "none (commands run unsandboxed)"
    : mode === "danger-full-access"
    ? `bubblewrap (${plan.wrapper[0]}), PID namespace only`
    : `bubblewrap (${plan.wrapper[0]})`;
  lines.push(`  backend: ${backend}`);
  if (plan.wrapper.length > 0) {
    lines.push(
      facts.kept && mode !== "danger-full-access"
        ? `  calls: one sandbox kept across calls (started by ${helpers.sh}); each command runs in a fresh ` +
          "bash, its processes are killed after it, and one that leaves files in /tmp or the home folder " +
          "gets the next call a new sandbox"
        : "  calls: a new sandbox for each call",
    );
    if (helpers.rg !== null) {
      lines.push(
        facts.kept && mode !== "danger-full-access"
          ? "  searches: Grep's ripgrep runs read-only in one sandbox kept across searches, the same way"
          : "  searches: Grep's ripgrep runs read-only in a new sandbox for each search",
      );
    }
  }
  lines.push(`  shell: ${plan.shell}`);
  lines.push("  helper programs (system directories first, never from the workspace):");
  lines.push(...describeHelpers(helpers).map((line) => `  ${line}`));
  if (mode !== "danger-full-access") {
    lines.push(
      `  network: ${plan.network ? "allowed (--sandbox-network)" : "off (--sandbox-network allows it)"}`,
    );
    lines.push(`  seccomp: ${facts.seccomp ? SANDBOX_FILTER_SUMMARY : "none"}`);
    if (plan.wrapper.length > 0) {
      lines.push(
        plan.wrapper.includes("--disable-userns")
          ? "  user namespaces: commands cannot create one (--disable-userns)"
          : "  user namespaces: commands CAN create one (see the note below)",
      );
    }
    lines.push(
      `  home: every home folder is an empty tmpfs (${view.homeRoots.join(", ") || "none found"}); ` +
        `read-only toolchains: ${view.exposed.join(", ") || "none"}`,
    );
    lines.push(
      `  hidden: ${[...view.hiddenDirectories, ...view.hiddenFiles].join(", ") || "nothing"} ` +
        "(host sockets and system secrets); /tmp and /var/tmp are private; /proc is read-only",
    );
    if (view.excluded.length > 0) {
      lines.push(`  mewcode's state hidden: ${view.excluded.join(", ")}`);
    }
    if (view.hiddenInWorkspace.length > 0) {
      lines.push(
        "  credentials of the home folder the workspace holds, hidden from the shell and the file tools: " +
          view.hiddenInWorkspace.map((hidden) => hidden.path).join(", "),
      );
    }
    if (additionalRoots.length > 0) {
      lines.push(
        `  added folders (bound like the workspace, ${
          plan.mode === "read-only" ? "read-only" : "writable"
        }): ` +
          additionalRoots.join(", "),
      );
    }
    lines.push(
      `  protected in the workspace${additionalRoots.length > 0 ? " and the added folders" : ""}: ` +
        `${describeProtectedPaths()}, and the git metadata (config, hooks, gitdir pointers) and hook ` +
        "folders this workspace's layout names",
    );
    if (facts.limits !== null) {
      lines.push(
        "  limits:",
        ...describeLimits(facts.limits).map((line) => `  ${line}`),
      );
    }
  }
  lines.push(`  environment: cleared; passed: ${Object.keys(plan.env).sort().join(", ")}`);
  lines.push(
    facts.isolated || plan.wrapper.length > 0
      ? "  API key: not reachable (not in the shell's environment; mewcode's /proc entry is not visible)"
      : "  API key: READABLE by commands through /proc/<mewcode pid>/environ (no PID namespace)",
  );
  lines.push(facts.preflight);
  for (const caveat of facts.caveats) lines.push(`  note: ${caveat}`);
  return lines;
}
