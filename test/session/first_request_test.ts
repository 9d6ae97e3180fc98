/**
 * A session's first run sends its first request before the agent loop has loaded, so the loop and
 * everything a one-shot run loads for its output (print_mode.ts waits for the run's first event) load while
 * the request is on its way: the request has been sent when the run yields its first event, and it is sent
 * once.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { openSession, type SessionOptions } from "../../src/session/session.ts";
import { ScriptedProvider, textTurn } from "../_fakes/scripted_provider.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

function sessionOptions(root: string, provider: ScriptedProvider): SessionOptions {
  return {
    workspace: { root, aliases: [] },
    env: { HOME: root, MEWCODE_HOME: `${root}/.home` },
    model: "claude-sonnet-5-5",
    maxTokens: 1000,
    maxTurns: null,
    permissionMode: "default",
    readOnly: true,
    sandbox: "workspace-write",
    sandboxNetwork: false,
    strictLinks: false,
    persist: false,
    needsModel: true,
    headless: true,
    executor: "direct",
    provider,
  };
}

Deno.test("a session's first request is sent before its run yields anything, and once", async () => {
  await using workspace = await createTempWorkspace();
  const provider = new ScriptedProvider([textTurn("first answer"), textTurn("second answer")]);
  await using session = await openSession(sessionOptions(workspace.root, provider));
  const signal = new AbortController().signal;

  const run = session.run("hello", { signal });
  const first = await run.next();
  equal(provider.requests.length, 1, "sent before the first event");
  deepStrictEqual(first.value, { type: "user-message", text: "hello" });
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  equal(provider.requests.length, 1, "the loop took the request already sent");
  equal(events.findLast((event) => event.type === "turn-end")?.type, "turn-end");
  deepStrictEqual(
    events.filter((event) => event.type === "text-delta").map((event) => event.text),
    ["first answer"],
  );

  // The next run sends its request from the loop, as usual: one more request, with the whole conversation.
  const second: AgentEvent[] = [];
  for await (const event of session.run("again", { signal })) second.push(event);
  equal(provider.requests.length, 2);
  equal(provider.requests[1]!.messages.length, 3);
});
