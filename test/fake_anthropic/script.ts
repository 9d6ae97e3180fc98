/**
 * The script language of the fake Anthropic server: each scripted response answers one request, in order.
 *
 * ```ts
 * const script = [
 *   httpError(529, "overloaded_error", "Overloaded"),
 *   turn().text("Let me look.").toolUse("ReadFile", { path: "/w/a.ts" }, { id: "toolu_1", fragment: [1, 3] }),
 *   turn().delay(200).text("Done.").stop("end_turn"),
 * ];
 * ```
 *
 * A turn is a list of steps streamed as SSE; its blocks get indexes in order. It ends with `.stop(reason)`
 * (message_delta + message_stop), or abnormally with `.errorEvent(…)`, `.drop()` or `.cut()`; without any
 * of these it stops with `tool_use` when it has a tool_use block, else `end_turn`.
 *
 * @module
 */

/** Token counts a turn reports: message_start carries the input side, message_delta `output_tokens`. */
export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Fragment sizes in UTF-16 code units: a fixed size, or a seeded random size in [min, max]. */
export type FragmentSize = number | readonly [number, number];

/** How a tool_use block's input is streamed. */
export interface ToolUseOptions {
  /** The block's id; `toolu_r<request>_b<index>` by default. */
  id?: string;
  /** Sizes of the `input_json_delta` fragments; the whole JSON in one fragment by default. */
  fragment?: FragmentSize;
  /** Seed of the fragment sizes (default 1), so a failing test replays exactly. */
  seed?: number;
  /** Write non-ASCII characters as `\uXXXX` escapes in the JSON text, so fragments split inside them. */
  asciiEscapes?: boolean;
}

/** Options of a whole turn. */
export interface TurnOptions {
  /** The message id; `msg_fake_<request>` by default. */
  messageId?: string;
  /** The model the message reports; the request's model by default. */
  model?: string;
  /** A pause before every event, in milliseconds (a slow stream). */
  paceMs?: number;
  /**
   * A pause before the response's head, in milliseconds: an API that answers only once the model has its
   * first token (the client has sent its request, and hears nothing yet).
   */
  headDelayMs?: number;
  /** Write each event to the socket in pieces of these many BYTES (splitting multi-byte characters). */
  byteChunks?: FragmentSize;
}

/** One compiled step of a streamed response. */
export type Step =
  | { kind: "event"; name: string; data: unknown }
  | { kind: "delay"; ms: number }
  /** The connection is closed without ending the chunked body: the client sees a broken stream. */
  | { kind: "drop" }
  /** The body ends properly here, whatever was sent before. */
  | { kind: "end" };

type Part =
  | { kind: "text"; text: string; chunk: number | null }
  | { kind: "thinking"; thinking: string; signature: string; chunk: number | null }
  | { kind: "redacted-thinking"; data: string }
  | { kind: "tool-use"; name: string; json: string; options: ToolUseOptions }
  | { kind: "raw"; step: Step };

type Ending =
  | { kind: "stop"; reason: string | null }
  | { kind: "error-event"; errorType: string; message: string }
  | { kind: "drop" }
  | { kind: "cut" };

/** Builds one streamed response; see the module doc. Methods return `this` for chaining. */
export class TurnBuilder {
  readonly options: TurnOptions;
  #parts: Part[] = [];
  #usage: TurnUsage = {
    input_tokens: 100,
    output_tokens: 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  #ending: Ending | null = null;

  constructor(options: TurnOptions = {}) {
    this.options = options;
  }

  /** A text block; `chunk` splits it into text_deltas of that many code units. */
  text(text: string, options: { chunk?: number } = {}): this {
    return this.#add({ kind: "text", text, chunk: options.chunk ?? null });
  }

  /** A thinking block with its signature (sent as a signature_delta). */
  thinking(thinking: string, options: { signature?: string; chunk?: number } = {}): this {
    const signature = options.signature ?? "sig_fake";
    return this.#add({ kind: "thinking", thinking, signature, chunk: options.chunk ?? null });
  }

  /** A redacted_thinking block. */
  redactedThinking(data: string): this {
    return this.#add({ kind: "redacted-thinking", data });
  }

  /** A tool_use block whose input is `JSON.stringify(input)`, streamed in fragments. */
  toolUse(name: string, input: unknown, options: ToolUseOptions = {}): this {
    const json = options.asciiEscapes ? escapeNonAscii(JSON.stringify(input)) : JSON.stringify(input);
    return this.#add({ kind: "tool-use", name, json, options });
  }

  /** A tool_use block whose input JSON text is given verbatim (malformed or truncated on purpose). */
  rawToolUse(name: string, json: string, options: ToolUseOptions = {}): this {
    return this.#add({ kind: "tool-use", name, json, options });
  }

  /** Pauses before the next step. */
  delay(ms: number): this {
    return this.#add({ kind: "raw", step: { kind: "delay", ms } });
  }

  /** A `ping` event. */
  ping(): this {
    return this.#add({ kind: "raw", step: { kind: "event", name: "ping", data: { type: "ping" } } });
  }

  /** Any event, verbatim (a string `data` is sent unencoded): for protocol violations. */
  event(name: string, data: unknown): this {
    return this.#add({ kind: "raw", step: { kind: "event", name, data } });
  }

  /** The usage numbers of this turn. */
  usage(usage: Partial<TurnUsage>): this {
    this.#usage = { ...this.#usage, ...usage };
    return this;
  }

  /** Ends the message: message_delta with this stop reason, then message_stop. */
  stop(reason: string | null): this {
    return this.#end({ kind: "stop", reason });
  }

