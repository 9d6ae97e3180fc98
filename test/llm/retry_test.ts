import { deepStrictEqual, equal, ok } from "node:assert/strict";
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  OverloadedError,
  RateLimitError,
  ServerError,
  StreamInterruptedError,
  StreamProtocolError,
} from "../../src/llm/errors.ts";
import type { ProviderEvent } from "../../src/llm/provider.ts";
import {
  abortableSleep,
  brokenStreamReason,
  decideRetry,
  decideStreamRetry,
  DEFAULT_RETRY_POLICY,
  streamWithRetry,
} from "../../src/llm/retry.ts";

const overloaded = () =>
  new OverloadedError("Overloaded", { status: 529, errorType: "overloaded_error", isRetryable: true });
const rateLimited = (retryAfterMs: number | null) =>
  new RateLimitError("Slow down", {
    status: 429,
    errorType: "rate_limit_error",
    isRetryable: true,
    retryAfterMs,
  });

const START: ProviderEvent = {
  type: "message-start",
  messageId: "msg_1",
  model: "m",
  usage: { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
};
const TEXT: ProviderEvent = { type: "text-delta", index: 0, text: "Hi" };
const END: ProviderEvent = {
  type: "message-end",
  stopReason: "end_turn",
  usage: { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  content: [{ type: "text", text: "Hi" }],
};

/** An attempt function that plays one script entry per attempt: events, then optionally an error. */
function scriptedAttempts(script: { events?: ProviderEvent[]; error?: unknown }[]) {
  const calls: number[] = [];
  const attempt = async function* (attemptNumber: number): AsyncGenerator<ProviderEvent> {
    calls.push(attemptNumber);
    const entry = script[attemptNumber - 1];
    if (entry === undefined) throw new Error(`No scripted attempt ${attemptNumber}`);
    for (const event of entry.events ?? []) yield await Promise.resolve(event);
    if (entry.error !== undefined) throw entry.error;
  };
  return { attempt, calls };
}

/** A sleep that records the delays and returns at once. */
function recordingSleep() {
  const delays: number[] = [];
  return { delays, sleep: (ms: number) => Promise.resolve(void delays.push(ms)) };
}

async function collect(
  stream: AsyncIterable<ProviderEvent>,
): Promise<{ events: ProviderEvent[]; error: unknown }> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

Deno.test("decideRetry grows the backoff ceiling exponentially up to maxDelayMs", () => {
  const almostOne = () => 0.999999;
  const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) =>
    decideRetry(overloaded(), attempt, { random: almostOne, policy: { maxRetries: 10, maxDelayMs: 20_000 } })
  );
  deepStrictEqual(delays.map((decision) => decision.retry ? decision.delayMs : -1), [
    999,
    1999,
    3999,
    7999,
    15999,
    19999,
    19999,
  ]);
});

Deno.test("decideRetry keeps the jittered delay within [0, ceiling)", () => {
  for (const random of [0, 0.25, 0.5, 0.75, 0.999999]) {
    const decision = decideRetry(overloaded(), 3, { random: () => random });
    ok(decision.retry);
    ok(decision.delayMs >= 0 && decision.delayMs < 4_000, `delay ${decision.delayMs} for random ${random}`);
    equal(decision.delayMs, Math.floor(random * 4_000));
  }
});

Deno.test("decideRetry waits exactly the retry-after the API asked for, and gives up when it is too long", () => {
  deepStrictEqual(decideRetry(rateLimited(1_000), 1, { random: () => 0 }), { retry: true, delayMs: 1_000 });
  deepStrictEqual(decideRetry(rateLimited(250.4), 4), { retry: true, delayMs: 251 });
  deepStrictEqual(decideRetry(rateLimited(DEFAULT_RETRY_POLICY.maxRetryAfterMs + 1), 1), {
    retry: false,
    waitAskedMs: DEFAULT_RETRY_POLICY.maxRetryAfterMs + 1,
  });
  deepStrictEqual(decideRetry(rateLimited(5_000), 1, { policy: { maxRetryAfterMs: 4_000 } }), {
    retry: false,
    waitAskedMs: 5_000,
  });
});

Deno.test("decideRetry does not retry errors that are not retryable", async (t) => {
  const cases: [string, unknown][] = [
    ["400", ApiError.fromResponse(400, { error: { type: "invalid_request_error", message: "bad" } })],
    [
      "401",
      ApiError.fromResponse(401, { error: { type: "authentication_error", message: "invalid x-api-key" } }),
    ],
    ["403", ApiError.fromResponse(403, { error: { type: "permission_error", message: "no" } })],
    ["404", ApiError.fromResponse(404, { error: { type: "not_found_error", message: "no model" } })],
    ["a protocol error", new StreamProtocolError("Unexpected message_stop")],
    ["a plain error", new Error("bug")],
  ];
  for (const [name, error] of cases) {
    await t.step(name, () => deepStrictEqual(decideRetry(error, 1), { retry: false }));
  }
});

