/**
 * End to end: tool inputs a model might send to break the loop (here: nested 10,000 levels deep) end as
 * an error result for the model, never as a crash of `mewcode -p`.
 */
import { equal, match, ok } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { runMewcode } from "../_fakes/run_cli.ts";

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
