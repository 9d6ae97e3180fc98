/**
 * The prompt of a one-shot run: the argument, standard input, or both — `git diff | mewcode -p "review"`
 * sends the diff as context and the argument as the instruction, clearly delimited.
 *
 * Standard input is read only when it is not a terminal, until EOF. With a prompt argument, a stdin that
 * sends nothing for a second (`sleep 100 | mewcode -p q`, a script's inherited pipe) is left unread, unless
 * `--wait-for-stdin` asks to wait for it; the caller learns whether it sends something later, when that
 * input is lost (PromptInput.stdinLeft). More than MAX_STDIN_BYTES is cut, and both the user and the model
 * are told.
 *
 * @module
 */
import { formatBytes } from "../common/size.ts";
import { PIPED_INPUT_LEAD } from "../session/piped_prompt.ts";
import { withDeadline } from "../common/deadline.ts";
import { UsageError } from "./_arg_tokens.ts";

/**
 * Where the prompt may come from: `Deno.stdin` fits. Read through `read`, not a `ReadableStream`: Deno
 * loads its stream support on a stream's first use, which took ~12 ms of the time before the first request.
 */
export interface PromptSource {
  isTerminal(): boolean;
  /** Reads into `buffer`: how many bytes, or null at the end (`Deno.stdin.read`'s contract). */
  read(buffer: Uint8Array): Promise<number | null>;
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
  /** Set when the input was not valid UTF-8: `text` holds U+FFFD in place of the bytes that were not. */
  notUtf8?: true;
}

/** The prompt and what the user should be told about it. */
export interface PromptInput {
  prompt: string;
  notices: string[];
  /**
   * Standard input was left unread because it sent nothing in time: `sent` resolves to true once it sends
   * its first bytes (too late to be part of the prompt), to false at its end or on a read error.
   */
  stdinLeft?: { waitedMs: number; sent: Promise<boolean> };
}

/** Limits, injectable for tests. */
export interface StdinLimits {
  maxBytes?: number;
  firstByteMs?: number;
  /** Wait for standard input's first bytes however long it takes (`--wait-for-stdin`). */
  wait?: boolean;
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
  const firstByteMs = argument === null || limits.wait === true
    ? null
    : limits.firstByteMs ?? STDIN_FIRST_BYTE_MS;
  const piped = stdin.isTerminal() ? null : await readStdin(stdin, {
    maxBytes: limits.maxBytes ?? MAX_STDIN_BYTES,
    firstByteMs,
  });
  if (piped !== null && "leftAfterMs" in piped) {
    // Only reached with an argument: a prompt read from stdin alone waits for its end.
    return { prompt: argument!, notices: [], stdinLeft: { waitedMs: piped.leftAfterMs, sent: piped.sent } };
  }
  const notices: string[] = [];
  if (piped !== null && piped.cutAfterBytes !== null) {
    notices.push(
      `Standard input was cut after its first ${formatBytes(piped.cutAfterBytes)}; the rest was not read`,
    );
  }
  const context = piped === null || piped.text.trim() === "" ? null : piped;
  if (context?.notUtf8) {
    notices.push(
      "Standard input is not valid UTF-8 text: the model gets U+FFFD (\uFFFD) in place of each byte that is " +
        "not; convert it first (for example iconv -f LATIN1 -t UTF-8), or name a text file in the prompt instead",
    );
  }
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
  return `${PIPED_INPUT_LEAD}\n<${tag}>\n${text}</${tag}>${cutNote(context)}\n\n` +
    `${instruction}`;
}

function cutNote(context: StdinText): string {
  return context.cutAfterBytes === null
    ? ""
    : `\n(Standard input was longer: only its first ${formatBytes(context.cutAfterBytes)} are shown.)`;
}

/** Bytes asked for per read. */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * Standard input left unread: it sent nothing within `leftAfterMs`. `sent` settles with the read still
 * pending: true when it brings bytes, false at the end or on an error.
 */
export interface StdinLeft {
  leftAfterMs: number;
  sent: Promise<boolean>;
}

/**
 * One read of standard input; what it was redirected from cannot be read (`< folder`) is the command
 * line's mistake, a UsageError, not a crash.
 */
async function readChunk(source: Pick<PromptSource, "read">, buffer: Uint8Array): Promise<number | null> {
  try {
    return await source.read(buffer);
  } catch (error) {
    const reason = error instanceof Deno.errors.IsADirectory
      ? "it is a directory"
      : error instanceof Error
      ? error.message
      : String(error);
    throw new UsageError(
      `Cannot read standard input: ${reason}; give it a file, a command's output or nothing`,
    );
  }
}

/**
 * Reads a source to its end, at most `maxBytes`. With `firstByteMs`, gives up when no byte arrives in
 * time (StdinLeft). The read still pending then (an open pipe that sends nothing) is left behind: it
 * cannot be cancelled, and it does not keep the process alive (mewcode ends with `Deno.exit`).
 */
export async function readStdin(
  source: Pick<PromptSource, "read">,
  options: { maxBytes: number; firstByteMs: number | null },
): Promise<StdinText | StdinLeft> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  while (true) {
    // One byte more than the cap allows tells a cut from an input of exactly the cap.
    const buffer = new Uint8Array(Math.min(READ_CHUNK_BYTES, options.maxBytes - size + 1));
    const waiting = size === 0 && options.firstByteMs !== null;
    const reading = readChunk(source, buffer);
    const read = waiting ? await withDeadline(reading, options.firstByteMs!) : await reading;
    if (read === "timeout") {
      const sent = reading.then((count) => count !== null && count > 0, () => false);
      return { leftAfterMs: options.firstByteMs!, sent };
    }
    if (read === null) break;
    const room = options.maxBytes - size;
    chunks.push(buffer.subarray(0, Math.min(read, room)));
    size += Math.min(read, room);
    if (read > room) {
      cut = true;
      break;
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  // `stream: true` drops a character cut in half at the cap instead of showing a replacement mark.
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: cut });
    return { text, cutAfterBytes: cut ? size : null };
  } catch {
    const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes, { stream: cut });
    return { text, cutAfterBytes: cut ? size : null, notUtf8: true };
  }
}
