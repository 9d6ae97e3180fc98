/**
 * End to end: a session stays continuable when a run was killed while writing its transcript's last line,
 * and two runs never write one session at once (the second is refused before it sends anything).
 */
import { equal, match, ok } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { waitFor } from "../_fakes/wait_for.ts";

Deno.test("mewcode -c twice after a run killed mid-line: the torn line is dropped, not buried", async () => {
  await using workspace = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("First.").stop("end_turn"),
    turn().text("Second.").stop("end_turn"),
    turn().text("Third.").stop("end_turn"),
  ]);
  const first = await workspace.run(server, [], "one");
  equal(first.code, 0, first.stderr);
  // What a run killed while writing leaves: its last line without the end (and without its line feed).
  const { path } = await workspace.transcript();
  const bytes = await Deno.readFile(path);
  await Deno.writeFile(path, bytes.subarray(0, bytes.length - 20));

  const second = await workspace.run(server, ["-c"], "two");
  equal(second.code, 0, second.stderr);
  equal(second.stdout, "Second.\n");
  match(second.stderr, /last line was cut off \(the session ended while writing it\) and was dropped/);
  const third = await workspace.run(server, ["-c"], "three");
  equal(third.code, 0, third.stderr);
  equal(third.stdout, "Third.\n");
  ok(!/cut off/.test(third.stderr), third.stderr);

  const after = await workspace.transcript();
  equal(after.torn, false);
  const prompts = after.records.flatMap((record) => record.type === "user-message" ? [record.content] : []);
  equal(prompts.join(","), "one,two,three");
});

Deno.test("mewcode -r ID while another run continues that session is refused before it sends anything", async () => {
  await using workspace = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("Started.").stop("end_turn"),
    // The run that holds the session waits for this answer until the test kills it.
    turn().text("Slow").delay(60_000).stop("end_turn"),
    turn().text("Continued.").stop("end_turn"),
  ]);
  const first = await workspace.run(server, [], "one");
  equal(first.code, 0, first.stderr);
  const id = (await workspace.transcript()).records[0];
  ok(id?.type === "session-start", JSON.stringify(id));
  const sessionId = id.sessionId;

  const holder = workspace.spawn(server, ["-p", "two", "-r", sessionId]);
  try {
    await waitFor(
      "the first run never sent its request",
      () => Promise.resolve(server.requests.length === 2),
    );
    const refused = await workspace.run(server, ["-r", sessionId, "--output-format", "json"], "three");
    equal(refused.code, 1, refused.stderr);
    match(refused.stderr, new RegExp(`Session ${sessionId} is in use by another mewcode run`));
    match(refused.stderr, /wait for that run to end and continue the session then, or start a new session/);
    const result = JSON.parse(refused.stdout) as { is_error: boolean; session_id: string };
    equal(result.is_error, true);
    equal(result.session_id, sessionId);
    equal(server.requests.length, 2, "the refused run sent nothing");
  } finally {
    // Killed outright: the kernel lets its lock go.
    Deno.kill(holder.pid, "SIGKILL");
    await holder.status;
  }

  const after = await workspace.run(server, ["-r", sessionId], "four");
  equal(after.code, 0, after.stderr);
  equal(after.stdout, "Continued.\n");
  const { records, torn } = await workspace.transcript();
  equal(torn, false);
  const prompts = records.flatMap((record) => record.type === "user-message" ? [record.content] : []);
  equal(prompts.join(","), "one,two,four", "the refused run wrote nothing");
});
