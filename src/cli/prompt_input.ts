/**
 * The prompt of a one-shot run: the argument, standard input, or both — `git diff | mewcode -p "review"`
 * sends the diff as context and the argument as the instruction, clearly delimited.
 *
 * Standard input is read only when it is not a terminal, until EOF. With a prompt argument, a stdin that
 * sends nothing for a second (`sleep 100 | mewcode -p q`, a script's inherited pipe) is left unread. More
 * than MAX_STDIN_BYTES is cut, and both the user and the model are told.
 *
 * @module
 */
import { formatBytes } from "../common/size.ts";
import { withDeadline } from "../common/deadline.ts";

/** Where the prompt may come from (`Deno.stdin` fits). */
export interface PromptSource {
  readonly readable: ReadableStream<Uint8Array>;
  isTerminal(): boolean;
}

/** The most standard input read into a prompt. */
export const MAX_STDIN_BYTES = 10 * 1024 * 1024;
/** How long a prompt argument waits for standard input to send its first bytes. */
export const STDIN_FIRST_BYTE_MS = 1000;

/** What standard input gave. */
export interface StdinText {
  text: string;
  /** Bytes dropped beyond the cap: at least this many (reading stops at the cap). 0 when none. */
  cutAfterBytes: number | null;
}

/** The prompt and what the user should be told about it. */
export interface PromptInput {
  prompt: string;
  notices: string[];
}

/** Limits, injectable for tests. */
export interface StdinLimits {
  maxBytes?: number;
  firstByteMs?: number;
}

/**
 * The prompt from the argument and standard input; null when there is none. Reads stdin only when it is
 * not a terminal; with an argument, stops waiting when stdin sends nothing within `firstByteMs`.
 */
export async function readPromptInput(
  argument: string | null,
  stdin: PromptSource,
  limits: StdinLimits = {},
): Promise<PromptInput | null> {
  const piped = stdin.isTerminal() ? null : await readStdin(stdin.readable, {
    maxBytes: limits.maxBytes ?? MAX_STDIN_BYTES,
    firstByteMs: argument === null ? null : limits.firstByteMs ?? STDIN_FIRST_BYTE_MS,
  });
  const notices: string[] = [];
  if (piped !== null && piped.cutAfterBytes !== null) {
    notices.push(
      `Standard input was cut after its first ${formatBytes(piped.cutAfterBytes)}; the rest was not read`,
    );
  }
  const context = piped === null || piped.text.trim() === "" ? null : piped;
  if (argument === null || argument.trim() === "") {
    if (context === null) return null;
    return { prompt: context.text + cutNote(context), notices };
  }
  if (context === null) return { prompt: argument, notices };
  return { prompt: composePrompt(argument, context), notices };
}

/**
 * The user message for an instruction with piped context: the context between tags no line of it can
 * close, then the instruction.
 */
export function composePrompt(instruction: string, context: StdinText): string {
  let tag = "stdin";
  for (let n = 2; context.text.includes(`</${tag}>`); n++) tag = `stdin-${n}`;
  const text = context.text.endsWith("\n") ? context.text : `${context.text}\n`;
  return `The user piped this into mewcode on standard input:\n<${tag}>\n${text}</${tag}>${
    cutNote(context)
  }\n\n` +
    `${instruction}`;
}

function cutNote(context: StdinText): string {
  return context.cutAfterBytes === null
    ? ""
    : `\n(Standard input was longer: only its first ${formatBytes(context.cutAfterBytes)} are shown.)`;
}

/**
 * Reads a stream to EOF, at most `maxBytes`. With `firstByteMs`, returns null when no byte arrives in
 * time. The reader is released (and the stream cancelled) whatever happens, so an open pipe cannot keep
 * the process waiting.
 */
export async function readStdin(
  readable: ReadableStream<Uint8Array>,
  options: { maxBytes: number; firstByteMs: number | null },
): Promise<StdinText | null> {
  const reader = readable.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  try {
    let first = true;
    while (true) {
      const next = first && options.firstByteMs !== null
        ? await withDeadline(reader.read(), options.firstByteMs)
        : await reader.read();
      if (next === "timeout") return null;
      first = false;
      if (next.done) break;
      if (next.value.length === 0) {
        first = options.firstByteMs !== null && size === 0;
        continue;
      }
      const room = options.maxBytes - size;
      chunks.push(next.value.length > room ? next.value.subarray(0, room) : next.value);
      size += Math.min(room, next.value.length);
      if (next.value.length > room) {
        cut = true;
        break;
      }
    }
  } finally {
    // Stop reading: an unfinished pipe must not keep the process alive.
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  // `stream: true` drops a character cut in half at the cap instead of showing a replacement mark.
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes, { stream: cut });
  return { text, cutAfterBytes: cut ? size : null };
}
