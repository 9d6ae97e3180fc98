/**
 * The loop's guards: identical repeated calls, and tool results too large to send.
 * (The third guard, `maxTurns`, is a counter in the loop.)
 *
 * @module
 */
import { join } from "../common/path.ts";
import type { CallResult } from "../execution/call_outcome.ts";
import { errorResult } from "../tools/results.ts";
import type { ToolResult } from "../tools/tool.ts";

/** Calls with the same tool and input this many times in a row are not run again. */
export const DEFAULT_REPEAT_LIMIT = 3;
/** Results longer than this many characters are saved to a file and replaced by a preview. */
export const DEFAULT_MAX_RESULT_CHARS = 30_000;
/** Tools that page their own output and are never cut (ReadFile pages with offset and limit). */
export const DEFAULT_RESULT_LIMIT_EXEMPT: readonly string[] = ["ReadFile"];

/** A RepeatGuard's streak: the last call's key and how many times in a row it came. */
export interface RepeatStreak {
  readonly last: string | null;
  readonly count: number;
}

/** Counts identical calls in a row (same tool, same input, keys in any order) across the whole run. */
export class RepeatGuard {
  #limit: number;
  #last: string | null = null;
  #count = 0;

  constructor(limit: number = DEFAULT_REPEAT_LIMIT) {
    if (!Number.isInteger(limit) || limit < 2) {
      throw new RangeError(`Invalid repeat limit ${limit}: expected 2 or more`);
    }
    this.#limit = limit;
  }

  /** Records a call; returns the result to give instead of running it when it repeats too often, else null. */
  check(name: string, input: unknown): CallResult | null {
    const key = `${name}\u0000${canonicalJson(input)}`;
    this.#count = key === this.#last ? this.#count + 1 : 1;
    this.#last = key;
    if (this.#count < this.#limit) return null;
    const result = errorResult(
      `${name} was not run: this is the ${
        ordinal(this.#count)
      } identical ${name} call in a row, with the same ` +
        "input, and it would give the same result. Use the result you already have, or change the input or " +
        "the approach",
      { guard: "repeat", repeats: this.#count },
    );
    return { result, outcome: { status: "cancelled", gate: "guard" } };
  }

  /** The streak as it stands, for `restore` when the calls checked after it are discarded. */
  save(): RepeatStreak {
    return { last: this.#last, count: this.#count };
  }

  /** Goes back to a saved streak (a response that broke off is discarded, and its calls with it). */
  restore(streak: RepeatStreak): void {
    this.#last = streak.last;
    this.#count = streak.count;
  }

  /** Breaks the streak (for example after a call whose input could not be read). */
  reset(): void {
    this.#last = null;
    this.#count = 0;
  }
}

/** How `limitResultSize` treats a result. */
export interface ResultLimitOptions {
  toolName: string;
  callId: string;
  maxChars: number;
  exempt: readonly string[];
  /** The folder for full outputs; null to only cut the result. */
  dir: string | null;
}

const PREVIEW_HEAD = 4_000;
const PREVIEW_TAIL = 1_000;

/**
 * Returns the result unchanged when it is short enough or exempt; otherwise saves the full content to
 * `<dir>/tool-results/<call id>.txt` and returns a preview (head and tail) with the file's path.
 */
export async function limitResultSize(result: ToolResult, options: ResultLimitOptions): Promise<ToolResult> {
  const { content } = result;
  if (content.length <= options.maxChars || options.exempt.includes(options.toolName)) return result;
  let savedPath: string | null = null;
  if (options.dir !== null) {
    const folder = join(options.dir, "tool-results");
    const file = join(folder, `${options.callId.replace(/[^A-Za-z0-9_-]/g, "_")}.txt`);
    try {
      await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
      await Deno.writeTextFile(file, content, { mode: 0o600 });
      savedPath = file;
    } catch {
      savedPath = null;
    }
  }
  const head = content.slice(0, PREVIEW_HEAD);
  const tail = content.slice(-PREVIEW_TAIL);
  const omitted = content.length - head.length - tail.length;
  const where = savedPath === null
    ? "The full output could not be saved."
    : `The full output was saved to ${savedPath} (outside the workspace, for the user).`;
  const preview = `${head}\n\n[... ${omitted} characters omitted ...]\n\n${tail}\n\n` +
    `[The ${options.toolName} output was ${content.length} characters, above the ${options.maxChars}-character ` +
    `limit, so only its first ${head.length} and last ${tail.length} characters are shown. ${where} ` +
    "To see the rest, narrow the request: a more specific pattern or path, or fewer lines.]";
  return {
    content: preview,
    isError: result.isError,
    metadata: { ...result.metadata, truncated: true, originalChars: content.length, savedPath },
  };
}

/** JSON with object keys sorted at every level, so equal inputs give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }) ?? "undefined";
}

function ordinal(count: number): string {
  const suffix = count % 10 === 1 && count % 100 !== 11
    ? "st"
    : count % 10 === 2 && count % 100 !== 12
    ? "nd"
    : count % 10 === 3 && count % 100 !== 13
    ? "rd"
    : "th";
  return `${count}${suffix}`;
}
