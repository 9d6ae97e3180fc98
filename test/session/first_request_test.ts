/**
 * A session's first run sends its first request before the agent loop has loaded, so the loop and
 * everything a one-shot run loads for its output (print_mode.ts waits for the run's first event) load while
 * the request is on its way: the request has been sent when the run yields its first event, and it is sent
 * once.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "../../src/llm/provider.ts";
import { openSession, type SessionOptions } from "../../src/session/session.ts";
import { ScriptedProvider, textTurn } from "../_fakes/scripted_provider.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { testSessionOptions } from "../_fakes/session_options.ts";

function sessionOptions(root: string, provider: Provider): SessionOptions {
  return testSessionOptions(root, { HOME: root, MEWCODE_HOME: `${root}/.home` }, {
    persist: false,
    needsModel: true,
    headless: true,
    provider,
  });
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

/** A provider whose response begins only when released: its request is counted as soon as it is sent. */
class HeldProvider implements Provider {
  readonly name = "held";
  sent = 0;
  readonly #gate = Promise.withResolvers<void>();

  release(): void {
    this.#gate.resolve();
  }

  async *stream(_request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent> {
    this.sent++;
    await this.#gate.promise;
    options.onResponse?.();
    yield* textTurn("answer") as ProviderEvent[];
  }
}

Deno.test("a one-shot run yields nothing until its response began, unless someone watches it live", async (t) => {
  await using workspace = await createTempWorkspace();
  for (const watched of [false, true]) {
    await t.step(watched ? "watched: at once" : "unwatched: once the response began", async () => {
      const provider = new HeldProvider();
      await using session = await openSession({ ...sessionOptions(workspace.root, provider), provider });
      const run = session.run("hello", { signal: new AbortController().signal, watched });
      let first: IteratorResult<AgentEvent> | null = null;
      const next = run.next().then((step) => first = step);
      if (watched) {
        // The first event comes while the response has not begun (10 s: a bound against a hang only).
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([next, new Promise((resolve) => timer = setTimeout(resolve, 10_000))]);
        clearTimeout(timer);
      } else {
        // Long enough for the loop to load and yield, were it not waiting (it is loaded in this process).
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      equal(provider.sent, 1);
      equal(first !== null, watched);
      provider.release();
      await next;
      deepStrictEqual(first!.value, { type: "user-message", text: "hello" });
      for await (const _event of run) { /* drained */ }
      equal(provider.sent, 1);
    });
  }
});

Deno.test("an interactive session's first run sends its request from the loop, after its first event", async () => {
  await using workspace = await createTempWorkspace();
  const provider = new ScriptedProvider([textTurn("answer")]);
  await using session = await openSession({
    ...sessionOptions(workspace.root, provider),
    headless: false,
    executor: "direct",
  });
  const run = session.run("hello", { signal: new AbortController().signal });
  await run.next();
  equal(provider.requests.length, 0, "the loop sends it once it has said what the user asked");
  for await (const _event of run) { /* drained */ }
  equal(provider.requests.length, 1);
});
