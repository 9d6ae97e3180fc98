/**
 * How the interactive session styles text: a few ANSI attributes that turn into plain text when colours are
 * off, and styled text ("spans") laid out by display width — wrapped, cut and padded — so that a wide
 * character counts two cells and an escape code counts none.
 *
 * Spans hold text that is already safe for a terminal (see `sanitize`); styling adds the only escapes.
 *
 * @module
 */
import { displayWidth } from "../_terminal_text.ts";

/** A text attribute or colour. */
export type StyleName =
  | "bold"
  | "dim"
  | "italic"
  | "underline"
  | "strikethrough"
  | "inverse"
  | "red"
  | "green"
  | "yellow"
  | "blue"
  | "cyan"
  | "magenta"
  | "gray";

/** Styling functions; each returns its text unchanged when colours are off. */
export interface Style extends Readonly<Record<StyleName, (text: string) => string>> {
  readonly colors: boolean;
  /** Applies several attributes at once (the last one innermost). */
  apply(names: readonly StyleName[], text: string): string;
}

/** What `createStyle` needs: whether to emit ANSI escapes at all. */
export interface StyleOptions {
  colors: boolean;
}

// SGR codes: [open, close]. Bold and dim share their close code, as do all colours.
const CODES: Readonly<Record<StyleName, readonly [number, number]>> = {
  bold: [1, 22],
  dim: [2, 22],
  italic: [3, 23],
  underline: [4, 24],
  strikethrough: [9, 29],
  inverse: [7, 27],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  cyan: [36, 39],
  magenta: [35, 39],
  gray: [90, 39],
};

/** A Style that emits ANSI escapes when `colors` is true and plain text otherwise. */
export function createStyle(options: StyleOptions): Style {
  const entries = (Object.keys(CODES) as StyleName[]).map((name) => {
    const [open, close] = CODES[name];
    const fn = options.colors ? sgr(`\x1b[${open}m`, `\x1b[${close}m`) : plain;
    return [name, fn] as const;
  });
  const functions = Object.fromEntries(entries) as Record<StyleName, (text: string) => string>;
  return {
    ...functions,
    colors: options.colors,
    apply: (names, text) => names.reduceRight((styled, name) => functions[name](styled), text),
  };
}

function plain(text: string): string {
  return text;
}

// An inner style that closes the same attribute (dim inside bold, a colour inside a colour) would end the
// outer one early: re-open the outer one after each inner close.
function sgr(open: string, close: string): (text: string) => string {
  return (text) => text === "" ? "" : `${open}${text.replaceAll(close, close + open)}${close}`;
}

/** A run of terminal-safe text with its attributes; a span whose text is "\n" breaks the line. */
export interface Span {
  text: string;
  styles: readonly StyleName[];
}

/** A span of text with the given attributes. */
export function span(text: string, ...styles: StyleName[]): Span {
  return { text, styles };
}

/** How many cells spans take. */
export function spansWidth(spans: readonly Span[]): number {
  let width = 0;
  for (const part of spans) width += displayWidth(part.text);
  return width;
}

/** Spans as a string, neighbours with the same attributes styled together. */
export function renderSpans(spans: readonly Span[], style: Style): string {
  let out = "";
  let text = "";
  let current: readonly StyleName[] = [];
  for (const part of spans) {
    if (part.text === "") continue;
    if (!sameStyles(part.styles, current)) {
      out += style.apply(current, text);
      text = "";
      current = part.styles;
    }
    text += part.text;
  }
  return out + style.apply(current, text);
}

