/**
 * `mewcode doctor`: checks what the sandbox needs on this machine and says how to fix what is missing.
 *
 * It prints the Deno version, the workspace and its trust, the shell sandbox (backend, mode, preflight),
 * and starts one tool worker per permission profile to show that Deno enforces it: each must be refused
 * `/etc/hostname`, may use what its profile grants (the workspace, or the program the shell tool spawns),
 * and must start at all, which it cannot when the profile exceeds the main process's runtime flags. Last,
 * the model provider: its base URL (never the key), whether its key is set, and whether it answers a
 * models-list request within a few seconds (one that does not is a problem; a missing key is only said).
 *
 * @module
 */
import { describeError } from "../common/errors.ts";
import { statOrNull, statSyncOrNull } from "../common/fs.ts";
import { resolveMewcodeHome } from "../config/home.ts";
import { describeTrust, type TrustDescription } from "../config/trust.ts";
import {
  baseUrlOf,
  createProvider,
  type ProviderConfig,
  providerConfigFromEnv,
} from "../llm/create_provider.ts";
import { MissingApiKeyError } from "../llm/errors.ts";
import { missingModelMessage } from "../llm/provider_choice.ts";
import { redactUrl } from "../llm/redact_secrets.ts";
import {
  AdditionalDirectoryError,
  type HelperPaths,
  openSession,
  type Session,
  stateFolders,
} from "../session/session.ts";
import type { CliOptions } from "./args.ts";
import type { Workspace } from "../session/workspace.ts";
import { type SessionSetup, sessionSetup } from "./session_options.ts";
import { sanitizeLines } from "./_terminal_text.ts";

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
  /** How long the provider may take to answer; default PROVIDER_CHECK_TIMEOUT_MS. */
  providerTimeoutMs?: number;
}

/**
 * What runs: the bundle (scripts/bundle.ts), with when its sources were copied, or the entry point itself. An
 * edit that seems to take no effect in an installed package is one its bundle does not hold.
 */
export function programLine(mainModule: string): string {
  const url = new URL(mainModule);
  const path = url.protocol === "file:" ? decodeURIComponent(url.pathname) : mainModule;
  if (!path.endsWith("/bundle/main.js")) return `Program: ${path}`;
  const copied = statSyncOrNull(path.replace(/main\.js$/, "stamp"))?.mtime ?? null;
  return `Program: ${path} (the bundle${
    copied === null ? "" : ` of the sources as they were at ${copied.toISOString()}`
  }; "deno task bundle" builds it again)`;
}

/** How long `doctor` waits for the provider to list its models. */
export const PROVIDER_CHECK_TIMEOUT_MS = 3_000;

