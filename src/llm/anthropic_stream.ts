/**
 * Anthropic stream assembly, ours and strict: folds the raw events of one Messages API stream into a
 * message snapshot and the provider-neutral ProviderEvents the agent consumes.
 *
 * - {@link accumulateMessage} is a pure fold: `(snapshot, rawEvent) → {snapshot, events}`. Start from
 *   {@link createSnapshot}. An out-of-order event (a delta for an unknown or stopped index, a block that
 *   starts while another is open, a delta type that does not match its block, a second message_start,
 *   message_stop before message_delta, anything after message_stop) or a tool_use block that reuses an
 *   earlier block's id throws StreamProtocolError. `ping` is ignored; an `error` event throws the ApiError
 *   it describes.
 * - A tool_use block's `input_json_delta` fragments are buffered; its `content_block_stop` parses them
 *   and yields one `tool-call` (an empty buffer is `{}`), or `tool-call-invalid` when the JSON is malformed,
 *   truncated or not an object. Such a call stays in the message content with `input: {}` so the loop can
 *   answer it with an error tool_result.
 * - {@link assembleStream} runs the fold over an async iterable of parsed SSE payloads and throws a
 *   ConnectionError when the stream ends before message_stop.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { invalidInputMessage, parseToolInput } from "./_tool_input.ts";
import {
  ApiError,
  ConnectionError,
  MAX_RESPONSE_CHARACTERS,
  responseTooLong,
  StreamProtocolError,
} from "./errors.ts";
import type { ContentBlock, ProviderEvent, StopReason } from "./provider.ts";
import {
  parseRawEvent,
  type RawDelta,
  type RawDeltaUsage,
  type RawStreamEvent,
  type RawUsage,
  USAGE_KEYS,
  usageFromWire,
} from "./anthropic_wire.ts";

/** Whether a block still receives deltas. */
export type BlockStatus = "open" | "stopped";

/** One content block as assembled so far. */
export type BlockSnapshot =
  | { type: "text"; status: BlockStatus; text: string }
  | { type: "thinking"; status: BlockStatus; thinking: string; signature: string }
  | { type: "redacted_thinking"; status: BlockStatus; data: string }
  | {
    type: "tool_use";
    status: BlockStatus;
    id: string;
    name: string;
    /** The concatenated `input_json_delta` fragments. */
    partialJson: string;
    /** The parsed input once stopped (`{}` when invalid or not stopped yet). */
    input: unknown;
    /** Why the input could not be parsed, once stopped; null when it parsed. */
    invalid: string | null;
  };

/** The message as assembled so far; `status` follows the stream's lifecycle. */
export interface MessageSnapshot {
  status: "awaiting-start" | "streaming" | "delta-received" | "stopped";
  id: string;
  model: string;
  blocks: readonly BlockSnapshot[];
  stopReason: StopReason | null;
  /** The API's counts so far (message_start, then each message_delta's cumulative counts). */
  usage: RawUsage;
}

/** The outcome of folding one raw event. */
export interface AccumulateResult {
  snapshot: MessageSnapshot;
  events: ProviderEvent[];
}

/** The snapshot before any event. */
export function createSnapshot(): MessageSnapshot {
  return {
    status: "awaiting-start",
    id: "",
    model: "",
    blocks: [],
    stopReason: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  };
}

/** Folds one raw stream event into the snapshot; throws StreamProtocolError when it is out of order. */
export function accumulateMessage(snapshot: MessageSnapshot, event: RawStreamEvent): AccumulateResult {
  switch (event.type) {
    case "ping":
      return { snapshot, events: [] };
    case "error":
      throw ApiError.fromErrorEvent({ error: event.error });
    case "message_start": {
      if (snapshot.status !== "awaiting-start") {
        throw outOfOrder(event.type, snapshot, "the message already started");
      }
      const { id, model, usage } = event.message;
      return {
        snapshot: { ...snapshot, status: "streaming", id, model, usage: { ...usage } },
        events: [{ type: "message-start", messageId: id, model, usage: usageFromWire(usage) }],
      };
    }
    case "content_block_start":
      return startBlock(snapshot, event.index, event.content_block);
    case "content_block_delta":
      return applyDelta(snapshot, event.index, event.delta);
    case "content_block_stop":
      return stopBlock(snapshot, event.index);
    case "message_delta": {
      requireStatus(snapshot, event.type, "streaming");
      const open = snapshot.blocks.findIndex((block) => block.status === "open");
      if (open !== -1) throw outOfOrder(event.type, snapshot, `block ${open} is still open`);
      return {
        snapshot: {
          ...snapshot,
          status: "delta-received",
          stopReason: event.delta.stop_reason,
          usage: mergeUsage(snapshot.usage, event.usage),
        },
        events: [],
      };
    }
    case "message_stop": {
      if (snapshot.status === "streaming") throw outOfOrder(event.type, snapshot, "no message_delta arrived");
      requireStatus(snapshot, event.type, "delta-received");
      const stopped: MessageSnapshot = { ...snapshot, status: "stopped" };
      return {
        snapshot: stopped,
        events: [{
          type: "message-end",
          stopReason: stopped.stopReason,
          usage: usageFromWire(stopped.usage),
          content: assistantContent(stopped),
        }],
      };
    }
    default:
      return assertNever(event);
  }
}

