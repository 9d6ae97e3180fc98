import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { DirectExecutor } from "../../src/execution/executor.ts";
import { FileRecordStore } from "../../src/execution/file_records.ts";
import { ToolPipeline } from "../../src/execution/pipeline.ts";
import { CommandHooks, type CommandHooksOptions } from "../../src/permissions/command_hooks.ts";
import { hookName, type HooksConfig } from "../../src/permissions/hook_config.ts";
import type { PreToolUseOutcome } from "../../src/permissions/hooks.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { ALLOW_ALL, fixedShell, NO_SHELL } from "../_fakes/pipeline.ts";
import { echoTool } from "../_fakes/sample_tools.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { exists, hostDirectory, openSandbox } from "../sandbox/_sandbox.ts";

const SESSION = { sessionId: "session-1", transcriptPath: "/state/projects/w/session-1.jsonl" };

function commandHooks(root: string, options: Partial<CommandHooksOptions>): CommandHooks {
  return new CommandHooks({
    user: {},
    repository: {},
    sandboxRepositoryHooks: true,
    root,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    session: () => SESSION,
    runSandboxed: null,
    ...options,
  });
}

function preToolUse(command: string, extra: { matcher?: string; timeout?: number } = {}): HooksConfig {
  const { timeout, ...group } = extra;
  return {
    PreToolUse: [{
      ...group,
      hooks: [{ type: "command", command, ...(timeout === undefined ? {} : { timeout }) }],
    }],
  };
}

async function runPreToolUse(
  hooks: CommandHooks,
  toolName = "Bash",
  input: unknown = { command: "rm -rf build" },
): Promise<PreToolUseOutcome[]> {
  const outcomes: PreToolUseOutcome[] = [];
  for (const hook of hooks.preToolUseHooks()) {
    outcomes.push(
      await hook.run({ toolName, callId: "toolu_1", input }, { signal: new AbortController().signal }),
    );
  }
  return outcomes;
}

Deno.test("a PreToolUse hook that exits with code 2 blocks the call with its standard error as the reason", async () => {
  await using workspace = await createTempWorkspace();
  const hooks = commandHooks(workspace.root, {
    user: preToolUse("cat >/dev/null; echo 'rm is not allowed here' >&2; exit 2"),
  });
  deepEqual(await runPreToolUse(hooks), [{ action: "block", reason: "rm is not allowed here" }]);
  equal(hooks.preToolUseHooks()[0]?.name, `"cat >/dev/null; echo 'rm is not allowed here' >&2; exit 2"`);
});

Deno.test("a PreToolUse hook reads the call as JSON and may return updatedInput and a permission decision", async () => {
  await using workspace = await createTempWorkspace();
  const output = {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "deleting needs a look",
      updatedInput: { command: "rm -rf build/cache" },
    },
  };
  const hooks = commandHooks(workspace.root, {
    user: preToolUse(
      `cat > "$MEWCODE_PROJECT_DIR/input.json"; printf '%s' '${JSON.stringify(output)}'`,
      { matcher: "Bash" },
    ),
  });
  deepEqual(await runPreToolUse(hooks), [{
    action: "continue",
    input: { command: "rm -rf build/cache" },
    decision: { behavior: "ask", reason: "deleting needs a look" },
  }]);
  deepEqual(JSON.parse(await Deno.readTextFile(join(workspace.root, "input.json"))), {
    session_id: "session-1",
    transcript_path: "/state/projects/w/session-1.jsonl",
    cwd: workspace.root,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "rm -rf build" },
    tool_use_id: "toolu_1",
  });
});

const INVALID_OUTPUT = `echo '{"hookSpecificOutput": {"permissionDecision": "maybe"}}'`;

Deno.test("a PreToolUse hook's JSON deny blocks, its allow is a decision, and other exit codes only warn", async (t) => {
  await using workspace = await createTempWorkspace();
  const cases: [string, string, PreToolUseOutcome][] = [
    [
      "deny",
      `echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}'`,
      { action: "block", reason: "no" },
    ],
    [
      "allow",
      `echo '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "fine"}}'`,
      { action: "continue", decision: { behavior: "allow", reason: "fine" } },
    ],
    ["continue false", `echo '{"continue": false, "stopReason": "enough"}'`, {
      action: "block",
      reason: "enough",
    }],
    ["plain output", "echo hello", { action: "continue" }],
    ["exit 1", "echo broken >&2; exit 1", {
      action: "continue",
      notices: ['The PreToolUse hook "echo broken >&2; exit 1" failed with exit code 1: broken'],
    }],
    ["invalid JSON", INVALID_OUTPUT, {
      action: "continue",
      notices: [
        `The PreToolUse hook ${
          hookName(INVALID_OUTPUT)
        } printed output that is not valid hook JSON, which was ` +
        "ignored: hookSpecificOutput.permissionDecision: " +
        'Invalid option: expected one of "allow"|"deny"|"ask"',
      ],
    }],
  ];
  for (const [name, command, expected] of cases) {
    await t.step(name, async () => {
      deepEqual(await runPreToolUse(commandHooks(workspace.root, { user: preToolUse(command) })), [expected]);
    });
  }
});

