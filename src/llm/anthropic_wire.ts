/**
 * The Anthropic Messages API's wire shapes, in its snake_case: the raw server-sent events of a stream and
 * their narrowing from untrusted JSON, and the conversion of mewcode's requests, messages, tools and usage
 * to and from the API's (with the prompt-cache breakpoints, see {@link toWireRequest}). Only the Anthropic
 * provider's files (and their tests and the fake server) use these.
 *
 * @module
 */
import { isRecord } from "../common/values.ts";
import { assertNever } from "../common/errors.ts";
import { StreamProtocolError } from "./errors.ts";
import type { ContentBlock, Message, ModelRequest, StopReason, ToolSpec, Usage } from "./provider.ts";

/** Token counts as the API reports them in message_start (the cache counts may be absent). */
export interface RawUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** A prompt-cache breakpoint: the API caches the request up to and including the block that carries it. */
export interface WireCacheControl {
  /** Five minutes, refreshed by each hit. */
  type: "ephemeral";
}

/** A text block of a request (in a message, or of the system prompt). */
export interface WireTextBlock {
  type: "text";
  text: string;
  cache_control?: WireCacheControl;
}

/** A content block of a request message, as the API takes it. Thinking blocks cannot carry a breakpoint. */
export type WireContentBlock =
  | WireTextBlock
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
    cache_control?: WireCacheControl;
  }
  | {
    type: "tool_result";
    tool_use_id: string;
    content: string;
    is_error?: boolean;
    cache_control?: WireCacheControl;
  };

/** A request message, as the API takes it. */
export interface WireMessage {
  role: "user" | "assistant";
  content: WireContentBlock[];
}

/** One entry of the `tools` request parameter. */
export interface WireTool {
  name: string;
  description: string;
  input_schema: { type: "object"; [key: string]: unknown };
  cache_control?: WireCacheControl;
}

/** The body of a streaming Messages request. */
export interface WireRequest {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
  stream: true;
  /** A string without caching; one text block carrying a breakpoint with it. */
  system?: string | WireTextBlock[];
  tools?: WireTool[];
}

/**
 * mewcode's request as the API's body. With caching on (`request.cache`, true by default) it carries three
 * `cache_control: {type: "ephemeral"}` breakpoints, so each request reads the prefix the previous one
 * wrote and only pays full price for what is new:
 * - on the last tool: the tool definitions, which never change within a session;
 * - on the system prompt, sent as one text block: tools and system;
 * - on the last block of the last message that can carry one (not a thinking block): the whole
 *   conversation; the next request, one turn longer, finds this prefix in the cache.
 * The API allows four. A prefix below the model's minimum cacheable length (1,024 tokens or more, by model)
 * is simply not cached; and the API looks for an earlier entry at most 20 blocks before a breakpoint, so a
 * turn that adds more blocks than that (dozens of parallel tool calls) writes its prefix anew.
 */
export function toWireRequest(request: ModelRequest): WireRequest {
  const cache = request.cache ?? true;
  const messages = toWireMessages(request.messages);
  const tools = toWireTools(request.tools);
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: cache ? withLastMessageBreakpoint(messages) : messages,
    stream: true,
    ...(request.system === "" ? {} : {
      system: cache ? [{ type: "text", text: request.system, cache_control: ephemeral() }] : request.system,
    }),
    ...(tools.length === 0 ? {} : {
      tools: cache
        ? tools.map((tool, index) => index === tools.length - 1 ? withBreakpoint(tool) : tool)
        : tools,
    }),
  };
}

function ephemeral(): WireCacheControl {
  return { type: "ephemeral" };
}

function withBreakpoint<T extends WireTool | WireContentBlock>(value: T): T {
  return { ...value, cache_control: ephemeral() };
}

/** The messages with a breakpoint on the last block of the last message that can carry one. */
function withLastMessageBreakpoint(messages: WireMessage[]): WireMessage[] {
  const last = messages.at(-1);
  if (last === undefined) return messages;
  const index = last.content.findLastIndex(canCarryBreakpoint);
  if (index === -1) return messages;
  const content = last.content.map((block, blockIndex) =>
    blockIndex === index ? withBreakpoint(block) : block
  );
  return [...messages.slice(0, -1), { role: last.role, content }];
}

/** The API refuses `cache_control` on thinking blocks and on empty text blocks. */
function canCarryBreakpoint(block: WireContentBlock): boolean {
  switch (block.type) {
    case "text":
      return block.text !== "";
    case "tool_use":
    case "tool_result":
      return true;
    case "thinking":
    case "redacted_thinking":
      return false;
    default:
      return assertNever(block);
  }
}

/** mewcode's messages as the API takes them. */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  return messages.map((message) => ({ role: message.role, content: message.content.map(toWireBlock) }));
}

function toWireBlock(block: ContentBlock): WireContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    case "redacted-thinking":
      return { type: "redacted_thinking", data: block.data };
    case "tool-use":
      return { type: "tool_use", id: block.id, name: block.name, input: asObject(block.input) };
    case "tool-result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: block.content,
        ...(block.isError ? { is_error: true } : {}),
      };
    default:
      return assertNever(block);
  }
}

/** mewcode's tool specs as the `tools` request parameter. */
export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.inputSchema, type: "object" },
  }));
}

/** The API's usage counts as mewcode's (absent cache counts are zero). */
export function usageFromWire(usage: Partial<RawUsage>): Usage {
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
  };
}

