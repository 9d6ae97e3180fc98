/**
 * Bounds on JSON that arrives from outside (a model's tool input, a command-line argument): size and
 * nesting depth, checked on the text before parsing. A deeply nested value would overflow the stack of
 * every recursive consumer (serialisation, structured cloning into a worker, validation).
 *
 * @module
 */

/** The deepest nesting of arrays and objects a tool input may have; no tool's schema comes close. */
export const MAX_TOOL_INPUT_DEPTH = 64;
/** The largest tool input in characters (a whole file for WriteFile fits many times over). */
export const MAX_TOOL_INPUT_CHARS = 16 * 1024 * 1024;

/**
 * Checks the size and the nesting depth of JSON text without parsing it (brackets outside strings are
 * counted); returns why it is refused, or null.
 */
export function checkJsonBounds(
  json: string,
  limits: { maxDepth?: number; maxChars?: number } = {},
): string | null {
  const maxDepth = limits.maxDepth ?? MAX_TOOL_INPUT_DEPTH;
  const maxChars = limits.maxChars ?? MAX_TOOL_INPUT_CHARS;
  if (json.length > maxChars) {
    return `the input is ${json.length} characters long, above the limit of ${maxChars}: send less at once`;
  }
  let depth = 0;
  let inString = false;
  for (let index = 0; index < json.length; index += 1) {
    const code = json.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index += 1; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > maxDepth) {
        return `the input is nested more than ${maxDepth} levels deep: send a flat object as the tool's ` +
          "schema describes";
      }
    } else if (code === 0x5d || code === 0x7d) depth -= 1;
  }
  return null;
}
