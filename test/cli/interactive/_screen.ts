/**
 * A small VT100 screen for tests: enough of xterm's behaviour to show what a user would see after the line
 * editor's output — printing with wide characters and deferred wrap at the right edge, CR, LF (scrolling into
 * a scrollback), BS, and CSI A B C D G H J K, with SGR ignored and DEC private modes recorded. Any other
 * control character is recorded in `unexpected`, so a test can prove none reached the terminal.
 *
 * @module
 */
import { displayWidth } from "../../../src/cli/_terminal_text.ts";

/** A screen `columns` wide and `rows` high, empty, cursor at the top left. */
export class Screen {
  columns: number;
  rows: number;
  /** Lines scrolled off the top. */
  readonly scrollback: string[] = [];
  /** DEC private modes last set (true) or reset (false), e.g. 2004 for bracketed paste, 25 for the cursor. */
  readonly modes = new Map<number, boolean>();
  /** Control characters and escape sequences the screen does not act on, in order. */
  readonly unexpected: string[] = [];
  row = 0;
  column = 0;
  #grid: string[][];
  #pendingWrap = false;
  #escape: string | null = null;

  constructor(columns: number, rows: number) {
    this.columns = columns;
    this.rows = rows;
    this.#grid = Array.from({ length: rows }, () => this.#blankRow());
  }

  /** Changes the size as xterm does without reflow: rows are cut or padded, the bottom rows kept. */
  resize(columns: number, rows: number): void {
    this.#grid = this.#grid.map((
      cells,
    ) => [...cells.slice(0, columns), ...Array(Math.max(0, columns - cells.length)).fill(" ")]);
    while (this.#grid.length > rows) {
      this.scrollback.push((this.#grid.shift() ?? []).join("").trimEnd());
      this.row = Math.max(0, this.row - 1);
    }
    while (this.#grid.length < rows) this.#grid.push(Array(columns).fill(" "));
    this.columns = columns;
    this.rows = rows;
    this.column = Math.min(this.column, columns - 1);
    this.#pendingWrap = false;
  }

  write(text: string): void {
    for (const char of text) {
      if (this.#escape !== null) this.#continueEscape(char);
      else this.#put(char);
    }
  }

  /** The visible rows, trailing spaces trimmed. */
  get visible(): string[] {
    return this.#grid.map((cells) => cells.join("").trimEnd());
  }

  /** Scrollback and screen, without the blank rows at the bottom. */
  get text(): string {
    const lines = [...this.scrollback, ...this.visible];
    while (lines.length > 0 && lines.at(-1) === "") lines.pop();
    return lines.join("\n");
  }

  #put(char: string): void {
    switch (char) {
      case "\x1b":
        this.#escape = "";
        return;
      case "\r":
        this.column = 0;
        this.#pendingWrap = false;
        return;
      case "\n":
        this.#lineFeed();
        return;
      case "\b":
        this.column = Math.max(0, this.column - 1);
        this.#pendingWrap = false;
        return;
    }
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
      this.unexpected.push(char);
      return;
    }
    const width = displayWidth(char);
    if (width === 0) {
      const cells = this.#grid[this.row] ?? [];
      const previous = Math.max(0, this.column - (this.#pendingWrap ? 0 : 1));
      cells[previous] = (cells[previous] ?? "") + char;
      return;
    }
    if (this.#pendingWrap || this.column + width > this.columns) {
      this.column = 0;
      this.#lineFeed();
    }
    const cells = this.#grid[this.row] ?? [];
    cells[this.column] = char;
    if (width === 2) cells[this.column + 1] = "";
    if (this.column + width >= this.columns) {
      this.column = this.columns - 1;
      this.#pendingWrap = true;
    } else {
      this.column += width;
    }
  }

  #continueEscape(char: string): void {
    const sequence = this.#escape + char;
    if (sequence === "[") {
      this.#escape = sequence;
      return;
    }
    if (!sequence.startsWith("[")) {
      this.#escape = null;
      this.unexpected.push(`\x1b${sequence}`);
      return;
    }
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x40 || code > 0x7e) {
      this.#escape = sequence;
      return;
    }
    this.#escape = null;
    this.#csi(sequence.slice(1, -1), char);
  }

  #csi(params: string, final: string): void {
    if (params.startsWith("?") && (final === "h" || final === "l")) {
      for (const mode of params.slice(1).split(";")) this.modes.set(Number(mode), final === "h");
      return;
    }
    const numbers = params.split(";").map((value) => Number.parseInt(value, 10));
    const count = Math.max(1, numbers[0] || 1);
    this.#pendingWrap = false;
    switch (final) {
      case "A":
        this.row = Math.max(0, this.row - count);
        return;
      case "B":
        this.row = Math.min(this.rows - 1, this.row + count);
        return;
      case "C":
        this.column = Math.min(this.columns - 1, this.column + count);
        return;
      case "D":
        this.column = Math.max(0, this.column - count);
        return;
      case "G":
        this.column = Math.min(this.columns - 1, count - 1);
        return;
      case "H":
        this.row = Math.min(this.rows - 1, count - 1);
        this.column = Math.min(this.columns - 1, Math.max(1, numbers[1] || 1) - 1);
        return;
      case "J":
        this.#eraseDisplay(numbers[0] || 0);
        return;
      case "K":
        this.#eraseLine(numbers[0] || 0);
        return;
      case "m":
        return;
    }
    this.unexpected.push(`\x1b[${params}${final}`);
  }

  #eraseDisplay(mode: number): void {
    if (mode === 2 || mode === 3) {
      this.#grid = Array.from({ length: this.rows }, () => this.#blankRow());
      return;
    }
    this.#eraseLine(mode);
    const rows = mode === 0 ? [this.row + 1, this.rows] : [0, this.row];
    for (let row = rows[0] ?? 0; row < (rows[1] ?? 0); row++) this.#grid[row] = this.#blankRow();
  }

  #eraseLine(mode: number): void {
    const cells = this.#grid[this.row] ?? [];
    const [from, to] = mode === 0
      ? [this.column, this.columns]
      : mode === 1
      ? [0, this.column + 1]
      : [0, this.columns];
    for (let column = from; column < to; column++) cells[column] = " ";
  }

  #lineFeed(): void {
    this.#pendingWrap = false;
    if (this.row < this.rows - 1) {
      this.row++;
      return;
    }
    const top = this.#grid.shift() ?? [];
    this.scrollback.push(top.join("").trimEnd());
    this.#grid.push(this.#blankRow());
  }

  #blankRow(): string[] {
    return Array.from({ length: this.columns }, () => " ");
  }
}
