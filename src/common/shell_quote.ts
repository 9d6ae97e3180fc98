/**
 * Quoting for POSIX shells (and zsh, which reads single quotes the same way).
 *
 * @module
 */

/** `text` as one single-quoted shell word: nothing in it is expanded. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
