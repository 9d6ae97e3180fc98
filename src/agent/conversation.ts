/**
 * The conversation and its pairing rules, kept valid for the Messages API at every step:
 * - an assistant message keeps its text, thinking and tool_use blocks together, in the model's order;
 * - the tool_results of a turn go back in ONE user message, first in its content, in the model's order,
 *   each paired with its tool_use_id, `is_error` set for errors;
 * - every tool_use gets exactly one tool_result, whatever happened to the call.
 *
 * @module
 */
import type { ContentBlock, Message } from "../llm/provider.ts";

/** One tool_use block of an assistant message. */
export type ToolUseBlock = Extract<ContentBlock, { type: "tool_use" }>;
/** One tool_result block of a user message. */
export type ToolResultBlock = Extract<ContentBlock, { type: "tool_result" }>;

/** The outcome of one call, as the model will see it. */
export interface CallOutcome {
  content: string;
  isError: boolean;
}

/** The messages of one session, appended in order; never rewritten except to keep them valid. */
export class Conversation {
  #messages: Message[] = [];

  /** Starts from earlier messages (for example a resumed session); they must already be valid. */
  constructor(messages: readonly Message[] = []) {
    const problems = validateConversation(messages);
    if (problems.length > 0) throw new TypeError(`Cannot resume the conversation: ${problems.join("; ")}`);
    this.#messages = messages.map(copyMessage);
  }

  /** A copy of the messages, ready to send. */
  get messages(): Message[] {
    return this.#messages.map(copyMessage);
  }

  /** The number of messages. */
  get length(): number {
    return this.#messages.length;
  }

  /** The last message, or undefined. */
  get last(): Message | undefined {
    const last = this.#messages.at(-1);
    return last === undefined ? undefined : copyMessage(last);
  }

  /** Adds the user's text; it joins a user message that ends the conversation (after tool results). */
  addUserText(text: string): void {
    this.#appendUser([{ type: "text", text }]);
  }

  /**
   * Adds an assistant message as the model produced it. Empty text blocks (which the API rejects) are
   * dropped and a tool_use input that is not an object becomes `{}`; returns false when nothing is left.
   */
  addAssistant(content: readonly ContentBlock[]): boolean {
    const pending = this.pendingToolUses();
    if (pending.length > 0) {
      throw new TypeError(
        `Cannot add an assistant message: tool_use ${
          pending.map((block) => block.id).join(", ")
        } has no tool_result`,
      );
    }
    const cleaned = content.flatMap((block): ContentBlock[] => {
      if (block.type === "text") return block.text === "" ? [] : [{ ...block }];
      if (block.type === "tool_use") {
        return [{ ...block, input: isPlainObject(block.input) ? block.input : {} }];
      }
      if (block.type === "tool_result") return [];
      return [{ ...block }];
    });
    if (cleaned.length === 0) return false;
    const last = this.#messages.at(-1);
    if (last?.role === "assistant" && Array.isArray(last.content)) {
      // pause_turn: the model continues its own message; the API accepts the continuation merged in.
      last.content.push(...cleaned);
      return true;
    }
    this.#messages.push({ role: "assistant", content: cleaned });
    return true;
  }

  /** The tool_use blocks of the last assistant message that have no tool_result yet, in order. */
  pendingToolUses(): ToolUseBlock[] {
    const last = this.#messages.at(-1);
    if (last?.role !== "assistant" || typeof last.content === "string") return [];
    return last.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
  }

  /**
   * Answers every pending tool_use in one user message: results first, in the model's order, then
   * `note` as a text block. A call missing from `outcomes` gets `missing(block)`.
   */
  addToolResults(
    outcomes: ReadonlyMap<string, CallOutcome>,
    options: { missing: (block: ToolUseBlock) => CallOutcome; note?: string },
  ): ToolResultBlock[] {
    const blocks = pairToolResults(this.pendingToolUses(), outcomes, options.missing);
    const content: ContentBlock[] = [...blocks];
    if (options.note) content.push({ type: "text", text: options.note });
    if (content.length > 0) this.#appendUser(content);
    return blocks;
  }

  #appendUser(content: ContentBlock[]): void {
    const last = this.#messages.at(-1);
    if (last?.role === "user") {
      const existing: ContentBlock[] = typeof last.content === "string"
        ? [{ type: "text", text: last.content }]
        : last.content;
      last.content = [...existing, ...content];
      return;
    }
    this.#messages.push({ role: "user", content });
  }
}

/** The tool_result blocks answering `toolUses`, in their order, one each. */
export function pairToolResults(
  toolUses: readonly ToolUseBlock[],
  outcomes: ReadonlyMap<string, CallOutcome>,
  missing: (block: ToolUseBlock) => CallOutcome,
): ToolResultBlock[] {
  return toolUses.map((block) => {
    const outcome = outcomes.get(block.id) ?? missing(block);
    const result: ToolResultBlock = { type: "tool_result", tool_use_id: block.id, content: outcome.content };
    if (outcome.isError) result.is_error = true;
    return result;
  });
}

/**
 * Checks the pairing rules; returns the problems found (empty when valid). A trailing assistant message
 * with tool_use blocks is allowed: its results are still to come.
 */
export function validateConversation(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  messages.forEach((message, index) => {
    const blocks = typeof message.content === "string" ? [] : message.content;
    if (typeof message.content !== "string" && blocks.length === 0) {
      problems.push(`message ${index} is empty`);
    }
    if (index > 0 && messages[index - 1]?.role === message.role) {
      problems.push(`messages ${index - 1} and ${index} are both from the ${message.role}`);
    }
    if (message.role === "assistant") {
      if (blocks.some((block) => block.type === "tool_result")) {
        problems.push(`message ${index} holds a tool_result`);
      }
      return;
    }
    const previous = messages[index - 1];
    const expected = previous?.role === "assistant" && typeof previous.content !== "string"
      ? previous.content.filter((block) => block.type === "tool_use").map((block) => block.id)
      : [];
    const results = blocks.filter((block) => block.type === "tool_result");
    const leading = blocks.slice(0, results.length);
    if (leading.some((block) => block.type !== "tool_result")) {
      problems.push(`message ${index} has tool_results after other content`);
    }
    const ids = results.map((block) => block.tool_use_id);
    if (ids.join("\n") !== expected.join("\n")) {
      problems.push(
        `message ${index} answers [${ids.join(", ")}] but the assistant asked for [${expected.join(", ")}]`,
      );
    }
    for (const id of ids) {
      if (seen.has(id)) problems.push(`tool_use ${id} is answered twice`);
      seen.add(id);
    }
  });
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function copyMessage(message: Message): Message {
  return {
    role: message.role,
    content: typeof message.content === "string"
      ? message.content
      : message.content.map((block) => ({ ...block })),
  };
}
