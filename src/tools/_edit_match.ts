/**
 * EditFile's matching beyond the exact search: the one whitespace-flexible fallback (line by line, ignoring
 * trailing whitespace, tabs vs spaces and a uniform indentation shift) and the "closest region" shown when
 * old_string is not found.
 *
 * @module
 */
import { type LineEnding, numbered } from "./_text.ts";

/** Tab widths tried when indentation mixes tabs and spaces. */
const TAB_WIDTHS = [4, 2, 8] as const;

/** A replacement of `text.slice(start, end)` by `text`. */
export interface Replacement {
  start: number;
  end: number;
  text: string;
}

interface Line {
  start: number;
  /** End of the line's text, before "\r\n" or "\n". */
  end: number;
  /** Start of the next line. */
  next: number;
}

function lineSpans(text: string): Line[] {
  const spans: Line[] = [];
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) {
      spans.push({ start, end: text.length, next: text.length });
      break;
    }
    const end = newline > start && text[newline - 1] === "\r" ? newline - 1 : newline;
    spans.push({ start, end, next: newline + 1 });
    start = newline + 1;
  }
  return spans;
}

interface Shape {
  indent: string;
  /** The line without its indentation and trailing whitespace, in Unicode normalization form C. */
  body: string;
}

function shapeOf(line: string): Shape {
  const indent = /^[ \t]*/.exec(line)![0];
  // Form C: a file that writes "é" as "e" and a combining accent (as macOS names and some editors do) reads
  // the same in ReadFile's output, and a model recalling it writes the one character.
  return { indent, body: line.slice(indent.length).trimEnd().normalize("NFC") };
}

function indentWidth(indent: string, tabWidth: number): number {
  let width = 0;
  for (const character of indent) {
    width = character === "\t" ? width + tabWidth - (width % tabWidth) : width + 1;
  }
  return width;
}

/** The outcome of `flexibleMatch`: no candidate, several (by 1-based line), or exactly one. */
export type FlexibleMatch =
  | { kind: "none" }
  | { kind: "many"; lines: number[] }
  | { kind: "one"; replacement: Replacement };

/**
 * Line-by-line match ignoring trailing whitespace, tabs vs spaces, a uniform indentation shift and Unicode
 * normalization (composed or decomposed accents).
 */
export function flexibleMatch(
  text: string,
  oldString: string,
  newString: string,
  eol: LineEnding,
): FlexibleMatch {
  const oldLines = oldString.replaceAll("\r\n", "\n").split("\n");
  const includesBreak = oldLines.length > 1 && oldLines[oldLines.length - 1] === "";
  if (includesBreak) oldLines.pop();
  const oldShapes = oldLines.map(shapeOf);
  if (oldShapes.every((shape) => shape.body === "")) return { kind: "none" };
  const spans = lineSpans(text);
  const fileShapes = spans.map((span) => shapeOf(text.slice(span.start, span.end)));
  const matches: { index: number; tabWidth: number; delta: number }[] = [];
  for (let index = 0; index + oldShapes.length <= fileShapes.length; index++) {
    const found = matchWindow(fileShapes, index, oldShapes);
    if (found !== null) matches.push({ index, ...found });
  }
  if (matches.length === 0) return { kind: "none" };
  if (matches.length > 1) return { kind: "many", lines: matches.map((match) => match.index + 1) };
  const { index, tabWidth, delta } = matches[0]!;
  const window = fileShapes.slice(index, index + oldShapes.length);
  const indentMap = new Map<string, string>();
  oldShapes.forEach((shape, offset) => {
    if (shape.body !== "" && !indentMap.has(shape.indent)) {
      indentMap.set(shape.indent, window[offset]!.indent);
    }
  });
  const useTabs = window.some((shape) => shape.body !== "" && shape.indent.startsWith("\t"));
  const reindented = newString.replaceAll("\r\n", "\n").split("\n").map((line) => {
    const shape = shapeOf(line);
    if (line.trim() === "") return "";
    const rest = line.slice(shape.indent.length);
    const mapped = indentMap.get(shape.indent);
    if (mapped !== undefined) return mapped + rest;
    const width = Math.max(0, indentWidth(shape.indent, tabWidth) + delta);
    const indent = useTabs
      ? "\t".repeat(Math.floor(width / tabWidth)) + " ".repeat(width % tabWidth)
      : " ".repeat(width);
    return indent + rest;
  });
  const last = spans[index + oldShapes.length - 1]!;
  return {
    kind: "one",
    replacement: {
      start: spans[index]!.start,
      end: includesBreak ? last.next : last.end,
      text: reindented.join(eol),
    },
  };
}

