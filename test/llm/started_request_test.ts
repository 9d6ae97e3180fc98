import { deepStrictEqual, equal, ok, rejects } from "node:assert/strict";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions } from "../../src/llm/provider.ts";
import { StartedRequest } from "../../src/llm/started_request.ts";
import { messageEnd, messageStart, ScriptedProvider, textTurn } from "../_fakes/scripted_provider.ts";

const REQUEST: ModelRequest = {
  model: "claude-test",
  maxTokens: 100,
  system: "You are a test.",
  messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
  tools: [{ name: "ReadFile", description: "Reads a file.", inputSchema: { type: "object" } }],
};

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A provider whose stream waits for `release` after its response began, and records what it was given. */
class GatedProvider implements Provider {
  readonly name = "gated";
  readonly signals: AbortSignal[] = [];
  #release = Promise.withResolvers<void>();

  release(): void {
    this.#release.resolve();
  }

  async *stream(_request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent> {
    this.signals.push(options.signal);
    options.onResponse?.();
    await new Promise<void>((resolve, reject) => {
      options.signal.addEventListener("abort", () => reject(options.signal.reason), { once: true });
      this.#release.promise.then(resolve);
    });
    yield messageStart();
    yield messageEnd([{ type: "text", text: "hi" }], "end_turn");
  }
}

Deno.test("StartedRequest: the request is sent at once, and the same request later takes its stream", async () => {
  const inner = new ScriptedProvider([textTurn("hello back")]);
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  equal(inner.requests.length, 1, "sent before anyone asked for it");
  const events = await collect(
    started.provider.stream(structuredClone(REQUEST), { signal: new AbortController().signal }),
  );
  equal(inner.requests.length, 1, "not sent twice");
  deepStrictEqual(events.map((event) => event.type), ["message-start", "text-delta", "message-end"]);
});

Deno.test("StartedRequest: another request aborts the started one and is sent as asked", async () => {
  const inner = new GatedProvider();
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  const other = { ...REQUEST, system: "Another prompt." };
  inner.release();
  const events = await collect(started.provider.stream(other, { signal: new AbortController().signal }));
  equal(inner.signals.length, 2);
  ok(inner.signals[0]!.aborted, "the started request is aborted");
  ok(!inner.signals[1]!.aborted);
  equal(events.at(-1)?.type, "message-end");
});

Deno.test("StartedRequest: the same request asked again (a retry) is sent anew", async () => {
  const inner = new ScriptedProvider([textTurn("one"), textTurn("two")]);
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  const signal = new AbortController().signal;
  await collect(started.provider.stream(REQUEST, { signal }));
  const again = await collect(started.provider.stream(REQUEST, { signal }));
  equal(inner.requests.length, 2);
  deepStrictEqual(again.find((event) => event.type === "text-delta"), {
    type: "text-delta",
    index: 0,
    text: "two",
  });
});

Deno.test("StartedRequest: a response that began before the stream was taken is told to the taker", async () => {
  const inner = new GatedProvider();
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  let responded = 0;
  const stream = started.provider.stream(REQUEST, {
    signal: new AbortController().signal,
    onResponse: () => responded++,
  });
  equal(responded, 1, "at once: the response had begun");
  inner.release();
  await collect(stream);
  equal(responded, 1);
});

Deno.test("StartedRequest: the run's signal and the taker's signal both abort the started request", async () => {
  const run = new AbortController();
  const inner = new GatedProvider();
  new StartedRequest(inner, REQUEST, run.signal);
  run.abort(new DOMException("interrupted", "AbortError"));
  ok(inner.signals[0]!.aborted);

  const second = new GatedProvider();
  const started = new StartedRequest(second, REQUEST, new AbortController().signal);
  const turn = new AbortController();
  const events = collect(started.provider.stream(REQUEST, { signal: turn.signal }));
  turn.abort(new DOMException("the turn ended", "AbortError"));
  await rejects(
    events,
    (error: unknown) => error instanceof DOMException && error.message === "the turn ended",
  );
  ok(second.signals[0]!.aborted);
});

Deno.test("StartedRequest: discard aborts a request no one took; its failure is never unhandled", async () => {
  const inner = new GatedProvider();
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  started.discard();
  ok(inner.signals[0]!.aborted);
  // Taken after the discard, the same request is sent anew rather than the aborted one replayed.
  inner.release();
  const events = await collect(started.provider.stream(REQUEST, { signal: new AbortController().signal }));
  equal(inner.signals.length, 2);
  equal(events.at(-1)?.type, "message-end");

  const failing: Provider = {
    name: "failing",
    // deno-lint-ignore require-yield -- a stream that fails before its first event
    async *stream() {
      throw new Error("connection refused");
    },
  };
  const early = new StartedRequest(failing, REQUEST, new AbortController().signal);
  await new Promise((resolve) => setTimeout(resolve, 10)); // an unhandled rejection would fail the test here
  await rejects(
    collect(early.provider.stream(REQUEST, { signal: new AbortController().signal })),
    /connection refused/,
  );
});

Deno.test("StartedRequest: responded settles once the response began, or the request failed", async () => {
  const inner = new GatedProvider();
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  await started.responded; // GatedProvider's response begins at once, before its events are released
  inner.release();
  await collect(started.provider.stream(REQUEST, { signal: new AbortController().signal }));

  let settled = false;
  const silent: Provider = {
    name: "silent",
    // deno-lint-ignore require-yield -- a request that never answers until aborted
    async *stream(_request, options) {
      await new Promise((_resolve, reject) =>
        options.signal.addEventListener("abort", reject, { once: true })
      );
    },
  };
  const run = new AbortController();
  const waiting = new StartedRequest(silent, REQUEST, run.signal);
  void waiting.responded.then(() => settled = true);
  await new Promise((resolve) => setTimeout(resolve, 5));
  equal(settled, false, "no response yet");
  run.abort();
  await waiting.responded;
});

Deno.test("StartedRequest: sent settles once the provider wrote the request, before any answer, or with the answer, never for a failed one", async () => {
  // Written, and nothing answered until aborted.
  const state = { responded: false, sent: false };
  const written: Provider = {
    name: "written",
    // deno-lint-ignore require-yield -- a request written that never answers until aborted
    async *stream(_request, options) {
      options.onSent?.();
      await new Promise((_resolve, reject) =>
        options.signal.addEventListener("abort", reject, { once: true })
      );
    },
  };
  const run = new AbortController();
  const waiting = new StartedRequest(written, REQUEST, run.signal);
  void waiting.responded.then(() => state.responded = true);
  await waiting.sent;
  await new Promise((resolve) => setTimeout(resolve, 5));
  equal(state.responded, false, "no answer yet");
  run.abort();
  await waiting.responded;
  // A provider that never says it wrote the request: sent comes with the answer.
  const inner = new GatedProvider();
  const started = new StartedRequest(inner, REQUEST, new AbortController().signal);
  void started.sent.then(() => state.sent = true);
  await started.responded;
  equal(state.sent, true);
  inner.release();
  await collect(started.provider.stream(REQUEST, { signal: new AbortController().signal }));
  // A request that failed before it was written (no connection): nothing to prepare for.
  const failing: Provider = {
    name: "failing",
    // deno-lint-ignore require-yield -- fails before any event
    async *stream() {
      throw new Error("no connection");
    },
  };
  const failed = new StartedRequest(failing, REQUEST, new AbortController().signal);
  let failedSent = false;
  void failed.sent.then(() => failedSent = true);
  await failed.responded;
  await new Promise((resolve) => setTimeout(resolve, 5));
  equal(failedSent, false);
  failed.discard();
});