function sameStyles(a: readonly StyleName[], b: readonly StyleName[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}

/** Spans without trailing blanks, so that no printed line ends in spaces. */
export function trimEndSpans(spans: readonly Span[]): Span[] {
  const out = [...spans];
  while (out.length > 0) {
    const last = out[out.length - 1]!;
    const trimmed = last.text.trimEnd();
    if (trimmed !== "") {
      out[out.length - 1] = { text: trimmed, styles: last.styles };
      break;
    }
    out.pop();
  }
  return out;
}

/**
 * Wraps spans into lines of at most `width` cells at spaces (a word longer than a line is broken between
 * characters). "\n" spans end a line; spaces where a line breaks are dropped.
 */
export function wrapSpans(spans: readonly Span[], width: number): Span[][] {
  const lines: Span[][] = [];
  let line: Span[] = [];
  let used = 0;
  let space: Span[] = [];
  let spaceWidth = 0;
  let word: Span[] = [];
  let wordWidth = 0;
  const breakLine = (): void => {
    lines.push(line);
    line = [];
    used = 0;
  };
  const placeWord = (): void => {
    if (word.length === 0) return;
    if (used > 0 && used + spaceWidth + wordWidth > width && wordWidth <= width) breakLine();
    if (used > 0) {
      line.push(...space);
      used += spaceWidth;
    }
    if (used + wordWidth <= width) {
      line.push(...word);
      used += wordWidth;
    } else {
      for (const part of word) {
        for (const char of part.text) {
          const cells = displayWidth(char);
          if (used > 0 && used + cells > width) breakLine();
          line.push({ text: char, styles: part.styles });
          used += cells;
        }
      }
    }
    word = [];
    wordWidth = 0;
    space = [];
    spaceWidth = 0;
  };
  for (const part of spans) {
    if (part.text === "\n") {
      placeWord();
      space = [];
      spaceWidth = 0;
      breakLine();
      continue;
    }
    for (const piece of part.text.split(/( +)/)) {
      if (piece === "") continue;
      if (piece.startsWith(" ")) {
        placeWord();
        // Blanks at the start of a line are dropped.
        if (used > 0) {
          space.push({ text: piece, styles: part.styles });
          spaceWidth += piece.length;
        }
        continue;
      }
      word.push({ text: piece, styles: part.styles });
      wordWidth += displayWidth(piece);
    }
  }
  placeWord();
  lines.push(line);
  return lines.map(mergeSpans);
}

/** Breaks spans into lines of exactly `width` cells (the last shorter), keeping every character. */
export function breakSpans(spans: readonly Span[], width: number): Span[][] {
  const lines: Span[][] = [[]];
  let used = 0;
  for (const part of spans) {
    for (const char of part.text) {
      const cells = displayWidth(char);
      if (used > 0 && used + cells > width) {
        lines.push([]);
        used = 0;
      }
      lines[lines.length - 1]!.push({ text: char, styles: part.styles });
      used += cells;
    }
  }
  return lines.map(mergeSpans);
}

/** Cuts spans to `width` cells, marking the cut with "…" in the style of the text it replaces. */
export function cutSpans(spans: readonly Span[], width: number): Span[] {
  if (spansWidth(spans) <= width) return [...spans];
  const out: Span[] = [];
  let used = 0;
  let last: readonly StyleName[] = [];
  for (const part of spans) {
    for (const char of part.text) {
      const cells = displayWidth(char);
      if (used + cells > width - 1) return mergeSpans([...out, { text: "…", styles: part.styles }]);
      out.push({ text: char, styles: part.styles });
      used += cells;
      last = part.styles;
    }
  }
  return mergeSpans([...out, { text: "…", styles: last }]);
}

/** Where padding goes when a cell is wider than its text. */
export type Align = "left" | "right" | "center";

/** Pads spans with spaces to `width` cells. */
export function padSpans(spans: readonly Span[], width: number, align: Align): Span[] {
  const room = Math.max(0, width - spansWidth(spans));
  const before = align === "right" ? room : align === "center" ? Math.floor(room / 2) : 0;
  const after = room - before;
  return [
    ...(before > 0 ? [span(" ".repeat(before))] : []),
    ...spans,
    ...(after > 0 ? [span(" ".repeat(after))] : []),
  ];
}

/** Expands tabs to spaces at stops every `tabWidth` columns (per line). */
export function expandTabs(line: string, tabWidth = 4): string {
  if (!line.includes("\t")) return line;
  let out = "";
  let column = 0;
  for (const char of line) {
    if (char === "\t") {
      const spaces = tabWidth - (column % tabWidth);
      out += " ".repeat(spaces);
      column += spaces;
      continue;
    }
    out += char;
    column += displayWidth(char);
  }
  return out;
}

function mergeSpans(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const part of spans) {
    const previous = out[out.length - 1];
    if (previous !== undefined && sameStyles(previous.styles, part.styles)) {
      out[out.length - 1] = { text: previous.text + part.text, styles: previous.styles };
    } else if (part.text !== "") {
      out.push(part);
    }
  }
  return out;
}
