import { deepStrictEqual, equal, match } from "node:assert/strict";
import { z } from "zod";
import { echoTool, hangingTool, noteTool, throwingTool } from "../_fakes/sample_tools.ts";
import { recordingPipeline } from "../_fakes/pipeline.ts";
import { defineTool, textResult } from "../../src/tools/tool.ts";

const signal = new AbortController().signal;

Deno.test("ToolPipeline runs every gate in order for a valid, permitted call", async () => {
  const { pipeline, log } = recordingPipeline({ tools: [echoTool] });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Echo", input: { text: "hi", times: 2 } }, {
    signal,
  });
  equal(result.isError, false);
  equal(result.content, "hihi");
  equal(outcome.gate, "execute");
  equal(result.metadata.echoed, true);
  deepStrictEqual(log, ["hook:Echo", "permission:Echo", "execute:Echo"]);
});

Deno.test("ToolPipeline stops at the lookup gate for an unknown tool and lists the available ones", async () => {
  const { pipeline, log } = recordingPipeline({ tools: [echoTool, noteTool] });
  const { result, outcome } = await pipeline.run({ id: "1", name: "NoSuchTool", input: {} }, { signal });
  equal(result.isError, true);
  equal(outcome.gate, "lookup");
  match(result.content, /Unknown tool "NoSuchTool"\. Available tools: Echo, Note/);
  deepStrictEqual(log, []);
});

Deno.test("ToolPipeline stops at the schema gate and names each bad field", async (t) => {
  const { pipeline, log } = recordingPipeline({ tools: [echoTool] });
  const cases = [
    { input: { text: 42 }, expected: /field "text" must be string: Text to echo, received a number \(42\)/ },
    { input: {}, expected: /missing required field "text" \(expected string/ },
    {
      input: { text: "a", colour: "red" },
      expected: /unknown field "colour" \(allowed fields: text, times\)/,
    },
    { input: { text: "a", times: 1.5 }, expected: /field "times"/ },
    { input: "just a string", expected: /expected a JSON object, received a string/ },
    { input: [1], expected: /expected a JSON object, received an array/ },
  ];
  for (const { input, expected } of cases) {
    await t.step(JSON.stringify(input), async () => {
      const { result, outcome } = await pipeline.run({ id: "1", name: "Echo", input }, { signal });
      equal(result.isError, true);
      equal(outcome.gate, "schema");
      match(result.content, expected);
      match(result.content, /^Invalid input for Echo: /);
    });
  }
  deepStrictEqual(log, [], "no later gate ran");
});

Deno.test("ToolPipeline reports several schema problems at once", async () => {
  const { pipeline } = recordingPipeline({ tools: [echoTool] });
  const { result } = await pipeline.run(
    { id: "1", name: "Echo", input: { times: "two", extra: 1 } },
    { signal },
  );
  match(result.content, /"text"/);
  match(result.content, /"times"/);
  match(result.content, /"extra"/);
});

Deno.test("ToolPipeline stops at the tool's validateInput before hooks run", async () => {
  const { pipeline, log } = recordingPipeline({ tools: [echoTool] });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Echo", input: { text: "a\0b" } }, {
    signal,
  });
  equal(outcome.gate, "validate");
  match(result.content, /NUL byte/);
  deepStrictEqual(log, []);
});

Deno.test("ToolPipeline stops at a blocking hook before the permission decision", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [echoTool],
    hook: { action: "block", reason: "echo is off today" },
  });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Echo", input: { text: "a" } }, { signal });
  equal(outcome.gate, "hook");
  match(result.content, /recording hook blocked Echo: echo is off today/);
  deepStrictEqual(log, ["hook:Echo"]);
});

Deno.test("ToolPipeline runs the input a hook rewrote, validated again", async () => {
  const { pipeline } = recordingPipeline({
    tools: [echoTool],
    hook: { action: "continue", input: { text: "rewritten" } },
  });
  const { result } = await pipeline.run({ id: "1", name: "Echo", input: { text: "a" } }, { signal });
  equal(result.content, "rewritten");
  const invalid = recordingPipeline({ tools: [echoTool], hook: { action: "continue", input: { text: 1 } } });
  const { result: bad, outcome: badOutcome } = await invalid.pipeline.run(
    { id: "1", name: "Echo", input: { text: "a" } },
    { signal },
  );
  deepStrictEqual(badOutcome, { status: "invalid", gate: "hook" });
  match(bad.content, /invalid one/);
});

