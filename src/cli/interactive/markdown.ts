/**
 * Streaming Markdown for the terminal: the model's answer arrives as text deltas and is printed block by
 * block as soon as each block is complete, never redrawn.
 *
 * How it streams: deltas are cut into lines, and after each complete line `marked`'s lexer re-reads the
 * region not yet printed. Every top-level block followed by another is complete. Inside the last block
 * (a list, a quote) every leaf block followed by another is complete too, and so is a paragraph or table
 * followed by a blank line, a heading, a rule, and a fenced code block at its closing fence. A paragraph
 * still open prints its lines one behind (the last line could still become a table's header), and holds a
 * line whose emphasis, code span or link may close on a later line. Everything depends only on the
 * sequence of lines, so any split of the same text into deltas prints exactly the same output.
 *
 * The dialect: GFM without setext headings ("Title\n===" stays text, "text\n---" is text and a rule), so
 * no later line can turn printed text into a heading; a paragraph keeps the model's line breaks.
 *
 * Code is highlighted with highlight.js when colours are on. Each grammar is loaded in the background the
 * first time a fence names it (or ahead of time with `loadHighlighting`), so start-up pays for none of them;
 * a block that closes before its grammar has loaded is printed plain.
 *
 * @module
 */
import { Lexer, type MarkedToken, type Token, Tokenizer, type Tokens } from "marked";
import { requestGrammar } from "./_highlight.ts";
import { asMarked, codeLines, inlineSpans, tableLines, textSpans } from "./_markdown_spans.ts";
import {
  renderSpans,
  type Span,
  span,
  spansWidth,
  type Style,
  type StyleName,
  trimEndSpans,
  wrapSpans,
} from "./style.ts";

export { loadHighlighting } from "./_highlight.ts";

/** Where a stream prints and how wide it may be. */
export interface MarkdownStreamOptions {
  /** Terminal columns; text wraps to it and tables and code are fitted to it. */
  width: number;
  style: Style;
  /** Receives complete lines, each ending in "\n". */
  write: (text: string) => void;
}

/** The fewest columns a block's content is given, however deep its indentation. */
const MIN_CONTENT_WIDTH = 12;
/** An open paragraph holds lines whose inline markup may still close for at most this many lines. */
const MAX_HELD_LINES = 20;
const BULLETS = ["•", "◦", "▪"] as const;
const QUOTE_BAR: Span = span("┃ ", "gray");

/** A block that renders on its own: where it sits (the prefixes of its first and other lines) and its token. */
interface Leaf {
  token: MarkedToken;
  first: Span[];
  rest: Span[];
  /** A blank line comes before it, drawn with this prefix (a quote's bar), or null for none. */
  gap: Span[] | null;
}

/** Renders Markdown text deltas to the terminal as their blocks complete; `end()` prints the rest. */
export class MarkdownStream {
  #width: number;
  #style: Style;
  #write: (text: string) => void;
  /** Text after the last line break, not yet looked at. */
  #partial = "";
  /** Complete lines from the start of the first top-level block not yet wholly printed. */
  #pending = "";
  /** Leaves of that block already printed, and source lines of the next leaf (a paragraph) printed. */
  #leavesDone = 0;
  #linesDone = 0;
  #headGap = false;
  #printed = false;
  /** The opening fence when the last top-level block is an unclosed fenced code block. */
  #fence: string | null = null;
  /** The number of the first item left of an ordered list whose printed items were dropped. */
  #listStart: number | null = null;
  #links: Record<string, { href: string | null; title: string | null }> = {};

  constructor(options: MarkdownStreamOptions) {
    this.#width = Math.max(MIN_CONTENT_WIDTH, Math.floor(options.width));
    this.#style = options.style;
    this.#write = options.write;
  }

