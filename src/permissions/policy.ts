/**
 * `createPolicy`: the permission policy of a session, from the mode, the rules of every settings layer,
 * the workspace (and the folders added to it) and the protected paths. See evaluate.ts for the order in
 * which they decide.
 *
 * @module
 */
import type { ProtectedPath } from "../tools/tool.ts";
import { type Access, describeAccess } from "./access.ts";
import type { PermissionDecision, PermissionPolicy, PermissionRequest } from "./decision.ts";
import { evaluate, type Evaluation, type EvaluationContext } from "./evaluate.ts";
import type { PermissionMode } from "./modes.ts";
import { realFolder } from "./real_paths.ts";
import { loadShellParser } from "./shell_parser.ts";
import { compileRule } from "./rule_match.ts";
import type { Rule } from "./rules.ts";

/** What a policy is made of. */
export interface PolicyOptions {
  mode: PermissionMode;
  /** The rules of every layer (build each with `parseRule`); their order matters only for which is named. */
  rules: readonly Rule[];
  /** Real path of the workspace root. */
  root: string;
  /** Other names of the root (the symlink the user named it by). */
  rootAliases?: readonly string[];
  /** The user's home folder: "~/" in rules and redirections. */
  home: string;
  /** More folders the file tools may reach, by the same rules (`--add-dir`). */
  additionalDirectories?: readonly string[];
  /** What writes always ask about unless a rule names it: pass `PROTECTED_PATHS` (src/tools/protected_paths.ts). */
  protectedPaths: readonly ProtectedPath[];
}

/** A policy that can also show how it decided, for `mewcode permissions test`. */
export interface RulePolicy extends PermissionPolicy {
  readonly mode: PermissionMode;
  readonly rules: readonly Rule[];
  /** The decision for a request with the steps that led to it. */
  evaluate(request: PermissionRequest): Promise<Evaluation & { access: Access }>;
}

/**
 * Builds a policy. Throws a TypeError for a rule `parseRule` would have refused. With Bash rules, the shell
 * parser must be loaded (`loadShellParser`); the policy loads it itself for the Bash calls it decides.
 */
export function createPolicy(options: PolicyOptions): RulePolicy {
  const rules = options.rules.map(compileRule);
  let folders: Promise<{ home: string; additionalDirectories: string[] }> | null = null;
  // The home and added folders are the user's, resolved once; the workspace root is real already.
  const resolveFolders = () =>
    folders ??= (async () => ({
      home: await realFolder(options.home),
      additionalDirectories: await Promise.all((options.additionalDirectories ?? []).map(realFolder)),
    }))();
  const evaluateRequest = async (request: PermissionRequest): Promise<Evaluation & { access: Access }> => {
    const { home, additionalDirectories } = await resolveFolders();
    if (request.tool.name === "Bash") await loadShellParser();
    const access = describeAccess(request, {
      workspace: options.root,
      aliases: options.rootAliases ?? [],
      home,
    });
    const context: EvaluationContext = {
      mode: options.mode,
      rules,
      workspace: options.root,
      additionalDirectories,
      home,
      protectedPaths: options.protectedPaths,
    };
    return { ...evaluate(access, context), access };
  };
  return {
    mode: options.mode,
    rules: options.rules,
    evaluate: evaluateRequest,
    decide: async (request): Promise<PermissionDecision> => (await evaluateRequest(request)).decision,
  };
}