/**
 * The assistant message content of a snapshot, in block order: text (empty ones dropped, as the API
 * rejects them), thinking with its signature, redacted thinking, tool_use with its parsed input
 * (`{}` when the JSON was invalid).
 */
function assistantContent(snapshot: MessageSnapshot): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const block of snapshot.blocks) {
    switch (block.type) {
      case "text":
        if (block.text !== "") content.push({ type: "text", text: block.text });
        break;
      case "thinking":
        content.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
        break;
      case "redacted_thinking":
        content.push({ type: "redacted-thinking", data: block.data });
        break;
      case "tool_use":
        content.push({ type: "tool-use", id: block.id, name: block.name, input: block.input });
        break;
      default:
        assertNever(block);
    }
  }
  return content;
}

/**
 * Assembles a stream of parsed SSE `data:` payloads (as anthropic_http.ts yields them) into ProviderEvents.
 * Unknown event types are skipped; a stream that ends before message_stop throws ConnectionError.
 */
export async function* assembleStream(rawEvents: AsyncIterable<unknown>): AsyncGenerator<ProviderEvent> {
  let snapshot = createSnapshot();
  let characters = 0;
  for await (const value of rawEvents) {
    const event = parseRawEvent(value);
    if (event === null) continue;
    if (event.type === "content_block_delta") {
      characters += deltaLength(event.delta);
      if (characters > MAX_RESPONSE_CHARACTERS) throw responseTooLong();
    }
    const result = accumulateMessage(snapshot, event);
    snapshot = result.snapshot;
    yield* result.events;
  }
  if (snapshot.status !== "stopped") {
    throw new ConnectionError(`Response stream ended before message_stop (${describeProgress(snapshot)})`);
  }
}

function deltaLength(delta: RawDelta): number {
  switch (delta.type) {
    case "text_delta":
      return delta.text.length;
    case "input_json_delta":
      return delta.partial_json.length;
    case "thinking_delta":
      return delta.thinking.length;
    case "signature_delta":
      return delta.signature.length;
    default:
      return assertNever(delta);
  }
}

function startBlock(
  snapshot: MessageSnapshot,
  index: number,
  block: Extract<RawStreamEvent, { type: "content_block_start" }>["content_block"],
): AccumulateResult {
  const type = "content_block_start";
  requireStatus(snapshot, type, "streaming");
  const expected = snapshot.blocks.length;
  if (index !== expected) throw outOfOrder(type, snapshot, `index ${index} given, ${expected} expected`);
  const previous = snapshot.blocks[expected - 1];
  if (previous?.status === "open") throw outOfOrder(type, snapshot, `block ${expected - 1} is still open`);
  const events: ProviderEvent[] = [];
  let started: BlockSnapshot;
  switch (block.type) {
    case "text":
      started = { type: "text", status: "open", text: block.text };
      if (block.text !== "") events.push({ type: "text-delta", index, text: block.text });
      break;
    case "thinking":
      started = { type: "thinking", status: "open", thinking: block.thinking, signature: block.signature };
      if (block.thinking !== "") events.push({ type: "thinking-delta", index, thinking: block.thinking });
      break;
    case "redacted_thinking":
      started = { type: "redacted_thinking", status: "open", data: block.data };
      break;
    case "tool_use":
      // Results are paired with calls by id: a second call with the same id could never be answered.
      if (snapshot.blocks.some((other) => other.type === "tool_use" && other.id === block.id)) {
        throw outOfOrder(type, snapshot, `tool_use block ${index} reuses the id "${block.id}"`);
      }
      started = {
        type: "tool_use",
        status: "open",
        id: block.id,
        name: block.name,
        partialJson: "",
        input: {},
        invalid: null,
      };
      events.push({ type: "tool-call-begin", index, id: block.id, name: block.name });
      break;
    default:
      return assertNever(block);
  }
  return { snapshot: { ...snapshot, blocks: [...snapshot.blocks, started] }, events };
}