function matchWindow(
  fileShapes: readonly Shape[],
  index: number,
  oldShapes: readonly Shape[],
): { tabWidth: number; delta: number } | null {
  for (let offset = 0; offset < oldShapes.length; offset++) {
    if (fileShapes[index + offset]!.body !== oldShapes[offset]!.body) return null;
  }
  for (const tabWidth of TAB_WIDTHS) {
    let delta: number | null = null;
    let uniform = true;
    for (let offset = 0; offset < oldShapes.length && uniform; offset++) {
      const old = oldShapes[offset]!;
      if (old.body === "") continue;
      const shift = indentWidth(fileShapes[index + offset]!.indent, tabWidth) -
        indentWidth(old.indent, tabWidth);
      if (delta === null) delta = shift;
      else if (shift !== delta) uniform = false;
    }
    if (uniform) return { tabWidth, delta: delta ?? 0 };
  }
  return null;
}

/** The error for a missing old_string: the closest region of the file and whether it differs only in whitespace. */
export function notFoundMessage(text: string, oldString: string): string {
  const base = "old_string was not found in the file";
  const oldLines = oldString.replaceAll("\r\n", "\n").replace(/\n$/, "").split("\n");
  const spans = lineSpans(text);
  if (spans.length === 0) return `${base} (the file is empty)`;
  const fileLines = spans.map((span) => text.slice(span.start, span.end));
  const window = Math.min(oldLines.length, fileLines.length);
  const oldKeys = oldLines.map(bigrams);
  const cache = new Map<number, Map<string, number>>();
  const keyAt = (index: number): Map<string, number> => {
    let key = cache.get(index);
    if (key === undefined) {
      key = bigrams(fileLines[index]!);
      cache.set(index, key);
    }
    return key;
  };
  // Bound the work on huge files: score every window only when that stays cheap.
  const exhaustive = fileLines.length * window <= 400_000;
  let best = { index: 0, score: -1 };
  for (let index = 0; index + window <= fileLines.length; index++) {
    let score = dice(oldKeys[0]!, keyAt(index));
    if (exhaustive) {
      for (let offset = 1; offset < window; offset++) score += dice(oldKeys[offset]!, keyAt(index + offset));
      score /= window;
    }
    if (score > best.score) best = { index, score };
  }
  if (best.score < 0.3) {
    return `${base}, and no region of the file is close to it. Read the file again with ReadFile and copy ` +
      "old_string exactly, without the line-number prefixes";
  }
  const region = fileLines.slice(best.index, best.index + window);
  const squash = (value: string): string => value.replace(/\s+/g, "").normalize("NFC");
  const whitespaceOnly = squash(region.join("\n")) === squash(oldLines.join("\n"));
  const shown = region.slice(0, 20).map((line, offset) => numbered(best.index + offset + 1, line));
  const verdict = whitespaceOnly
    ? "It differs from old_string only in whitespace (spaces, tabs or line breaks) or in how accented " +
      "letters are encoded: copy old_string exactly from it"
    : "It differs from old_string in more than whitespace: the file may have changed, or old_string was recalled " +
      "wrongly. Read the file again and copy old_string exactly, without the line-number prefixes";
  return `${base}. The closest region is line${window === 1 ? "" : "s"} ${best.index + 1}${
    window === 1 ? "" : `-${best.index + window}`
  }:\n${shown.join("\n")}\n${verdict}`;
}

function bigrams(line: string): Map<string, number> {
  const value = line.trim();
  const counts = new Map<string, number>();
  for (let index = 0; index + 1 < value.length; index++) {
    const pair = value.slice(index, index + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  if (value.length === 1) counts.set(value, 1);
  return counts;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let sizeA = 0;
  let sizeB = 0;
  for (const count of a.values()) sizeA += count;
  for (const count of b.values()) sizeB += count;
  if (sizeA === 0 && sizeB === 0) return 1;
  let shared = 0;
  for (const [pair, count] of a) shared += Math.min(count, b.get(pair) ?? 0);
  return (2 * shared) / (sizeA + sizeB);
}
