/**
 * An in-memory Provider that plays scripted turns of ProviderEvents and records the requests it got:
 * for unit-testing the agent loop without HTTP. Steps can wait on a promise (to hold the stream open
 * until a tool has started) or throw (a broken stream).
 *
 * @module
 */
import type {
  ContentBlock,
  ModelRequest,
  Provider,
  ProviderEvent,
  StopReason,
  Usage,
} from "../../src/llm/provider.ts";

/** One step of a scripted stream. */
export type ScriptStep =
  | ProviderEvent
  | { type: "wait"; until: Promise<unknown> }
  | { type: "throw"; error: unknown };

/** The steps of one model request, or a function of the request that returns them. */
export type ScriptedTurn = ScriptStep[] | ((request: ModelRequest) => ScriptStep[]);

/** Plays one scripted turn per request; past the end it throws, or repeats the last turn with `repeatLast`. */
export class ScriptedProvider implements Provider {
  readonly name = "scripted";
  /** Deep copies of every request received, in order. */
  readonly requests: ModelRequest[] = [];
  #turns: ScriptedTurn[];
  #repeatLast: boolean;

  constructor(turns: ScriptedTurn[], options: { repeatLast?: boolean } = {}) {
    this.#turns = turns;
    this.#repeatLast = options.repeatLast ?? false;
  }

  async *stream(request: ModelRequest, options: { signal: AbortSignal }): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    const index = this.requests.length - 1;
    const turn = this.#turns[index] ?? (this.#repeatLast ? this.#turns.at(-1) : undefined);
    if (turn === undefined) throw new Error(`ScriptedProvider has no turn ${index + 1}`);
    const steps = typeof turn === "function" ? turn(request) : turn;
    for (const step of steps) {
      options.signal.throwIfAborted();
      if (step.type === "wait") {
        await abortable(step.until, options.signal);
        continue;
      }
      if (step.type === "throw") throw step.error;
      yield step;
      await Promise.resolve();
    }
  }
}

function abortable(promise: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A tool call for the builders. */
export interface ScriptedCall {
  id: string;
  name: string;
  input: unknown;
}

const USAGE: Usage = {
  inputTokens: 10,
  outputTokens: 5,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};

/** A message-start event. */
export function messageStart(id = "msg_1"): ProviderEvent {
  return {
    type: "message-start",
    messageId: id,
    model: "claude-test",
    usage: { inputTokens: 10, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  };
}

/** A message-end event with this content and stop reason. */
export function messageEnd(
  content: ContentBlock[],
  stopReason: StopReason | null,
  usage: Usage = USAGE,
): ProviderEvent {
  return { type: "message-end", stopReason, usage, content };
}

/** A turn that answers with text and ends. */
export function textTurn(text: string, stopReason: StopReason | null = "end_turn"): ScriptStep[] {
  return [
    messageStart(),
    { type: "text-delta", index: 0, text },
    messageEnd([{ type: "text", text }], stopReason),
  ];
}

/** A turn with optional text, then tool calls, ending with stop reason tool_use (or another). */
export function toolTurn(
  calls: ScriptedCall[],
  options: {
    text?: string;
    stopReason?: StopReason;
    before?: (index: number) => ScriptStep[];
    beforeEnd?: ScriptStep[];
  } = {},
): ScriptStep[] {
  const steps: ScriptStep[] = [messageStart()];
  const content: ContentBlock[] = [];
  const offset = options.text === undefined ? 0 : 1;
  if (options.text !== undefined) {
    steps.push({ type: "text-delta", index: 0, text: options.text });
    content.push({ type: "text", text: options.text });
  }
  calls.forEach((call, position) => {
    steps.push(...(options.before?.(position) ?? []));
    steps.push({
      type: "tool-call",
      index: position + offset,
      id: call.id,
      name: call.name,
      input: call.input,
    });
    content.push({ type: "tool-use", id: call.id, name: call.name, input: call.input });
  });
  steps.push(...(options.beforeEnd ?? []));
  steps.push(messageEnd(content, options.stopReason ?? "tool_use"));
  return steps;
}