Deno.test("ToolPipeline stops at a deny decision before execution", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [noteTool],
    decision: {
      behavior: "deny",
      reason: "plan mode allows only read-only tools",
      decidedBy: { kind: "mode", mode: "plan" },
    },
  });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
  equal(outcome.gate, "permission");
  equal(outcome.status, "denied");
  deepStrictEqual(outcome.denial?.decidedBy, { kind: "mode", mode: "plan" });
  match(result.content, /denied: plan mode allows only read-only tools/);
  deepStrictEqual(log, ["hook:Note", "permission:Note"]);
});

Deno.test("ToolPipeline asks the approver on an ask decision and runs the call when approved", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [noteTool],
    decision: {
      behavior: "ask",
      reason: "writes need approval",
      decidedBy: { kind: "mode", mode: "default" },
    },
  });
  const { result } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
  equal(result.isError, false);
  deepStrictEqual(log, ["hook:Note", "permission:Note", "approve:Note", "execute:Note"]);
});

Deno.test("ToolPipeline turns a refused approval into a denial carrying the user's feedback", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [noteTool],
    decision: {
      behavior: "ask",
      reason: "writes need approval",
      decidedBy: { kind: "mode", mode: "default" },
    },
    approval: false,
  });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
  equal(outcome.gate, "permission");
  deepStrictEqual(outcome.denial?.decidedBy, { kind: "user" });
  match(result.content, /The user denied permission to use Note: use Echo instead/);
  deepStrictEqual(log, ["hook:Note", "permission:Note", "approve:Note"]);
});

Deno.test("ToolPipeline denies a call whose approval failed as no one's answer, not the user's no", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [noteTool],
    decision: {
      behavior: "ask",
      reason: "writes need approval",
      decidedBy: { kind: "mode", mode: "default" },
      hint: '--allowedTools "Note"',
    },
    answer: {
      approved: false,
      failure: {
        message: 'the approval command "./approve" printed "allow", which is not a decision (expected …)',
        decidedBy: { kind: "approval-command", command: "./approve" },
      },
    },
  });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
  equal(outcome.status, "denied");
  equal(
    result.content,
    'Cannot get approval to use Note: the approval command "./approve" printed "allow", which is not a ' +
      "decision (expected …); the call is denied because the approval failed, not by the user's choice",
  );
  deepStrictEqual(outcome.denial, {
    reason: result.content,
    decidedBy: { kind: "approval-command", command: "./approve" },
    hint: null,
    unanswered: true,
  });
  deepStrictEqual(log, ["hook:Note", "permission:Note", "approve:Note"]);
});

Deno.test("ToolPipeline denies an ask decision when no one can approve it", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [noteTool],
    decision: {
      behavior: "ask",
      reason: "writes need approval",
      decidedBy: { kind: "mode", mode: "default" },
    },
    withApprover: false,
  });
  const { result } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
  equal(result.isError, true);
  match(result.content, /writes need approval, and no one is present to approve it/);
  deepStrictEqual(log, ["hook:Note", "permission:Note"]);
});

Deno.test("ToolPipeline turns a throwing tool into an error result carrying its message", async () => {
  const { pipeline } = recordingPipeline({ tools: [throwingTool] });
  const { result, outcome } = await pipeline.run({ id: "1", name: "Thrower", input: {} }, { signal });
  equal(result.isError, true);
  equal(outcome.gate, "execute");
  match(result.content, /Thrower failed: RangeError: the dial goes to eleven/);
});

Deno.test("ToolPipeline does not run a call whose signal is already aborted", async () => {
  const { pipeline, log } = recordingPipeline({ tools: [echoTool] });
  const controller = new AbortController();
  controller.abort();
  const { result, outcome } = await pipeline.run({ id: "1", name: "Echo", input: { text: "a" } }, {
    signal: controller.signal,
  });
  equal(result.isError, true);
  equal(outcome.status, "aborted");
  deepStrictEqual(log, []);
});

Deno.test("ToolPipeline says why a running call was cancelled, from its signal's reason, never blaming the user by default", async (t) => {
  const cases = [
    {
      name: "a broken response",
      reason: new DOMException("the model's response broke off before it was complete", "AbortError"),
      expected:
        "Hang was cancelled before it finished: the model's response broke off before it was complete",
    },
    {
      name: "closed standard output",
      reason: new DOMException("standard output was closed", "AbortError"),
      expected: "Hang was cancelled before it finished: standard output was closed",
    },
    {
      name: "a signal",
      reason: new DOMException("interrupted by SIGINT", "AbortError"),
      expected: "Hang was cancelled before it finished: interrupted by SIGINT",
    },
    {
      name: "an abort that gives no reason",
      reason: undefined,
      expected: "Hang was cancelled before it finished",
    },
  ];
  for (const { name, reason, expected } of cases) {
    await t.step(name, async () => {
      const { pipeline } = recordingPipeline({ tools: [hangingTool] });
      const controller = new AbortController();
      const running = pipeline.run({ id: "1", name: "Hang", input: {} }, { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 20));
      controller.abort(reason);
      const { result, outcome } = await running;
      equal(outcome.status, "aborted");
      equal(result.content, expected);
    });
  }
});

