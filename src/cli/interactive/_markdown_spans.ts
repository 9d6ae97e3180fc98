/**
 * The pieces a Markdown stream (markdown.ts) prints, as styled spans: inline text (emphasis, code, links,
 * entities), code blocks (highlighted where the grammar is loaded) and tables fitted to the width.
 *
 * @module
 */
import type { MarkedToken, Token, Tokens } from "marked";
import { sanitize } from "../_terminal_text.ts";
import { highlightLines } from "./_highlight.ts";
import {
  type Align,
  breakSpans,
  cutSpans,
  expandTabs,
  padSpans,
  type Span,
  span,
  spansWidth,
  type StyleName,
} from "./style.ts";

/** Inline tokens as spans: emphasis, code, links (text and a dim address), breaks as "\n" spans. */
export function inlineSpans(tokens: readonly Token[], styles: readonly StyleName[], colors: boolean): Span[] {
  const out: Span[] = [];
  for (const token of tokens.map(asMarked)) {
    switch (token.type) {
      case "text":
        if ("tokens" in token && token.tokens !== undefined) {
          out.push(...inlineSpans(token.tokens, styles, colors));
        } else out.push(...textSpans(decodeEntities(token.text), styles));
        break;
      case "escape":
        out.push(...textSpans(token.text, styles));
        break;
      case "strong":
        out.push(...inlineSpans(token.tokens, [...styles, "bold"], colors));
        break;
      case "em":
        out.push(...inlineSpans(token.tokens, [...styles, "italic"], colors));
        break;
      case "del": {
        const inner = inlineSpans(token.tokens, [...styles, "strikethrough"], colors);
        out.push(...(colors ? inner : [span("~~"), ...inner, span("~~")]));
        break;
      }
      case "codespan": {
        const code = sanitize(token.text);
        out.push(colors ? span(code, ...styles, "cyan") : span(`\`${code}\``, ...styles));
        break;
      }
      case "link":
        out.push(...inlineSpans(token.tokens, [...styles, "underline", "blue"], colors));
        if (token.autolink !== true && token.href !== token.text) {
          out.push(span(` (${sanitize(token.href)})`, "dim"));
        }
        break;
      case "image":
        out.push(
          span(`[image: ${sanitize(token.text)}]`, ...styles),
          span(` (${sanitize(token.href)})`, "dim"),
        );
        break;
      case "br":
        out.push(span("\n"));
        break;
      case "checkbox":
        break;
      default:
        out.push(...textSpans("text" in token ? String(token.text) : token.raw, styles));
    }
  }
  return out;
}

/** Model text as spans: each line made safe for the terminal, line breaks as "\n" spans. */
export function textSpans(text: string, styles: readonly StyleName[]): Span[] {
  return text.split("\n").flatMap((line, index) => [
    ...(index > 0 ? [span("\n")] : []),
    { text: sanitize(line), styles },
  ]);
}

const ENTITIES: ReadonlyMap<string, string> = new Map([
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
  ["nbsp", "\u00a0"],
]);

/** The character references a model writes in prose (`&amp;`, `&#39;`); others stay as written. */
function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-z]+));/g, (whole, decimal, hex, name) => {
    if (name !== undefined) return ENTITIES.get(name) ?? whole;
    const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
  });
}

/** A code block: highlighted when colours are on and its language is known, behind a gutter. */
export function codeLines(token: Tokens.Code, width: number, colors: boolean): Span[][] {
  const source = token.text.split("\n").map((line) => sanitize(expandTabs(line))).join("\n");
  const highlighted = colors ? highlightLines(source, token.lang) : null;
  const lines = highlighted ?? source.split("\n").map((line) => [span(line)]);
  return lines.flatMap((line) =>
    breakSpans(line, Math.max(1, width - 2)).map((
      part,
      index,
    ) => [span(index === 0 ? "│ " : "┆ ", "dim"), ...part])
  );
}

/** A table with columns aligned by display width, shrunk (cells cut) to fit the width. */
export function tableLines(
  token: Tokens.Table,
  width: number,
  cell: (text: string, styles: StyleName[]) => Span[],
): Span[][] {
  const header = token.header.map((head) => cell(head.text, ["bold"]));
  const rows = token.rows.map((row) => header.map((_, column) => cell(row[column]?.text ?? "", [])));
  const widths = header.map((cell, column) =>
    Math.max(1, spansWidth(cell), ...rows.map((row) => spansWidth(row[column]!)))
  );
  const room = width - 3 * (widths.length - 1);
  for (let excess = widths.reduce((sum, cells) => sum + cells, 0) - room; excess > 0; excess--) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= 3) break;
    widths[widest]!--;
  }
  const line = (cells: Span[][]): Span[] =>
    cutSpans(
      cells.flatMap((cell, column) => [
        ...(column > 0 ? [span(" │ ", "dim")] : []),
        ...padSpans(cutSpans(cell, widths[column]!), widths[column]!, alignOf(token.align[column])),
      ]),
      width,
    );
  const rule = cutSpans([span(widths.map((cells) => "─".repeat(cells)).join("─┼─"), "dim")], width);
  return [line(header), rule, ...rows.map(line)];
}

function alignOf(align: Tokens.TableCell["align"] | undefined): Align {
  return align === "right" || align === "center" ? align : "left";
}

// marked types tokens as its own union or a Generic one for extensions; no extension is registered here.
export function asMarked(token: Token): MarkedToken {
  return token as MarkedToken;
}
