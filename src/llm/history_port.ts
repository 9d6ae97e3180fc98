/**
 * Continuing a conversation with another provider than the one that wrote it. The transcript stores
 * provider-neutral messages, so most of a history carries over as it is; what does not:
 *
 * - thinking and redacted-thinking blocks are only readable by the provider that signed them: an
 *   OpenAI-compatible request leaves them out (openai_wire.ts), and they are counted here so the user is
 *   told;
 * - Anthropic accepts tool-use ids of letters, digits, `_` and `-` only: other ids (some servers use `:` or
 *   `.`) are rewritten, in the tool use and its result alike.
 *
 * @module
 */
import type { ContentBlock, Message } from "./provider.ts";

/** The messages to continue with, and what the user should be told (null when nothing changed). */
export interface PortedHistory {
  messages: Message[];
  notice: string | null;
}

/** Anthropic's pattern for tool-use ids. */
const ANTHROPIC_ID = /^[A-Za-z0-9_-]+$/;

/**
 * Prepares `messages`, written with provider `from` (null: an older transcript, which only Anthropic
 * wrote), for provider `to`. Pure.
 */
export function portHistory(
  messages: readonly Message[],
  options: { from: string | null; to: string },
): PortedHistory {
  const from = options.from ?? "anthropic";
  if (from === options.to) return { messages: messages.slice(), notice: null };
  const dropped: string[] = [];
  let ported = messages.slice();
  if (options.to !== "anthropic") {
    const thinking = countBlocks(
      messages,
      (block) => block.type === "thinking" || block.type === "redacted-thinking",
    );
    if (thinking > 0) {
      const blocks = thinking === 1 ? "1 thinking block is" : `${thinking} thinking blocks are`;
      dropped.push(`${blocks} dropped (only ${from} can read them back)`);
    }
  } else {
    const renamed = anthropicIds(messages);
    ported = renamed.messages;
    if (renamed.count > 0) {
      const ids = renamed.count === 1 ? "1 tool call id is" : `${renamed.count} tool call ids are`;
      dropped.push(`${ids} rewritten to the characters anthropic accepts`);
    }
  }
  const changes = dropped.length === 0 ? "" : `: ${dropped.join("; ")}`;
  return {
    messages: ported,
    notice: `Continuing a session recorded with ${from} on ${options.to}${changes}`,
  };
}

function countBlocks(messages: readonly Message[], matches: (block: ContentBlock) => boolean): number {
  return messages.reduce((total, message) => total + message.content.filter(matches).length, 0);
}

/** The messages with every tool-use id Anthropic would refuse rewritten, consistently. */
function anthropicIds(messages: readonly Message[]): { messages: Message[]; count: number } {
  const renames = new Map<string, string>();
  const taken = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === "tool-use") taken.add(block.id);
  }
  for (const id of taken) {
    if (ANTHROPIC_ID.test(id)) continue;
    const base = id.replace(/[^A-Za-z0-9_-]/g, "_") || "call";
    let candidate = base;
    for (let suffix = 2; taken.has(candidate) || [...renames.values()].includes(candidate); suffix++) {
      candidate = `${base}_${suffix}`;
    }
    renames.set(id, candidate);
  }
  if (renames.size === 0) return { messages: messages.slice(), count: 0 };
  const rename = (id: string) => renames.get(id) ?? id;
  const ported = messages.map((message): Message => ({
    role: message.role,
    content: message.content.map((block): ContentBlock => {
      if (block.type === "tool-use") return { ...block, id: rename(block.id) };
      if (block.type === "tool-result") return { ...block, toolUseId: rename(block.toolUseId) };
      return block;
    }),
  }));
  return { messages: ported, count: renames.size };
}
