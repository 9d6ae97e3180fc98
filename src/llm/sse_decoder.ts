/**
 * A server-sent events decoder, ours so that the Anthropic provider needs no SDK on its critical path
 * (see anthropic_http.ts). It follows the WHATWG event-stream format where the Messages API relies on it:
 *
 * - lines end with CRLF, LF or a lone CR, and any of them may be split across chunks (a CR that ends a
 *   chunk is a line end; an LF that starts the next one is then skipped);
 * - UTF-8 characters may be split across chunks (the TextDecoder keeps the partial bytes), and a leading
 *   byte-order mark is dropped;
 * - `event:` names the event, `data:` lines join with "\n", one space after the colon is dropped, a line
 *   starting with ":" is a comment, and other fields (`id:`, `retry:`) are ignored: nothing reconnects;
 * - a blank line dispatches the event; at the end of the body, an event still pending (its blank line, or
 *   even its last line end, missing) is dispatched too rather than lost.
 *
 * Unlike the format's browser API, an event with an `event:` line and no data is still dispatched (with
 * `data: ""`): the caller decides what an empty event means. An event (or a line) longer than
 * `maxEventLength` characters throws StreamProtocolError, so a broken or hostile server cannot make the
 * decoder buffer without end.
 *
 * ```ts
 * for await (const { event, data } of parseSse(response.body)) { … }
 * ```
 *
 * @module
 */

import { StreamProtocolError } from "./errors.ts";

/** An event's data may hold this many UTF-16 code units (16 Mi; the API's deltas are a few KB). */
export const MAX_EVENT_LENGTH = 16 * 1024 * 1024;

/** One dispatched event: its `event:` name (null when it had none) and its joined `data:` lines. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/** An incremental decoder: feed it byte chunks with `push`, then call `end` once the body has ended. */
export class SseDecoder {
  #text = new TextDecoder("utf-8");
  /** Line ends of the format: CRLF, LF, or a lone CR. */
  #lineEnd = /\r\n?|\n/g;
  /** The start of a line whose end has not arrived yet. */
  #partialLine = "";
  /** The last chunk ended with CR: an LF starting the next one belongs to that line end. */
  #afterCr = false;
  #event: string | null = null;
  #data: string[] = [];
  /** The length of the pending event's data lines. */
  #dataLength = 0;
  #maxEventLength: number;

  constructor(options: { maxEventLength?: number } = {}) {
    this.#maxEventLength = options.maxEventLength ?? MAX_EVENT_LENGTH;
  }

  /** Decodes one chunk; returns the events it completed, in order. */
  push(bytes: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    this.#feed(this.#text.decode(bytes, { stream: true }), events);
    return events;
  }

  /** Ends the body: returns the events still pending (a final line without its line end counts). */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    this.#feed(this.#text.decode(), events);
    if (this.#partialLine !== "") {
      const line = this.#partialLine;
      this.#partialLine = "";
      this.#takeLine(line, events);
    }
    this.#dispatch(events);
    return events;
  }

  #feed(text: string, events: SseEvent[]): void {
    if (text === "") return;
    let start = this.#afterCr && text.startsWith("\n") ? 1 : 0;
    this.#afterCr = false;
    const lineEnd = this.#lineEnd;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
      const line = this.#partialLine + text.slice(start, match.index);
      this.#partialLine = "";
      this.#takeLine(line, events);
      start = match.index + match[0].length;
      if (match[0] === "\r" && start === text.length) this.#afterCr = true;
    }
    this.#partialLine += text.slice(start);
    this.#checkLength(this.#partialLine.length);
  }

  #takeLine(line: string, events: SseEvent[]): void {
    if (line === "") return this.#dispatch(events);
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const raw = colon === -1 ? "" : line.slice(colon + 1);
    const value = raw.startsWith(" ") ? raw.slice(1) : raw;
    if (field === "event") this.#event = value;
    else if (field === "data") {
      this.#data.push(value);
      this.#dataLength += value.length + 1;
      this.#checkLength(this.#dataLength);
    }
  }

  #checkLength(length: number): void {
    if (length <= this.#maxEventLength) return;
    throw new StreamProtocolError(
      `Cannot read the event stream: an event is longer than ${this.#maxEventLength} characters`,
    );
  }

  #dispatch(events: SseEvent[]): void {
    if (this.#event === null && this.#data.length === 0) return;
    events.push({ event: this.#event, data: this.#data.join("\n") });
    this.#event = null;
    this.#data = [];
    this.#dataLength = 0;
  }
}

/**
 * The events of a byte stream (a response body), decoded as they arrive. Stopping early cancels the
 * body; an error reading it is thrown as it is.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new SseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}
