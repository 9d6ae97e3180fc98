/**
 * The text being edited at the prompt, as a list of units the cursor steps over one at a time: a grapheme
 * cluster (so "é" or a flag is one step), a newline, or a collapsed paste, which is shown as a short label but
 * stands for its full text. The cursor is an index between units.
 *
 * @module
 */
import { displayWidth, sanitize } from "../_terminal_text.ts";

/** A large paste kept whole and shown as its label. */
export interface PasteChip {
  kind: "paste";
  text: string;
  label: string;
}

/** One step of the cursor: a grapheme cluster ("\n" for a line break) or a collapsed paste. */
export type Unit = string | PasteChip;

/** How a word ends: at whitespace (Ctrl+W) or at anything but a letter, digit or "_" (Alt+B/F/D). */
export type WordKind = "whitespace" | "alphanumeric";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Splits text into units; CR LF and lone CR become "\n". */
export function toUnits(text: string): Unit[] {
  return [...segmenter.segment(text.replace(/\r\n?/g, "\n"))].map((part) => part.segment);
}

/** What a unit looks like on the terminal: safe text (controls made visible) or the paste's label. */
export function unitDisplay(unit: Unit): string {
  return typeof unit === "string" ? sanitize(unit) : unit.label;
}

/** The cells a unit takes; a cluster takes at most two, whatever code points it joins. */
export function unitWidth(unit: Unit): number {
  return typeof unit === "string" ? Math.min(2, displayWidth(sanitize(unit))) : displayWidth(unit.label);
}

/** The editable text and its cursor. */
export class EditBuffer {
  units: Unit[];
  cursor: number;

  constructor(units: Unit[] = []) {
    this.units = units;
    this.cursor = units.length;
  }

  /** The full text, pastes expanded. */
  get text(): string {
    return this.units.map((unit) => (typeof unit === "string" ? unit : unit.text)).join("");
  }

  get isEmpty(): boolean {
    return this.units.length === 0;
  }

  /** Replaces everything and puts the cursor at the end. */
  set(units: Unit[]): void {
    this.units = units;
    this.cursor = units.length;
  }

  insert(units: readonly Unit[]): void {
    this.units.splice(this.cursor, 0, ...units);
    this.cursor += units.length;
  }

  /** Removes the units between two positions (in either order), puts the cursor there and returns them. */
  remove(from: number, to: number): Unit[] {
    const start = Math.max(0, Math.min(from, to));
    const end = Math.min(this.units.length, Math.max(from, to));
    const removed = this.units.splice(start, end - start);
    this.cursor = start;
    return removed;
  }

  moveTo(index: number): void {
    this.cursor = Math.max(0, Math.min(this.units.length, index));
  }

  /** Where the cursor's line starts. */
  lineStart(at = this.cursor): number {
    let index = at;
    while (index > 0 && this.units[index - 1] !== "\n") index--;
    return index;
  }

  /** Where the cursor's line ends (before its newline). */
  lineEnd(at = this.cursor): number {
    let index = at;
    while (index < this.units.length && this.units[index] !== "\n") index++;
    return index;
  }

  /** The start of the word before the cursor, past any separators first. */
  wordStart(kind: WordKind): number {
    let index = this.cursor;
    while (index > 0 && !isWordUnit(this.units[index - 1], kind)) index--;
    while (index > 0 && isWordUnit(this.units[index - 1], kind)) index--;
    return index;
  }

  /** The end of the word after the cursor, past any separators first. */
  wordEnd(kind: WordKind): number {
    let index = this.cursor;
    while (index < this.units.length && !isWordUnit(this.units[index], kind)) index++;
    while (index < this.units.length && isWordUnit(this.units[index], kind)) index++;
    return index;
  }

  /** Moves to the line above or below, keeping the column as near as it can; false when there is none. */
  moveLine(direction: -1 | 1): boolean {
    const start = this.lineStart();
    const end = this.lineEnd();
    if (direction === -1 ? start === 0 : end === this.units.length) return false;
    const column = this.#width(start, this.cursor);
    const targetStart = direction === -1 ? this.lineStart(start - 1) : end + 1;
    const targetEnd = this.lineEnd(targetStart);
    let index = targetStart;
    let used = 0;
    while (index < targetEnd) {
      const width = unitWidth(this.units[index] ?? "");
      if (used + width > column) break;
      used += width;
      index++;
    }
    this.cursor = index;
    return true;
  }

  #width(from: number, to: number): number {
    let width = 0;
    for (let index = from; index < to; index++) width += unitWidth(this.units[index] ?? "");
    return width;
  }
}

function isWordUnit(unit: Unit | undefined, kind: WordKind): boolean {
  if (unit === undefined) return false;
  if (typeof unit !== "string") return true;
  return kind === "whitespace" ? !/^\s+$/u.test(unit) : /^[\p{L}\p{N}_]/u.test(unit);
}
