/**
 * Two mewcode sessions in one workspace (aliases fired in parallel): bubblewrap creates the empty folders it
 * mounts the protected folders' placeholders on (`.idea`, `.vscode`, `.mewcode`, …), and the session that
 * created one removes it when done. Another session that planned its call while the folder was there must
 * still start its sandbox once it is gone, with the folder as protected as ever.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { testRuntime } from "../_fakes/runtime.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import type { ToolRuntime } from "../../src/execution/runtime.ts";
import type { ToolResult } from "../../src/tools/tool.ts";

async function bash(runtime: ToolRuntime, command: string): Promise<ToolResult> {
  const { result } = await runtime.pipeline.run(
    { id: `concurrent_${crypto.randomUUID()}`, name: "Bash", input: { command } },
    { signal: new AbortController().signal },
  );
  return result;
}

const PROTECTED_FOLDERS = [".idea", ".vscode", ".mewcode"];

Deno.test("a session's call starts although another session removed the placeholder folders it saw, and the session removes those its sandbox made again", async () => {
  await using workspace = await createTempWorkspace("mewcode-concurrent-");
  await Deno.writeTextFile(`${workspace.root}/a.txt`, "a\n");
  // Another session's placeholders: empty folders that session will remove when its call ends.
  for (const name of PROTECTED_FOLDERS) await Deno.mkdir(`${workspace.root}/${name}`);
  const runtime = await testRuntime(workspace.root);
  const sandbox = runtime.sandbox;
  const prepareCall = sandbox.prepareCall.bind(sandbox);
  let removed = 0;
  sandbox.prepareCall = async () => {
    const call = await prepareCall();
    // The other session ends between this call's plan and its sandbox's start.
    for (const name of PROTECTED_FOLDERS) {
      await Deno.remove(`${workspace.root}/${name}`).then(() => removed++, () => undefined);
    }
    return call;
  };
  const result = await bash(
    runtime,
    "cat a.txt; mkdir -p .vscode && echo '{}' > .vscode/tasks.json; echo made=$?",
  );
  ok(removed > 0, "the folders were removed after the plan");
  equal(result.isError, false, result.content);
  match(result.content, /a\nmkdir: .*|a\n.*Read-only file system/s);
  match(result.content, /made=1/);
  equal(await Deno.lstat(`${workspace.root}/.vscode/tasks.json`).then(() => true, () => false), false);
  sandbox.prepareCall = prepareCall;
  // And the next call, with the folders gone for good.
  const next = await bash(runtime, "ls -A | sort | tr '\\n' ' '");
  equal(next.isError, false, next.content);
  await runtime.close();
  // The folders this session's sandboxes made (the freed inode numbers may well be reused) are gone too.
  deepEqual([...Deno.readDirSync(workspace.root)].map((entry) => entry.name), ["a.txt"]);
});

Deno.test("an empty protected folder someone else made is mounted over, never removed", async () => {
  await using workspace = await createTempWorkspace("mewcode-concurrent-keep-");
  await Deno.mkdir(`${workspace.root}/.vscode`);
  {
    await using runtime = await testRuntime(workspace.root);
    const result = await bash(runtime, "touch .vscode/tasks.json; echo made=$?");
    match(result.content, /made=1/, result.content);
  }
  deepEqual([...Deno.readDirSync(`${workspace.root}/.vscode`)], [], "still there, still empty");
});

Deno.test("a call whose sandbox cannot start because a protected folder went away meanwhile is tried again once it is back", async () => {
  await using workspace = await createTempWorkspace("mewcode-concurrent-retry-");
  await Deno.mkdir(`${workspace.root}/.vscode`);
  await Deno.writeTextFile(`${workspace.root}/.vscode/settings.json`, "{}\n");
  const runtime = await testRuntime(workspace.root);
  // A first call: the worker and its kept sandbox run, binding .vscode.
  equal((await bash(runtime, "true")).isError, false);
  const sandbox = runtime.sandbox;
  const prepareCall = sandbox.prepareCall.bind(sandbox);
  let back: Promise<void> | null = null;
  sandbox.prepareCall = async () => {
    const call = await prepareCall();
    // Another session moves the folder away and back (60 ms later) as this call starts: the kept sandbox
    // finds its mount gone and is replaced, and the replacement cannot find what it binds until it is back.
    if (back === null) {
      await Deno.rename(`${workspace.root}/.vscode`, `${workspace.root}/vscode.moved`);
      back = new Promise((resolve) =>
        setTimeout(
          () => Deno.rename(`${workspace.root}/vscode.moved`, `${workspace.root}/.vscode`).then(resolve),
          60,
        )
      );
    }
    return call;
  };
  const result = await bash(
    runtime,
    "cat .vscode/settings.json; echo x > .vscode/settings.json; echo wrote=$?",
  );
  await back;
  sandbox.prepareCall = prepareCall;
  equal(result.isError, false, result.content);
  match(result.content, /\{\}\n.*wrote=1/s);
  equal(await Deno.readTextFile(`${workspace.root}/.vscode/settings.json`), "{}\n");
  await runtime.close();
});

Deno.test("a command cannot make another agent's settings or a dev container's, and leaves no placeholder behind", async () => {
  await using workspace = await createTempWorkspace("mewcode-agent-settings-");
  const runtime = await testRuntime(workspace.root);
  const result = await bash(
    runtime,
    "mkdir -p .claude .devcontainer sub/.vscode 2>/dev/null; " +
      "echo '{\"hooks\":{}}' > .claude/settings.json; echo claude=$?; " +
      "echo '{}' > .devcontainer/devcontainer.json; echo devcontainer=$?",
  );
  equal(result.isError, false, result.content);
  match(result.content, /claude=1/);
  match(result.content, /devcontainer=1/);
  await runtime.close();
  // The placeholders its sandboxes mounted on are gone; what the command could make (sub/.vscode) stays.
  deepEqual([...Deno.readDirSync(workspace.root)].map((entry) => entry.name).sort(), ["sub"]);
});
