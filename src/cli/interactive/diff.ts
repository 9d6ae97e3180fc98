/**
 * What a WriteFile or EditFile call changes, as a unified diff for people: numbered lines, "+"/"-" prefixes
 * (green and red with colours), a few lines of context and a cut with a count when it is long. Also the text
 * an EditFile call would produce, for the approval question before it runs.
 *
 * @module
 */
import { structuredPatch } from "diff";
import { assertNever } from "../../common/errors.ts";
import { detectLineEnding } from "../../tools/_text.ts";
import { applyEdit, keepFinalNewline } from "../../tools/edit_file.ts";
import { cut, sanitize } from "../_terminal_text.ts";
import { breakSpans, expandTabs, type Style } from "./style.ts";

/** Lines shown around each change by default. */
export const DIFF_CONTEXT_LINES = 3;
/** Lines a diff is cut to by default. */
export const DIFF_MAX_LINES = 40;
/** Past this many changed lines a diff is not computed (its cost grows with the size of the change). */
const MAX_EDIT_LENGTH = 2_000;

/** What to compare and how much room the diff has. */
export interface EditDiffOptions {
  /** The file's text before the call; null when the call creates the file. */
  before: string | null;
  after: string;
  /** Unchanged lines shown around each change; default 3. */
  context?: number;
  /** Lines shown at most, the last of them saying how many more there are; default 40. */
  maxLines?: number;
  /** Terminal columns; longer lines are cut, or broken into rows with `wrap`. */
  width: number;
  style: Style;
  /**
   * Break a long line into rows instead of cutting it (for the approval question: what a cut hides, a
   * command at the end of a long line, would be approved unseen). `maxLines` then counts rows.
   */
  wrap?: boolean;
  /**
   * Compare the texts as they are: a line that gains or loses a CR, or a byte order mark, is a change, a CR
   * shows as ␍, and trailing blanks show (· for a space, → for a tab). Default: both ignored.
   */
  exact?: boolean;
}

/** A diff ready to print, and how many lines it adds and removes. */
export interface EditDiff {
  lines: string[];
  added: number;
  removed: number;
  /** Whether part of the change is not shown: rows past `maxLines`, or a change too large to diff. */
  partial: boolean;
}

interface DiffRow {
  kind: "context" | "added" | "removed" | "gap" | "note";
  number: number | null;
  text: string;
}

/**
 * The diff of a file's text, line by line. Line endings and a byte order mark are ignored, so that a CRLF
 * file does not show every line changed; a new file is all additions.
 */
export function editDiff(options: EditDiffOptions): EditDiff {
  const style = options.style;
  const normalized = options.exact === true ? (text: string) => text : normalize;
  const after = normalized(options.after);
  const rows = options.before === null
    ? creationRows(after)
    : changeRows(normalized(options.before), after, options.context ?? DIFF_CONTEXT_LINES);
  if (rows === null) {
    return {
      lines: [
        style.dim(`The change is too large to show as a diff (more than ${MAX_EDIT_LENGTH} changed lines)`),
      ],
      added: 0,
      removed: 0,
      partial: true,
    };
  }
  const added = rows.filter((row) => row.kind === "added").length;
  const removed = rows.filter((row) => row.kind === "removed").length;
  if (rows.length === 0) {
    return { lines: [style.dim("No changes to the content")], added, removed, partial: false };
  }
  const maxLines = Math.max(1, options.maxLines ?? DIFF_MAX_LINES);
  const numberWidth = String(rows.reduce((widest, row) => Math.max(widest, row.number ?? 0), 0)).length;
  const render = (row: DiffRow, width: number) =>
    renderRow(row, width, options.width, style, options.wrap === true, options.exact === true);
  const rendered = rows.map((row) => render(row, numberWidth));
  const total = rendered.reduce((sum, row) => sum + row.length, 0);
  if (total <= maxLines) return { lines: rendered.flat(), added, removed, partial: false };
  let used = 0;
  let shownRows = 0;
  for (const row of rendered) {
    if (used + row.length > maxLines - 1) break;
    used += row.length;
    shownRows++;
  }
  // Numbered as wide as the shown rows need.
  const shown = rows.slice(0, shownRows);
  const shownWidth = String(shown.reduce((widest, row) => Math.max(widest, row.number ?? 0), 0)).length;
  const lines = shown.flatMap((row) => render(row, shownWidth));
  const hidden = rows.length - shownRows;
  lines.push(style.dim(`… ${hidden} more line${hidden === 1 ? "" : "s"}`));
  return { lines, added, removed, partial: true };
}

function normalize(text: string): string {
  return text.replace(/^\ufeff/, "").replaceAll("\r\n", "\n");
}

function creationRows(text: string): DiffRow[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line, index) => ({ kind: "added", number: index + 1, text: line }));
}

