/**
 * The permission gate's vocabulary: a request, the policy's decision, and who answers an "ask".
 *
 * @module
 */
import type { AnyTool } from "../tools/tool.ts";

/** What the permission gate is asked about: one validated call. */
export interface PermissionRequest {
  tool: AnyTool;
  input: unknown;
  callId: string;
}

/**
 * Who decided a permission question: a rule (its text and where it was written), a mode, a hook, the user
 * (in person or through the approval command's answer), or an approval command that gave no answer (it could
 * not run, failed or printed no decision: a denial no one chose).
 */
export type DecidedBy =
  | { kind: "mode"; mode: string }
  | { kind: "rule"; rule: string; source: string }
  | { kind: "hook"; hook: string }
  | { kind: "user" }
  | { kind: "approval-command"; command: string };

/**
 * What an allowed call may do beyond the defaults: workspace-relative protected paths ("the .git/info/exclude
 * file") that a rule naming them, or the user's approval, lets the call write.
 */
export interface PermissionGrants {
  protectedPaths: string[];
}

/**
 * The policy's answer, and who decided it. `ask` is resolved by an Approver; with none, it is a denial.
 * `hint` is for people, never the model: the flag or rule that would allow such a call ("--allowedTools
 * \"Bash(npm test *)\""). `rules` are the allow rules in that hint, for an approval that offers to save them
 * ("Yes, and don't ask again for …"). The grants of an `ask` apply only once someone approves it.
 */
export type PermissionDecision =
  | { behavior: "allow"; reason?: string; decidedBy?: DecidedBy; grants?: PermissionGrants }
  | { behavior: "deny"; reason: string; decidedBy: DecidedBy; hint?: string; rules?: string[] }
  | {
    behavior: "ask";
    reason: string;
    decidedBy: DecidedBy;
    hint?: string;
    rules?: string[];
    grants?: PermissionGrants;
  };

/** Decides whether a call may run. It may look at the file system (real paths), never change it. */
export interface PermissionPolicy {
  decide(request: PermissionRequest): Promise<PermissionDecision>;
}

/** The answer of whoever was asked. */
export interface Approval {
  approved: boolean;
  /** Shown to the model with a denial, e.g. what the user wants instead. */
  feedback?: string;
  /**
   * Set when no answer could be had (an approval command that could not run, failed, timed out or printed
   * no decision): the call is denied as that failure, not as anyone's choice.
   */
  failure?: ApprovalFailure;
}

/** Why an approver gave no answer, and which one it was. */
export interface ApprovalFailure {
  /** What went wrong, what it printed and what was expected: `the approval command "x" printed "allow", …`. */
  message: string;
  decidedBy: DecidedBy;
}

/** What the person asked sees besides the call: the allow rules that would stop such questions. */
export interface ApprovalDetails {
  /** Allow rules that would let such a call through without asking (the decision's `rules`). */
  rules: readonly string[];
}

/** Answers "ask" decisions: a terminal prompt, an automatic yes (`mewcode tool`) or no (`-p`). */
export interface Approver {
  approve(request: PermissionRequest, reason: string, details?: ApprovalDetails): Promise<Approval>;
}

/** Approves every "ask": for calls the user typed directly. */
export const APPROVE_ALL: Approver = { approve: () => Promise.resolve({ approved: true }) };