Deno.test("decideRetry retries 429, 500, 503, 529 and connection errors within maxRetries", () => {
  const errors = [
    ApiError.fromResponse(429, {}),
    ApiError.fromResponse(500, {}),
    ApiError.fromResponse(503, {}),
    ApiError.fromResponse(529, {}),
    new ConnectionError("Cannot reach the API"),
  ];
  for (const error of errors) {
    equal(decideRetry(error, 4).retry, true, error.message);
    equal(decideRetry(error, 5).retry, false, error.message);
  }
});

Deno.test("streamWithRetry retries before content, reporting each retry, then yields the answer", async () => {
  const { attempt, calls } = scriptedAttempts([
    { error: overloaded() },
    { events: [START], error: new ConnectionError("Connection reset") },
    { events: [START, TEXT, END] },
  ]);
  const { delays, sleep } = recordingSleep();
  const { events, error } = await collect(
    streamWithRetry(attempt, { signal: new AbortController().signal, random: () => 0.5, sleep }),
  );
  equal(error, null);
  deepStrictEqual(calls, [1, 2, 3]);
  deepStrictEqual(delays, [500, 1000]);
  deepStrictEqual(events, [
    { type: "retry", attempt: 1, delayMs: 500, reason: "Overloaded (529 overloaded_error)" },
    { type: "retry", attempt: 2, delayMs: 1000, reason: "Connection reset (connection)" },
    START,
    TEXT,
    END,
  ]);
});

Deno.test("streamWithRetry retries a failure that followed only a warning: a warning is not content", async () => {
  const warning: ProviderEvent = { type: "warning", message: "The model is deprecated" };
  const { attempt, calls } = scriptedAttempts([
    { events: [warning], error: overloaded() },
    { events: [START, TEXT, END] },
  ]);
  const { events, error } = await collect(
    streamWithRetry(attempt, {
      signal: new AbortController().signal,
      random: () => 0.5,
      sleep: recordingSleep().sleep,
    }),
  );
  equal(error, null);
  deepStrictEqual(calls, [1, 2]);
  deepStrictEqual(events.map((event) => event.type), [
    "warning",
    "retry",
    "message-start",
    "text-delta",
    "message-end",
  ]);
});

Deno.test("streamWithRetry says how long the API asked to wait when it will not wait that long", async () => {
  for (const [asked, said] of [[3_600_000, "60 min"], [1e20, "more than a day"]] as const) {
    const { attempt } = scriptedAttempts([{ error: rateLimited(asked) }]);
    const { error } = await collect(
      streamWithRetry(attempt, { signal: new AbortController().signal, sleep: recordingSleep().sleep }),
    );
    ok(error instanceof RateLimitError);
    ok(
      error.message.includes(
        `the API asked to wait ${said} before the next request (retry-after), longer than ` +
          "mewcode waits (60 s): run again after that",
      ),
      error.message,
    );
  }
});

Deno.test("streamWithRetry stops after maxRetries and throws the last error", async () => {
  const last = overloaded();
  const { attempt, calls } = scriptedAttempts([{ error: overloaded() }, { error: overloaded() }, {
    error: last,
  }]);
  const { sleep } = recordingSleep();
  const { events, error } = await collect(
    streamWithRetry(attempt, { signal: new AbortController().signal, maxRetries: 2, sleep }),
  );
  equal(error, last);
  deepStrictEqual(calls, [1, 2, 3]);
  deepStrictEqual(events.map((event) => event.type), ["retry", "retry"]);
});

Deno.test("streamWithRetry does not retry 400, 401 or protocol errors", async (t) => {
  const cases: [string, unknown][] = [
    [
      "400",
      new InvalidRequestError("max_tokens: too large", { status: 400, errorType: null, isRetryable: false }),
    ],
    [
      "401",
      new AuthenticationError("invalid x-api-key", { status: 401, errorType: null, isRetryable: false }),
    ],
    ["protocol", new StreamProtocolError("Unexpected message_stop")],
  ];
  for (const [name, thrown] of cases) {
    await t.step(name, async () => {
      const { attempt, calls } = scriptedAttempts([{ error: thrown }, { events: [START, END] }]);
      const { events, error } = await collect(
        streamWithRetry(attempt, { signal: new AbortController().signal, sleep: recordingSleep().sleep }),
      );
      equal(error, thrown);
      deepStrictEqual(calls, [1]);
      deepStrictEqual(events, []);
    });
  }
});

Deno.test("streamWithRetry does not retry once content arrived and keeps what arrived", async () => {
  const cause = new ServerError("Internal error", { status: 500, errorType: "api_error", isRetryable: true });
  const { attempt, calls } = scriptedAttempts([{ events: [START, TEXT], error: cause }, {
    events: [START, END],
  }]);
  const { events, error } = await collect(
    streamWithRetry(attempt, { signal: new AbortController().signal, sleep: recordingSleep().sleep }),
  );
  deepStrictEqual(calls, [1]);
  deepStrictEqual(events, [START, TEXT]);
  ok(error instanceof StreamInterruptedError);
  equal(error.cause, cause);
  equal(error.isRetryable, false);
  equal(error.message, "Response stream interrupted after content arrived: Internal error");
});

