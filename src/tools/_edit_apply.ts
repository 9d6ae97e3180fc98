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

/** A change in the new text: where the inserted text starts and how long it is. */
export interface Change {
  start: number;
  length: number;
}

/** The text an edit leaves, with where it changed; or why it cannot be applied (`reason`: a short code). */
export type EditOutcome =
  | { ok: true; text: string; changes: Change[]; flexible?: boolean }
  | { ok: false; reason: string; message: string };

/**
 * Applies an edit to a file's text exactly as EditFile does (without the final-newline rule: see
 * `keepFinalNewline`): exact matches tried with the file's line endings, exactly one unless `replace_all`,
 * then the one whitespace-flexible fallback. Also used to preview an edit before it is approved.
 */
export function applyEdit(
  text: string,
  eol: LineEnding,
  input: Pick<EditFileInput, "old_string" | "new_string" | "replace_all">,
): EditOutcome {
  const replacement = withLineEnding(input.new_string, eol);
  const variants = [...new Set([withLineEnding(input.old_string, eol), input.old_string])];
  for (const needle of variants) {
    const positions = findAll(text, needle);
    if (positions.length === 0) continue;
    if (positions.length > 1 && input.replace_all !== true) {
      const lines = positions.slice(0, 10).map((position) => lineNumberAt(text, position));
      return {
        ok: false,
        reason: "ambiguous",
        message: `old_string occurs ${positions.length} times in the file (at lines ${lines.join(", ")}${
          positions.length > 10 ? ", …" : ""
        }); add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence`,
      };
    }
    return replaceAt(
      text,
      positions.map((start) => ({ start, end: start + needle.length, text: replacement })),
    );
  }
  const flexible = flexibleMatch(text, input.old_string, input.new_string, eol);
  if (flexible.kind === "one") return { ...replaceAt(text, [flexible.replacement]), flexible: true };
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

function findAll(text: string, needle: string): number[] {
  const positions: number[] = [];
  let index = text.indexOf(needle);
  while (index !== -1) {
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