function changeRows(before: string, after: string, context: number): DiffRow[] | null {
  if (before === after) return [];
  const patch = structuredPatch("", "", before, after, undefined, undefined, {
    context: Math.max(0, context),
    maxEditLength: MAX_EDIT_LENGTH,
  });
  if (patch === undefined) return null;
  const rows: DiffRow[] = [];
  for (const hunk of patch.hunks) {
    if (rows.length > 0) rows.push({ kind: "gap", number: null, text: "" });
    let oldNumber = hunk.oldStart;
    let newNumber = hunk.newStart;
    let previous: string | undefined;
    for (const line of hunk.lines) {
      const text = line.slice(1);
      switch (line[0]) {
        case "+":
          rows.push({ kind: "added", number: newNumber++, text });
          break;
        case "-":
          rows.push({ kind: "removed", number: oldNumber++, text });
          break;
        case "\\":
          // Only worth saying where the final newline is what changed.
          if (previous === "+" || previous === "-") {
            rows.push({ kind: "note", number: null, text: "no newline at end of file" });
          }
          break;
        default:
          rows.push({ kind: "context", number: newNumber, text });
          oldNumber++;
          newNumber++;
      }
      previous = line[0];
    }
  }
  return rows;
}

/** A row's printed lines: one, or with `wrap` as many as its text needs. */
function renderRow(
  row: DiffRow,
  numberWidth: number,
  width: number,
  style: Style,
  wrap: boolean,
  exact: boolean,
): string[] {
  const blank = " ".repeat(numberWidth);
  switch (row.kind) {
    case "gap":
      return [style.dim(`${blank} ⋮`)];
    case "note":
      return [style.dim(`${blank}   \\ ${row.text}`)];
    case "context":
    case "added":
    case "removed": {
      const number = String(row.number).padStart(numberWidth);
      const sign = row.kind === "added" ? "+" : row.kind === "removed" ? "-" : " ";
      const room = Math.max(1, width - numberWidth - 3);
      const clean = exact ? showBlanks(row.text) : sanitize(expandTabs(row.text));
      const pieces = wrap
        ? breakSpans([{ text: clean, styles: [] }], room).map((spans) =>
          spans.map((span) => span.text).join("")
        )
        : [cut(clean, room, "start")];
      return pieces.map((piece, index) => {
        const line = `${index === 0 ? sign : " "} ${piece}`.trimEnd();
        const shownNumber = index === 0 ? style.dim(number) : blank;
        if (row.kind === "added") return `${shownNumber} ${style.green(line)}`;
        if (row.kind === "removed") return `${shownNumber} ${style.red(line)}`;
        return `${shownNumber} ${line}`;
      });
    }
    default:
      return assertNever(row.kind);
  }
}

/** A line with its CR (␍) and trailing blanks (· a space, → a tab) shown, inner tabs expanded. */
function showBlanks(text: string): string {
  const body = text.replace(/[ \t\r]+$/, "");
  const trailing = text.slice(body.length).replaceAll(" ", "·").replaceAll("\t", "→").replaceAll("\r", "␍");
  return sanitize(expandTabs(body)) + trailing;
}

/** The fields of an EditFile input that decide its result. */
export interface EditInput {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** The text an EditFile call would leave, or why it would fail. */
export type EditPreview =
  | { ok: true; after: string; replacements: number; flexible: boolean }
  | { ok: false; reason: string };

/**
 * Applies an EditFile input to a file's current text (null: the file does not exist) as EditFile does:
 * exact matches, tried with the file's line endings; exactly one unless `replace_all`; the one
 * whitespace-flexible fallback; an empty old_string creates a file or fills an empty one; the file keeps
 * its line endings, byte order mark and final-newline state.
 */
export function previewEdit(fileContent: string | null, input: EditInput): EditPreview {
  if (input.old_string === input.new_string) {
    return { ok: false, reason: "old_string and new_string are identical, so there is nothing to change" };
  }
  if (fileContent === null) {
    if (input.old_string !== "") return { ok: false, reason: "the file does not exist" };
    return { ok: true, after: input.new_string, replacements: 0, flexible: false };
  }
  const bom = fileContent.startsWith("\ufeff") ? "\ufeff" : "";
  const text = fileContent.slice(bom.length);
  if (input.old_string === "") {
    if (text !== "") {
      return { ok: false, reason: "old_string is empty but the file already exists and is not empty" };
    }
    return { ok: true, after: bom + input.new_string, replacements: 0, flexible: false };
  }
  const eol = detectLineEnding(text);
  const edit = applyEdit(text, eol, input);
  if (!edit.ok) return { ok: false, reason: edit.message };
  return {
    ok: true,
    after: bom + keepFinalNewline(text, edit.text, eol),
    replacements: edit.changes.length,
    flexible: edit.flexible ?? false,
  };
}
