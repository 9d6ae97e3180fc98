import { deepEqual, equal, match, ok } from "node:assert/strict";
import { displayWidth } from "../../../src/cli/_terminal_text.ts";
import {
  editDiff,
  type EditInput,
  type EditPreview,
  previewEdit,
} from "../../../src/cli/interactive/diff.ts";
import { createStyle } from "../../../src/cli/interactive/style.ts";
import { editFileTool } from "../../../src/tools/edit_file.ts";
import { createTempWorkspace, toolContext } from "../../_fakes/tool_context.ts";

const PLAIN = createStyle({ colors: false });
const COLORS = createStyle({ colors: true });

function lines(count: number, transform: (line: string) => string = (line) => line): string {
  return Array.from({ length: count }, (_, index) => `${transform(`line ${index + 1}`)}\n`).join("");
}

Deno.test("editDiff shows a change with numbered context lines and -/+ prefixes", () => {
  const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
  const after = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
  const diff = editDiff({ before, after, width: 80, style: PLAIN });
  deepEqual(diff.lines, ["2   b", "3   c", "4   d", "5 - e", "5 + E", "6   f", "7   g", "8   h"]);
  equal(diff.added, 1);
  equal(diff.removed, 1);
});

Deno.test("editDiff colours additions green and removals red when colours are on", () => {
  const diff = editDiff({ before: "a\n", after: "b\n", width: 80, style: COLORS });
  deepEqual(diff.lines, ["\x1b[2m1\x1b[22m \x1b[31m- a\x1b[39m", "\x1b[2m1\x1b[22m \x1b[32m+ b\x1b[39m"]);
});

Deno.test("editDiff separates distant changes and aligns line numbers", () => {
  const before = lines(20);
  const after = before.replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n");
  const diff = editDiff({ before, after, context: 1, width: 80, style: PLAIN });
  deepEqual(diff.lines, [
    " 1   line 1",
    " 2 - line 2",
    " 2 + line two",
    " 3   line 3",
    "   ⋮",
    "17   line 17",
    "18 - line 18",
    "18 + line eighteen",
    "19   line 19",
  ]);
});

Deno.test("editDiff shows a new file as numbered additions, cut with a count of the rest", () => {
  const diff = editDiff({ before: null, after: lines(12), maxLines: 5, width: 80, style: PLAIN });
  deepEqual(diff.lines, ["1 + line 1", "2 + line 2", "3 + line 3", "4 + line 4", "… 8 more lines"]);
  equal(diff.added, 12);
  equal(diff.removed, 0);
});

Deno.test("editDiff ignores CRLF line endings and a byte order mark", async (t) => {
  await t.step("a CRLF file with one line changed shows one line changed", () => {
    const diff = editDiff({ before: "a\r\nb\r\nc\r\n", after: "a\r\nB\r\nc\r\n", width: 80, style: PLAIN });
    deepEqual(diff.lines, ["1   a", "2 - b", "2 + B", "3   c"]);
  });
  await t.step("new text with LF for a CRLF file", () => {
    const diff = editDiff({ before: "a\r\nb\r\nc\r\n", after: "a\nB\nc\n", width: 80, style: PLAIN });
    deepEqual(diff.lines, ["1   a", "2 - b", "2 + B", "3   c"]);
  });
  await t.step("only the BOM and line endings differ", () => {
    const diff = editDiff({ before: "\ufeffx\r\ny\r\n", after: "x\ny\n", width: 80, style: PLAIN });
    deepEqual(diff.lines, ["No changes to the content"]);
    equal(diff.added + diff.removed, 0);
  });
});

Deno.test("editDiff says when only the final newline changed", () => {
  const diff = editDiff({ before: "a\nb", after: "a\nb\n", width: 80, style: PLAIN });
  deepEqual(diff.lines, ["1   a", "2 - b", "    \\ no newline at end of file", "2 + b"]);
});

Deno.test("editDiff cuts long lines to the width and makes file text safe for the terminal", () => {
  const diff = editDiff({
    before: null,
    after: `${"x".repeat(100)}\n\x1b[31mred\tz\n`,
    width: 30,
    style: PLAIN,
  });
  for (const line of diff.lines) ok(displayWidth(line) <= 30, `${line} is wider than 30`);
  match(diff.lines[0]!, /…$/);
  equal(diff.lines[1], "2 + ␛[31mred    z");
});

Deno.test("editDiff gives up on a change too large to diff", () => {
  const diff = editDiff({
    before: lines(3000),
    after: lines(3000, (line) => `${line}!`),
    width: 80,
    style: PLAIN,
  });
  deepEqual(diff.lines, ["The change is too large to show as a diff (more than 2000 changed lines)"]);
});

