/**
 * Byte-array helpers for code that reads raw streams (terminal input, a child's output, file contents).
 *
 * @module
 */

/** The chunks joined; a single non-empty chunk is returned as it is, without a copy. */
export function concatBytes(...chunks: readonly Uint8Array[]): Uint8Array {
  return joinBytes(chunks);
}

/**
 * `concatBytes` of a list: for a list of any length (spread into a call's arguments, a few hundred thousand
 * chunks overflow the stack: a body that came a byte at a time).
 */
export function joinBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const nonEmpty = chunks.filter((chunk) => chunk.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0]!;
  let length = 0;
  for (const chunk of nonEmpty) length += chunk.length;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const chunk of nonEmpty) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}

/** The first index at or after `from` where `needle` (not empty) starts in `haystack`, or -1. */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0] ?? 0;
  for (let at = haystack.indexOf(first, from); at !== -1; at = haystack.indexOf(first, at + 1)) {
    if (at + needle.length > haystack.length) return -1;
    let matches = true;
    for (let index = 1; index < needle.length && matches; index++) {
      matches = haystack[at + index] === needle[index];
    }
    if (matches) return at;
  }
  return -1;
}
