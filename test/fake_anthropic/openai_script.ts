/**
 * The script language of the fake chat completions server (openai_server.ts): each scripted response
 * answers one `POST /v1/chat/completions`, in order.
 *
 * ```ts
 * const script = [
 *   chatError(429, "Slow down", { type: "rate_limit_error", headers: { "retry-after": "1" } }),
 *   chatTurn().text("Reading.").toolCall("ReadFile", { path: "/w/a.ts" }, { id: "call_1", fragment: [1, 3] }),
 *   chatTurn().text("Done.").finish("stop"),
 * ];
 * ```
 *
 * A turn streams `chat.completion.chunk`s as SSE (`data: {...}\n\n`): a first chunk with the role, the
 * parts in order (text deltas, reasoning deltas, tool calls with their `index`, `id` and name in the first
 * fragment and their `arguments` in fragments), a chunk with the `finish_reason`, a usage chunk with empty
 * `choices`, and `data: [DONE]`. `.finish(reason)` ends it that way (by default `tool_calls` when it has
 * tool calls, else `stop`); `.errorChunk(…)`, `.drop()` and `.cut()` end it abnormally.
 *
 * @module
 */
import { escapeNonAscii, type FragmentSize, splitFragments, type Step } from "./script.ts";

export type { Step };

/** Token counts a turn reports in its usage chunk. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** `prompt_tokens_details.cached_tokens`. */
  cached_tokens: number;
}

/** How a tool call is streamed. */
export interface ToolCallOptions {
  /** The call's id; `call_r<request>_<index>` by default. */
  id?: string;
  /** Sizes of the `arguments` fragments after the first (empty) one; the whole JSON at once by default. */
  fragment?: FragmentSize;
  /** Seed of the fragment sizes (default 1). */
  seed?: number;
  /** Write non-ASCII characters as `\uXXXX` escapes, so fragments split inside them. */
  asciiEscapes?: boolean;
  /** Send the whole call in one fragment with id, name and arguments (as Ollama does). */
  whole?: boolean;
  /** Leave `index` out of every fragment (as some servers do). */
  omitIndex?: boolean;
}

/** Options of a whole turn. */
export interface ChatTurnOptions {
  /** The chunks' id; `chatcmpl-fake-<request>` by default. */
  id?: string;
  /** The model the chunks report; the request's model by default. */
  model?: string;
  /** A pause before every chunk, in milliseconds. */
  paceMs?: number;
  /** Write each chunk to the socket in pieces of these many BYTES. */
  byteChunks?: FragmentSize;
  /** Send the usage chunk (default true). */
  usageChunk?: boolean;
}

type Part =
  | { kind: "text"; field: "content" | "reasoning_content" | "refusal"; text: string; chunk: number | null }
  | { kind: "tool-call"; name: string; json: string; options: ToolCallOptions }
  | { kind: "raw"; step: Step };

type Ending =
  | { kind: "finish"; reason: string | null }
  | { kind: "error-chunk"; payload: unknown }
  | { kind: "drop" }
  | { kind: "cut" };

/** Builds one streamed chat completion; see the module doc. Methods return `this` for chaining. */
export class ChatTurnBuilder {
  readonly options: ChatTurnOptions;
  #parts: Part[] = [];
  #usage: ChatUsage = { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 0 };
  #ending: Ending | null = null;

  constructor(options: ChatTurnOptions = {}) {
    this.options = options;
  }

  /** Text, as `delta.content`; `chunk` splits it into deltas of that many code units. */
  text(text: string, options: { chunk?: number } = {}): this {
    return this.#add({ kind: "text", field: "content", text, chunk: options.chunk ?? null });
  }

  /** Reasoning, as `delta.reasoning_content` (vLLM, DeepSeek and others stream it so). */
  reasoning(text: string, options: { chunk?: number } = {}): this {
    return this.#add({ kind: "text", field: "reasoning_content", text, chunk: options.chunk ?? null });
  }

  /** A refusal, as `delta.refusal`. */
  refusal(text: string): this {
    return this.#add({ kind: "text", field: "refusal", text, chunk: null });
  }

  /** A tool call whose arguments are `JSON.stringify(input)`. */
  toolCall(name: string, input: unknown, options: ToolCallOptions = {}): this {
    const json = options.asciiEscapes ? escapeNonAscii(JSON.stringify(input)) : JSON.stringify(input);
    return this.#add({ kind: "tool-call", name, json, options });
  }

  /** A tool call whose arguments text is given verbatim (malformed on purpose). */
  rawToolCall(name: string, json: string, options: ToolCallOptions = {}): this {
    return this.#add({ kind: "tool-call", name, json, options });
  }

  /** Any chunk, verbatim (a string is sent unencoded after `data: `): for protocol violations. */
  chunk(data: unknown): this {
    return this.#add({ kind: "raw", step: { kind: "event", name: "", data } });
  }

  /** Pauses before the next step. */
  delay(ms: number): this {
    return this.#add({ kind: "raw", step: { kind: "delay", ms } });
  }

  /** The usage numbers of this turn. */
  usage(usage: Partial<ChatUsage>): this {
    this.#usage = { ...this.#usage, ...usage };
    return this;
  }