interface PreviewCase {
  name: string;
  file: string | null;
  input: EditInput;
  expected: EditPreview;
}

const PREVIEW_CASES: PreviewCase[] = [
  {
    name: "replaces the one occurrence",
    file: "a\nb\nc\n",
    input: { old_string: "b", new_string: "B" },
    expected: { ok: true, after: "a\nB\nc\n", replacements: 1, flexible: false },
  },
  {
    name: "refuses an old_string that occurs several times",
    file: "x\nx\n",
    input: { old_string: "x", new_string: "y" },
    expected: {
      ok: false,
      reason:
        "old_string occurs 2 times in the file (at lines 1, 2); add surrounding lines to old_string to " +
        "make it unique, or set replace_all to true to replace every occurrence",
    },
  },
  {
    name: "replaces every occurrence with replace_all",
    file: "x\nx\n",
    input: { old_string: "x", new_string: "y", replace_all: true },
    expected: { ok: true, after: "y\ny\n", replacements: 2, flexible: false },
  },
  {
    name: "says when old_string is not found",
    file: "a\n",
    input: { old_string: "zzz", new_string: "y" },
    expected: {
      ok: false,
      reason:
        "old_string was not found in the file, and no region of the file is close to it. Read the file " +
        "again with ReadFile and copy old_string exactly, without the line-number prefixes",
    },
  },
  {
    name: "refuses identical strings",
    file: "a\n",
    input: { old_string: "a", new_string: "a" },
    expected: { ok: false, reason: "old_string and new_string are identical, so there is nothing to change" },
  },
  {
    name: "creates a missing file from an empty old_string",
    file: null,
    input: { old_string: "", new_string: "new\n" },
    expected: { ok: true, after: "new\n", replacements: 0, flexible: false },
  },
  {
    name: "refuses to edit a missing file",
    file: null,
    input: { old_string: "a", new_string: "b" },
    expected: { ok: false, reason: "the file does not exist" },
  },
  {
    name: "refuses an empty old_string for a file that is not empty",
    file: "a\n",
    input: { old_string: "", new_string: "b" },
    expected: { ok: false, reason: "old_string is empty but the file already exists and is not empty" },
  },
  {
    name: "matches LF text in a CRLF file and writes CRLF",
    file: "a\r\nb\r\nc\r\n",
    input: { old_string: "a\nb", new_string: "A\nB" },
    expected: { ok: true, after: "A\r\nB\r\nc\r\n", replacements: 1, flexible: false },
  },
  {
    name: "keeps the byte order mark",
    file: "\ufeffa\n",
    input: { old_string: "a", new_string: "b" },
    expected: { ok: true, after: "\ufeffb\n", replacements: 1, flexible: false },
  },
  {
    name: "keeps the final newline when new_string drops it",
    file: "a\nb\n",
    input: { old_string: "b\n", new_string: "B" },
    expected: { ok: true, after: "a\nB\n", replacements: 1, flexible: false },
  },
  {
    name: "inserts new_string literally",
    file: "a\n",
    input: { old_string: "a", new_string: "$& $1 $$" },
    expected: { ok: true, after: "$& $1 $$\n", replacements: 1, flexible: false },
  },
  {
    name: "falls back to the whitespace-flexible match and re-indents",
    file: "function f() {\n\treturn 1;\n}\n",
    input: { old_string: "  return 1;", new_string: "  return 2;" },
    expected: { ok: true, after: "function f() {\n\treturn 2;\n}\n", replacements: 1, flexible: true },
  },
];

Deno.test("previewEdit applies an EditFile input as EditFile would", async (t) => {
  for (const { name, file, input, expected } of PREVIEW_CASES) {
    await t.step(name, () => deepEqual(previewEdit(file, input), expected));
  }
});

Deno.test("previewEdit agrees with EditFile run on the same file", async (t) => {
  await using workspace = await createTempWorkspace();
  for (const [index, { name, file, input }] of PREVIEW_CASES.entries()) {
    await t.step(name, async () => {
      const path = `${workspace.root}/case_${index}.txt`;
      if (file !== null) await Deno.writeTextFile(path, file);
      const preview = previewEdit(file, input);
      const context = toolContext(workspace.root, { requireRead: false });
      const result = await editFileTool.execute(context, { path, ...input });
      equal(result.isError, !preview.ok, result.content);
      if (!preview.ok) return;
      const written = new TextDecoder("utf-8", { ignoreBOM: true }).decode(await Deno.readFile(path));
      equal(written, preview.after);
    });
  }
});
