/** Ends every `switch` over a discriminated union: a compile error when a case is missing, a throw at run time. */
export function assertNever(value: never): never {
  throw new TypeError(`Unexpected value: ${JSON.stringify(value)}`);
}
