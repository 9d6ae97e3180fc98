/**
 * A fixed number of slots for work that must not all run at once: `acquire` waits, in arrival order, until
 * one is free. Used for ripgrep's searches (`src/tools/grep_ripgrep.ts`).
 *
 * @module
 */

/** At most `size` holders at a time; the others wait in the order they asked. */
export class Slots {
  readonly size: number;
  #held = 0;
  #waiting: Array<() => void> = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`Cannot create slots: the size must be a whole number of at least 1, got ${size}`);
    }
    this.size = size;
  }

  /** How many slots are held now. */
  get held(): number {
    return this.#held;
  }

  /**
   * Resolves with the function that gives the slot back (calling it again does nothing) once one is free;
   * rejects with the signal's reason if it aborts first, holding nothing.
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#held < this.size) return Promise.resolve(this.#take());
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener("abort", onAbort);
        resolve(this.#take());
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((waiter) => waiter !== turn);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(turn);
    });
  }

  #take(): () => void {
    this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      // The slot passes straight to the next in line, if any.
      this.#waiting.shift()?.();
    };
  }
}
