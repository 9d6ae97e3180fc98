import { equal, ok } from "node:assert/strict";
import { withDeadline } from "../../src/common/deadline.ts";

/** A real pipe: a child process that writes `text` after `delayMs`, read by one `read` call. */
function pipeRead(text: string, delayMs: number) {
  const child = new Deno.Command("sh", {
    args: ["-c", `sleep ${delayMs / 1000}; printf %s '${text}'`],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.getReader();
  return {
    read: reader.read().then(({ value }) => new TextDecoder().decode(value)),
    async close() {
      await reader.cancel();
      await child.status;
    },
  };
}

Deno.test("withDeadline gives the value of a promise that settles in time", async () => {
  const pipe = pipeRead("early", 0);
  try {
    equal(await withDeadline(pipe.read, 5_000), "early");
  } finally {
    await pipe.close();
  }
});

Deno.test("withDeadline says timeout when the deadline passes first, and the promise runs on", async () => {
  const pipe = pipeRead("late", 600);
  try {
    const started = performance.now();
    equal(await withDeadline(pipe.read, 50), "timeout");
    const waited = performance.now() - started;
    ok(waited >= 45 && waited < 550, `waited ${waited} ms`);
    equal(await pipe.read, "late");
  } finally {
    await pipe.close();
  }
});

Deno.test("withDeadline passes a rejection on, and a deadline of 0 still lets a settled promise win", async () => {
  let caught: unknown = null;
  await withDeadline(Promise.reject(new Error("refused")), 1_000).catch((error) => (caught = error));
  ok(caught instanceof Error && caught.message === "refused");
  equal(await withDeadline(Promise.resolve("done"), 0), "done");
  equal(await withDeadline(new Promise<never>(() => {}), 0), "timeout");
});
