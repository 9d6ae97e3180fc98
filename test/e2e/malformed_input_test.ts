/**
 * End to end: tool inputs a model might send to break the loop (nested 10,000 levels deep) end as an
 * error result for the model, and a response that breaks the protocol (a reused tool_use id) as a protocol
 * error; never as a crash of `mewcode -p`.
 */
import { deepStrictEqual, equal, match, ok } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";

Deno.test("mewcode -p answers a tool input nested 10,000 levels deep with an error result and goes on", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-deep-ws-" }));
  const home = await Deno.makeTempDir({ prefix: "mewcode-deep-home-" });
  const nested = `{"path": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
  await using server = await startFakeAnthropic([
    turn().rawToolUse("ReadFile", nested, { id: "toolu_deep", fragment: 4096 }),
    turn().text("Recovered.").stop("end_turn"),
  ]);
  try {
    const run = await runMewcode(["-p", "Read it"], {
      cwd: root,
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: home },
    });
    equal(run.code, 0, run.stderr);
    equal(run.stdout, "Recovered.\n");
    const second = server.requests[1]?.body as { messages: { role: string; content: unknown }[] };
    ok(second, "a second request was sent");
    const results = second.messages.at(-1)?.content as {
      tool_use_id: string;
      is_error?: boolean;
      content: string;
    }[];
    equal(results[0]?.tool_use_id, "toolu_deep");
    equal(results[0]?.is_error, true);
    match(results[0]?.content ?? "", /nested more than 64 levels deep/);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mewcode -p ends with a protocol error, runs nothing and records the end when a response reuses a tool_use id", async () => {
  await using workspace = await E2eWorkspace.create();
  const command = "echo ran >> sidefx.txt";
  await using server = await startFakeAnthropic([
    turn().text("Twice.")
      .toolUse("Bash", { command }, { id: "toolu_same" })
      .toolUse("Bash", { command }, { id: "toolu_same" })
      .stop("tool_use"),
  ]);
  const run = await workspace.run(server, [
    "--permission-mode",
    "bypassPermissions",
    "--output-format",
    "json",
  ]);
  equal(run.code, 1, run.stderr);
  match(run.stderr, /reuses the id "toolu_same"/);
  const result = JSON.parse(run.stdout);
  equal(result.subtype, "error_during_execution");
  equal(result.is_error, true);
  equal(result.num_turns, 1);
  equal(server.requests.length, 1, "the response is not sent back");
  equal(await Deno.stat(workspace.path("sidefx.txt")).then(() => true, () => false), false, "nothing ran");
  const { records } = await workspace.transcript();
  const error = records.find((record) => record.type === "error");
  ok(error?.type === "error", JSON.stringify(records.map((record) => record.type)));
  equal(error.name, "StreamProtocolError");
  match(error.message, /reuses the id "toolu_same"/);
  const outcomes = records.flatMap((record) =>
    record.type === "tool-call-end" ? [record.outcome.status] : []
  );
  deepStrictEqual(outcomes, ["cancelled"], "the call delivered before the reused id is cancelled, not run");
  const last = records.at(-1);
  ok(last?.type === "turn-end" && last.reason === "error", JSON.stringify(last));
});