Deno.test("streamWithRetry holds message-start back so a retried attempt leaves no trace", async () => {
  const { attempt } = scriptedAttempts([
    { events: [{ ...START, messageId: "msg_failed" }], error: overloaded() },
    { events: [START, END] },
  ]);
  const { events } = await collect(
    streamWithRetry(attempt, {
      signal: new AbortController().signal,
      sleep: recordingSleep().sleep,
      random: () => 0,
    }),
  );
  deepStrictEqual(events.map((event) => event.type === "message-start" ? event.messageId : event.type), [
    "retry",
    "msg_1",
    "message-end",
  ]);
});

Deno.test("streamWithRetry says the response began as its message-start arrives, once, though it holds it back", async () => {
  // The first token comes only when the test lets it: `onResponse` must be heard while it waits.
  const firstToken = Promise.withResolvers<void>();
  const heard: string[] = [];
  let attempts = 0;
  const attempt = async function* (): AsyncGenerator<ProviderEvent> {
    attempts++;
    yield START;
    if (attempts === 1) throw overloaded();
    await firstToken.promise;
    yield TEXT;
    yield END;
  };
  const events: string[] = [];
  const done = (async () => {
    for await (
      const event of streamWithRetry(attempt, {
        signal: new AbortController().signal,
        sleep: recordingSleep().sleep,
        random: () => 0,
        onResponse: () => heard.push(`response began after ${events.length} events`),
      })
    ) {
      events.push(event.type);
    }
  })();
  for (let turn = 0; attempts < 2 && turn < 100; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  // The retried attempt's message-start is held back, and nothing else has come yet.
  deepStrictEqual(events, ["retry"]);
  deepStrictEqual(heard, ["response began after 0 events"]);
  firstToken.resolve();
  await done;
  deepStrictEqual(events, ["retry", "message-start", "text-delta", "message-end"]);
  equal(heard.length, 1);
});

Deno.test("streamWithRetry stops waiting and throws the abort reason when aborted during a backoff", async () => {
  const controller = new AbortController();
  const { attempt, calls } = scriptedAttempts([{ error: overloaded() }, { events: [START, END] }]);
  const reason = new DOMException("The user pressed Ctrl-C", "AbortError");
  const { events, error } = await collect(
    streamWithRetry(attempt, {
      signal: controller.signal,
      random: () => 0.999,
      baseDelayMs: 60_000,
      sleep: (ms, signal) => {
        controller.abort(reason);
        return abortableSleep(ms, signal);
      },
    }),
  );
  equal(error, reason);
  deepStrictEqual(calls, [1]);
  deepStrictEqual(events.map((event) => event.type), ["retry"]);
});

Deno.test("abortableSleep rejects at once with the reason of an aborted signal", async () => {
  const controller = new AbortController();
  const sleeping = abortableSleep(60_000, controller.signal);
  controller.abort(new Error("stop"));
  const error = await sleeping.then(() => null, (reason: unknown) => reason);
  equal(error instanceof Error ? error.message : null, "stop");
});

Deno.test("decideStreamRetry judges a broken stream by the error that broke it", async (t) => {
  const half = () => 0.5;
  await t.step("an overloaded stream is retried with the policy's backoff", () => {
    const broken = new StreamInterruptedError(overloaded());
    deepStrictEqual(decideStreamRetry(broken, 1, { random: half }), { retry: true, delayMs: 500 });
    deepStrictEqual(decideStreamRetry(broken, 4, { random: half }), { retry: true, delayMs: 4000 });
    deepStrictEqual(decideStreamRetry(broken, DEFAULT_RETRY_POLICY.maxRetries + 1), { retry: false });
  });
  await t.step("a dropped connection is retried, and a retry-after is honoured", () => {
    const dropped = new StreamInterruptedError(new ConnectionError("Connection reset"));
    equal(decideStreamRetry(dropped, 1).retry, true);
    deepStrictEqual(decideStreamRetry(new StreamInterruptedError(rateLimited(1500)), 1), {
      retry: true,
      delayMs: 1500,
    });
  });
  await t.step("a non-retryable cause, or any other error, is not retried", () => {
    const invalid = new InvalidRequestError("Bad", {
      status: 400,
      errorType: "invalid_request_error",
      isRetryable: false,
    });
    deepStrictEqual(decideStreamRetry(new StreamInterruptedError(invalid), 1), { retry: false });
    deepStrictEqual(decideStreamRetry(overloaded(), 1), { retry: false });
    deepStrictEqual(decideStreamRetry(new StreamProtocolError("Out of order"), 1), { retry: false });
    deepStrictEqual(decideStreamRetry(new Error("Connection dropped"), 1), { retry: false });
  });
});

Deno.test("brokenStreamReason says the stream broke and names the error under it", () => {
  equal(
    brokenStreamReason(new StreamInterruptedError(overloaded())),
    "Response stream broke off after content arrived: Overloaded (529 overloaded_error)",
  );
  equal(
    brokenStreamReason(new StreamInterruptedError(new ConnectionError("Connection reset"))),
    "Response stream broke off after content arrived: Connection reset (connection)",
  );
});
