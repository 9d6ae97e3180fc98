/**
 * The provider interface, in mewcode's own types: one model request in, a stream of assembled events out.
 *
 * These types are provider-neutral (camelCase fields, kebab-case block types). Each provider converts them
 * to and from its wire format inside its own files (`anthropic_*.ts`, `openai_*.ts`); no wire shape leaves
 * them. The session transcript stores messages in these types too, so a conversation can continue with
 * another provider (history_port.ts).
 *
 * @module
 */

/** A content block of a message. */
export type ContentBlock =
  | { type: "text"; text: string }
  /** The model's visible reasoning; `signature` lets the provider verify it when it is sent back. */
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted-thinking"; data: string }
  | { type: "tool-use"; id: string; name: string; input: unknown }
  | { type: "tool-result"; toolUseId: string; content: string; isError: boolean };

/** A message of the conversation. */
export interface Message {
  role: "user" | "assistant";
  content: ContentBlock[];
}

/** Token usage of one request (or a sum of requests). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheCreationInputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cacheReadInputTokens: number;
}

/** Usage with every count at zero. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
}

/** One tool as offered to the model: the JSON Schema of its input and a description written for it. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One model request. */
export interface ModelRequest {
  model: string;
  maxTokens: number;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /**
   * Whether the provider may cache the request's prefix (tools, system prompt, conversation) for the next
   * request, where it supports that; true when omitted.
   */
  cache?: boolean;
}

/** Why the model stopped; unknown values are passed through as the provider gave them. */
export type StopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded"
  | (string & Record<never, never>);

/**
 * What a provider stream yields, in order. `tool-call-begin` is emitted when the model begins a tool call
 * (its name is known, its input is still being written), so the tool can get ready; `tool-call` once the
 * call's input is complete, with the input parsed; `tool-call-invalid` when its JSON was malformed, too
 * large or too deep.
 */
export type ProviderEvent =
  | { type: "message-start"; messageId: string; model: string; usage: Usage }
  | { type: "text-delta"; index: number; text: string }
  | { type: "thinking-delta"; index: number; thinking: string }
  | { type: "tool-call-begin"; index: number; id: string; name: string }
  | { type: "tool-call"; index: number; id: string; name: string; input: unknown }
  | { type: "tool-call-invalid"; index: number; id: string; name: string; rawInput: string; error: string }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  /** Something the person should know about the request, such as a deprecated model; said once per session. */
  | { type: "warning"; message: string }
  | {
    type: "message-end";
    stopReason: StopReason | null;
    usage: Usage;
    /** The assistant message exactly as it should be appended to the conversation. */
    content: ContentBlock[];
  };

/** How one model turn is streamed. */
export interface StreamOptions {
  signal: AbortSignal;
  /**
   * Called once, as soon as the model's response begins (its `message-start` arrives), even while that
   * event is held back (see retry.ts): a caller can use the time before the first content, such as the
   * model's time to its first token, to load what the response may need.
   */
  onResponse?: () => void;
  /**
   * Called once, as soon as the request has been written to the connection (before any answer; with a
   * transport that cannot tell, when the answer begins): what would have held the request back may start.
   */
  onSent?: () => void;
}

/** A model backend. Errors are thrown as ApiError / StreamProtocolError (see errors.ts). */
export interface Provider {
  /** Which provider this is, for messages and the transcript ("anthropic"). */
  readonly name: string;
  stream(request: ModelRequest, options: StreamOptions): AsyncIterable<ProviderEvent>;
  /** The ids of the models the API offers: a cheap request that shows it answers (`mewcode doctor`). */
  listModels?(options: { signal: AbortSignal }): Promise<string[]>;
}
