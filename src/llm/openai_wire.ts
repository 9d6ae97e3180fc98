/**
 * The OpenAI chat completions API's wire shapes, in its snake_case: the request mewcode sends (converted
 * from its provider-neutral messages and tool specs), the `chat.completion.chunk`s of a stream and their
 * narrowing from untrusted JSON, usage, finish reasons and mid-stream error payloads. Only the OpenAI
 * provider's files (and their tests and the fake server) use these.
 *
 * How mewcode's messages map:
 * - the system prompt is the first message, `role: "system"`;
 * - an assistant message's text blocks become its `content`, its tool-use blocks its `tool_calls`
 *   (`arguments` is the input as JSON text); thinking blocks are dropped, since only the provider that
 *   wrote them can read them back (continuing a session says how many were dropped, see
 *   history_port.ts); an assistant message left with neither text nor calls is left out;
 * - a user message's tool-result blocks become `role: "tool"` messages in their order, each with the
 *   `tool_call_id` of its call (an error result's content starts with "Error: ", as the API has no error
 *   flag); its text blocks become one `role: "user"` message after them.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { isRecord } from "../common/values.ts";
import { ApiError, StreamProtocolError } from "./errors.ts";
import type { Message, ModelRequest, StopReason, ToolSpec, Usage } from "./provider.ts";

/** One tool call of an assistant message, as the API takes it back. */
export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A request message. */
export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** One entry of the `tools` request parameter. */
export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Which field limits the response's length: OpenAI's own API wants the newer one, most others the older. */
export type TokenLimitField = "max_tokens" | "max_completion_tokens";

/** The body of a streaming chat completions request. */
export interface WireRequest {
  model: string;
  messages: WireMessage[];
  stream: true;
  stream_options: { include_usage: true };
  tools?: WireTool[];
  max_tokens?: number;
  max_completion_tokens?: number;
}

/** mewcode's request as the API's body; `tokenLimitField` names the field that carries `maxTokens`. */
export function toWireRequest(
  request: ModelRequest,
  options: { tokenLimitField?: TokenLimitField } = {},
): WireRequest {
  const tools = toWireTools(request.tools);
  return {
    model: request.model,
    messages: toWireMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length === 0 ? {} : { tools }),
    ...(options.tokenLimitField === "max_completion_tokens"
      ? { max_completion_tokens: request.maxTokens }
      : { max_tokens: request.maxTokens }),
  };
}

/** The system prompt and mewcode's messages as the API's messages (see the module doc). */
export function toWireMessages(system: string, messages: readonly Message[]): WireMessage[] {
  const wire: WireMessage[] = system === "" ? [] : [{ role: "system", content: system }];
  for (const message of messages) {
    if (message.role === "assistant") {
      const assistant = toWireAssistant(message);
      if (assistant !== null) wire.push(assistant);
    } else {
      wire.push(...toWireUser(message));
    }
  }
  return wire;
}

function toWireAssistant(message: Message): WireMessage | null {
  const texts: string[] = [];
  const calls: WireToolCall[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        if (block.text !== "") texts.push(block.text);
        break;
      case "tool-use":
        calls.push({
          id: block.id,
          type: "function",
          function: { name: block.name, arguments: JSON.stringify(isRecord(block.input) ? block.input : {}) },
        });
        break;
      case "thinking":
      case "redacted-thinking":
      case "tool-result":
        break;
      default:
        assertNever(block);
    }
  }
  if (texts.length === 0 && calls.length === 0) return null;
  return {
    role: "assistant",
    content: texts.length === 0 ? null : texts.join("\n\n"),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  };
}

function toWireUser(message: Message): WireMessage[] {
  const wire: WireMessage[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "tool-result":
        wire.push({
          role: "tool",
          tool_call_id: block.toolUseId,
          content: block.isError ? `Error: ${block.content}` : block.content,
        });
        break;
      case "text":
        if (block.text !== "") texts.push(block.text);
        break;
      case "thinking":
      case "redacted-thinking":
      case "tool-use":
        break;
      default:
        assertNever(block);
    }
  }
  if (texts.length > 0) wire.push({ role: "user", content: texts.join("\n\n") });
  return wire;
}

