/**
 * A small unbounded async queue: producers `push`, one consumer awaits `next`. Private to src/agent/.
 *
 * @module
 */

/** Merges events from several producers (the model stream, running tools) into one ordered sequence. */
export class AsyncQueue<T> {
  #items: T[] = [];
  #waiter: ((item: T) => void) | null = null;

  /** The number of items waiting. */
  get size(): number {
    return this.#items.length;
  }

  /** Adds an item; wakes the consumer if it is waiting. */
  push(item: T): void {
    const waiter = this.#waiter;
    if (waiter !== null) {
      this.#waiter = null;
      waiter(item);
      return;
    }
    this.#items.push(item);
  }

  /** The next item, waiting for one if none is queued. Only one consumer may wait at a time. */
  next(): Promise<T> {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift() as T);
    if (this.#waiter !== null) throw new TypeError("Cannot wait on the queue twice");
    return new Promise<T>((resolve) => {
      this.#waiter = resolve;
    });
  }
}
