/**
 * Chat completions stream assembly, ours and strict: folds the `chat.completion.chunk`s of one stream into
 * a message snapshot and the provider-neutral ProviderEvents the agent consumes, like anthropic_stream.ts.
 *
 * - {@link accumulateChunk} is a pure fold: `(snapshot, chunk) → {snapshot, events}`; start from
 *   {@link createChatSnapshot}. The first chunk starts the message (`message-start`).
 * - Tool calls are assembled by their `index` in `delta.tool_calls`: the first fragment of an index must
 *   carry the call's `id` and `function.name`; later fragments append to `function.arguments` (an id or
 *   name they repeat must agree). Calls arrive one after another: a new index completes the calls before
 *   it, so a safe call can start while the stream goes on; a fragment for a completed call, an index
 *   that skips one, a second choice, or anything but usage after `finish_reason` throws
 *   StreamProtocolError. A fragment without an index (some servers) starts a call when it has an id and
 *   continues the last one otherwise.
 * - A completed call yields one `tool-call` with its parsed input, or `tool-call-invalid` when its
 *   arguments are malformed, not an object, too large or too deep (the same bounds and words as the
 *   Anthropic path); such a call stays in the message content with `input: {}`.
 * - Event indexes: 0 for the text (and streamed reasoning), 1 + n for the n-th tool call. Reasoning is
 *   shown (`thinking-delta`) but not kept: it cannot be sent back. A `refusal` is kept as text and makes
 *   the stop reason `refusal`.
 * - {@link assembleChatStream} runs the fold over the parsed `data:` payloads and yields `message-end`
 *   (stop reason, usage, content) when the stream ends after a `finish_reason`; a stream that ends before
 *   one throws ConnectionError.
 *
 * @module
 */
import { invalidInputMessage, parseToolInput } from "./_tool_input.ts";
import { ConnectionError, MAX_RESPONSE_CHARACTERS, responseTooLong, StreamProtocolError } from "./errors.ts";
import {
  parseChunk,
  stopReasonFromWire,
  usageFromWire,
  type WireChoice,
  type WireChunk,
  type WireToolCallDelta,
  type WireUsage,
} from "./openai_wire.ts";
import type { ContentBlock, ProviderEvent, StopReason } from "./provider.ts";

/** One tool call as assembled so far. */
export interface ToolCallSnapshot {
  status: "open" | "complete";
  id: string;
  name: string;
  /** The concatenated `function.arguments` fragments. */
  arguments: string;
  /** The parsed input once complete (`{}` when invalid or not complete yet). */
  input: unknown;
  /** Why the arguments could not be parsed, once complete; null when they parsed. */
  invalid: string | null;
}

/** The message as assembled so far. */
export interface ChatSnapshot {
  status: "awaiting-start" | "streaming" | "finished";
  id: string;
  model: string;
  text: string;
  /** Whether the model refused (a `refusal` delta arrived). */
  refused: boolean;
  toolCalls: readonly ToolCallSnapshot[];
  finishReason: string | null;
  /** The last usage a chunk reported. */
  usage: WireUsage | null;
}

/** The outcome of folding one chunk. */
export interface ChatAccumulateResult {
  snapshot: ChatSnapshot;
  events: ProviderEvent[];
}

/** The snapshot before any chunk. */
export function createChatSnapshot(): ChatSnapshot {
  return {
    status: "awaiting-start",
    id: "",
    model: "",
    text: "",
    refused: false,
    toolCalls: [],
    finishReason: null,
    usage: null,
  };
}

/** Folds one chunk into the snapshot; throws StreamProtocolError when it breaks the rules above. */
export function accumulateChunk(snapshot: ChatSnapshot, chunk: WireChunk): ChatAccumulateResult {
  const events: ProviderEvent[] = [];
  let next: ChatSnapshot = snapshot;
  if (next.status === "awaiting-start") {
    next = { ...next, status: "streaming", id: chunk.id, model: chunk.model };
    events.push({
      type: "message-start",
      messageId: chunk.id,
      model: chunk.model,
      usage: usageFromWire(chunk.usage),
    });
  }
  if (chunk.choices.length > 1) throw protocolError(next, `${chunk.choices.length} choices in one chunk`);
  const choice = chunk.choices[0];
  if (choice !== undefined) next = applyChoice(next, choice, events);
  if (chunk.usage !== null) next = { ...next, usage: chunk.usage };
  return { snapshot: next, events };
}