Deno.test("a hook's matcher must match the whole tool name", async () => {
  await using workspace = await createTempWorkspace();
  const hooks = commandHooks(workspace.root, {
    user: preToolUse("exit 2", { matcher: "Bash|EditFile" }),
  });
  equal((await runPreToolUse(hooks, "Bash"))[0]?.action, "block");
  equal((await runPreToolUse(hooks, "EditFile"))[0]?.action, "block");
  equal((await runPreToolUse(hooks, "BashOutput"))[0]?.action, "continue");
  equal((await runPreToolUse(hooks, "ReadFile"))[0]?.action, "continue");
  const all = commandHooks(workspace.root, { user: preToolUse("exit 2", { matcher: "*" }) });
  equal((await runPreToolUse(all, "ReadFile"))[0]?.action, "block");
});

Deno.test("the pipeline runs a hook's updatedInput through the tool's schema again", async () => {
  await using workspace = await createTempWorkspace();
  const registry = new ToolRegistry();
  registry.register(echoTool);
  const run = async (updated: unknown) => {
    const hooks = commandHooks(workspace.root, {
      user: preToolUse(`echo '${JSON.stringify({ hookSpecificOutput: { updatedInput: updated } })}'`),
    });
    const pipeline = new ToolPipeline({
      registry,
      executor: new DirectExecutor(),
      policy: ALLOW_ALL,
      hooks: hooks.preToolUseHooks(),
      files: new FileRecordStore(),
      root: workspace.root,
      strictLinks: false,
      shell: fixedShell(NO_SHELL),
    });
    return await pipeline.run({ id: "c", name: "Echo", input: { text: "original" } }, {
      signal: new AbortController().signal,
    });
  };
  equal((await run({ text: "rewritten" })).result.content, "rewritten");
  const invalid = await run({ text: 5 });
  deepEqual(invalid.outcome, { status: "invalid", gate: "hook" });
});

Deno.test("a PostToolUse hook receives tool_response, and its exit code 2 reaches the model", async () => {
  await using workspace = await createTempWorkspace();
  const postCommand = 'cat > "$MEWCODE_PROJECT_DIR/post.json"; echo "lint failed" >&2; exit 2';
  const hooks = commandHooks(workspace.root, {
    user: { PostToolUse: [{ matcher: "WriteFile", hooks: [{ type: "command", command: postCommand }] }] },
  });
  equal(hooks.has("PostToolUse"), true);
  equal(hooks.has("Stop"), false);
  const report = await hooks.run("PostToolUse", {
    toolName: "WriteFile",
    toolInput: { path: "/w/a.ts", content: "x" },
    toolUseId: "toolu_2",
    toolResponse: { content: "Wrote 1 line", isError: false },
  });
  deepEqual(report.blocked, { hooks: [hookName(postCommand)], reason: "lint failed" });
  const input = JSON.parse(await Deno.readTextFile(join(workspace.root, "post.json")));
  equal(input.hook_event_name, "PostToolUse");
  deepEqual(input.tool_response, { content: "Wrote 1 line", isError: false });
  deepEqual(input.tool_input, { path: "/w/a.ts", content: "x" });
  const other = await hooks.run("PostToolUse", {
    toolName: "Bash",
    toolInput: {},
    toolUseId: "toolu_3",
    toolResponse: {},
  });
  deepEqual(other.results, [], "the matcher left the hook out");
});

