import { deepEqual, equal } from "node:assert/strict";
import {
  breakSpans,
  createStyle,
  cutSpans,
  expandTabs,
  padSpans,
  renderSpans,
  type Span,
  span,
  wrapSpans,
} from "../../../src/cli/interactive/style.ts";

function texts(lines: Span[][]): string[] {
  return lines.map((line) => line.map((part) => part.text).join(""));
}

Deno.test("Style returns text unchanged when colours are off", () => {
  const style = createStyle({ colors: false });
  equal(style.bold("a"), "a");
  equal(style.red("b"), "b");
  equal(style.apply(["bold", "underline", "green"], "c"), "c");
});

Deno.test("Style wraps text in SGR codes when colours are on, re-opening an outer style after an inner one", () => {
  const style = createStyle({ colors: true });
  equal(style.bold("a"), "\x1b[1ma\x1b[22m");
  equal(style.gray("x"), "\x1b[90mx\x1b[39m");
  equal(style.red(`a${style.green("b")}c`), "\x1b[31ma\x1b[32mb\x1b[39m\x1b[31mc\x1b[39m");
  equal(style.apply(["bold", "cyan"], "t"), "\x1b[1m\x1b[36mt\x1b[39m\x1b[22m");
  equal(style.bold(""), "");
});

Deno.test("renderSpans styles neighbouring spans with the same attributes together", () => {
  const style = createStyle({ colors: true });
  equal(renderSpans([span("a", "bold"), span("b", "bold"), span("c")], style), "\x1b[1mab\x1b[22mc");
});

Deno.test("wrapSpans breaks at spaces by display width and breaks a word longer than the line", () => {
  deepEqual(texts(wrapSpans([span("one two three")], 7)), ["one two", "three"]);
  deepEqual(texts(wrapSpans([span("日本語 日本語")], 7)), ["日本語", "日本語"]);
  deepEqual(texts(wrapSpans([span("abcdefghij")], 4)), ["abcd", "efgh", "ij"]);
  deepEqual(texts(wrapSpans([span("a "), span("b", "bold"), span("\n"), span("c")], 10)), ["a b", "c"]);
});

Deno.test("wrapSpans keeps a word styled in parts together", () => {
  const lines = wrapSpans([span("xx "), span("ab", "bold"), span("cd")], 4);
  deepEqual(texts(lines), ["xx", "abcd"]);
  deepEqual(lines[1], [span("ab", "bold"), span("cd")]);
});

Deno.test("breakSpans cuts lines at exactly the width and keeps every character", () => {
  deepEqual(texts(breakSpans([span("  abcdef")], 4)), ["  ab", "cdef"]);
  deepEqual(texts(breakSpans([span("")], 4)), [""]);
});

Deno.test("cutSpans and padSpans measure wide characters as two cells", () => {
  deepEqual(cutSpans([span("日本語")], 5), [span("日本…")]);
  deepEqual(cutSpans([span("abc")], 3), [span("abc")]);
  deepEqual(padSpans([span("語")], 4, "right"), [span("  "), span("語")]);
  deepEqual(padSpans([span("a")], 4, "center"), [span(" "), span("a"), span("  ")]);
});

Deno.test("expandTabs expands tabs to the next stop", () => {
  equal(expandTabs("a\tb"), "a   b");
  equal(expandTabs("\tx", 8), "        x");
  equal(expandTabs("abcd\te"), "abcd    e");
});
