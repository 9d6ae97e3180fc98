/**
 * How EditFile changes a file's text, without touching the file: the exact search (with the file's line
 * endings), the one whitespace-flexible fallback, and the final-newline rule. The tool's runner applies it,
 * and the interactive session previews an edit with it before it is approved.
 *
 * @module
 */
import { flexibleMatch, notFoundMessage, type Replacement } from "./_edit_match.ts";
import { type LineEnding, withLineEnding } from "./_text.ts";
import type { EditFileInput } from "./edit_file.ts";

/**
 * The largest file an edit may produce, in bytes, and the longest text, in UTF-16 code units: 256 MiB, the
 * largest file the tools read (`MAX_READ_BYTES` in `_fs.ts`, not imported because this module also loads in
 * the main process for the edit preview, and `_fs.ts` brings node:fs). A bigger result could be neither
 * read back by ReadFile nor edited again; every encoding the tools write takes at least a byte per code
 * unit, so a file within the byte bound is never refused for its characters. At that size an edit was
 * measured at about 1.1 GB of the workers' 1.5 GB heap (scripts/runtime_flags.txt); without a bound,
 * replace_all grew the text until the heap ran out and V8 aborted the whole process, not just the worker.
 */
export const MAX_EDIT_BYTES = 256 * 1024 * 1024;

/**
 * The most occurrences one edit may replace. Each costs about 100 bytes of heap while the text is built
 * (the `Change` it records and the pieces joined), so a million stay near 100 MB beside the text itself;
 * 60 million single-letter replacements in a 60 MB file exhausted the heap even though the file kept its
 * size. A rewrite of that many places is a job for a stream editor (sed through Bash).
 */
export const MAX_REPLACEMENTS = 1_000_000;

/**
 * The most lines a file may have for the whitespace-flexible fallback and the closest-region search to run
 * when old_string is not found exactly. Both hold an object or two per line of the file: 12 million short
 * lines (a 58 MB file) took them past the workers' 1.5 GB heap, and V8 aborted the whole process, not just
 * the worker. At this bound they stay near 250 MB; past it only the exact search runs.
 */
export const MAX_FALLBACK_LINES = 1_000_000;

/** A change in the new text: where the inserted text starts and how long it is. */
export interface Change {
  start: number;
  length: number;
}

/** The text an edit leaves, with where it changed; or why it cannot be applied (`reason`: a short code). */
export type EditOutcome =
  | { ok: true; text: string; changes: Change[]; flexible?: boolean }
  | { ok: false; reason: string; message: string };

/** Bounds on what one edit may build, checked before anything is built; tests lower them. */
export interface EditLimits {
  /** The most UTF-16 code units the new text may have. Default `MAX_EDIT_BYTES`. */
  maxChars?: number;
  /** The most occurrences replace_all may replace. Default `MAX_REPLACEMENTS`. */
  maxReplacements?: number;
  /**
   * Bounds the file the edit would write, when the caller knows its encoding: `fileBytes` is its size now,
   * `byteLength` sizes a string in its encoding, `maxBytes` is the bound (the runner uses `MAX_EDIT_BYTES`).
   */
  encoded?: { fileBytes: number; byteLength(text: string): number; maxBytes: number };
}

/**
 * Applies an edit to a file's text exactly as EditFile does (without the final-newline rule: see
 * `keepFinalNewline`): exact matches tried with the file's line endings, exactly one unless `replace_all`,
 * then the one whitespace-flexible fallback. Also used to preview an edit before it is approved. An edit
 * whose result would exceed `limits` is refused (`reason: "too-large"`) before the new text is built.
 */
export function applyEdit(
  text: string,
  eol: LineEnding,
  input: Pick<EditFileInput, "old_string" | "new_string" | "replace_all">,
  limits: EditLimits = {},
): EditOutcome {
  const replacement = withLineEnding(input.new_string, eol);
  const variants = [...new Set([withLineEnding(input.old_string, eol), input.old_string])];
  for (const needle of variants) {
    if (needle === "") continue;
    const count = countOccurrences(text, needle);
    if (count === 0) continue;
    if (count > 1 && input.replace_all !== true) {
      const lines = firstOccurrences(text, needle, 10).map((position) => lineNumberAt(text, position));
      return {
        ok: false,
        reason: "ambiguous",
        message: `old_string occurs ${count} times in the file (at lines ${lines.join(", ")}${
          count > 10 ? ", …" : ""
        }); add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence`,
      };
    }
    const tooLarge = sizeProblem(text, { count, removed: needle, inserted: replacement }, limits);
    if (tooLarge !== null) return tooLarge;
    return replaceEvery(text, needle, replacement);
  }
  const lines = countLinesUpTo(text, MAX_FALLBACK_LINES + 1);
  if (lines > MAX_FALLBACK_LINES) {
    return {
      ok: false,
      reason: "not-found",
      message:
        `old_string was not found exactly in the file; it has more than ${MAX_FALLBACK_LINES} lines, ` +
        "too many to look for a whitespace-flexible match or the closest region. Copy old_string exactly from " +
        "ReadFile output, without the line-number prefixes (Grep finds where a line is)",
    };
  }
  const flexible = flexibleMatch(text, input.old_string, input.new_string, eol);
  if (flexible.kind === "one") {
    const { start, end, text: inserted } = flexible.replacement;
    const tooLarge = sizeProblem(text, { count: 1, removed: text.slice(start, end), inserted }, limits);
    if (tooLarge !== null) return tooLarge;
    return { ...replaceAt(text, [flexible.replacement]), flexible: true };
  }
  if (flexible.kind === "many") {
    return {
      ok: false,
      reason: "not-found",
      message:
        `old_string was not found exactly; ignoring whitespace it matches ${flexible.lines.length} places ` +
        `(at lines ${flexible.lines.slice(0, 10).join(", ")}), so no fallback was applied. ` +
        "Copy old_string exactly from ReadFile output, with enough surrounding lines to make it unique",
    };
  }
  return { ok: false, reason: "not-found", message: notFoundMessage(text, input.old_string) };
}

