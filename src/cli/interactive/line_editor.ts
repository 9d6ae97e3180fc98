/**
 * The prompt's line editor: reads one input from the terminal with Emacs-style editing, history, multi-line
 * input, collapsed large pastes and `@path` completion, and returns what was submitted.
 *
 * Keys: Enter submits, unless the character before the cursor is "\" (it becomes a line break); Shift+Enter,
 * Alt+Enter, Ctrl+Enter and Ctrl+J insert a line break. Left/Right, Ctrl+B/F move by character, Ctrl/Alt+Left/Right and
 * Alt+B/F by word; Home/End, Ctrl+A/E go to the start or end of the line, Ctrl+Home/End to the start or end of the input. Up/Down (Ctrl+P/N) move between
 * lines and, from the first or last line, through history (the draft is kept; edits to recalled entries last
 * until the prompt is submitted). Backspace/Delete, Ctrl+D (on an empty prompt: end of input), Ctrl+W and
 * Alt+Backspace (word before), Alt+D (word after), Ctrl+K/U (to the end/start of the line), Ctrl+Y (put back
 * the last deletion), Ctrl+L (clear the screen), Tab (complete `@path`), Ctrl+C (interrupt). Esc does nothing:
 * the session uses it during a turn.
 *
 * The terminal must already be in raw mode with bracketed paste on; the editor only reads keys and writes.
 * Everything typed or pasted is shown through `sanitize`, so pasted escape sequences never reach the terminal;
 * the text returned is exactly what was typed or pasted.
 *
 * @module
 */
import { describeKey, type KeyPress } from "./keys.ts";
import { EditBuffer, type PasteChip, toUnits, type Unit } from "./_edit_buffer.ts";
import { type Frame, InputView, layoutInput, type PromptText, promptText } from "./_input_view.ts";
import type { PathCompleter } from "./path_completion.ts";
import { NOT_STOPPED_NOTICE, type TerminalEvent } from "./terminal.ts";
import { assertNever } from "../../common/errors.ts";
import { cut, displayWidth, sanitize } from "../_terminal_text.ts";

/** What the editor needs of the terminal; `Terminal` provides it. */
export interface EditorTerminal {
  readonly columns: number;
  readonly rows: number;
  write(text: string): void;
  readKey(options?: { signal?: AbortSignal }): Promise<TerminalEvent | null>;
  /** Ctrl-Z: stops the process until the shell continues it; false when it was not stopped. */
  stopProcess?(): Promise<boolean>;
}

/** When a paste is collapsed into a label: more than `lines` lines or more than `chars` characters. */
export interface PasteCollapse {
  lines: number;
  chars: number;
}

/** What to read and how. */
export interface ReadLineOptions {
  terminal: EditorTerminal;
  /** Written before the first line; may contain SGR colour codes. */
  prompt: string;
  /** Written before each further line; "… " right-aligned to the prompt's width by default. */
  continuationPrompt?: string;
  /** Earlier prompts, oldest first, for Up and Down. */
  history?: readonly string[];
  /** Completes `@path` on Tab and confirms the paths returned as attachments; without it neither happens. */
  complete?: PathCompleter;
  /** Text the input starts with (a draft to put back), cursor at its end. */
  initialText?: string;
  /** 10 lines or 1000 characters by default. */
  pasteCollapse?: PasteCollapse;
  /** Aborting rejects with the signal's reason, after moving below the input. */
  signal?: AbortSignal;
}

/** How reading ended: a submitted line, end of input (Ctrl+D on an empty prompt, or input closed), or Ctrl+C. */
export type ReadLineResult =
  | { kind: "line"; text: string; attachments: string[] }
  | { kind: "eof" }
  | { kind: "interrupt"; empty: boolean };

const DEFAULT_PASTE_COLLAPSE: PasteCollapse = { lines: 10, chars: 1000 };
/** Rows of completion candidates shown under the input at most. */
const MAX_CANDIDATE_ROWS = 6;
/** Characters that may end a sentence after an `@path` without being part of it. */
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/;

