/**
 * End to end: a mewcode killed with SIGKILL while a Bash call runs, then resumed with `-r`, tells the model
 * that the call started and its effects are unknown, never that it was not run (it may have changed files).
 */
import { equal, match, ok } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { processesWith } from "../_fakes/processes.ts";
import type { TranscriptRecord } from "../../src/session/transcript.ts";
import { waitFor } from "../_fakes/wait_for.ts";

/** The transcript's records, or none while it does not exist yet. */
async function recordsSoFar(workspace: E2eWorkspace): Promise<TranscriptRecord[]> {
  try {
    return (await workspace.transcript()).records;
  } catch {
    return [];
  }
}

Deno.test("mewcode -r after a SIGKILL during a Bash call tells the model the call started and its effects are unknown", async () => {
  await using workspace = await E2eWorkspace.create();
  const marker = `30.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await using server = await startFakeAnthropic([
    turn().text("Appending.").toolUse("Bash", { command: `echo ran >> sidefx.txt; sleep ${marker}` }, {
      id: "toolu_killed",
    }).stop("tool_use"),
    turn().text("Checked sidefx.txt first.").stop("end_turn"),
  ]);
  const child = workspace.spawn(server, ["-p", "append", "--permission-mode", "bypassPermissions"]);
  await waitFor("the Bash call never started", async () => {
    const started = (await recordsSoFar(workspace)).some((record) => record.type === "tool-call-start");
    const written = await Deno.readTextFile(workspace.path("sidefx.txt")).catch(() => "");
    return started && written === "ran\n" && (await processesWith(marker)) > 0;
  });
  Deno.kill(child.pid, "SIGKILL");
  equal((await child.status).signal, "SIGKILL");
  await waitFor("the sandbox outlived its mewcode", async () => (await processesWith(marker)) === 0);
  const records = await recordsSoFar(workspace);
  equal(records.some((record) => record.type === "tool-call-end"), false, "the call never ended");
  const sessionStart = records[0];
  ok(sessionStart?.type === "session-start", JSON.stringify(sessionStart));

  const resumed = await workspace.exec(server, [
    "-p",
    "go on",
    "-r",
    sessionStart.sessionId,
    "--permission-mode",
    "bypassPermissions",
  ]);
  equal(resumed.code, 0, resumed.stderr);
  equal(resumed.stdout, "Checked sidefx.txt first.\n");
  const body = server.requests[1]?.body as { messages: { role: string; content: unknown }[] } | undefined;
  ok(body, "the resumed run sent a request");
  const blocks = body.messages.flatMap((message) =>
    Array.isArray(message.content) ? message.content as Record<string, unknown>[] : []
  );
  const answer = blocks.find((block) => block.type === "tool_result" && block.tool_use_id === "toolu_killed");
  ok(answer, JSON.stringify(body.messages));
  equal(answer.is_error, true);
  const content = String(answer.content);
  match(content, /^Bash started, but the session ended before it finished/);
  match(content, /check/);
  ok(!/was not run/.test(content), content);
  equal(await Deno.readTextFile(workspace.path("sidefx.txt")), "ran\n", "nothing ran it again");
});