  /** Adds text; prints every block this completes. */
  push(text: string): void {
    this.#partial += text;
    let newline = this.#partial.indexOf("\n");
    while (newline !== -1) {
      const line = this.#partial.slice(0, newline).replace(/\r$/, "");
      this.#partial = this.#partial.slice(newline + 1);
      this.#pending += `${line}\n`;
      // Inside a top-level fenced code block only its closing fence can change anything.
      if (this.#fence === null || closesFence(line, this.#fence)) this.#step(false);
      newline = this.#partial.indexOf("\n");
    }
  }

  /** Ends the text: prints whatever is left. The stream can then start a new text. */
  end(): void {
    if (this.#partial !== "") this.#pending += `${this.#partial.replace(/\r$/, "")}\n`;
    this.#partial = "";
    this.#step(true);
    this.#pending = "";
    this.#leavesDone = 0;
    this.#linesDone = 0;
    this.#fence = null;
    this.#listStart = null;
  }

  #step(final: boolean): void {
    const tokens = this.#lex(this.#pending).map(asMarked);
    const last = tokens.findLastIndex((token) => token.type !== "space");
    let consumed = 0;
    this.#fence = null;
    for (const [index, token] of tokens.entries()) {
      const head = index === 0 && token.type === "list" && this.#listStart !== null
        ? { ...token, start: this.#listStart }
        : token;
      if (index === last && !final) {
        const endsBlank = /(?:^|\n)[ \t]*\n$/.test(this.#pending);
        this.#emit(head, false, endsBlank);
        if (head.type === "code") this.#fence = openFence(head);
        if (head.type === "list") consumed += this.#dropPrintedItems(head);
        break;
      }
      if (token.type !== "space") {
        this.#emit(head, true, true);
        this.#leavesDone = 0;
        this.#linesDone = 0;
        this.#headGap = this.#printed;
        this.#listStart = null;
      }
      consumed += token.raw.length;
    }
    this.#pending = this.#pending.slice(consumed);
  }

  /** Prints the leaves of a top-level block not printed yet: all of them when it is complete. */
  #emit(token: MarkedToken, complete: boolean, endsBlank: boolean): void {
    const leaves: Leaf[] = [];
    const gap = this.#headGap ? [] : null;
    flatten([token], { first: [], rest: [], gap, alwaysGap: true, depth: 0 }, leaves);
    for (; this.#leavesDone < leaves.length; this.#leavesDone++) {
      const leaf = leaves[this.#leavesDone]!;
      if (leaf.token.type === "code") requestGrammar(leaf.token.lang, this.#style.colors);
      const isLast = this.#leavesDone === leaves.length - 1;
      if (complete || !isLast || leafEnded(leaf.token, endsBlank)) {
        this.#print(leaf, this.#linesDone, null);
        this.#linesDone = 0;
        continue;
      }
      if (leaf.token.type === "paragraph" || leaf.token.type === "text") {
        const upTo = this.#streamable(leaf.token.text);
        if (upTo > this.#linesDone) this.#print(leaf, this.#linesDone, upTo);
        this.#linesDone = Math.max(this.#linesDone, upTo);
      }
      return;
    }
  }

  /**
   * Drops the printed items of the open top-level list but its last from the pending text, so that a long
   * list is not lexed again at every line. Re-read alone, the last item keeps its bullet, is given the
   * number it had in the whole list, and gets no gap (it is not the list's first block).
   */
  #dropPrintedItems(list: Tokens.List): number {
    const done = list.items.slice(0, -1);
    const lastItem = list.items[list.items.length - 1];
    if (done.length === 0 || lastItem === undefined) return 0;
    const leaves: Leaf[] = [];
    flatten(
      [{ ...list, items: done }],
      { first: [], rest: [], gap: null, alwaysGap: true, depth: 0 },
      leaves,
    );
    const length = done.reduce((sum, item) => sum + item.raw.length, 0);
    if (this.#leavesDone < leaves.length || !list.raw.slice(length).startsWith(lastItem.raw)) return 0;
    this.#leavesDone -= leaves.length;
    this.#headGap = false;
    if (list.ordered) this.#listStart = (list.start === "" ? 1 : list.start) + done.length;
    return length;
  }

  /** How many source lines of an open paragraph may print: all but the last, less any held markup. */
  #streamable(text: string): number {
    const lines = text.split("\n");
    const limit = lines.length - 1;
    if (limit - this.#linesDone > MAX_HELD_LINES) return limit;
    for (let end = limit; end > this.#linesDone; end--) {
      if (!mayContinue(this.#inline(lines.slice(this.#linesDone, end).join("\n")))) return end;
    }
    return this.#linesDone;
  }

  /** Prints a leaf, or source lines [from, to) of a paragraph leaf. */
  #print(leaf: Leaf, from: number, to: number | null): void {
    const width = Math.max(MIN_CONTENT_WIDTH, this.#width - spansWidth(leaf.rest));
    const content = this.#content(leaf.token, width, from, to);
    const lines: string[] = [];
    if (from === 0 && leaf.gap !== null) lines.push(renderSpans(trimEndSpans(leaf.gap), this.#style));
    content.forEach((line, index) => {
      const prefix = index === 0 && from === 0 ? leaf.first : leaf.rest;
      lines.push(renderSpans(trimEndSpans([...prefix, ...line]), this.#style));
    });
    if (lines.length === 0) return;
    this.#write(`${lines.join("\n")}\n`);
    this.#printed = true;
  }

  #content(token: MarkedToken, width: number, from: number, to: number | null): Span[][] {
    const colors = this.#style.colors;
    switch (token.type) {
      case "paragraph":
      case "text": {
        const text = token.text.split("\n").slice(from, to ?? undefined).join("\n");
        return wrapSpans(inlineSpans(this.#inline(text), [], colors), width);
      }
      case "heading": {
        const styles: StyleName[] = token.depth <= 2 ? ["bold", "cyan"] : ["bold"];
        const marks = span(`${"#".repeat(token.depth)} `, ...styles);
        return wrapSpans([marks, ...inlineSpans(this.#inline(token.text), styles, colors)], width);
      }
      case "code":
        return codeLines(token, width, colors);
      case "table": {
        const cell = (text: string, styles: StyleName[]): Span[] =>
          inlineSpans(this.#inline(text), styles, colors).map((part) =>
            part.text === "\n" ? span(" ") : part
          );
        return tableLines(token, width, cell);
      }
      case "hr":
        return [[span("─".repeat(width), "dim")]];
      default:
        // Block HTML and anything else: shown as written.
        return wrapSpans(textSpans(token.raw.replace(/\n+$/, ""), []), width);
    }
  }

  /** Block tokens only: inline markup is lexed when a leaf prints, so each step stays cheap. */
  #lex(source: string): Token[] {
    const lexer = new Lexer({ gfm: true, tokenizer: new BlockTokenizer() });
    Object.assign(lexer.tokens.links, this.#links);
    try {
      const tokens = lexer.blockTokens(source, lexer.tokens);
      Object.assign(this.#links, lexer.tokens.links);
      return tokens;
    } catch {
      // marked gives up on some pathological input; the answer still shows, as plain text.
      return [{ type: "paragraph", raw: source, text: source.replace(/\n$/, ""), tokens: [] }];
    }
  }

  #inline(text: string): Token[] {
    const lexer = new Lexer({ gfm: true });
    Object.assign(lexer.tokens.links, this.#links);
    try {
      return lexer.inlineTokens(text);
    } catch {
      return [{ type: "text", raw: text, text }];
    }
  }
}

/** marked's block tokenizer without setext headings, so that no line can turn printed text into a heading. */
class BlockTokenizer extends Tokenizer {
  override lheading(): undefined {
    return undefined;
  }
}

interface Place {
  first: Span[];
  rest: Span[];
  /** The blank line before the first block, drawn with the enclosing container's prefix, or null. */
  gap: Span[] | null;
  /** Blocks in this container are separated by a blank line even without one in the source (top level). */
  alwaysGap: boolean;
  depth: number;
}

/** The leaves of blocks in reading order, each with the prefixes its container gives it. */
function flatten(tokens: readonly Token[], place: Place, out: Leaf[]): void {
  let count = 0;
  let blankBefore = false;
  for (const token of tokens.map(asMarked)) {
    if (token.type === "space") {
      blankBefore = true;
      continue;
    }
    if (token.type === "def" || token.type === "checkbox") continue;
    const first = count === 0 ? place.first : place.rest;
    const gap = count === 0 ? place.gap : (place.alwaysGap || blankBefore) ? place.rest : null;
    blankBefore = false;
    count++;
    if (token.type === "list") {
      token.items.forEach((item, index) => {
        const marker = `${listMarker(token, index, place.depth)} ${taskMark(item)}`;
        const lead = [...(index === 0 ? first : place.rest), span(marker, "cyan")];
        const rest = [...place.rest, span(" ".repeat(spansWidth([span(marker)])))];
        const itemGap = index === 0 ? gap : null;
        if (!item.tokens.some((child) => child.type !== "space" && child.type !== "checkbox")) {
          out.push({ token: emptyText(), first: lead, rest, gap: itemGap });
          return;
        }
        flatten(
          item.tokens,
          { first: lead, rest, gap: itemGap, alwaysGap: false, depth: place.depth + 1 },
          out,
        );
      });
      continue;
    }
    if (token.type === "blockquote") {
      const inner = { first: [...first, QUOTE_BAR], rest: [...place.rest, QUOTE_BAR] };
      flatten(token.tokens, { ...inner, gap, alwaysGap: false, depth: place.depth }, out);
      continue;
    }
    out.push({ token, first, rest: place.rest, gap });
  }
}

function listMarker(list: Tokens.List, index: number, depth: number): string {
  if (list.ordered) return `${(list.start === "" ? 1 : list.start) + index}.`;
  return BULLETS[depth % BULLETS.length]!;
}

function taskMark(item: Tokens.ListItem): string {
  if (!item.task) return "";
  return item.checked === true ? "[x] " : "[ ] ";
}

function emptyText(): MarkedToken {
  return { type: "text", raw: "", text: "" };
}

/** Whether the last leaf of an unfinished block is complete all the same. */
function leafEnded(token: MarkedToken, endsBlank: boolean): boolean {
  switch (token.type) {
    case "heading":
    case "hr":
      return true;
    case "code":
      return token.codeBlockStyle !== "indented" && fenceClosed(token.raw);
    default:
      return endsBlank;
  }
}

function fenceClosed(raw: string): boolean {
  const lines = raw.replace(/\n+$/, "").split("\n");
  const open = /^ {0,3}(`{3,}|~{3,})/.exec(lines[0] ?? "");
  return open !== null && lines.length >= 2 && closesFence(lines[lines.length - 1]!, open[1]!);
}

/** The fence of a fenced code block still open, or null. */
function openFence(token: Tokens.Code): string | null {
  if (token.codeBlockStyle === "indented" || fenceClosed(token.raw)) return null;
  return /^ {0,3}(`{3,}|~{3,})/.exec(token.raw)?.[1] ?? null;
}

function closesFence(line: string, fence: string): boolean {
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return close !== null && close[1]![0] === fence[0] && close[1]!.length >= fence.length;
}

/** Whether inline text has markup that a later line could still close (a lone `*`, backtick, `[` or `~~`). */
function mayContinue(tokens: readonly Token[]): boolean {
  return tokens.some((token) =>
    token.type === "text" && /[`*[]|~~|(?:^|[^\p{L}\p{N}])_|_(?:[^\p{L}\p{N}]|$)/u.test(String(token.text))
  );
}
