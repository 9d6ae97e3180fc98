/**
 * Error helpers every layer uses: the exhaustiveness check that ends every `switch` over a union, and one
 * way to describe anything thrown in a message.
 *
 * @module
 */

/** Ends every `switch` over a discriminated union: a compile error when a case is missing, a throw at run time. */
export function assertNever(value: never): never {
  throw new TypeError(`Unexpected value: ${JSON.stringify(value)}`);
}

/** An error that knows how it should be shown to a person (the API's errors add their HTTP status). */
export interface DescribedError {
  describe(): string;
}

/**
 * One line for anything thrown: an error's own `describe()` when it has one, "Name: message" for named
 * errors (`NotFound: No such file or directory`), the bare message for a plain Error.
 */
export function describeError(error: unknown): string {
  if (isDescribed(error)) return error.describe();
  if (error instanceof Error) {
    if (error.name === "Error" || error.name === "") return error.message || "Error";
    return error.message === "" ? error.name : `${error.name}: ${error.message}`;
  }
  return String(error);
}

function isDescribed(error: unknown): error is DescribedError {
  return typeof error === "object" && error !== null &&
    typeof (error as { describe?: unknown }).describe === "function";
}