  /** Ends the stream with an SSE `error` event (as the API does when it fails mid-stream). */
  errorEvent(errorType: string, message: string): this {
    return this.#end({ kind: "error-event", errorType, message });
  }

  /** Breaks the connection here, without ending the body. */
  drop(): this {
    return this.#end({ kind: "drop" });
  }

  /** Ends the body cleanly here, without message_stop (a truncated stream). */
  cut(): this {
    return this.#end({ kind: "cut" });
  }

  /** The steps of this turn for request number `request` (1-based). */
  compile(context: { request: number; model: string }): Step[] {
    const steps: Step[] = [];
    const event = (name: string, data: unknown) => steps.push({ kind: "event", name, data });
    const usage = this.#usage;
    event("message_start", {
      type: "message_start",
      message: {
        id: this.options.messageId ?? `msg_fake_${context.request}`,
        type: "message",
        role: "assistant",
        model: this.options.model ?? context.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    let index = 0;
    let hasToolUse = false;
    for (const part of this.#parts) {
      if (part.kind === "raw") {
        steps.push(part.step);
        continue;
      }
      const delta = (data: Record<string, unknown>) =>
        event("content_block_delta", { type: "content_block_delta", index, delta: data });
      const start = (block: Record<string, unknown>) =>
        event("content_block_start", { type: "content_block_start", index, content_block: block });
      switch (part.kind) {
        case "text":
          start({ type: "text", text: "" });
          for (const text of chunks(part.text, part.chunk)) delta({ type: "text_delta", text });
          break;
        case "thinking":
          start({ type: "thinking", thinking: "", signature: "" });
          for (const thinking of chunks(part.thinking, part.chunk)) {
            delta({ type: "thinking_delta", thinking });
          }
          delta({ type: "signature_delta", signature: part.signature });
          break;
        case "redacted-thinking":
          start({ type: "redacted_thinking", data: part.data });
          break;
        case "tool-use": {
          hasToolUse = true;
          const id = part.options.id ?? `toolu_r${context.request}_b${index}`;
          start({ type: "tool_use", id, name: part.name, input: {} });
          const sizes = part.options.fragment ?? Math.max(1, part.json.length);
          for (const partial_json of splitFragments(part.json, sizes, part.options.seed ?? 1)) {
            delta({ type: "input_json_delta", partial_json });
          }
          break;
        }
      }
      event("content_block_stop", { type: "content_block_stop", index });
      index++;
    }
    const ending = this.#ending ?? { kind: "stop", reason: hasToolUse ? "tool_use" : "end_turn" };
    switch (ending.kind) {
      case "stop":
        event("message_delta", {
          type: "message_delta",
          delta: { stop_reason: ending.reason, stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        });
        event("message_stop", { type: "message_stop" });
        break;
      case "error-event":
        event("error", { type: "error", error: { type: ending.errorType, message: ending.message } });
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

/** An HTTP error response, in the API's JSON shape `{type: "error", error: {type, message}}`. */
export interface HttpErrorResponse {
  kind: "http-error";
  status: number;
  errorType: string;
  message: string;
  headers: Record<string, string>;
  /** Sent verbatim instead of the JSON error body when set. */
  rawBody: string | null;
}

/** One scripted answer. */
export type ScriptedResponse = TurnBuilder | HttpErrorResponse;

/** Starts a streamed turn. */
export function turn(options: TurnOptions = {}): TurnBuilder {
  return new TurnBuilder(options);
}

/** An HTTP error answer, e.g. `httpError(429, "rate_limit_error", "Slow down", {headers: {"retry-after": "1"}})`. */
export function httpError(
  status: number,
  errorType: string,
  message: string,
  options: { headers?: Record<string, string>; rawBody?: string } = {},
): HttpErrorResponse {
  return {
    kind: "http-error",
    status,
    errorType,
    message,
    headers: options.headers ?? {},
    rawBody: options.rawBody ?? null,
  };
}

/**
 * Splits `text` into fragments of the given sizes (UTF-16 code units, so a fragment may end inside an
 * escape sequence or between the halves of a surrogate pair). Deterministic for a given seed.
 */
export function splitFragments(text: string, size: FragmentSize, seed = 1): string[] {
  const next = seededRandom(seed);
  const fragments: string[] = [];
  for (let offset = 0; offset < text.length;) {
    const length = drawSize(size, next);
    if (!Number.isInteger(length) || length < 1) {
      throw new RangeError(`Fragment size must be at least 1, got ${length}`);
    }
    fragments.push(text.slice(offset, offset + length));
    offset += length;
  }
  return fragments.length === 0 ? [""] : fragments;
}

/** Splits bytes into pieces of the given sizes (at least 1), ignoring character boundaries on purpose. */
export function splitBytes(bytes: Uint8Array, size: FragmentSize, random: () => number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length;) {
    const length = Math.max(1, drawSize(size, random));
    pieces.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  return pieces;
}

/** The next piece length: the fixed size, or a random one in [min, max]. */
function drawSize(size: FragmentSize, random: () => number): number {
  return typeof size === "number" ? size : size[0] + Math.floor(random() * (size[1] - size[0] + 1));
}

/** mulberry32: a small deterministic PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function chunks(text: string, size: number | null): string[] {
  return size === null ? [text] : splitFragments(text, size);
}

/** JSON with every character past ASCII as a \\u escape, as the API sends it. */
export function escapeNonAscii(json: string): string {
  return json.replace(
    /[\u007f-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