function applyDelta(snapshot: MessageSnapshot, index: number, delta: RawDelta): AccumulateResult {
  const block = openBlock(snapshot, "content_block_delta", index);
  const mismatch = () =>
    outOfOrder("content_block_delta", snapshot, `${delta.type} for a ${block.type} block`);
  let updated: BlockSnapshot;
  const events: ProviderEvent[] = [];
  switch (delta.type) {
    case "text_delta":
      if (block.type !== "text") throw mismatch();
      updated = { ...block, text: block.text + delta.text };
      events.push({ type: "text-delta", index, text: delta.text });
      break;
    case "input_json_delta":
      if (block.type !== "tool_use") throw mismatch();
      updated = { ...block, partialJson: block.partialJson + delta.partial_json };
      break;
    case "thinking_delta":
      if (block.type !== "thinking") throw mismatch();
      updated = { ...block, thinking: block.thinking + delta.thinking };
      events.push({ type: "thinking-delta", index, thinking: delta.thinking });
      break;
    case "signature_delta":
      if (block.type !== "thinking") throw mismatch();
      updated = { ...block, signature: block.signature + delta.signature };
      break;
    default:
      return assertNever(delta);
  }
  return { snapshot: withBlock(snapshot, index, updated), events };
}

function stopBlock(snapshot: MessageSnapshot, index: number): AccumulateResult {
  const block = openBlock(snapshot, "content_block_stop", index);
  if (block.type !== "tool_use") {
    return { snapshot: withBlock(snapshot, index, { ...block, status: "stopped" }), events: [] };
  }
  const parsed = parseToolInput(block.partialJson);
  const { id, name } = block;
  if (parsed.ok) {
    return {
      snapshot: withBlock(snapshot, index, { ...block, status: "stopped", input: parsed.value }),
      events: [{ type: "tool-call", index, id, name, input: parsed.value }],
    };
  }
  const error = invalidInputMessage(name, parsed.error);
  return {
    snapshot: withBlock(snapshot, index, { ...block, status: "stopped", input: {}, invalid: error }),
    events: [{ type: "tool-call-invalid", index, id, name, rawInput: block.partialJson, error }],
  };
}

function openBlock(snapshot: MessageSnapshot, type: string, index: number): BlockSnapshot {
  requireStatus(snapshot, type, "streaming");
  const block = snapshot.blocks[index];
  if (block === undefined) throw outOfOrder(type, snapshot, `no block started at index ${index}`);
  if (block.status === "stopped") throw outOfOrder(type, snapshot, `block ${index} already stopped`);
  return block;
}

function withBlock(snapshot: MessageSnapshot, index: number, block: BlockSnapshot): MessageSnapshot {
  const blocks = snapshot.blocks.slice();
  blocks[index] = block;
  return { ...snapshot, blocks };
}

function requireStatus(snapshot: MessageSnapshot, type: string, status: MessageSnapshot["status"]): void {
  if (snapshot.status === status) return;
  const reason = snapshot.status === "awaiting-start"
    ? "before message_start"
    : snapshot.status === "stopped"
    ? "after message_stop"
    : snapshot.status === "delta-received"
    ? "after message_delta"
    : "while content is still streaming";
  throw outOfOrder(type, snapshot, reason);
}

function outOfOrder(type: string, snapshot: MessageSnapshot, reason: string): StreamProtocolError {
  const where = snapshot.id === "" ? "" : ` in message "${snapshot.id}"`;
  return new StreamProtocolError(`Unexpected ${type}${where}: ${reason}`);
}

/** message_delta counts are cumulative: each one present replaces the count so far. */
function mergeUsage(usage: RawUsage, delta: RawDeltaUsage): RawUsage {
  const merged: RawUsage = { ...usage };
  for (const key of USAGE_KEYS) {
    const count = delta[key];
    if (count != null) merged[key] = count;
  }
  return merged;
}

function describeProgress(snapshot: MessageSnapshot): string {
  if (snapshot.status === "awaiting-start") return "no message_start arrived";
  return `${snapshot.blocks.length} content block(s) received`;
}