/** mewcode's tool specs as the `tools` request parameter. */
export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { ...tool.inputSchema, type: "object" },
    },
  }));
}

/** Token counts as the API reports them (with `stream_options.include_usage`, in the last chunk). */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens the API read from its cache (OpenAI's automatic prompt caching). */
  cached_tokens: number;
}

/** The API's counts as mewcode's: cached prompt tokens are cache reads, the rest plain input. */
export function usageFromWire(usage: WireUsage | null): Usage {
  if (usage === null) {
    return { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
  }
  const cached = Math.min(usage.cached_tokens, usage.prompt_tokens);
  return {
    inputTokens: usage.prompt_tokens - cached,
    outputTokens: usage.completion_tokens,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: cached,
  };
}

/**
 * A `finish_reason` as mewcode's stop reason: `tool_calls` (and the legacy `function_call`) is tool_use,
 * `stop` end_turn (tool_use when the message has calls: some servers, Ollama among them, say `stop` after
 * calls), `length` max_tokens, `content_filter` refusal; anything else passes through.
 */
export function stopReasonFromWire(finishReason: string, hasToolCalls: boolean): StopReason {
  switch (finishReason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "stop":
      return hasToolCalls ? "tool_use" : "end_turn";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return finishReason;
  }
}

/** One fragment of a tool call in a chunk's `delta.tool_calls`. */
export interface WireToolCallDelta {
  /** null when the server left it out. */
  index: number | null;
  id: string | null;
  name: string | null;
  arguments: string | null;
}

/** A chunk's one choice, narrowed. */
export interface WireChoice {
  index: number;
  content: string | null;
  /** The model's reasoning, where the server streams it (`reasoning_content` or `reasoning`). */
  reasoning: string | null;
  refusal: string | null;
  toolCalls: WireToolCallDelta[];
  finishReason: string | null;
}

/** One `chat.completion.chunk`, narrowed. */
export interface WireChunk {
  id: string;
  model: string;
  choices: WireChoice[];
  usage: WireUsage | null;
}

/**
 * Narrows one parsed `data:` payload of the stream; throws StreamProtocolError for one that is not a chunk
 * or whose fields have the wrong types.
 */
export function parseChunk(value: unknown): WireChunk {
  if (!isRecord(value)) {
    throw new StreamProtocolError(`Cannot read stream chunk ${preview(value)}: not an object`);
  }
  if (value.choices !== undefined && !Array.isArray(value.choices)) return malformed(value, "choices");
  const choices = (value.choices ?? []) as unknown[];
  return {
    id: typeof value.id === "string" ? value.id : "",
    model: typeof value.model === "string" ? value.model : "",
    choices: choices.map((choice) => readChoice(value, choice)),
    usage: readUsage(value, value.usage),
  };
}

function readChoice(chunk: Record<string, unknown>, choice: unknown): WireChoice {
  if (!isRecord(choice)) return malformed(chunk, "choices[]");
  const index = choice.index ?? 0;
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0) {
    return malformed(chunk, "choices[].index");
  }
  const delta = choice.delta ?? {};
  if (!isRecord(delta)) return malformed(chunk, "choices[].delta");
  const finishReason = choice.finish_reason ?? null;
  if (finishReason !== null && typeof finishReason !== "string") return malformed(chunk, "finish_reason");
  const toolCalls = delta.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) return malformed(chunk, "delta.tool_calls");
  return {
    index,
    content: optionalString(chunk, delta.content, "delta.content"),
    reasoning: optionalString(chunk, delta.reasoning_content, "delta.reasoning_content") ??
      optionalString(chunk, delta.reasoning, "delta.reasoning"),
    refusal: optionalString(chunk, delta.refusal, "delta.refusal"),
    toolCalls: toolCalls.map((call) => readToolCallDelta(chunk, call)),
    finishReason,
  };
}