/** The `message-end` event of a finished snapshot; throws ConnectionError when no finish_reason arrived. */
export function endOfStream(snapshot: ChatSnapshot): ProviderEvent {
  if (snapshot.status !== "finished" || snapshot.finishReason === null) {
    const progress = snapshot.status === "awaiting-start"
      ? "no chunk arrived"
      : `${snapshot.text.length} characters of text and ${snapshot.toolCalls.length} tool call(s) received`;
    throw new ConnectionError(`Response stream ended before a finish_reason (${progress})`);
  }
  const stopReason: StopReason = snapshot.refused && snapshot.finishReason === "stop"
    ? "refusal"
    : stopReasonFromWire(snapshot.finishReason, snapshot.toolCalls.length > 0);
  return {
    type: "message-end",
    stopReason,
    usage: usageFromWire(snapshot.usage),
    content: contentOf(snapshot),
  };
}

/** Assembles a stream of parsed `data:` payloads (as openai_http.ts yields them) into ProviderEvents. */
export async function* assembleChatStream(rawChunks: AsyncIterable<unknown>): AsyncGenerator<ProviderEvent> {
  let snapshot = createChatSnapshot();
  let characters = 0;
  for await (const value of rawChunks) {
    const chunk = parseChunk(value);
    for (const choice of chunk.choices) {
      characters += (choice.content?.length ?? 0) + (choice.reasoning?.length ?? 0) +
        (choice.refusal?.length ?? 0) +
        choice.toolCalls.reduce((sum, call) => sum + (call.arguments?.length ?? 0), 0);
    }
    if (characters > MAX_RESPONSE_CHARACTERS) throw responseTooLong();
    const result = accumulateChunk(snapshot, chunk);
    snapshot = result.snapshot;
    yield* result.events;
  }
  yield endOfStream(snapshot);
}

function applyChoice(snapshot: ChatSnapshot, choice: WireChoice, events: ProviderEvent[]): ChatSnapshot {
  if (choice.index !== 0) {
    throw protocolError(snapshot, `choice ${choice.index} arrived, but mewcode asks for one choice`);
  }
  const carries = (choice.content ?? "") !== "" || (choice.reasoning ?? "") !== "" ||
    (choice.refusal ?? "") !== "" || choice.toolCalls.length > 0 || choice.finishReason !== null;
  if (snapshot.status === "finished") {
    if (!carries) return snapshot;
    throw protocolError(snapshot, `content after finish_reason "${snapshot.finishReason}"`);
  }
  let next = snapshot;
  if (choice.reasoning !== null && choice.reasoning !== "") {
    events.push({ type: "thinking-delta", index: 0, thinking: choice.reasoning });
  }
  if (choice.content !== null && choice.content !== "") {
    next = { ...next, text: next.text + choice.content };
    events.push({ type: "text-delta", index: 0, text: choice.content });
  }
  if (choice.refusal !== null && choice.refusal !== "") {
    next = { ...next, text: next.text + choice.refusal, refused: true };
    events.push({ type: "text-delta", index: 0, text: choice.refusal });
  }
  for (const fragment of choice.toolCalls) next = applyToolCallFragment(next, fragment, events);
  if (choice.finishReason !== null) {
    next = completeCalls(next, next.toolCalls.length, events);
    next = { ...next, status: "finished", finishReason: choice.finishReason };
  }
  return next;
}

