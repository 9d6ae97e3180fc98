import { deepEqual, equal, match, ok } from "node:assert/strict";
import { displayWidth } from "../../../src/cli/_terminal_text.ts";
import { loadHighlighting, MarkdownStream } from "../../../src/cli/interactive/markdown.ts";
import { createStyle } from "../../../src/cli/interactive/style.ts";

/** A stream on a fake terminal: every write is recorded, and each must be whole lines. */
function terminal(width = 48, colors = false) {
  const writes: string[] = [];
  const stream = new MarkdownStream({
    width,
    style: createStyle({ colors }),
    write: (text) => {
      if (!text.endsWith("\n")) throw new Error(`write without a final newline: ${JSON.stringify(text)}`);
      writes.push(text);
    },
  });
  return { stream, writes, output: () => writes.join("") };
}

/** The characters a terminal would act on (controls but the newline, C1, a bidi override), as code points. */
function controls(text: string): number[] {
  return [...text].map((char) => char.codePointAt(0)!).filter((code) =>
    (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f) || code === 0x202e
  );
}

function render(chunks: readonly string[], width = 48, colors = false): string {
  const { stream, output } = terminal(width, colors);
  for (const chunk of chunks) stream.push(chunk);
  stream.end();
  return output();
}

function chunked(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let index = 0; index < text.length; index += size) chunks.push(text.slice(index, index + size));
  return chunks;
}

const SAMPLE = `# Plan

Some *emphasis*, **strong**, \`code\`, a [link](https://example.com/docs) and https://bare.example.org in a paragraph long enough to wrap.
A second source line stays its own line.

## Steps

1. Read the file
2. Change it:

   \`\`\`ts
   const answer: number = 42; // the answer
   \`\`\`
3. Run the tests
   - unit
   - e2e

- [x] done
- [ ] open

> A quote with **strong** text
> on two lines.

---

### Results

| File | Lines | Note |
|:-----|------:|:----:|
| a.ts | 12 | 日本語 |
| src/long_name.ts | 1234 | ok |

\`\`\`
plain\ttabbed
\`\`\`

Done.
`;

const SAMPLE_OUTPUT = `# Plan

Some emphasis, strong, \`code\`, a link
(https://example.com/docs) and
https://bare.example.org in a paragraph long
enough to wrap.
A second source line stays its own line.

## Steps

1. Read the file
2. Change it:

   │ const answer: number = 42; // the answer
3. Run the tests
   ◦ unit
   ◦ e2e

• [x] done
• [ ] open

┃ A quote with strong text
┃ on two lines.

────────────────────────────────────────────────

### Results

File             │ Lines │  Note
─────────────────┼───────┼───────
a.ts             │    12 │ 日本語
src/long_name.ts │  1234 │   ok

│ plain   tabbed

Done.
`;

Deno.test("MarkdownStream renders headings, lists, quotes, rules, tables and code as plain text with colours off", () => {
  equal(render([SAMPLE]), SAMPLE_OUTPUT);
});

Deno.test("MarkdownStream prints the same output whatever the size of the deltas", async (t) => {
  for (const size of [1, 2, 3, 5, 7, 13, 64]) {
    await t.step(`chunks of ${size} characters`, () => {
      equal(render(chunked(SAMPLE, size)), SAMPLE_OUTPUT);
    });
  }
  await t.step("every split into two deltas (mid-word, mid-fence, mid-table)", () => {
    for (let split = 1; split < SAMPLE.length; split++) {
      const output = render([SAMPLE.slice(0, split), SAMPLE.slice(split)]);
      if (output !== SAMPLE_OUTPUT) equal(output, SAMPLE_OUTPUT, `split at ${split}`);
    }
  });
  await t.step("with colours on too, code highlighted", async () => {
    await loadHighlighting(["ts"]);
    const whole = render([SAMPLE], 48, true);
    equal(render(chunked(SAMPLE, 3), 48, true), whole);
  });
});

Deno.test("MarkdownStream prints each block as soon as it is complete, and never a partial line", () => {
  const { stream, output } = terminal();
  const after = (text: string): string => {
    const before = output().length;
    stream.push(text);
    return output().slice(before);
  };
  equal(after("# Ti"), "");
  equal(after("tle\n"), "# Title\n");
  equal(after("First line of a para"), "");
  equal(after("graph.\n"), "", "the last line of an open paragraph could still become a table header");
  equal(after("Second line.\n"), "\nFirst line of a paragraph.\n");
  equal(after("\n"), "Second line.\n", "a blank line ends the paragraph");
  equal(after("- one\n"), "");
  equal(after("- two\n"), "\n• one\n", "a list item prints when the next one starts");
  equal(after("\n"), "• two\n", "…or at a blank line");
  equal(after("```ts\nconst a = 1;\n"), "");
  equal(after("``"), "");
  equal(after("`\n"), "\n│ const a = 1;\n", "a fenced code block prints at its closing fence");
  equal(after("\n| a | b |\n|---|---|\n| 1 | 2 |\n"), "");
  equal(after("\n"), "\na │ b\n──┼──\n1 │ 2\n", "a table prints when it ends");
  equal(after("Last words"), "");
  stream.end();
  match(output(), /\nLast words\n$/);
});

