/**
 * The request text of a compaction: the earlier part of the conversation written out as plain text, and
 * the instructions for its summary. Private to src/agent/ (compaction.ts sends it).
 *
 * The earlier messages are sent as text in one user message, not as the messages themselves: the request
 * then offers no tools yet carries no tool_use or tool_result blocks (which the APIs tie to offered tools
 * and to strict pairing), no thinking blocks whose signatures another request may refuse, and it reads the
 * same to every provider.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { ContentBlock, Message } from "../llm/provider.ts";

/** The most characters of one text block written out; longer ones keep their start and end. */
const MAX_TEXT_CHARS = 16_000;
/** The most characters of one tool call's input or one tool result written out. */
const MAX_TOOL_CHARS = 4_000;

/** What the model is asked to write. A prompt: review it like code. */
export const SUMMARY_INSTRUCTIONS =
  `The conversation above is the earlier part of a coding session between a user and you, an agent that works in their workspace with tools. It is about to be removed from your context to make room. A summary you write now replaces it; the work then continues from that summary and the most recent turns, which are kept as they are.

Write that summary. It will be all you know of the earlier conversation, so be faithful and specific: exact file paths, names of functions and tests, commands, error messages and values. Never invent or generalise; when something is uncertain, say so. Leave out pleasantries and whatever no longer matters. Use these sections, in this order, and write "None." under a section that has nothing:

## Task
What the user asked for, in their own words where the wording matters, with the constraints they set and any later change of mind. Quote their most recent request verbatim.

## Decisions
What was decided and why: approaches chosen or ruled out, conventions to follow.

## Files
Every file read, created or changed, by path, with what matters about it; for a change, what changed.

## Commands
The commands that were run and what came of them: exit status, the output that matters, test results.

## Errors
The errors met, and whether and how each was resolved.

## State and next steps
Where the work stands, and what remains to do, in order, the very next step first.

If the conversation starts with a summary of an even earlier part, fold it in: your summary replaces both. Answer with the summary only, without a preamble, and do not try to call tools.`;

/** The one user message of a compaction request: the earlier conversation as text, then the instructions. */
export function summaryRequestText(messages: readonly Message[]): string {
  const written = messages.map(renderMessage).filter((text) => text !== "").join("\n\n");
  return `<conversation>\n${written}\n</conversation>\n\n${SUMMARY_INSTRUCTIONS}`;
}

function renderMessage(message: Message): string {
  const blocks = message.content.map(renderBlock).filter((text) => text !== "");
  if (blocks.length === 0) return "";
  return `[${message.role}]\n${blocks.join("\n")}`;
}

/** One block as text; thinking is left out (long, and the reasoning's outcome is in what followed). */
function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return clip(block.text, MAX_TEXT_CHARS);
    case "thinking":
    case "redacted-thinking":
      return "";
    case "tool-use":
      return `[tool call ${block.name}, id ${block.id}] ${
        clip(JSON.stringify(block.input) ?? "{}", MAX_TOOL_CHARS)
      }`;
    case "tool-result":
      return `[tool result for ${block.toolUseId}${block.isError ? ", an error" : ""}]\n${
        clip(block.content, MAX_TOOL_CHARS)
      }`;
    default:
      return assertNever(block);
  }
}

/** The text, or its start and end with a note of how much was left out between them. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max * 2) / 3);
  const tail = max - head;
  const left = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${left} characters left out …]\n${text.slice(text.length - tail)}`;
}