function applyToolCallFragment(
  snapshot: ChatSnapshot,
  fragment: WireToolCallDelta,
  events: ProviderEvent[],
): ChatSnapshot {
  const count = snapshot.toolCalls.length;
  const index = fragment.index ?? (fragment.id !== null && fragment.id !== "" ? count : count - 1);
  if (index < 0) throw protocolError(snapshot, "a tool call fragment without an index or id came first");
  if (index > count) {
    throw protocolError(snapshot, `tool call ${index} started before tool call ${count}`);
  }
  if (index === count) {
    if (fragment.id === null || fragment.id === "") {
      throw protocolError(snapshot, `tool call ${index} started without an id`);
    }
    if (fragment.name === null || fragment.name === "") {
      throw protocolError(snapshot, `tool call ${index} ("${fragment.id}") started without a function name`);
    }
    if (snapshot.toolCalls.some((call) => call.id === fragment.id)) {
      throw protocolError(snapshot, `tool call ${index} reuses the id "${fragment.id}"`);
    }
    const started = completeCalls(snapshot, index, events);
    const call: ToolCallSnapshot = {
      status: "open",
      id: fragment.id,
      name: fragment.name,
      arguments: fragment.arguments ?? "",
      input: {},
      invalid: null,
    };
    events.push({ type: "tool-call-begin", index: index + 1, id: call.id, name: call.name });
    return { ...started, toolCalls: [...started.toolCalls, call] };
  }
  const call = snapshot.toolCalls[index];
  if (call === undefined) throw protocolError(snapshot, `no tool call at index ${index}`);
  if (call.status === "complete") {
    throw protocolError(
      snapshot,
      `a fragment for tool call ${index} ("${call.id}") arrived after a later call started`,
    );
  }
  if (fragment.id !== null && fragment.id !== "" && fragment.id !== call.id) {
    throw protocolError(snapshot, `tool call ${index} changed its id from "${call.id}" to "${fragment.id}"`);
  }
  if (fragment.name !== null && fragment.name !== "" && fragment.name !== call.name) {
    throw protocolError(
      snapshot,
      `tool call ${index} changed its name from "${call.name}" to "${fragment.name}"`,
    );
  }
  if (fragment.arguments === null || fragment.arguments === "") return snapshot;
  return withCall(snapshot, index, { ...call, arguments: call.arguments + fragment.arguments });
}

/** Completes every open call below `before`, yielding its `tool-call` or `tool-call-invalid`. */
function completeCalls(snapshot: ChatSnapshot, before: number, events: ProviderEvent[]): ChatSnapshot {
  let next = snapshot;
  next.toolCalls.forEach((call, index) => {
    if (index >= before || call.status === "complete") return;
    const parsed = parseToolInput(call.arguments);
    const { id, name } = call;
    if (parsed.ok) {
      events.push({ type: "tool-call", index: index + 1, id, name, input: parsed.value });
      next = withCall(next, index, { ...call, status: "complete", input: parsed.value });
      return;
    }
    const error = invalidInputMessage(name, parsed.error);
    events.push({ type: "tool-call-invalid", index: index + 1, id, name, rawInput: call.arguments, error });
    next = withCall(next, index, { ...call, status: "complete", input: {}, invalid: error });
  });
  return next;
}

function withCall(snapshot: ChatSnapshot, index: number, call: ToolCallSnapshot): ChatSnapshot {
  const toolCalls = snapshot.toolCalls.slice();
  toolCalls[index] = call;
  return { ...snapshot, toolCalls };
}

/** The assistant message: the text (when not empty), then the tool calls in index order. */
function contentOf(snapshot: ChatSnapshot): ContentBlock[] {
  const content: ContentBlock[] = snapshot.text === "" ? [] : [{ type: "text", text: snapshot.text }];
  for (const call of snapshot.toolCalls) {
    content.push({ type: "tool-use", id: call.id, name: call.name, input: call.input });
  }
  return content;
}

function protocolError(snapshot: ChatSnapshot, reason: string): StreamProtocolError {
  const where = snapshot.id === "" ? "" : ` "${snapshot.id}"`;
  return new StreamProtocolError(`Unexpected chunk in chat completion${where}: ${reason}`);
}