/** Runs the checks, prints the report on stdout, and returns 0 when everything works, else 1. */
export async function runDoctor(input: DoctorInput): Promise<number> {
  const { workspace, options } = input;
  const root = workspace.root;
  const env = input.env ?? readEnvironment();
  const lines: string[] = ["mewcode doctor", ""];
  const problems: string[] = [];

  lines.push(`Deno: ${Deno.version.deno} (V8 ${Deno.version.v8}, TypeScript ${Deno.version.typescript})`);
  lines.push(programLine(Deno.mainModule));
  lines.push(
    `Workspace: ${root}${workspace.aliases.length ? ` (also named ${workspace.aliases.join(", ")})` : ""}`,
  );
  lines.push(`  trust: ${await trustLine(env, root)}`);
  const state = stateFolders(env);
  if (state.length > 0) {
    lines.push(`  mewcode's state (outside the workspace for every tool): ${state.join(", ")}`);
  }
  const home = resolveMewcodeHome(env);
  const homeInfo = await statOrNull(home);
  if (homeInfo !== null && !homeInfo.isDirectory) {
    // No session could be kept, listed or continued there (the transcript makes the folder when missing).
    const problem = `the state folder "${home}" (MEWCODE_HOME, default ~/.mewcode) is not a folder: no ` +
      "session can be kept in it; point MEWCODE_HOME at a folder, or move the entry away";
    lines.push(`  state folder: FAILED: ${problem}`);
    problems.push(problem);
  }

  // Paths and settings warnings come from the workspace: shown on the terminal, never obeyed.
  const write = input.print ?? console.log;
  const print = (text: string) => write(sanitizeLines(text));
  let opened: Session;
  const setup = await sessionSetup(workspace, options, env);
  try {
    opened = await openSession({
      ...setup.options,
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
  const tools = await session.toolRuntime();
  const added = tools.additionalRoots;
  if (added.length > 0) {
    lines.push(`  added folders (the tools and the shell use them like the workspace): ${added.join(", ")}`);
  }
  const sandbox = tools.sandbox;
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

  const provider = await checkProvider(setup, env, input.providerTimeoutMs ?? PROVIDER_CHECK_TIMEOUT_MS);
  lines.push(...provider.lines);
  problems.push(...provider.problems);

  lines.push("");
  if (problems.length === 0 && provider.missingKey !== null) {
    // Not a fault of the machine (doctor checks that), but no prompt runs until it is set.
    lines.push(`Everything else works: set ${provider.missingKey} to run a prompt.`);
  } else if (problems.length === 0) {
    lines.push("Everything works.");
  } else {
    lines.push(`${problems.length} problem${problems.length === 1 ? "" : "s"} to fix:`);
    for (const problem of problems) lines.push(`  - ${problem}`);
  }
  print(lines.join("\n"));
  return problems.length === 0 ? 0 : 1;
}

/** The provider lines: which one, where, whether its key is set, and whether it answers. */
async function checkProvider(
  setup: SessionSetup,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ lines: string[]; problems: string[]; missingKey: string | null }> {
  const { kind, model } = setup.provider;
  const lines = [`Provider: ${kind} (model ${model ?? "none"})`];
  const missing = missingModelMessage(setup.provider);
  const problems = missing === null ? [] : [missing];
  if (missing !== null) lines.push(`  model: FAILED: ${missing}`);
  let config: ProviderConfig;
  try {
    config = providerConfigFromEnv({ get: (name) => env[name] }, setup.options.providerEndpoint);
  } catch (error) {
    if (!(error instanceof MissingApiKeyError)) throw error;
    lines.push(`  key: ${error.variable} is not set, so a prompt cannot run: ${error.message}`);
    return { lines, problems, missingKey: error.variable };
  }
  const url = redactUrl(baseUrlOf(config));
  lines.push(`  base URL: ${url}`);
  const variable = setup.options.providerEndpoint?.apiKeyEnv ??
    (kind === "anthropic" ? "ANTHROPIC_API_KEY" : kind === "openai" ? "OPENAI_API_KEY" : null);
  lines.push(`  key: ${variable === null ? "none needed" : `${variable} is set`}`);
  const signal = AbortSignal.timeout(timeoutMs);
  const started = Date.now();
  try {
    const provider = await createProvider({ ...config, retry: { maxRetries: 0 } });
    const models = await provider.listModels?.({ signal }) ?? null;
    const listed = models === null ? "" : `, ${models.length} model${models.length === 1 ? "" : "s"} listed`;
    lines.push(`  answers: ok (${Date.now() - started} ms${listed})`);
    return { lines, problems, missingKey: null };
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${timeoutMs / 1000} s` : describeError(error);
    lines.push(`  answers: FAILED: ${reason}`);
    return {
      lines,
      problems: [...problems, `the ${kind} provider at "${url}" does not answer: ${reason}`],
      missingKey: null,
    };
  }
}

function readEnvironment(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}

/** Whether the workspace's own settings apply, and what waits for the user's trust. */
async function trustLine(env: Record<string, string>, root: string): Promise<string> {
  let trust: TrustDescription;
  try {
    trust = await describeTrust({ home: resolveMewcodeHome(env), root });
  } catch (error) {
    return `unknown: ${describeError(error)}`;
  }
  if (trust.files.length === 0) return "no repository settings files here: nothing needs trust";
  const files = trust.files.join(", ");
  const waiting = trust.enables.length === 0
    ? "none of them loosens anything"
    : `${trust.enables.length} setting(s) that loosen permissions wait for trust (review them with \`mewcode trust\`)`;
  switch (trust.status) {
    case "trusted":
      return `trusted: the repository's settings apply (${files})`;
    case "changed":
      return `trusted once, but the settings changed since (${files}): they may only tighten until reviewed ` +
        `again; ${waiting}`;
    case "untrusted":
      return `not trusted: the repository's settings may only tighten (${files}); ${waiting}`;
  }
}