/** What an edit would replace: `count` occurrences of `removed`, each by `inserted`. */
interface Planned {
  count: number;
  removed: string;
  inserted: string;
}

// The result's size follows from the counts alone: original + count × (inserted − removed), in characters
// and, when the encoding is known, in bytes (the matched text is in the file, so `byteLength(removed)` is
// what each occurrence takes there). The final-newline rule may add one line break: allowed for.
function sizeProblem(text: string, planned: Planned, limits: EditLimits): EditOutcome & { ok: false } | null {
  const { count, removed, inserted } = planned;
  const occurrences = `${count} occurrence${count === 1 ? "" : "s"}`;
  const instead = count === 1
    ? "make a smaller change, or use Bash for a file this large"
    : "edit a smaller part (without replace_all) or use Bash";
  const encoded = limits.encoded;
  if (encoded !== undefined) {
    const bytes = encoded.fileBytes +
      count * (encoded.byteLength(inserted) - encoded.byteLength(removed)) + encoded.byteLength("\r\n");
    if (bytes > encoded.maxBytes) {
      return {
        ok: false,
        reason: "too-large",
        message: `replacing ${occurrences} would make it ${megabytes(bytes)} MB, more than the ` +
          `${megabytes(encoded.maxBytes)} MB an edit may produce; ${instead}`,
      };
    }
  }
  const maxChars = limits.maxChars ?? MAX_EDIT_BYTES;
  const chars = text.length + count * (inserted.length - removed.length) + 2;
  if (chars > maxChars) {
    return {
      ok: false,
      reason: "too-large",
      message: `replacing ${occurrences} would make it ${millions(chars)} million characters long, more ` +
        `than the ${millions(maxChars)} million an edit may produce; ${instead}`,
    };
  }
  const maxReplacements = limits.maxReplacements ?? MAX_REPLACEMENTS;
  if (count > maxReplacements) {
    return {
      ok: false,
      reason: "too-large",
      message:
        `old_string occurs ${count} times, more than the ${maxReplacements} replacements an edit may ` +
        "make; use a longer old_string that occurs less often, or rewrite the file with Bash (sed)",
    };
  }
  return null;
}

// Sizes in messages: MiB (the unit of the read limit), written "MB" as people say it; whole numbers from 10.
function megabytes(size: number): string {
  return rounded(size / (1 << 20));
}

function millions(count: number): string {
  return rounded(count / 1e6);
}

function rounded(value: number): string {
  return value >= 10 ? value.toFixed(0) : value.toFixed(1);
}

// Every occurrence, in one pass that keeps only the pieces to join: no list of positions or replacement
// objects (60 million of those exhausted the heap), and one copy of the result, made by the final join.
function replaceEvery(text: string, needle: string, replacement: string): EditOutcome & { ok: true } {
  const parts: string[] = [];
  const changes: Change[] = [];
  let cursor = 0;
  let length = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, cursor)) {
    parts.push(text.slice(cursor, index), replacement);
    length += index - cursor;
    changes.push({ start: length, length: replacement.length });
    length += replacement.length;
    cursor = index + needle.length;
  }
  parts.push(text.slice(cursor));
  return { ok: true, text: parts.join(""), changes };
}

// Builds the new text from non-overlapping replacements in order; inserted text is never a pattern.
function replaceAt(text: string, replacements: readonly Replacement[]): EditOutcome & { ok: true } {
  const parts: string[] = [];
  const changes: Change[] = [];
  let cursor = 0;
  let length = 0;
  for (const replacement of replacements) {
    const kept = text.slice(cursor, replacement.start);
    parts.push(kept, replacement.text);
    length += kept.length;
    changes.push({ start: length, length: replacement.text.length });
    length += replacement.text.length;
    cursor = replacement.end;
  }
  parts.push(text.slice(cursor));
  return { ok: true, text: parts.join(""), changes };
}

// The lines of a text (a final line break starts no line), counting no further than `most`: the work stays
// bounded by it, not by the file.
function countLinesUpTo(text: string, most: number): number {
  let breaks = 0;
  for (let index = text.indexOf("\n"); index !== -1 && breaks < most; index = text.indexOf("\n", index + 1)) {
    breaks++;
  }
  return breaks >= most || text.endsWith("\n") ? breaks : breaks + 1;
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    count++;
  }
  return count;
}

function firstOccurrences(text: string, needle: string, most: number): number[] {
  const positions: number[] = [];
  let index = text.indexOf(needle);
  while (index !== -1 && positions.length < most) {
    positions.push(index);
    index = text.indexOf(needle, index + needle.length);
  }
  return positions;
}

/** The file's final-newline state is kept: an edit neither adds nor removes the last line break. */
export function keepFinalNewline(before: string, after: string, eol: LineEnding): string {
  if (before === "" || after === "") return after;
  const had = before.endsWith("\n");
  const has = after.endsWith("\n");
  if (had && !has) return after + eol;
  if (!had && has) return after.endsWith("\r\n") ? after.slice(0, -2) : after.slice(0, -1);
  return after;
}

function lineNumberAt(text: string, position: number): number {
  let line = 1;
  let index = text.indexOf("\n");
  while (index !== -1 && index < position) {
    line++;
    index = text.indexOf("\n", index + 1);
  }
  return line;
}
