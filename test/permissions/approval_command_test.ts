import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { approvalCommandApprover } from "../../src/permissions/approval_command.ts";
import type { Approval } from "../../src/permissions/decision.ts";
import { nukeTool } from "../_fakes/sample_tools.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

async function ask(root: string, command: string, timeoutMs = 10_000): Promise<Approval> {
  const approver = approvalCommandApprover({
    command,
    cwd: root,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    sessionId: () => "session-7",
    timeoutMs,
  });
  return await approver.approve(
    { tool: nukeTool, input: { target: "build" }, callId: "toolu_9" },
    "Nuke needs approval",
  );
}

Deno.test("the approval command's answer decides: allow, deny, garbage, or nothing in time", async (t) => {
  await using workspace = await createTempWorkspace();
  const cases: [string, string, number, (approval: Approval) => void][] = [
    ["allow", `echo '{"decision": "allow", "reason": "ok"}'`, 10_000, (approval) => {
      deepEqual(approval, { approved: true });
    }],
    ["deny", `echo '{"decision": "deny", "reason": "not on Fridays"}'`, 10_000, (approval) => {
      deepEqual(approval, { approved: false, feedback: "not on Fridays" });
    }],
    ["garbage", "echo 'sure, go ahead'", 10_000, (approval) => {
      equal(approval.approved, false);
      match(approval.feedback ?? "", /printed "sure, go ahead", not a decision \(expected \{"decision"/);
    }],
    ["nothing within the timeout", "sleep 30", 300, (approval) => {
      equal(approval.approved, false);
      match(
        approval.feedback ?? "",
        /the approval command "sleep 30" did not answer within 0\.3 s, so the call is denied/,
      );
    }],
    ["a non-zero exit, even with an allow", `echo '{"decision": "allow"}'; echo oops >&2; exit 3`, 10_000, (
      approval,
    ) => {
      equal(approval.approved, false);
      match(approval.feedback ?? "", /exited with code 3 \(oops\)/);
    }],
    ["a crash", "kill -SEGV $$", 10_000, (approval) => {
      equal(approval.approved, false);
      match(approval.feedback ?? "", /exited with code 139, killed by signal 11/);
    }],
    ["no output", "true", 10_000, (approval) => {
      equal(approval.approved, false);
      match(approval.feedback ?? "", /printed nothing, not a decision/);
    }],
    ["a decision of another kind", `echo '{"decision": "maybe"}'`, 10_000, (approval) => {
      equal(approval.approved, false);
    }],
  ];
  for (const [name, command, timeoutMs, check] of cases) {
    await t.step(name, async () => check(await ask(workspace.root, command, timeoutMs)));
  }
});

Deno.test("the approval command reads the question as JSON on its standard input", async () => {
  await using workspace = await createTempWorkspace();
  const approval = await ask(workspace.root, `cat > question.json; echo '{"decision": "allow"}'`);
  equal(approval.approved, true);
  deepEqual(JSON.parse(await Deno.readTextFile(join(workspace.root, "question.json"))), {
    tool: "Nuke",
    input: { target: "build" },
    reason: "Nuke needs approval",
    tool_use_id: "toolu_9",
    session_id: "session-7",
    cwd: workspace.root,
  });
});