Deno.test("MarkdownStream numbers a long ordered list streamed line by line", () => {
  const items = Array.from({ length: 12 }, (_, index) => `${index + 1}. item ${index + 1}`);
  const expected = items.map((item) => `${item}\n`).join("");
  equal(render(chunked(`${items.join("\n")}\n`, 4)), expected);
  equal(render([`${items.join("\n")}\n\nafter\n`]), `${expected}\nafter\n`);
  equal(render(["1. a\n1. b\n1. c\n1. d\n"]), "1. a\n2. b\n3. c\n4. d\n", "items all numbered 1 count up");
  equal(render(["7. a\n8. b\n9. c\n10. d\n"]), "7. a\n8. b\n9. c\n10. d\n");
});

Deno.test("MarkdownStream nests bullets and indents continuation lines under their marker", () => {
  const text = "- a\n  - b\n    - c\n- d long enough to wrap onto a second line here\n";
  equal(render([text], 24), "• a\n  ◦ b\n    ▪ c\n• d long enough to wrap\n  onto a second line\n  here\n");
});

Deno.test("MarkdownStream keeps emphasis that spans a soft line break, holding the lines until it closes", () => {
  const { stream, output } = terminal(40, true);
  stream.push("**bold\n");
  stream.push("still bold** end\n");
  equal(output(), "", "the open ** holds its line");
  stream.push("\n");
  equal(output(), "\x1b[1mbold\x1b[22m\n\x1b[1mstill bold\x1b[22m end\n");
});

Deno.test("MarkdownStream treats setext underlines as text, so no later line turns printed text into a heading", () => {
  equal(
    render(["Title\n===\n\nText\n---\n"]),
    "Title\n===\n\nText\n\n────────────────────────────────────────────────\n",
  );
});

Deno.test("MarkdownStream shows a link's address after its text, once for a bare address", () => {
  equal(
    render(["See [the docs](https://x.dev/a) or <https://y.dev>.\n"]),
    "See the docs (https://x.dev/a) or https://y.dev.\n",
  );
});

Deno.test("MarkdownStream wraps paragraphs by display width, counting wide characters as two cells", () => {
  const output = render(["日本語のテキストはとても長いので折り返す必要があります。\n"], 12);
  const lines = output.trimEnd().split("\n");
  ok(lines.length > 1);
  for (const line of lines) ok(displayWidth(line) <= 12, `${line} is wider than 12`);
});

Deno.test("MarkdownStream aligns table columns by display width when cells hold wide characters", () => {
  const output = render(["| name | 名前 |\n|---|---|\n| 日本語 | x |\n| ab | 長い名前 |\n\n"]);
  const lines = output.trimEnd().split("\n");
  equal(lines.length, 4);
  const columns = lines.map((line) => displayWidth(line.slice(0, line.search(/[│┼]/))));
  equal(new Set(columns).size, 1, `separators at ${columns.join(", ")}`);
  equal(lines[2], "日本語 │ x");
});

Deno.test("MarkdownStream cuts a table that is wider than the terminal", () => {
  const row = "| a very long first cell indeed | another long cell here | third |";
  const output = render([`${row}\n|---|---|---|\n${row}\n\n`], 30);
  for (const line of output.trimEnd().split("\n")) ok(displayWidth(line) <= 30, `${line} is wider than 30`);
  match(output, /…/);
});

Deno.test("MarkdownStream highlights fenced code with colours on, and only then", async () => {
  await loadHighlighting(["ts"]);
  const code = "```ts\nconst a = 1;\n```\n";
  const colored = render([code], 40, true);
  ok(colored.includes("\x1b[35mconst\x1b[39m"), "the keyword is coloured");
  equal(render([code], 40, false), "│ const a = 1;\n");
  const unknown = render(["```nosuchlanguage\nconst a = 1;\n```\n"], 40, true);
  equal(unknown, "\x1b[2m│ \x1b[22mconst a = 1;\n", "an unknown language is plain behind its gutter");
});

Deno.test("MarkdownStream loads a grammar when a fence first names it, printing plain until it has loaded", async () => {
  // No other test in this file loads the Python grammar.
  const code = "```python\ndef f(): pass\n```\n";
  equal(render([code], 40, true), "\x1b[2m│ \x1b[22mdef f(): pass\n");
  await loadHighlighting(["py"]);
  ok(render([code], 40, true).includes("\x1b[35mdef\x1b[39m"));
});

Deno.test("MarkdownStream lets no escape or control character from the model reach the terminal", async (t) => {
  const hostile = [
    "Hi \x1b[2J\x1b]0;title\x07 \x9b31m bell\x07 \u202eevil\r!",
    "",
    "`\x1b[31m` and **\x1b[5mbold**",
    "",
    "# Head\x1b[1m",
    "",
    "| a\x1b[1m | b |",
    "|---|---|",
    "| \x1b[5m | x |",
    "",
    "```ts",
    "\x1b[31mred\x07",
    "```",
    "",
    "[link](http://x/\x1b[0m) \x00",
    "",
  ].join("\n");
  for (const colors of [false, true]) {
    await t.step(colors ? "colours on" : "colours off", () => {
      const output = render([hostile], 60, colors);
      // The only escapes are our own SGR codes.
      // deno-lint-ignore no-control-regex -- removing our own SGR codes is the point
      const visible = colors ? output.replace(/\x1b\[\d+m/g, "") : output;
      deepEqual(controls(visible), []);
      match(output, /␛\[2J/, "the escape shows as a picture");
    });
  }
});

Deno.test("MarkdownStream prints an unfinished last line at end", () => {
  equal(render(["one\n\ntwo"]), "one\n\ntwo\n");
  equal(render(["```\nopen code"]), "│ open code\n");
});
