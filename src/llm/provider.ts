/**
 * The provider interface: one model request in, a stream of assembled events out.
 * Wire types keep the API's snake_case and stay inside src/llm/; the agent sees ProviderEvent.
 *
 * @module
 */

/** A content block of a message, in the Messages API's shape. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | {
    type: "tool_result";
    tool_use_id: string;
    content: string;
    is_error?: boolean;
  };

/** A message of the conversation, in the Messages API's shape. */
export interface Message {
  role: "user" | "assistant";
  content: string | ContentBlock[];
}

/** Token usage as the API reports it. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One tool as offered to the model. */
export interface ToolDefinitionParam {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** One model request. */
export interface ProviderRequest {
  model: string;
  maxTokens: number;
  system: string;
  messages: Message[];
  tools: ToolDefinitionParam[];
}

/** Why the model stopped, as the API says; unknown values are passed through. */
export type StopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "pause_turn"
  | "refusal"
  | (string & Record<never, never>);

/**
 * What a provider stream yields, in order. `tool-call` is emitted at the tool_use block's
 * `content_block_stop`, with the input parsed; `tool-call-invalid` when its JSON was malformed.
 */
export type ProviderEvent =
  | { type: "message-start"; messageId: string; model: string; usage: Usage }
  | { type: "text-delta"; index: number; text: string }
  | { type: "thinking-delta"; index: number; thinking: string }
  | { type: "tool-call"; index: number; id: string; name: string; input: unknown }
  | { type: "tool-call-invalid"; index: number; id: string; name: string; rawInput: string; error: string }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | {
    type: "message-end";
    stopReason: StopReason | null;
    usage: Usage;
    /** The assistant message exactly as it should be appended to the conversation. */
    content: ContentBlock[];
  };

/** A model backend. Errors are thrown as ApiError / StreamProtocolError (see errors.ts). */
export interface Provider {
  stream(request: ProviderRequest, options: { signal: AbortSignal }): AsyncIterable<ProviderEvent>;
}
