import { deepEqual, equal } from "node:assert/strict";
import { scanJson } from "../../src/config/_json_scan.ts";

Deno.test("scanJson locates syntax errors by line and column", async (t) => {
  const cases: [string, string, { line: number; column: number; message: RegExp }][] = [
    ["a missing comma", '{\n  "a": 1\n  "b": 2\n}', { line: 3, column: 3, message: /expected "," or "}"/ }],
    ["a trailing comma", '{"a": [1,\n]}', { line: 2, column: 1, message: /expected a value, found "]"/ }],
    ["an unquoted key", "{\n a: 1}", { line: 2, column: 2, message: /property name in double quotes/ }],
    ["an unclosed string", '{"a": "b\n"}', {
      line: 1,
      column: 9,
      message: /line break or control character/,
    }],
    ["a bad escape", '{"a": "\\x"}', { line: 1, column: 8, message: /invalid escape "\\x"/ }],
    ["the end of the file", '{"a": ', { line: 1, column: 7, message: /the file ends/ }],
    ["text after the value", "{}\n{}", { line: 2, column: 1, message: /after the end of the JSON value/ }],
    ["a comment", '{"a": 1 // no\n}', { line: 1, column: 9, message: /expected "," or "}"/ }],
    ["a leading zero", '{"a": 01}', { line: 1, column: 8, message: /expected "," or "}"/ }],
    ["an empty file", "", { line: 1, column: 1, message: /expected a value, the file ends/ }],
    // JSON.parse keeps the last of two equal keys: a reader of the file may see only the first.
    [
      "a key given twice",
      '{\n  "permissions": {\n    "deny": ["Bash"],\n    "allow": [],\n    "deny": []\n  }\n}',
      {
        line: 5,
        column: 5,
        message: /"permissions\.deny" appears twice in one object \(first on line 3\)/,
      },
    ],
  ];
  for (const [name, text, expected] of cases) {
    await t.step(name, () => {
      const scan = scanJson(text);
      if (scan.ok) throw new Error(`${JSON.stringify(text)} scanned as valid`);
      equal(scan.line, expected.line);
      equal(scan.column, expected.column);
      if (!expected.message.test(scan.message)) throw new Error(`unexpected message: ${scan.message}`);
    });
  }
});

Deno.test("scanJson accepts what JSON.parse accepts and finds each key's line", () => {
  const text = '{\n  "a": {\n    "b": [\n      1,\n      {"c": "\\u00e9\\n"}\n    ]\n  },\n  "d": -1.5e+3\n}';
  JSON.parse(text);
  const scan = scanJson(text);
  if (!scan.ok) throw new Error(scan.message);
  deepEqual(
    [["a"], ["a", "b"], ["a", "b", 0], ["a", "b", 1, "c"], ["d"], ["a", "missing"], []].map((path) =>
      scan.lines.lineOf(path)
    ),
    [2, 3, 4, 5, 8, 2, null],
  );
});

Deno.test("scanJson refuses nesting deeper than 64 levels", () => {
  const scan = scanJson(`${"[".repeat(100)}${"]".repeat(100)}`);
  equal(scan.ok, false);
  equal(!scan.ok && /nested more than 64/.test(scan.message), true);
});

Deno.test("scanJson takes equal keys in different objects, and an escaped spelling of a key as the same key", () => {
  equal(scanJson('{"a": {"x": 1}, "b": {"x": 2}}').ok, true);
  const escaped = scanJson('{"deny": 1, "d\\u0065ny": 2}');
  equal(escaped.ok, false);
});