/** Reads one input from the terminal; see the module documentation. */
export async function readLine(options: ReadLineOptions): Promise<ReadLineResult> {
  const editor = new LineEditor(options);
  return await editor.run();
}

type Outcome = ReadLineResult | null;

class LineEditor {
  #options: ReadLineOptions;
  #terminal: EditorTerminal;
  #prompt: PromptText;
  #continuation: PromptText;
  #history: readonly string[];
  #buffer: EditBuffer;
  #view = new InputView();
  /** Which history entry is shown: `history.length` is the draft. */
  #historyIndex: number;
  /** Entries edited while shown (the draft included), by index. */
  #edited = new Map<number, Unit[]>();
  #killed: Unit[] = [];
  /** Completion candidates shown under the input until the next key. */
  #listing: string[] = [];

  constructor(options: ReadLineOptions) {
    this.#options = options;
    this.#terminal = options.terminal;
    this.#prompt = promptText(options.prompt);
    this.#continuation = promptText(options.continuationPrompt ?? defaultContinuation(this.#prompt.width));
    this.#history = [...(options.history ?? [])];
    this.#historyIndex = this.#history.length;
    this.#buffer = new EditBuffer(toUnits(options.initialText ?? ""));
  }

  async run(): Promise<ReadLineResult> {
    this.#render();
    try {
      while (true) {
        const event = await this.#terminal.readKey(
          this.#options.signal ? { signal: this.#options.signal } : {},
        );
        if (event === null) return this.#finish({ kind: "eof" });
        const outcome = await this.#handle(event);
        if (outcome !== null) return this.#finish(outcome);
        this.#render();
      }
    } catch (error) {
      this.#finish(null);
      throw error;
    }
  }

  async #handle(event: TerminalEvent): Promise<Outcome> {
    this.#listing = [];
    switch (event.type) {
      case "text":
        this.#insert(toUnits(event.text));
        return null;
      case "paste":
        this.#insert(this.#pasted(event.text));
        return null;
      case "key":
        return await this.#key(event);
      case "resize":
        return null;
      case "unknown":
        return null;
      default:
        return assertNever(event);
    }
  }

  async #key(key: KeyPress): Promise<Outcome> {
    const buffer = this.#buffer;
    switch (describeKey(key)) {
      case "enter":
        if (buffer.units[buffer.cursor - 1] === "\\") {
          buffer.remove(buffer.cursor - 1, buffer.cursor);
          this.#insert(["\n"]);
          return null;
        }
        return { kind: "line", text: buffer.text, attachments: await this.#attachments() };
      case "shift-enter":
      case "alt-enter":
      case "ctrl-enter":
      case "ctrl-j":
        this.#insert(["\n"]);
        return null;
      case "ctrl-c":
        return { kind: "interrupt", empty: buffer.isEmpty };
      case "ctrl-z":
        if (this.#terminal.stopProcess === undefined) return null;
        // The input stays on the screen above the shell's lines, and is drawn again, as it was, below them.
        this.#terminal.write(this.#view.finish(this.#frame(-1)));
        if (!await this.#terminal.stopProcess()) {
          this.#terminal.write(`${NOT_STOPPED_NOTICE}\r\n`);
        }
        return null;
      case "ctrl-d":
        if (buffer.isEmpty) return { kind: "eof" };
        this.#edit(() => buffer.remove(buffer.cursor, buffer.cursor + 1));
        return null;
      case "backspace":
      case "ctrl-h":
        this.#edit(() => buffer.remove(buffer.cursor - 1, buffer.cursor));
        return null;
      case "delete":
        this.#edit(() => buffer.remove(buffer.cursor, buffer.cursor + 1));
        return null;
      case "ctrl-w":
        this.#kill(buffer.wordStart("whitespace"));
        return null;
      case "alt-backspace":
      case "ctrl-backspace":
        this.#kill(buffer.wordStart("alphanumeric"));
        return null;
      case "alt-d":
      case "ctrl-delete":
        this.#kill(buffer.wordEnd("alphanumeric"));
        return null;
      case "ctrl-k": {
        const end = buffer.lineEnd();
        this.#kill(end === buffer.cursor ? Math.min(end + 1, buffer.units.length) : end);
        return null;
      }
      case "ctrl-u": {
        const start = buffer.lineStart();
        this.#kill(start === buffer.cursor ? Math.max(0, start - 1) : start);
        return null;
      }
      case "ctrl-y":
        this.#insert(this.#killed);
        return null;
      case "left":
      case "ctrl-b":
        buffer.moveTo(buffer.cursor - 1);
        return null;
      case "right":
      case "ctrl-f":
        buffer.moveTo(buffer.cursor + 1);
        return null;
      case "ctrl-left":
      case "alt-left":
      case "alt-b":
        buffer.moveTo(buffer.wordStart("alphanumeric"));
        return null;
      case "ctrl-right":
      case "alt-right":
      case "alt-f":
        buffer.moveTo(buffer.wordEnd("alphanumeric"));
        return null;
      case "home":
      case "ctrl-a":
        buffer.moveTo(buffer.lineStart());
        return null;
      case "end":
      case "ctrl-e":
        buffer.moveTo(buffer.lineEnd());
        return null;
      case "ctrl-home":
        buffer.moveTo(0);
        return null;
      case "ctrl-end":
        buffer.moveTo(buffer.units.length);
        return null;
      case "up":
      case "ctrl-p":
        if (!buffer.moveLine(-1)) this.#recall(this.#historyIndex - 1);
        return null;
      case "down":
      case "ctrl-n":
        if (!buffer.moveLine(1)) this.#recall(this.#historyIndex + 1);
        return null;
      case "ctrl-l":
        this.#terminal.write("\x1b[H\x1b[2J");
        this.#view.reset();
        return null;
      case "tab":
        await this.#complete();
        return null;
      default:
        // Esc and every other key do nothing here.
        return null;
    }
  }

  #insert(units: readonly Unit[]): void {
    this.#edit(() => this.#buffer.insert(units));
  }

  /** Runs an edit; from then on the entry shown is remembered as edited. */
  #edit(change: () => void): void {
    change();
    this.#edited.set(this.#historyIndex, this.#buffer.units);
  }

  /** Removes from the cursor to `to`, remembering it for Ctrl+Y. */
  #kill(to: number): void {
    if (to === this.#buffer.cursor) return;
    this.#edit(() => this.#killed = this.#buffer.remove(this.#buffer.cursor, to));
  }

  #recall(index: number): void {
    if (index < 0 || index > this.#history.length) return;
    this.#edited.set(this.#historyIndex, this.#buffer.units);
    this.#historyIndex = index;
    const kept = this.#edited.get(index);
    const entry = this.#history[index];
    this.#buffer.set(kept !== undefined ? [...kept] : entry === undefined ? [] : toUnits(entry));
  }

  /** A paste as units: as it is, or one chip when it is large. */
  #pasted(text: string): Unit[] {
    const limits = this.#options.pasteCollapse ?? DEFAULT_PASTE_COLLAPSE;
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines <= limits.lines && text.length <= limits.chars) return toUnits(text);
    const label = lines > 1 ? `[Pasted text: ${lines} lines]` : `[Pasted text: ${text.length} chars]`;
    const chip: PasteChip = { kind: "paste", text, label };
    return [chip];
  }

  /** Completes the `@path` token before the cursor: a unique candidate in full, else their common start. */
  async #complete(): Promise<void> {
    const completer = this.#options.complete;
    const buffer = this.#buffer;
    let start = buffer.cursor;
    while (start > 0) {
      const unit = buffer.units[start - 1];
      if (typeof unit !== "string" || /^\s+$/u.test(unit)) break;
      start--;
    }
    const token = buffer.units.slice(start, buffer.cursor).join("");
    if (completer === undefined || !token.startsWith("@")) return;
    const partial = token.slice(1);
    const candidates = await completer.candidates(partial);
    if (candidates.length === 0) return;
    const only = candidates.length === 1 ? candidates[0] : undefined;
    const completion = only !== undefined ? only + (only.endsWith("/") ? "" : " ") : commonPrefix(candidates);
    if (completion.length > partial.length) {
      this.#edit(() => {
        buffer.remove(start + 1, buffer.cursor);
        buffer.insert(toUnits(completion));
      });
      return;
    }
    if (only === undefined) this.#listing = this.#candidateRows(candidates);
  }

  /** Candidates laid out in columns under the input, by their last segment. */
  #candidateRows(candidates: readonly string[]): string[] {
    const columns = this.#terminal.columns;
    const names = candidates.map((path) => sanitize(path.slice(path.lastIndexOf("/", path.length - 2) + 1)));
    const cellWidth = Math.min(columns, Math.max(...names.map(displayWidth)) + 2);
    const perRow = Math.max(1, Math.floor(columns / cellWidth));
    const rows: string[] = [];
    for (let index = 0; index < names.length && rows.length < MAX_CANDIDATE_ROWS; index += perRow) {
      const cells = names.slice(index, index + perRow).map((name) => {
        const shown = cut(name, Math.max(1, cellWidth - 2), "start");
        return shown + " ".repeat(Math.max(0, cellWidth - displayWidth(shown)));
      });
      rows.push(cells.join("").trimEnd());
    }
    const shown = Math.min(names.length, rows.length * perRow);
    if (shown < names.length) rows.push(`… and ${names.length - shown} more`);
    return rows;
  }

  /** The `@path` tokens of the typed text (not of collapsed pastes) that name existing paths. */
  async #attachments(): Promise<string[]> {
    const completer = this.#options.complete;
    if (completer === undefined) return [];
    const typed = this.#buffer.units.map((unit) => (typeof unit === "string" ? unit : " ")).join("");
    const found: string[] = [];
    for (const match of typed.matchAll(/(?:^|\s)@(\S+)/gu)) {
      const token = match[1] ?? "";
      const trimmed = token.replace(TRAILING_PUNCTUATION, "");
      for (const path of new Set([token, trimmed])) {
        if (path === "" || found.includes(path)) continue;
        if (await completer.exists(path)) {
          found.push(path);
          break;
        }
      }
    }
    return found;
  }

  #frame(cursor: number): Frame {
    return layoutInput(this.#buffer.units, cursor, {
      prompt: this.#prompt,
      continuation: this.#continuation,
      columns: this.#terminal.columns,
    });
  }

  #render(): void {
    this.#terminal.write(
      this.#view.draw(this.#frame(this.#buffer.cursor), this.#listing, this.#terminal.rows),
    );
  }

  /** Leaves the whole input on the screen with the cursor on the line below it. */
  #finish(outcome: ReadLineResult): ReadLineResult;
  #finish(outcome: null): null;
  #finish(outcome: ReadLineResult | null): ReadLineResult | null {
    // A cursor past the end would add an empty row when the last row is full; -1 places none.
    this.#terminal.write(this.#view.finish(this.#frame(-1)));
    return outcome;
  }
}

function defaultContinuation(promptWidth: number): string {
  return "… ".padStart(Math.max(2, promptWidth));
}

function commonPrefix(values: readonly string[]): string {
  const first = [...(values[0] ?? "")];
  let length = first.length;
  for (const value of values.slice(1)) {
    const chars = [...value];
    let same = 0;
    while (same < length && chars[same] === first[same]) same++;
    length = same;
  }
  return first.slice(0, length).join("");
}
