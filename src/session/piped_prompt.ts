/**
 * The prompt of a one-shot run that got piped standard input as context (`git diff | mewcode -p "review"`):
 * how it begins, and its instruction back out of it, which is what a list of sessions shows for it rather
 * than the same opening words for every such session.
 *
 * @module
 */

/** How a prompt with piped standard input begins; src/cli/prompt_input.ts composes the rest. */
export const PIPED_INPUT_LEAD = "The user piped this into mewcode on standard input:";

/**
 * The instruction of a prompt composed with piped input, or null for a prompt that is not one. "" when the
 * text ends before the instruction (a long prompt of which only the start was read).
 */
export function pipedInstruction(prompt: string): string | null {
  const open = new RegExp(`^${PIPED_INPUT_LEAD}\\n<(stdin(?:-\\d+)?)>\\n`).exec(prompt);
  if (open === null) return null;
  // The piped text never holds its closing tag (the tag is chosen so), so the first one closes it.
  const close = prompt.indexOf(`</${open[1]}>`, open[0].length);
  if (close === -1) return "";
  const gap = prompt.indexOf("\n\n", close);
  return gap === -1 ? "" : prompt.slice(gap + 2);
}