function asObject(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** A content block as announced by `content_block_start`. */
export type RawContentBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/** A `content_block_delta` payload. */
export type RawDelta =
  | { type: "text_delta"; text: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string };

/** Usage fields of `message_delta`: cumulative counts, any of which may be absent or null. */
export interface RawDeltaUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** One event of the stream. */
export type RawStreamEvent =
  | { type: "message_start"; message: { id: string; model: string; usage: RawUsage } }
  | { type: "content_block_start"; index: number; content_block: RawContentBlock }
  | { type: "content_block_delta"; index: number; delta: RawDelta }
  | { type: "content_block_stop"; index: number }
  | { type: "message_delta"; delta: { stop_reason: StopReason | null }; usage: RawDeltaUsage }
  | { type: "message_stop" }
  | { type: "ping" }
  | { type: "error"; error: unknown };

const KNOWN_EVENT_TYPES = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error",
]);

/**
 * Narrows one parsed `data:` payload. Returns null for an event type this client does not know (the API
 * may add event types, and asks clients to ignore them); throws StreamProtocolError for a known type with
 * a malformed shape, or for a content block or delta type it cannot handle.
 */
export function parseRawEvent(value: unknown): RawStreamEvent | null {
  if (!isRecord(value) || typeof value.type !== "string") {
    throw new StreamProtocolError(`Cannot read stream event ${preview(value)}: it has no "type"`);
  }
  if (!KNOWN_EVENT_TYPES.has(value.type)) return null;
  switch (value.type) {
    case "message_start": {
      const message = value.message;
      if (!isRecord(message) || typeof message.id !== "string") return malformed(value, "message.id");
      return {
        type: "message_start",
        message: {
          id: message.id,
          model: typeof message.model === "string" ? message.model : "",
          usage: readUsage(value, message.usage, "message.usage"),
        },
      };
    }
    case "content_block_start":
      return { type: "content_block_start", index: readIndex(value), content_block: readBlock(value) };
    case "content_block_delta":
      return { type: "content_block_delta", index: readIndex(value), delta: readDelta(value) };
    case "content_block_stop":
      return { type: "content_block_stop", index: readIndex(value) };
    case "message_delta": {
      const delta = value.delta;
      if (!isRecord(delta)) return malformed(value, "delta");
      const stopReason = typeof delta.stop_reason === "string" ? delta.stop_reason : null;
      return {
        type: "message_delta",
        delta: { stop_reason: stopReason },
        usage: readDeltaUsage(value, value.usage, "usage"),
      };
    }
    case "message_stop":
      return { type: "message_stop" };
    case "ping":
      return { type: "ping" };
    case "error":
      return { type: "error", error: value.error };
    default:
      return null;
  }
}

function readIndex(event: Record<string, unknown>): number {
  const index = event.index;
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0) return malformed(event, "index");
  return index;
}

function readBlock(event: Record<string, unknown>): RawContentBlock {
  const block = event.content_block;
  if (!isRecord(block)) return malformed(event, "content_block");
  switch (block.type) {
    case "text":
      return { type: "text", text: typeof block.text === "string" ? block.text : "" };
    case "thinking":
      return {
        type: "thinking",
        thinking: typeof block.thinking === "string" ? block.thinking : "",
        signature: typeof block.signature === "string" ? block.signature : "",
      };
    case "redacted_thinking":
      if (typeof block.data !== "string") return malformed(event, "content_block.data");
      return { type: "redacted_thinking", data: block.data };
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") {
        return malformed(event, "content_block.id or content_block.name");
      }
      return { type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} };
    default:
      throw new StreamProtocolError(
        `Cannot handle content block type ${preview(block.type)} at index ${preview(event.index)}`,
      );
  }
}

function readDelta(event: Record<string, unknown>): RawDelta {
  const delta = event.delta;
  if (!isRecord(delta)) return malformed(event, "delta");
  const field = DELTA_FIELDS[String(delta.type)];
  if (field === undefined) {
    throw new StreamProtocolError(
      `Cannot handle delta type ${preview(delta.type)} at index ${preview(event.index)}`,
    );
  }
  const text = delta[field];
  if (typeof text !== "string") return malformed(event, `delta.${field}`);
  switch (delta.type) {
    case "text_delta":
      return { type: "text_delta", text };
    case "input_json_delta":
      return { type: "input_json_delta", partial_json: text };
    case "thinking_delta":
      return { type: "thinking_delta", thinking: text };
    default:
      return { type: "signature_delta", signature: text };
  }
}

const DELTA_FIELDS: Readonly<Record<string, string>> = {
  text_delta: "text",
  input_json_delta: "partial_json",
  thinking_delta: "thinking",
  signature_delta: "signature",
};

/** The token counts of Usage (and RawDeltaUsage), for code that treats them alike. */
export const USAGE_KEYS = [
  "input_tokens",
  "output_tokens",
  "cache_creation_input_tokens",
  "cache_read_input_tokens",
] as const satisfies readonly (keyof RawUsage & keyof RawDeltaUsage)[];

function readUsage(event: Record<string, unknown>, value: unknown, field: string): RawUsage {
  return { input_tokens: 0, output_tokens: 0, ...readDeltaUsage(event, value, field) };
}

/**
 * The counts of a usage object; a count that is not a whole number from 0 up (negative, fractional, past
 * 2^53, a string) is malformed: the cost of the run and its budget (`--max-budget-usd`) are computed from
 * them, and a negative count would let a broken endpoint run on past the budget.
 */
function readDeltaUsage(event: Record<string, unknown>, value: unknown, field: string): Partial<RawUsage> {
  if (!isRecord(value)) return {};
  const usage: Partial<RawUsage> = {};
  for (const key of USAGE_KEYS) {
    const count = value[key];
    if (count == null) continue;
    if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
      return malformed(event, `${field}.${key}`);
    }
    usage[key] = count;
  }
  return usage;
}

function malformed(event: Record<string, unknown>, field: string): never {
  throw new StreamProtocolError(
    `Cannot read ${event.type} event: missing or invalid ${field}: ${preview(event)}`,
  );
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
