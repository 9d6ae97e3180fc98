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

/** Who decided a permission question. */
export type DecidedBy =
  | { kind: "mode"; mode: string }
  | { kind: "rule"; rule: string; source: string }
  | { kind: "hook"; hook: string }
  | { kind: "user" };

/** The policy's answer, and who decided it. `ask` is resolved by an Approver; with none, it is a denial. */
export type PermissionDecision =
  | { behavior: "allow"; reason?: string; decidedBy?: DecidedBy }
  | { behavior: "deny"; reason: string; decidedBy: DecidedBy }
  | { behavior: "ask"; reason: string; decidedBy: DecidedBy };

/** Decides, without side effects, whether a call may run. */
export interface PermissionPolicy {
  decide(request: PermissionRequest): PermissionDecision;
}

/** The answer of whoever was asked. */
export interface Approval {
  approved: boolean;
  /** Shown to the model with a denial, e.g. what the user wants instead. */
  feedback?: string;
}

/** Answers "ask" decisions: a terminal prompt, an automatic yes (`mewcode tool`) or no (`-p`). */
export interface Approver {
  approve(request: PermissionRequest, reason: string): Promise<Approval>;
}

/** Approves every "ask": for calls the user typed directly. */
export const APPROVE_ALL: Approver = { approve: () => Promise.resolve({ approved: true }) };
