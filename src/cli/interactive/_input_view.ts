/**
 * Draws the prompt's input on the terminal and redraws it after every change. The input is laid out into
 * screen rows by display width (wide characters take two cells and never straddle the right edge), rows are
 * separated by explicit CR LF rather than the terminal's own wrapping (whose deferred-wrap behaviour differs
 * between terminals), and a redraw goes back up to the first row, erases to the end of the screen and draws
 * again. Lines shown under the input (completion candidates) are part of the drawing.
 *
 * @module
 */
import { displayWidth } from "../_terminal_text.ts";
import { type Unit, unitDisplay, unitWidth } from "./_edit_buffer.ts";

/** A prompt as written (it may carry SGR colour codes) and the cells it takes. */
export interface PromptText {
  text: string;
  width: number;
}

/** The input laid out in rows, with the cursor's row and column. */
export interface Frame {
  rows: string[];
  cursorRow: number;
  cursorColumn: number;
}

/** A prompt whose width ignores the SGR sequences (`ESC [ … m`) it may contain. */
export function promptText(text: string): PromptText {
  // deno-lint-ignore no-control-regex -- matching ESC is the point: colour codes take no cells
  return { text, width: displayWidth(text.replace(/\x1b\[[0-9;:]*m/g, "")) };
}

/** Lays the input out in rows `columns` wide: the first behind `prompt`, each later line behind `continuation`. */
export function layoutInput(
  units: readonly Unit[],
  cursor: number,
  options: { prompt: PromptText; continuation: PromptText; columns: number },
): Frame {
  const { columns } = options;
  const rows: string[] = [];
  let row = options.prompt.text;
  let column = options.prompt.width;
  let cursorAt: [number, number] = [0, column];
  for (let index = 0; index <= units.length; index++) {
    if (index === cursor) cursorAt = [rows.length, column];
    const unit = units[index];
    if (unit === undefined) break;
    if (unit === "\n") {
      rows.push(row);
      row = options.continuation.text;
      column = options.continuation.width;
      continue;
    }
    // A paste's label may break across rows; a cluster may not.
    const pieces = typeof unit === "string" ? [unit] : [...unitDisplay(unit)];
    for (const piece of pieces) {
      const width = typeof unit === "string" ? unitWidth(unit) : displayWidth(piece);
      if (column + width > columns && column > 0) {
        rows.push(row);
        row = "";
        column = 0;
      }
      row += typeof unit === "string" ? unitDisplay(unit) : piece;
      column += width;
    }
  }
  rows.push(row);
  let [cursorRow, cursorColumn] = cursorAt;
  // A cursor just past a full row sits at the start of the next row, which exists unless the input ends there.
  if (cursorColumn >= columns) {
    const nextIsNewline = units[cursor] === "\n";
    if (nextIsNewline) {
      cursorColumn = columns - 1;
    } else {
      cursorRow++;
      cursorColumn = 0;
      if (cursorRow >= rows.length) rows.push("");
    }
  }
  return { rows, cursorRow, cursorColumn };
}

/** Where the last drawing left the cursor, so the next one can find its first row. */
export class InputView {
  /** The cursor's row counted from the drawing's first row. */
  #cursorRow = 0;

  /** Forgets the last drawing, for a fresh one below it or on a cleared screen. */
  reset(): void {
    this.#cursorRow = 0;
  }

  /**
   * The bytes that replace the last drawing with `frame` and the `below` lines, at most `maxRows` rows in all:
   * lines below go first, then input rows far from the cursor.
   */
  draw(frame: Frame, below: readonly string[], maxRows: number): string {
    const limit = Math.max(1, maxRows);
    const first = Math.max(0, frame.cursorRow - (limit - 1));
    const inputRows = frame.rows.slice(first, first + limit);
    const rows = [...inputRows, ...below.slice(0, Math.max(0, limit - inputRows.length))];
    const cursorRow = frame.cursorRow - first;
    let output = this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A` : "";
    output += "\r\x1b[J" + rows.join("\r\n");
    const up = rows.length - 1 - cursorRow;
    if (up > 0) output += `\x1b[${up}A`;
    output += "\r";
    if (frame.cursorColumn > 0) output += `\x1b[${frame.cursorColumn}C`;
    this.#cursorRow = cursorRow;
    return output;
  }

  /** Redraws `frame` whole (however tall) with the cursor after it, and leaves the cursor on a new line. */
  finish(frame: Frame): string {
    let output = this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A` : "";
    output += "\r\x1b[J" + frame.rows.join("\r\n") + "\r\n";
    this.#cursorRow = 0;
    return output;
  }
}
