import { deepStrictEqual, equal, ok } from "node:assert/strict";
import {
  chunkLength,
  type LineMatcher,
  MAX_CHUNK_CHARACTERS,
  PAUSED,
  regexMatcher,
  type SliceClock,
} from "../../src/tools/_line_search.ts";
import { compileSearchPattern } from "../../src/common/regex.ts";

const NEVER_DUE: SliceClock = { due: () => false };

function matcherFor(pattern: string, clock: SliceClock = NEVER_DUE): LineMatcher {
  const compiled = compileSearchPattern(pattern, { ignoreCase: false, flags: "gm" });
  if (!compiled.ok) throw new Error(compiled.message);
  return regexMatcher(compiled.regex, {
    units: compiled.units,
    assertions: compiled.assertions,
    normalizeCrlf: false,
    clock,
  });
}

/** 1-based numbers of the lines where the matcher finds a match, resuming after every pause. */
function matchingLines(matcher: LineMatcher, text: string): { lines: number[]; pauses: number } {
  const lines: number[] = [];
  let pauses = 0;
  let from = 0;
  let line = 1;
  let counted = 0;
  while (from <= text.length) {
    let index = matcher.next(text, from);
    while (index === PAUSED) {
      pauses++;
      index = matcher.next(text, matcher.resumeAt);
    }
    if (index === -1 || (index === text.length && text.endsWith("\n"))) break;
    for (let at = text.indexOf("\n", counted); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) {
      line++;
    }
    counted = index;
    lines.push(line);
    const newline = text.indexOf("\n", index);
    if (newline === -1) break;
    from = newline + 1;
  }
  return { lines, pauses };
}

/** The oracle: each line tested on its own with V8's regex. */
function expectedLines(pattern: string, text: string): number[] {
  const regex = new RegExp(pattern);
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines.flatMap((line, index) => regex.test(line) ? [index + 1] : []);
}

function sampleText(lineCount: number): string {
  const words = ["alpha", "beta", "gamma", "delta", "x", "", "  indented", "end;", "foo bar", "foo", "bar"];
  return Array.from({ length: lineCount }, (_, index) => {
    const a = words[index % words.length]!;
    const b = words[(index * 7) % words.length]!;
    return index % 97 === 0 ? `${a} ${"z".repeat(300)} ${b}` : `${a} ${b}`.trimEnd();
  }).join("\n") + "\n";
}

Deno.test("regexMatcher finds the same lines as a line-by-line search across many chunks", async (t) => {
  const text = sampleText(20_000);
  ok(text.length > 10 * MAX_CHUNK_CHARACTERS);
  const patterns = [
    "foo\\s+bar",
    "^$",
    "^\\s+\\w",
    "a$",
    "\\bend;",
    "[^q]*z{3}",
    "gamma|delta",
    "x\\s*$",
    "^",
  ];
  for (const pattern of patterns) {
    await t.step(pattern, () => {
      deepStrictEqual(matchingLines(matcherFor(pattern), text).lines, expectedLines(pattern, text));
    });
  }
});

Deno.test("regexMatcher searches a line longer than a chunk in windows without faking anchors at their edges", async (t) => {
  const long = "a".repeat(5 * MAX_CHUNK_CHARACTERS);
  const cases: [string, string, number[]][] = [
    ["needle far into a long line", `short\n${long}needle${long}\nend\n`, [2]],
    ["^ does not match at a window's start", `b${long}\n`, []],
    ["$ does not match at a window's end", `${long}b\n`, []],
    ["\\b does not match at a window's end", `${long}b\n`, []],
    ["a match from the line's start to a window's end is found", `${long}\n`, [1]],
  ];
  const patterns = ["needle", "^a", "a$", "a\\b", "^a+"];
  for (const [index, [name, text, expected]] of cases.entries()) {
    await t.step(name, () => {
      const pattern = patterns[index]!;
      deepStrictEqual(expectedLines(pattern, text), expected, "the oracle agrees");
      deepStrictEqual(matchingLines(matcherFor(pattern), text).lines, expected);
    });
  }
});

Deno.test("regexMatcher pauses between calls when the slice is used up and resumes where it stopped", () => {
  const text = sampleText(20_000);
  const alwaysDue: SliceClock = { due: () => true };
  for (const pattern of ["zzz.*beta$", "absent"]) {
    const paused = matchingLines(matcherFor(pattern, alwaysDue), text);
    ok(paused.pauses > 0, "the matcher paused");
    deepStrictEqual(paused.lines, expectedLines(pattern, text));
  }
  const longLine = `${"a".repeat(6 * MAX_CHUNK_CHARACTERS)}needle\n`;
  const resumed = matchingLines(matcherFor("needle", alwaysDue), longLine);
  ok(resumed.pauses > 0, "the matcher paused inside the long line");
  deepStrictEqual(resumed.lines, [1]);
});

Deno.test("chunkLength shrinks chunks for large automata so one call stays bounded", () => {
  equal(chunkLength(1), MAX_CHUNK_CHARACTERS);
  ok(chunkLength(2_000) < MAX_CHUNK_CHARACTERS);
  ok(chunkLength(2_000) * 2_000 <= 12_000_000);
  ok(chunkLength(1e9) >= 256);
});
