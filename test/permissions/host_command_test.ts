import { deepEqual, equal, ok } from "node:assert/strict";
import { runHostCommand } from "../../src/permissions/host_command.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", ONLY: "this" };

Deno.test("runHostCommand gives the input, keeps the streams apart, and passes only the environment given", async () => {
  await using workspace = await createTempWorkspace();
  const result = await runHostCommand('read -r line; echo "$line $ONLY $HOME $PWD"; echo warn >&2; exit 4', {
    cwd: workspace.root,
    env: ENV,
    stdin: "hello\n",
    timeoutMs: 10_000,
  });
  equal(result.status, "exited");
  if (result.status !== "exited") return;
  deepEqual([result.code, result.stdout, result.stderr], [4, `hello this  ${workspace.root}\n`, "warn\n"]);
});

Deno.test("runHostCommand returns soon after the command exits, even when a detached process holds its output", async () => {
  await using workspace = await createTempWorkspace();
  const marker = `held_${crypto.randomUUID().replaceAll("-", "")}`;
  const started = performance.now();
  const result = await runHostCommand(`setsid sh -c 'sleep 3; : ${marker}' & echo done`, {
    cwd: workspace.root,
    env: ENV,
    stdin: "",
    timeoutMs: 10_000,
  });
  ok(performance.now() - started < 2_500, "waited for the detached process");
  equal(result.status === "exited" ? result.stdout : result.status, "done\n");
});

Deno.test("runHostCommand stops the whole process group at the timeout and on abort", async () => {
  await using workspace = await createTempWorkspace();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const aborted = await runHostCommand("sleep 30 & sleep 30", {
    cwd: workspace.root,
    env: ENV,
    stdin: "",
    timeoutMs: 10_000,
    signal: controller.signal,
  });
  equal(aborted.status, "exited");
  const timedOut = await runHostCommand("trap '' TERM; sleep 30", {
    cwd: workspace.root,
    env: ENV,
    stdin: "",
    timeoutMs: 200,
  });
  equal(timedOut.status, "timed-out");
  ok(timedOut.status === "timed-out" && timedOut.durationMs < 3_000);
});

Deno.test("runHostCommand reports a working directory that does not exist as a failure", async () => {
  const result = await runHostCommand("true", {
    cwd: "/nonexistent/dir",
    env: ENV,
    stdin: "",
    timeoutMs: 1_000,
  });
  equal(result.status, "failed");
});

Deno.test("runHostCommand kills what the command left running in its group when it ends", async () => {
  await using workspace = await createTempWorkspace();
  // A formatter's config file is code: it may start anything in the background and return.
  const result = await runHostCommand("(sleep 1; touch survivor) & echo done", {
    cwd: workspace.root,
    env: ENV,
    stdin: "",
    timeoutMs: 10_000,
  });
  equal(result.status === "exited" ? result.stdout : result.status, "done\n");
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  equal(await Deno.lstat(`${workspace.root}/survivor`).then(() => true, () => false), false);
});
