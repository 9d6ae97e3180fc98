import { deepStrictEqual, equal, rejects, throws } from "node:assert/strict";
import { Slots } from "../../src/common/slots.ts";

const never = new AbortController().signal;

Deno.test("slots hold at most their size at once and pass on in arrival order", async () => {
  const slots = new Slots(2);
  const order: string[] = [];
  const first = await slots.acquire(never);
  const second = await slots.acquire(never);
  equal(slots.held, 2);
  const third = slots.acquire(never).then((release) => {
    order.push("third");
    return release;
  });
  const fourth = slots.acquire(never).then((release) => {
    order.push("fourth");
    return release;
  });
  await new Promise((resolve) => setTimeout(resolve, 10));
  deepStrictEqual(order, []);
  first();
  first(); // A second call gives back nothing more.
  (await third)();
  second();
  (await fourth)();
  deepStrictEqual(order, ["third", "fourth"]);
  equal(slots.held, 0);
});

Deno.test("a wait for a slot ends with the signal's reason, and holds nothing", async () => {
  const slots = new Slots(1);
  const release = await slots.acquire(never);
  const controller = new AbortController();
  const waiting = slots.acquire(controller.signal);
  controller.abort(new Error("cancelled"));
  await rejects(waiting, /cancelled/);
  await rejects(slots.acquire(controller.signal), /cancelled/);
  release();
  equal(slots.held, 0);
  // The aborted waiter got no slot: the next one gets it at once.
  (await slots.acquire(never))();
  equal(slots.held, 0);
});

Deno.test("slots refuse a size below one", () => {
  throws(() => new Slots(0), /at least 1, got 0/);
  throws(() => new Slots(1.5), /at least 1/);
});
