/**
 * How Glob and Grep show the paths they find on disk, which a hostile repository names.
 *
 * @module
 */

/**
 * Characters that would let a file's name pass for other lines or other text in a tool's result: line
 * breaks and every other C0 or C1 control (an escape sequence), line and paragraph separators, and the
 * bidirectional controls that reorder what follows.
 */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** Those of them JSON.stringify leaves as they are. */
const LEFT_RAW_BY_JSON = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A path found on disk as Glob and Grep show it: as it is, unless it holds a character of `UNSHOWABLE` or
 * starts with a double quote; then as a JSON string, every such character escaped (as git quotes such
 * names): a repository's file named "a.ts\nsrc/fake.ts" shows as one quoted path, not as two files. The
 * model passes it back decoded, as any JSON string in its input is.
 */
export function displayPath(path: string): string {
  if (!UNSHOWABLE.test(path) && !path.startsWith('"')) return path;
  return JSON.stringify(path).replace(
    LEFT_RAW_BY_JSON,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
