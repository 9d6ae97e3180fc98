/**
 * Time slices for long synchronous loops (walks, searches): a way to give the event loop a turn now and then,
 * so that a cancellation is noticed, and to stop at the call's deadline.
 *
 * @module
 */

import { nextTurn } from "../common/next_turn.ts";

/** Milliseconds of synchronous work between two yields to the event loop. */
const SLICE_MS = 50;

/** Options of `TimeSlicer`. */
export interface TimeSlicerOptions {
  /** When the work must end, as a `performance.now()` time: `pause` then resolves to true. */
  deadline?: number;
}

/**
 * Lets long synchronous loops give the event loop a turn every few milliseconds, so messages (such as a
 * cancellation) are handled, and reports whether the signal has been aborted or the deadline has passed.
 */
export class TimeSlicer {
  #signal: AbortSignal | undefined;
  #deadline: number;
  #sliceStart = performance.now();

  /** Creates a slicer that watches `signal` and, if given, a deadline. */
  constructor(signal: AbortSignal | undefined, options: TimeSlicerOptions = {}) {
    this.#signal = signal;
    this.#deadline = options.deadline ?? Infinity;
  }

  /** Whether the current slice is used up: cheap, so a loop can call `pause` only when it is. */
  due(): boolean {
    return performance.now() - this.#sliceStart >= SLICE_MS;
  }

  /** Why the work must stop: the signal was aborted, the deadline has passed, or null to go on. */
  stopReason(): "aborted" | "timeout" | null {
    if (this.#signal?.aborted) return "aborted";
    return performance.now() >= this.#deadline ? "timeout" : null;
  }

  /** Yields when the current slice is used up; resolves to true when the work must stop (`stopReason`). */
  async pause(): Promise<boolean> {
    if (this.due()) {
      await nextTurn();
      this.#sliceStart = performance.now();
    }
    return this.stopReason() !== null;
  }
}