  /** Ends the completion: a chunk with this finish_reason, the usage chunk, `[DONE]`. */
  finish(reason: string | null): this {
    return this.#end({ kind: "finish", reason });
  }

  /** Ends the stream with an error payload (`data: {"error": …}`), as servers do when generation fails. */
  errorChunk(message: string, options: { type?: string; code?: string | number } = {}): this {
    return this.#end({
      kind: "error-chunk",
      payload: { error: { message, type: options.type ?? "server_error", code: options.code ?? null } },
    });
  }

  /** Breaks the connection here, without ending the body. */
  drop(): this {
    return this.#end({ kind: "drop" });
  }

  /** Ends the body cleanly here, without a finish_reason or `[DONE]`. */
  cut(): this {
    return this.#end({ kind: "cut" });
  }

  /** The steps of this turn for request number `request` (1-based). */
  compile(context: { request: number; model: string }): Step[] {
    const steps: Step[] = [];
    const id = this.options.id ?? `chatcmpl-fake-${context.request}`;
    const model = this.options.model ?? context.model;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      steps.push({
        kind: "event",
        name: "",
        data: { id, object: "chat.completion.chunk", created: 1_700_000_000, model, choices, ...extra },
      });
    const delta = (fields: Record<string, unknown>) =>
      chunk([{ index: 0, delta: fields, finish_reason: null }]);
    delta({ role: "assistant", content: "" });
    let calls = 0;
    for (const part of this.#parts) {
      switch (part.kind) {
        case "raw":
          steps.push(part.step);
          break;
        case "text":
          for (const text of part.chunk === null ? [part.text] : splitFragments(part.text, part.chunk)) {
            delta({ [part.field]: text });
          }
          break;
        case "tool-call": {
          const index = calls++;
          const callId = part.options.id ?? `call_r${context.request}_${index}`;
          const at = part.options.omitIndex ? {} : { index };
          if (part.options.whole) {
            delta({
              tool_calls: [{
                ...at,
                id: callId,
                type: "function",
                function: { name: part.name, arguments: part.json },
              }],
            });
            break;
          }
          delta({
            tool_calls: [{
              ...at,
              id: callId,
              type: "function",
              function: { name: part.name, arguments: "" },
            }],
          });
          const sizes = part.options.fragment ?? Math.max(1, part.json.length);
          for (const fragment of splitFragments(part.json, sizes, part.options.seed ?? 1)) {
            if (fragment !== "") delta({ tool_calls: [{ ...at, function: { arguments: fragment } }] });
          }
          break;
        }
      }
    }
    const ending = this.#ending ?? { kind: "finish", reason: calls > 0 ? "tool_calls" : "stop" };
    switch (ending.kind) {
      case "finish": {
        chunk([{ index: 0, delta: {}, finish_reason: ending.reason }]);
        const usage = this.#usage;
        if (this.options.usageChunk ?? true) {
          chunk([], {
            usage: {
              prompt_tokens: usage.prompt_tokens,
              completion_tokens: usage.completion_tokens,
              total_tokens: usage.prompt_tokens + usage.completion_tokens,
              prompt_tokens_details: { cached_tokens: usage.cached_tokens },
            },
          });
        }
        steps.push({ kind: "event", name: "", data: "[DONE]" });
        break;
      }
      case "error-chunk":
        steps.push({ kind: "event", name: "", data: ending.payload });
        break;
      case "drop":
        steps.push({ kind: "drop" });
        return steps;
      case "cut":
        break;
    }
    steps.push({ kind: "end" });
    return steps;
  }

  #add(part: Part): this {
    if (this.#ending !== null) {
      throw new TypeError(`Cannot add a step after the turn ended (${this.#ending.kind})`);
    }
    this.#parts.push(part);
    return this;
  }

  #end(ending: Ending): this {
    if (this.#ending !== null) throw new TypeError(`Cannot end the turn twice (${this.#ending.kind})`);
    this.#ending = ending;
    return this;
  }
}

/** An HTTP error answer in OpenAI's shape `{error: {message, type, param, code}}`. */
export interface ChatErrorResponse {
  kind: "chat-error";
  status: number;
  message: string;
  type: string;
  code: string | null;
  headers: Record<string, string>;
  /** Sent verbatim (as text/plain) instead of the JSON body when set. */
  rawBody: string | null;
}

/** One scripted answer. */
export type ChatScriptedResponse = ChatTurnBuilder | ChatErrorResponse;

/** Starts a streamed chat completion. */
export function chatTurn(options: ChatTurnOptions = {}): ChatTurnBuilder {
  return new ChatTurnBuilder(options);
}

/** An HTTP error answer, e.g. `chatError(429, "Slow down", { headers: { "retry-after": "1" } })`. */
export function chatError(
  status: number,
  message: string,
  options: { type?: string; code?: string; headers?: Record<string, string>; rawBody?: string } = {},
): ChatErrorResponse {
  return {
    kind: "chat-error",
    status,
    message,
    type: options.type ??
      (status === 401 ? "invalid_request_error" : status >= 500 ? "server_error" : "error"),
    code: options.code ?? null,
    headers: options.headers ?? {},
    rawBody: options.rawBody ?? null,
  };
}
