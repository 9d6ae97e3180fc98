/**
 * A real workspace for policy tests, with symlinks, protected paths, a home folder, an added folder and a
 * symlink naming the workspace; and helpers to build rules and ask a policy.
 *
 *   ws/src/a.ts             ws/src/link -> ../secrets     ws/src/gitlink -> ../.git
 *   ws/secrets/key          ws/.env   ws/sub/.env          ws/.git/config   ws/.git/info/exclude
 *   ws/.mewcode/settings.json                             home/.ssh/id_rsa   extra/notes.md
 *   alias -> ws
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { posix } from "node:path";
import type { PermissionDecision } from "../../src/permissions/decision.ts";
import type { PermissionMode } from "../../src/permissions/modes.ts";
import { createPolicy, type RulePolicy } from "../../src/permissions/policy.ts";
import { parseRule, type Rule, type RuleAction, type RuleLayer } from "../../src/permissions/rules.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { editFileTool } from "../../src/tools/edit_file.ts";
import { globTool } from "../../src/tools/glob.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import type { AnyTool } from "../../src/tools/tool.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import { loadShellParser } from "../../src/permissions/shell_parser.ts";

// The permission modules load the shell parser when a caller first needs it; these tests call the
// parsing functions directly.
await loadShellParser();

/** The built-in tools by name. */
export const TOOLS: Readonly<Record<string, AnyTool>> = {
  ReadFile: readFileTool,
  WriteFile: writeFileTool,
  EditFile: editFileTool,
  Glob: globTool,
  Grep: grepTool,
  Bash: bashTool,
};

/** The folders of one test. */
export interface Scene extends AsyncDisposable {
  base: string;
  root: string;
  home: string;
  extra: string;
  alias: string;
}

/** Builds the tree above in a new temporary folder. */
export async function createScene(): Promise<Scene> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-policy-" }));
  const root = posix.join(base, "ws");
  const home = posix.join(base, "home");
  const extra = posix.join(base, "extra");
  for (const folder of ["src", "secrets", "sub", ".git/info", ".mewcode"]) {
    await Deno.mkdir(posix.join(root, folder), { recursive: true });
  }
  await Deno.mkdir(posix.join(home, ".ssh"), { recursive: true });
  await Deno.mkdir(extra);
  const files = ["src/a.ts", "secrets/key", ".env", "sub/.env", ".git/config", ".git/info/exclude"];
  for (const file of [...files, ".mewcode/settings.json"]) {
    await Deno.writeTextFile(posix.join(root, file), "x");
  }
  await Deno.writeTextFile(posix.join(home, ".ssh/id_rsa"), "x");
  await Deno.writeTextFile(posix.join(extra, "notes.md"), "x");
  await Deno.symlink("../secrets", posix.join(root, "src/link"));
  await Deno.symlink("../.git", posix.join(root, "src/gitlink"));
  const alias = posix.join(base, "alias");
  await Deno.symlink(root, alias);
  return {
    base,
    root,
    home,
    extra,
    alias,
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }),
  };
}

/** A rule from its text; throws on a syntax error. */
export function rule(text: string, action: RuleAction, layer: RuleLayer = "cli"): Rule {
  const parsed = parseRule(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return { ...parsed.value, action, source: { layer } };
}

/** Allow rules from --allowedTools. */
export function allow(...texts: string[]): Rule[] {
  return texts.map((text) => rule(text, "allow"));
}

/** Deny rules from --disallowedTools. */
export function deny(...texts: string[]): Rule[] {
  return texts.map((text) => rule(text, "deny"));
}

/** A policy over the scene. */
export function policyFor(
  scene: Scene,
  options: { mode?: PermissionMode; rules?: Rule[]; additional?: boolean } = {},
): RulePolicy {
  return createPolicy({
    mode: options.mode ?? "default",
    rules: options.rules ?? [],
    root: scene.root,
    rootAliases: [scene.alias],
    home: scene.home,
    additionalDirectories: options.additional === true ? [scene.extra] : [],
    protectedPaths: PROTECTED_PATHS,
  });
}

/** The decision for one call; a relative path in `input.path` is taken under the workspace. */
export function decide(
  policy: RulePolicy,
  scene: Scene,
  tool: string,
  input: Record<string, unknown>,
): Promise<PermissionDecision> {
  const path = input.path;
  const absolute = typeof path === "string" && !path.startsWith("/") ? posix.join(scene.root, path) : path;
  const fullInput = absolute === undefined ? input : { ...input, path: absolute };
  return policy.decide({ tool: TOOLS[tool]!, input: fullInput, callId: "call_1" });
}

/** A Bash call's decision. */
export function decideBash(policy: RulePolicy, scene: Scene, command: string): Promise<PermissionDecision> {
  return decide(policy, scene, "Bash", { command });
}

/** What a policy decides for a command. */
export type Expected = "allow" | "ask" | "deny";

/** Checks the decision for each command, one test step each, in a scene of its own. */
export async function table(
  t: Deno.TestContext,
  setup: { mode?: PermissionMode; rules: Rule[] },
  cases: readonly (readonly [string, Expected])[],
): Promise<void> {
  await using scene = await createScene();
  const policy = policyFor(scene, setup);
  for (const [command, expected] of cases) {
    await t.step(`${command} → ${expected}`, async () => {
      const decision = await decideBash(policy, scene, command);
      equal(decision.behavior, expected, decision.reason);
    });
  }
}
