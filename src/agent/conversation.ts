/**
 * The conversation and its pairing rules, kept valid for the Messages API at every step:
 * - an assistant message keeps its text, thinking and tool_use blocks together, in the model's order;
 * - the tool results of a turn go back in ONE user message, first in its content, in the model's order,
 *   each paired with its tool use's id, `isError` set for errors;
 * - every tool use gets exactly one tool result, whatever happened to the call.
 *
 * @module
 */
import type { ContentBlock, Message, Usage } from "../llm/provider.ts";

/** One tool use block of an assistant message. */
export type ToolUseBlock = Extract<ContentBlock, { type: "tool-use" }>;
/** One tool result block of a user message. */
export type ToolResultBlock = Extract<ContentBlock, { type: "tool-result" }>;

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

  /**
   * Replaces every message at once (compaction): the new list must be valid by the pairing rules and start
   * with a user message. Throws TypeError, leaving the conversation as it was, when it is not.
   */
  replace(messages: readonly Message[]): void {
    const problems = shapeProblems(messages);
    if (problems.length === 0) problems.push(...validateConversation(messages));
    if (problems.length > 0) {
      throw new TypeError(`Cannot replace the conversation: ${problems.join("; ")}`);
    }
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
   * Adds user content as recorded (a transcript's tool results and notes): it must answer the pending
   * tool uses exactly as `addToolResults` would have.
   */
  addUserContent(content: readonly ContentBlock[]): void {
    const pending = this.pendingToolUses().map((block) => block.id);
    const results = content.filter((block): block is ToolResultBlock => block.type === "tool-result");
    if (results.map((block) => block.toolUseId).join("\n") !== pending.join("\n")) {
      throw new TypeError(
        `Cannot add user content: it answers [${results.map((block) => block.toolUseId).join(", ")}] but ` +
          `the assistant asked for [${pending.join(", ")}]`,
      );
    }
    if (content.length > 0) this.#appendUser(content.map((block) => ({ ...block })));
  }

  /**
   * Adds an assistant message as the model produced it. Empty text blocks (which the API rejects) are
   * dropped and a tool_use input that is not an object becomes `{}`; returns false when nothing is left.
   */
  addAssistant(content: readonly ContentBlock[]): boolean {
    const pending = this.pendingToolUses();
    if (pending.length > 0) {
      throw new TypeError(
        `Cannot add an assistant message: tool use ${
          pending.map((block) => block.id).join(", ")
        } has no tool result`,
      );
    }
    const cleaned = content.flatMap((block): ContentBlock[] => {
      if (block.type === "text") return block.text === "" ? [] : [{ ...block }];
      if (block.type === "tool-use") {
        return [{ ...block, input: isPlainObject(block.input) ? block.input : {} }];
      }
      if (block.type === "tool-result") return [];
      return [{ ...block }];
    });
    if (cleaned.length === 0) return false;
    const last = this.#messages.at(-1);
    if (last?.role === "assistant") {
      // pause_turn: the model continues its own message; the API accepts the continuation merged in.
      last.content.push(...cleaned);
      return true;
    }
    this.#messages.push({ role: "assistant", content: cleaned });
    return true;
  }

  /** The tool use blocks of the last assistant message that have no tool result yet, in order. */
  pendingToolUses(): ToolUseBlock[] {
    const last = this.#messages.at(-1);
    if (last?.role !== "assistant") return [];
    return last.content.filter((block): block is ToolUseBlock => block.type === "tool-use");
  }

  /**
   * Answers every pending tool use in one user message: results first, in the model's order, then
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
      last.content = [...last.content, ...content];
      return;
    }
    this.#messages.push({ role: "user", content });
  }
}

/** The tool result blocks answering `toolUses`, in their order, one each. */
export function pairToolResults(
  toolUses: readonly ToolUseBlock[],
  outcomes: ReadonlyMap<string, CallOutcome>,
  missing: (block: ToolUseBlock) => CallOutcome,
): ToolResultBlock[] {
  return toolUses.map((block) => {
    const outcome = outcomes.get(block.id) ?? missing(block);
    return { type: "tool-result", toolUseId: block.id, content: outcome.content, isError: outcome.isError };
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
    const blocks = message.content;
    if (blocks.length === 0) problems.push(`message ${index} is empty`);
    if (index > 0 && messages[index - 1]?.role === message.role) {
      problems.push(`messages ${index - 1} and ${index} are both from the ${message.role}`);
    }
    if (message.role === "assistant") {
      if (blocks.some((block) => block.type === "tool-result")) {
        problems.push(`message ${index} holds a tool result`);
      }
      return;
    }
    const previous = messages[index - 1];
    const expected = previous?.role === "assistant"
      ? previous.content.filter((block) => block.type === "tool-use").map((block) => block.id)
      : [];
    const results = blocks.filter((block) => block.type === "tool-result");
    const leading = blocks.slice(0, results.length);
    if (leading.some((block) => block.type !== "tool-result")) {
      problems.push(`message ${index} has tool results after other content`);
    }
    const ids = results.map((block) => block.toolUseId);
    if (ids.join("\n") !== expected.join("\n")) {
      problems.push(
        `message ${index} answers [${ids.join(", ")}] but the assistant asked for [${expected.join(", ")}]`,
      );
    }
    for (const id of ids) {
      if (seen.has(id)) problems.push(`tool use ${id} is answered twice`);
      seen.add(id);
    }
  });
  return problems;
}

/** What keeps a list from being a conversation at all: no messages, a bad role or content, an assistant first. */
function shapeProblems(messages: readonly Message[]): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ["it holds no messages"];
  const problems: string[] = [];
  messages.forEach((message: unknown, index) => {
    if (!isPlainObject(message) || (message.role !== "user" && message.role !== "assistant")) {
      problems.push(`message ${index} has no role "user" or "assistant"`);
    } else if (!Array.isArray(message.content) || !message.content.every(isPlainObject)) {
      problems.push(`message ${index} has no list of content blocks`);
    }
  });
  if (problems.length === 0 && messages[0]?.role !== "user") problems.push("message 0 is not from the user");
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function copyMessage(message: Message): Message {
  return { role: message.role, content: message.content.map((block) => ({ ...block })) };
}

/**
 * The size in tokens of the conversation as of a response: its whole prompt (input, cache reads and
 * writes) and its answer, which the next request carries too.
 */
export function conversationTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens + usage.outputTokens;
}