Deno.test("ToolPipeline says why a call was not started when its signal was aborted first", async () => {
  const { pipeline } = recordingPipeline({ tools: [echoTool] });
  const controller = new AbortController();
  controller.abort(new DOMException("standard output was closed", "AbortError"));
  const { result } = await pipeline.run({ id: "1", name: "Echo", input: { text: "a" } }, {
    signal: controller.signal,
  });
  equal(result.content, "Echo was cancelled before it finished: standard output was closed");
});

// Reports the protected paths its call may write, as the pipeline passed them.
const grantProbe = defineTool({
  name: "GrantProbe",
  description: "Reports allowedProtectedPaths",
  category: "file",
  inputSchema: z.object({}).strict(),
  isReadOnly: false,
  isDestructive: false,
  execute: (context) => Promise.resolve(textResult(JSON.stringify(context.allowedProtectedPaths))),
});

Deno.test("ToolPipeline passes the protected paths an allow decision grants into the call's context", async (t) => {
  const cases = [
    { name: "a grant", grants: { protectedPaths: [".git/info/exclude"] }, expected: '[".git/info/exclude"]' },
    { name: "no grant", grants: undefined, expected: "[]" },
  ];
  for (const { name, grants, expected } of cases) {
    await t.step(name, async () => {
      const { pipeline } = recordingPipeline({
        tools: [grantProbe],
        decision: { behavior: "allow", ...(grants === undefined ? {} : { grants }) },
      });
      const { result } = await pipeline.run({ id: "1", name: "GrantProbe", input: {} }, { signal });
      equal(result.content, expected);
    });
  }
});

Deno.test("ToolPipeline grants an ask decision's protected paths once the user approves it", async () => {
  const { pipeline, log } = recordingPipeline({
    tools: [grantProbe],
    decision: {
      behavior: "ask",
      reason: "GrantProbe would change a protected path",
      decidedBy: { kind: "mode", mode: "default" },
      grants: { protectedPaths: [".mewcode/settings.json"] },
    },
  });
  const { result } = await pipeline.run({ id: "1", name: "GrantProbe", input: {} }, { signal });
  equal(result.content, '[".mewcode/settings.json"]');
  deepStrictEqual(log, [
    "hook:GrantProbe",
    "permission:GrantProbe",
    "approve:GrantProbe",
    "execute:GrantProbe",
  ]);
});

Deno.test("ToolPipeline puts the decision's hint in the denial, and marks an ask no one could answer", async (t) => {
  const hint = '--allowedTools "Bash(npm test *)"';
  await t.step("a deny", async () => {
    const { pipeline } = recordingPipeline({
      tools: [noteTool],
      decision: { behavior: "deny", reason: "no", decidedBy: { kind: "mode", mode: "dontAsk" }, hint },
    });
    const { outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
    deepStrictEqual(outcome.denial, {
      reason: "Permission to use Note was denied: no",
      decidedBy: { kind: "mode", mode: "dontAsk" },
      hint,
    });
  });
  await t.step("an ask without an approver", async () => {
    const { pipeline } = recordingPipeline({
      tools: [noteTool],
      decision: {
        behavior: "ask",
        reason: "needs approval",
        decidedBy: { kind: "mode", mode: "default" },
        hint,
      },
      withApprover: false,
    });
    const { outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
    equal(outcome.denial?.hint, hint);
    equal(outcome.denial?.unanswered, true);
  });
  await t.step("a user's refusal carries no hint", async () => {
    const { pipeline } = recordingPipeline({
      tools: [noteTool],
      decision: {
        behavior: "ask",
        reason: "needs approval",
        decidedBy: { kind: "mode", mode: "default" },
        hint,
      },
      approval: false,
    });
    const { outcome } = await pipeline.run({ id: "1", name: "Note", input: { note: "x" } }, { signal });
    equal(outcome.denial?.hint, null);
    equal(outcome.denial?.unanswered, undefined);
  });
});
