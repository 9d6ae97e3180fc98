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

Deno.test("the approval command's decision is the answer: allow, or deny with the user's reason", async (t) => {
  await using workspace = await createTempWorkspace();
  await t.step("allow", async () => {
    deepEqual(await ask(workspace.root, `echo '{"decision": "allow", "reason": "ok"}'`), { approved: true });
  });
  await t.step("deny", async () => {
    deepEqual(await ask(workspace.root, `echo '{"decision": "deny", "reason": "not on Fridays"}'`), {
      approved: false,
      feedback: "not on Fridays",
    });
  });
});

Deno.test("an approval command that gives no decision is a failure that says what it did, never a user's no", async (t) => {
  await using workspace = await createTempWorkspace();
  const cases: [string, string, number, RegExp][] = [
    [
      "garbage",
      "echo 'sure, go ahead'",
      10_000,
      /^the approval command "echo 'sure, go ahead'" printed "sure, go ahead", which is not a decision \(expected \{"decision": "allow" \| "deny", "reason": "…"\}\)$/,
    ],
    ["the bare word allow", "echo allow", 10_000, /printed "allow", which is not a decision \(expected/],
    [
      "nothing within the timeout",
      "sleep 30",
      300,
      /^the approval command "sleep 30" did not answer within 0\.3 s$/,
    ],
    [
      "a non-zero exit, even with an allow",
      `echo '{"decision": "allow"}'; echo oops >&2; exit 3`,
      10_000,
      /exited with code 3 \(oops\)$/,
    ],
    ["a crash", "kill -SEGV $$", 10_000, /exited with code 139, killed by signal 11$/],
    ["no output", "true", 10_000, /printed nothing, which is not a decision/],
    [
      "a decision of another kind",
      `echo '{"decision": "maybe"}'`,
      10_000,
      /printed "\{\\"decision\\": \\"maybe\\"\}"/,
    ],
  ];
  for (const [name, command, timeoutMs, message] of cases) {
    await t.step(name, async () => {
      const approval = await ask(workspace.root, command, timeoutMs);
      equal(approval.approved, false);
      equal(approval.feedback, undefined, "no feedback: the user said nothing");
      match(approval.failure?.message ?? "", message);
      deepEqual(approval.failure?.decidedBy, { kind: "approval-command", command });
    });
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