function readToolCallDelta(chunk: Record<string, unknown>, call: unknown): WireToolCallDelta {
  if (!isRecord(call)) return malformed(chunk, "delta.tool_calls[]");
  const index = call.index ?? null;
  if (index !== null && (typeof index !== "number" || !Number.isInteger(index) || index < 0)) {
    return malformed(chunk, "delta.tool_calls[].index");
  }
  const fn = call.function ?? {};
  if (!isRecord(fn)) return malformed(chunk, "delta.tool_calls[].function");
  return {
    index,
    id: optionalString(chunk, call.id, "delta.tool_calls[].id"),
    name: optionalString(chunk, fn.name, "delta.tool_calls[].function.name"),
    arguments: optionalString(chunk, fn.arguments, "delta.tool_calls[].function.arguments"),
  };
}

function readUsage(chunk: Record<string, unknown>, usage: unknown): WireUsage | null {
  if (usage == null) return null;
  if (!isRecord(usage)) return malformed(chunk, "usage");
  const count = (value: unknown, field: string): number => {
    if (value == null) return 0;
    // Whole numbers from 0 up: the run's cost and its budget are computed from them.
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      return malformed(chunk, field);
    }
    return value;
  };
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return {
    prompt_tokens: count(usage.prompt_tokens, "usage.prompt_tokens"),
    completion_tokens: count(usage.completion_tokens, "usage.completion_tokens"),
    cached_tokens: count(details.cached_tokens, "usage.prompt_tokens_details.cached_tokens"),
  };
}

function optionalString(chunk: Record<string, unknown>, value: unknown, field: string): string | null {
  if (value == null) return null;
  if (typeof value !== "string") return malformed(chunk, field);
  return value;
}

/** The statuses OpenAI-style error types and codes stand for, so mid-stream errors classify like HTTP ones. */
const STATUS_BY_ERROR_KIND: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  invalid_api_key: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  server_error: 500,
  api_error: 500,
  internal_error: 500,
  overloaded_error: 529,
  service_unavailable: 503,
};

/**
 * The ApiError for an error payload inside a stream (`{error: {message, type, code}}`, as OpenRouter, vLLM
 * and OpenAI send when a generation fails mid-way): the status is a numeric `code`, else the one its type
 * or code stands for (so a 5xx or rate limit is retryable), else null.
 */
export function streamErrorFromWire(payload: unknown): ApiError {
  const inner = isRecord(payload) && isRecord(payload.error) ? payload.error : payload;
  const record = isRecord(inner) ? inner : {};
  const code = record.code;
  const type = typeof record.type === "string" ? record.type : null;
  let status: number | null = null;
  if (typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599) status = code;
  else if (typeof code === "string" && /^[45]\d\d$/.test(code)) status = Number(code);
  else {
    for (const kind of [type, typeof code === "string" ? code : null]) {
      if (kind !== null && STATUS_BY_ERROR_KIND[kind] !== undefined) {
        status = STATUS_BY_ERROR_KIND[kind] ?? null;
        break;
      }
    }
  }
  const message = typeof record.message === "string" && record.message !== ""
    ? record.message
    : `The API sent an error in the stream: ${preview(payload)}`;
  if (status === null) return new ApiError(message, { status: null, errorType: type, isRetryable: false });
  // fromResponse picks the subclass (and retryability) by status, as for an HTTP error.
  return ApiError.fromResponse(status, { error: { type: type ?? "error", message } });
}

function malformed(chunk: Record<string, unknown>, field: string): never {
  throw new StreamProtocolError(`Cannot read stream chunk: missing or invalid ${field}: ${preview(chunk)}`);
}

/** A value for a message, shortened. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
