/**
 * The shell parser (npm `unbash`), loaded when first needed rather than with the permission modules: its
 * import took 14 ms, before a one-shot run's first request, of sessions that may never see a Bash call or
 * a Bash rule. Every caller of the parsing functions (`analyzeCommand`, `compileCommandPattern`, and
 * through it `parseRule` and `createPolicy` with Bash rules) awaits `loadShellParser()` first.
 *
 * @module
 */
import type * as Unbash from "unbash";

let parser: typeof Unbash | null = null;
let loading: Promise<typeof Unbash> | null = null;

/** Loads the parser once; later calls resolve at once. */
export function loadShellParser(): Promise<typeof Unbash> {
  if (parser !== null) return Promise.resolve(parser);
  return loading ??= import("unbash").then((module) => (parser = module));
}

/** The loaded parser. Throws when `loadShellParser` has not finished: a caller forgot to await it. */
export function shellParser(): typeof Unbash {
  if (parser === null) {
    throw new Error("The shell parser is used before it was loaded: await loadShellParser() first");
  }
  return parser;
}