Deno.test("UserPromptSubmit, SessionStart and Stop hooks add context, block and stop with Claude Code's meanings", async () => {
  await using workspace = await createTempWorkspace();
  const command = (text: string) => ({ hooks: [{ type: "command" as const, command: text }] });
  const hooks = commandHooks(workspace.root, {
    user: {
      UserPromptSubmit: [command("echo 'Today is Tuesday'"), command(`echo '{"systemMessage": "checked"}'`)],
      SessionStart: [
        { matcher: "resume", ...command("echo resumed") },
        command("echo 'not now' >&2; exit 2"),
      ],
      Stop: [
        command(`echo '{"decision": "block", "reason": "tests still fail"}'`),
        command(`echo '{"continue": false}'`),
      ],
    },
  });
  const prompt = await hooks.run("UserPromptSubmit", { prompt: "hi" });
  deepEqual([prompt.context, prompt.notices, prompt.blocked], [["Today is Tuesday"], ["checked"], null]);
  const start = await hooks.run("SessionStart", { source: "startup" });
  deepEqual(start.context, [], "the resume hook did not run at startup");
  deepEqual(start.blocked, null, "exit code 2 does not block a session start");
  deepEqual(start.notices, [
    `The SessionStart hook "echo 'not now' >&2; exit 2" exited with code 2: not now`,
  ]);
  deepEqual((await hooks.run("SessionStart", { source: "resume" })).context, ["resumed"]);
  const stop = await hooks.run("Stop", { stopHookActive: false });
  equal(stop.blocked?.reason, "tests still fail");
  equal(stop.stop?.reason, "a hook asked to stop");
});

Deno.test("a hook that hangs is stopped at its timeout with everything it started", async () => {
  await using workspace = await createTempWorkspace();
  const marker = `hang_${crypto.randomUUID().replaceAll("-", "")}`;
  const command = `${marker}() { sleep 30; }; ${marker} & ${marker}`;
  const hooks = commandHooks(workspace.root, { user: preToolUse(command, { timeout: 0.3 }) });
  const started = performance.now();
  const [outcome] = await runPreToolUse(hooks);
  ok(performance.now() - started < 5_000);
  deepEqual(outcome, {
    action: "continue",
    notices: [
      `The PreToolUse hook ${hookName(command)} was stopped after 0.3 s (its timeout); the call went on`,
    ],
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  let survivors = 0;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const commandLine = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (commandLine.includes(marker)) survivors += 1;
  }
  equal(survivors, 0);
});

Deno.test("a repository hook runs in the real shell sandbox and cannot write outside the workspace; a user hook can", async (t) => {
  // The workspace sits in the folder the hook tries to write to, outside /tmp (which the sandbox replaces).
  await using outside = await hostDirectory("mewcode-hooks-");
  const workspace = { path: join(outside.path, "workspace") };
  await Deno.mkdir(workspace.path);
  await using sandbox = await openSandbox(workspace.path, "workspace-write");
  const target = join(outside.path, "escaped");
  const command = `echo "$MEWCODE_PROJECT_DIR" > ran; echo pwned > ${target}; echo pwned > "$HOME/escaped"`;
  const runSandboxed = sandbox.runCommand.bind(sandbox);

  await t.step("repository hook: sandboxed", async () => {
    const hooks = commandHooks(workspace.path, { repository: preToolUse(command), runSandboxed });
    await runPreToolUse(hooks);
    equal(await Deno.readTextFile(join(workspace.path, "ran")), `${workspace.path}\n`, "the hook ran");
    await Deno.remove(join(workspace.path, "ran"));
    equal(await exists(target), false, "nothing was written next to the workspace");
    equal(
      await exists(join(Deno.env.get("HOME") ?? "/nonexistent", "escaped")),
      false,
      "nor in the home folder",
    );
  });
  await t.step("repository hook without a sandbox: not run", async () => {
    const hooks = commandHooks(workspace.path, { repository: preToolUse(command), runSandboxed: null });
    const [outcome] = await runPreToolUse(hooks);
    equal(await exists(join(workspace.path, "ran")), false);
    match(
      (outcome?.action === "continue" ? outcome.notices?.[0] : "") ?? "",
      /could not run: repository hooks run only in the shell sandbox/,
    );
  });
  await t.step("user hook: as the user", async () => {
    const hooks = commandHooks(workspace.path, {
      user: preToolUse(`echo pwned > ${target}`),
      runSandboxed,
    });
    deepEqual(await runPreToolUse(hooks), [{ action: "continue" }]);
    equal(await Deno.readTextFile(target), "pwned\n");
    await Deno.remove(target);
  });
  await t.step("repository hook with sandboxRepositoryHooks false: as the user", async () => {
    const hooks = commandHooks(workspace.path, {
      repository: preToolUse(`echo pwned > ${target}`),
      runSandboxed,
      sandboxRepositoryHooks: false,
    });
    deepEqual(await runPreToolUse(hooks), [{ action: "continue" }]);
    equal(await Deno.readTextFile(target), "pwned\n");
  });
});
