/**
 * Error helpers shared by every layer. They live in src/tools, the lowest layer, so that tools (which
 * import nothing from outside src/tools) and everything above them use the same ones.
 *
 * @module
 */

/** Ends every `switch` over a discriminated union: a compile error when a case is missing, a throw at run time. */
export function assertNever(value: never): never {
  throw new TypeError(`Unexpected value: ${JSON.stringify(value)}`);
}

/** "Name: message" of anything thrown, for messages that carry a caught error. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
