import { deepStrictEqual as assertEquals, equal, notEqual, ok as assert } from "node:assert/strict";
import { createHash } from "node:crypto";
import { editFileTool } from "../../src/tools/edit_file.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import {
  assertExcludes,
  assertIncludes,
  callContext,
  createTempWorkspace,
  FILE_TOOL_MODULES,
  startToolWorker,
  toolContext,
  workerPermissions,
} from "../_fakes/tool_context.ts";

const encoder = new TextEncoder();

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

interface EditInput {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** A file in a temp workspace, recorded as read, with a helper to edit it as the session would. */
async function fileWith(root: string, name: string, content: string | Uint8Array) {
  const path = `${root}/${name}`;
  await Deno.writeFile(path, typeof content === "string" ? encoder.encode(content) : content);
  const records: Record<string, string> = { [path]: sha256(await Deno.readFile(path)) };
  return {
    path,
    records,
    async edit(input: EditInput): Promise<ToolResult> {
      const result = await editFileTool.execute(toolContext(root, { fileRecords: { ...records } }), {
        path,
        ...input,
      });
      const record = result.metadata.fileRecord as { path: string; hash: string } | undefined;
      if (!result.isError && record) records[record.path] = record.hash;
      return result;
    },
    text: (): Promise<string> => Deno.readTextFile(path),
    bytes: (): Promise<Uint8Array> => Deno.readFile(path),
  };
}

Deno.test("EditFile declares file metadata and describes its rules to the model", () => {
  equal(editFileTool.name, "EditFile");
  equal(editFileTool.category, "file");
  assert(!editFileTool.isReadOnly());
  assert(!editFileTool.isDestructive());
  assert(!editFileTool.isConcurrencySafe({ path: "/x", old_string: "a", new_string: "b" }));
  equal(editFileTool.jsonSchema.additionalProperties, false);
  for (const property of Object.values(editFileTool.jsonSchema.properties)) {
    assert(typeof (property as { description?: unknown }).description === "string");
  }
  for (const word of ["ReadFile", "replace_all", "line-number prefix", "Grep", "WriteFile", "$&"]) {
    assertIncludes(editFileTool.description, word);
  }
});

Deno.test("EditFile replaces a unique exact match, keeps every other byte and shows numbered lines", async () => {
  await using workspace = await createTempWorkspace();
  const lines = Array.from({ length: 20 }, (_, index) => `line ${index + 1}`);
  const file = await fileWith(workspace.root, "a.txt", lines.join("\n") + "\n");
  const result = await file.edit({ old_string: "line 10\n", new_string: "line ten\nline ten and a half\n" });
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "replaced 1 occurrence");
  assertIncludes(
    result.content,
    "7\tline 7\n8\tline 8\n9\tline 9\n10\tline ten\n11\tline ten and a half\n12\tline 11",
  );
  assertExcludes(result.content, "\tline 2\n");
  const expected = [...lines.slice(0, 9), "line ten", "line ten and a half", ...lines.slice(10)].join("\n") +
    "\n";
  equal(await file.text(), expected);
  assertEquals(result.metadata.fileRecord, { path: file.path, hash: sha256(encoder.encode(expected)) });
});

Deno.test("EditFile refuses an old_string that occurs more than once, stating the count", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.ts", "x = 1;\ny = 2;\nx = 1;\nx = 1;\n");
  const result = await file.edit({ old_string: "x = 1;", new_string: "x = 3;" });
  equal(result.isError, true);
  assertIncludes(result.content, "occurs 3 times");
  assertIncludes(result.content, "lines 1, 3, 4");
  assertIncludes(result.content, "replace_all");
  equal(await file.text(), "x = 1;\ny = 2;\nx = 1;\nx = 1;\n");
});

Deno.test("EditFile with replace_all replaces every occurrence and reports how many", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.ts", "foo(1);\nbar();\nfoo(2);\nfoo(3);\n");
  const result = await file.edit({ old_string: "foo", new_string: "baz", replace_all: true });
  equal(result.isError, false);
  assertIncludes(result.content, "replaced 3 occurrences");
  equal(result.metadata.replacements, 3);
  equal(await file.text(), "baz(1);\nbar();\nbaz(2);\nbaz(3);\n");
});

Deno.test("EditFile inserts $&, $1, $$ and $' literally, with and without replace_all", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.txt", "price: X\nother: X\n");
  const single = await file.edit({ old_string: "price: X", new_string: "price: $& $1 $$ $' $`" });
  equal(single.isError, false);
  equal(await file.text(), "price: $& $1 $$ $' $`\nother: X\n");
  const all = await file.edit({ old_string: "X", new_string: "$&$$", replace_all: true });
  equal(all.isError, false);
  equal(await file.text(), "price: $& $1 $$ $' $`\nother: $&$$\n");
});

Deno.test("EditFile refuses identical old_string and new_string", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.txt", "same\n");
  const result = await file.edit({ old_string: "same", new_string: "same" });
  equal(result.isError, true);
  assertIncludes(result.content, "identical");
  assertIncludes(
    editFileTool.validateInput({ path: "/ws/a", old_string: "a", new_string: "a" }, { root: "/ws" })!,
    "identical",
  );
});

Deno.test("EditFile shows the closest region with line numbers when old_string is not found", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(
    workspace.root,
    "a.ts",
    "import x from 'x';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nexport { add };\n",
  );
  const whitespace = await file.edit({
    old_string: "function add(a,b) {\n  return a+b;\n}",
    new_string: "z",
  });
  equal(whitespace.isError, true);
  assertIncludes(whitespace.content, "not found");
  assertIncludes(whitespace.content, "lines 3-5");
  assertIncludes(whitespace.content, "3\tfunction add(a, b) {\n4\t  return a + b;\n5\t}");
  assertIncludes(whitespace.content, "differs from old_string only in whitespace");
  const different = await file.edit({
    old_string: "function add(a, b) {\n  return a - b;\n}",
    new_string: "z",
  });
  equal(different.isError, true);
  assertIncludes(different.content, "3\tfunction add(a, b) {");
  assertIncludes(different.content, "more than whitespace");
  const unrelated = await file.edit({ old_string: "qqqqqqqqqqqq", new_string: "z" });
  assertIncludes(unrelated.content, "no region of the file is close");
  equal(
    await file.text(),
    "import x from 'x';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nexport { add };\n",
  );
});

Deno.test("EditFile falls back to a whitespace-flexible match for tabs vs spaces and re-indents with tabs", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.go", "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n");
  const result = await file.edit({
    old_string: "    if x {\n        return 1\n    }",
    new_string: "    if y {\n        return 2\n    }\n    return 0",
  });
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "whitespace-flexible match");
  equal(result.metadata.flexible, true);
  equal(await file.text(), "func f() {\n\tif y {\n\t\treturn 2\n\t}\n\treturn 0\n}\n");
});

Deno.test("EditFile's flexible match ignores trailing whitespace and applies a uniform indentation shift", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(
    workspace.root,
    "a.py",
    "class A:\n    def f(self):   \n        return 1  \n\n    def g(self):\n        pass\n",
  );
  const result = await file.edit({
    old_string: "def f(self):\n    return 1\n",
    new_string: "def f(self):\n    value = 2\n    return value\n",
  });
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "whitespace-flexible");
  equal(
    await file.text(),
    "class A:\n    def f(self):\n        value = 2\n        return value\n\n    def g(self):\n        pass\n",
  );
});

Deno.test("EditFile matches text whose accents the file writes decomposed (NFD) and the model composed (NFC)", async () => {
  await using workspace = await createTempWorkspace();
  const decomposed = "const cafe\u0301 = 1;\nconst other = 2;\n"; // "café" as e + U+0301
  const file = await fileWith(workspace.root, "a.js", decomposed);
  const result = await file.edit({ old_string: "const caf\u00e9 = 1;", new_string: "const caf\u00e9 = 3;" });
  equal(result.isError, false, result.content);
  equal(await file.text(), "const caf\u00e9 = 3;\nconst other = 2;\n");
});

Deno.test("EditFile applies no flexible match when more than one place matches", async () => {
  await using workspace = await createTempWorkspace();
  const content = "a:\n\tx = 1\nb:\n\tx = 1\n";
  const file = await fileWith(workspace.root, "a.txt", content);
  const result = await file.edit({ old_string: "  x = 1", new_string: "  x = 2" });
  equal(result.isError, true);
  assertIncludes(result.content, "matches 2 places");
  assertIncludes(result.content, "lines 2, 4");
  equal(await file.text(), content);
});

Deno.test("EditFile keeps a CRLF file CRLF when old and new strings use LF", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "dos.txt", "one\r\ntwo\r\nthree\r\n");
  const result = await file.edit({ old_string: "one\ntwo\n", new_string: "uno\ndos\nplus\n" });
  equal(result.isError, false, result.content);
  equal(await file.text(), "uno\r\ndos\r\nplus\r\nthree\r\n");
  assertExcludes(result.content, "\r");
});

Deno.test("EditFile writes no \\r into an LF file even when new_string has CRLF", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "unix.txt", "one\ntwo\n");
  await file.edit({ old_string: "one\r\n", new_string: "uno\r\nextra\r\n" });
  equal(await file.text(), "uno\nextra\ntwo\n");
});

Deno.test("EditFile keeps the final-newline state of the file", async () => {
  await using workspace = await createTempWorkspace();
  const without = await fileWith(workspace.root, "no-eol.txt", "a\nb");
  await without.edit({ old_string: "b", new_string: "c\n" });
  equal(await without.text(), "a\nc");
  const withEol = await fileWith(workspace.root, "eol.txt", "a\nb\n");
  await withEol.edit({ old_string: "\nb\n", new_string: "" });
  equal(await withEol.text(), "a\n");
  await withEol.edit({ old_string: "a\n", new_string: "z" });
  equal(await withEol.text(), "z\n");
  const crlf = await fileWith(workspace.root, "crlf.txt", "a\r\nb\r\n");
  await crlf.edit({ old_string: "b\n", new_string: "c" });
  equal(await crlf.text(), "a\r\nc\r\n");
});

Deno.test("EditFile refuses an edit that leaves the file unchanged instead of reporting it made", async () => {
  await using workspace = await createTempWorkspace();
  // The final-newline rule takes back the newline new_string adds: the model must not be told it was added.
  const file = await fileWith(workspace.root, "no-eol.txt", "abc");
  const result = await file.edit({ old_string: "abc", new_string: "abc\n" });
  equal(result.isError, true, result.content);
  equal(result.metadata.reason, "no-change");
  assertIncludes(result.content, "the final newline");
  equal(await file.text(), "abc");
});

Deno.test("EditFile refuses to write a lone surrogate into a UTF-16 file, which could not be read again", async () => {
  await using workspace = await createTempWorkspace();
  const original = Uint8Array.of(0xff, 0xfe, 0x61, 0x00, 0x3d, 0xd8, 0x00, 0xde);
  const wide = await fileWith(workspace.root, "wide.txt", original);
  const result = await wide.edit({ old_string: "\uDE00", new_string: "x" });
  equal(result.isError, true, result.content);
  assertIncludes(result.content, "UTF-16LE");
  assertEquals(await wide.bytes(), original);
});

Deno.test("EditFile keeps a UTF-8 BOM and a UTF-16 encoding", async () => {
  await using workspace = await createTempWorkspace();
  const bom = await fileWith(
    workspace.root,
    "bom.txt",
    Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode("hi there\n")),
  );
  await bom.edit({ old_string: "there", new_string: "world" });
  assertEquals(await bom.bytes(), Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode("hi world\n")));
  const wide = await fileWith(workspace.root, "wide.txt", Uint8Array.of(0xfe, 0xff, 0x00, 0x61, 0x00, 0x62));
  const result = await wide.edit({ old_string: "b", new_string: "é" });
  equal(result.isError, false, result.content);
  assertEquals(await wide.bytes(), Uint8Array.of(0xfe, 0xff, 0x00, 0x61, 0x00, 0xe9));
});

Deno.test("EditFile keeps invalid UTF-8 bytes outside the edit identical and refuses unencodable text", async () => {
  await using workspace = await createTempWorkspace();
  // "café = 1\nna\xefve = 2\n" in Latin-1, plus a Windows-1252 curly quote.
  const original = Uint8Array.of(
    ...encoder.encode("caf"),
    0xe9,
    ...encoder.encode(" = 1\nna"),
    0xef,
    ...encoder.encode("ve = 2\n"),
    0x93,
    ...encoder.encode("q\n"),
  );
  const file = await fileWith(workspace.root, "latin.txt", original);
  const ascii = await file.edit({ old_string: "= 2", new_string: "= 3" });
  equal(ascii.isError, false, ascii.content);
  const afterAscii = Uint8Array.from(original);
  afterAscii[afterAscii.indexOf(0x32)] = 0x33;
  assertEquals(await file.bytes(), afterAscii);
  const accented = await file.edit({ old_string: "café", new_string: "cafés" });
  equal(accented.isError, false, accented.content);
  assertEquals((await file.bytes()).slice(0, 6), Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x73, 0x20));
  const before = await file.bytes();
  const refused = await file.edit({ old_string: "q", new_string: "→" });
  equal(refused.isError, true);
  assertIncludes(refused.content, "not UTF-8");
  assertEquals(await file.bytes(), before);
});

Deno.test("EditFile with an empty old_string creates a missing file, with parent directories", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/new/dir/file.ts`;
  const result = await editFileTool.execute(toolContext(workspace.root), {
    path,
    old_string: "",
    new_string: "export const a = 1;\n",
  });
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "Created");
  assertIncludes(result.content, "1\texport const a = 1;");
  equal(await Deno.readTextFile(path), "export const a = 1;\n");
  equal((await Deno.stat(path)).mode! & 0o777, 0o644);
  assertEquals(result.metadata.fileRecord, { path, hash: sha256(encoder.encode("export const a = 1;\n")) });
});

Deno.test("EditFile with an empty old_string refuses a non-empty file and fills an empty one", async () => {
  await using workspace = await createTempWorkspace();
  const full = await fileWith(workspace.root, "full.txt", "content\n");
  const refused = await full.edit({ old_string: "", new_string: "x" });
  equal(refused.isError, true);
  assertIncludes(refused.content, "not empty");
  equal(await full.text(), "content\n");
  const empty = await fileWith(workspace.root, "empty.txt", "");
  const filled = await empty.edit({ old_string: "", new_string: "hello\n" });
  equal(filled.isError, false, filled.content);
  equal(await empty.text(), "hello\n");
});

Deno.test("EditFile requires a read first and refuses a file modified since the read", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "one\n");
  const unread = await editFileTool.execute(toolContext(workspace.root), {
    path,
    old_string: "one",
    new_string: "two",
  });
  equal(unread.isError, true);
  assertIncludes(unread.content, "read it first");
  const file = await fileWith(workspace.root, "b.txt", "one\n");
  await Deno.writeTextFile(file.path, "one\nexternal\n");
  const stale = await file.edit({ old_string: "one", new_string: "two" });
  equal(stale.isError, true);
  assertIncludes(stale.content, "modified since you read it — read it again");
  equal(await file.text(), "one\nexternal\n");
});

Deno.test("EditFile edits a never-read file when the caller does not require a read, but not a stale one", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "one\n");
  const unread = await editFileTool.execute(toolContext(workspace.root, { requireRead: false }), {
    path,
    old_string: "one",
    new_string: "two",
  });
  equal(unread.isError, false, unread.content);
  equal(await Deno.readTextFile(path), "two\n");
  const file = await fileWith(workspace.root, "b.txt", "one\n");
  await Deno.writeTextFile(file.path, "one\nexternal\n");
  const stale = await editFileTool.execute(
    toolContext(workspace.root, { requireRead: false, fileRecords: { [file.path]: "0".repeat(64) } }),
    { path: file.path, old_string: "one", new_string: "two" },
  );
  equal(stale.isError, true);
  assertIncludes(stale.content, "modified since you read it");
});

Deno.test("EditFile refreshes the record with its own write, so two edits in a row need no re-read", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.txt", "alpha\nbeta\n");
  equal((await file.edit({ old_string: "alpha", new_string: "ALPHA" })).isError, false);
  const second = await file.edit({ old_string: "beta", new_string: "BETA" });
  equal(second.isError, false, second.content);
  equal(await file.text(), "ALPHA\nBETA\n");
});

Deno.test("EditFile serialises concurrent edits of one file: no update is lost", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.txt", "a=1\nb=1\nc=1\n");
  const context = toolContext(workspace.root, { fileRecords: { ...file.records } });
  const results = await Promise.all(
    ["a", "b", "c"].map((name) =>
      editFileTool.execute(context, { path: file.path, old_string: `${name}=1`, new_string: `${name}=2` })
    ),
  );
  const succeeded = results.filter((result) => !result.isError);
  equal(succeeded.length, 1, results.map((result) => result.content).join("\n"));
  for (const result of results.filter((item) => item.isError)) {
    assertIncludes(result.content, "modified since");
  }
  const text = await file.text();
  equal(text.split("=2").length - 1, 1, text);
  assertEquals(succeeded[0]!.metadata.fileRecord, { path: file.path, hash: sha256(await file.bytes()) });
});

Deno.test("EditFile reports a missing file with similar names", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/config.json`, "{}");
  const result = await editFileTool.execute(toolContext(workspace.root), {
    path: `${workspace.root}/conifg.json`,
    old_string: "a",
    new_string: "b",
  });
  equal(result.isError, true);
  assertIncludes(result.content, "file not found");
  assertIncludes(result.content, `"${workspace.root}/config.json"`);
});

Deno.test("EditFile writes atomically, keeps the mode, and replaces only the link of a hard-linked file", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.sh", "echo old\n");
  await Deno.chmod(file.path, 0o700);
  await Deno.link(file.path, `${workspace.root}/other.sh`);
  const inode = (await Deno.stat(file.path)).ino;
  const result = await file.edit({ old_string: "old", new_string: "new" });
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "other links keep the old content");
  equal(await file.text(), "echo new\n");
  equal(await Deno.readTextFile(`${workspace.root}/other.sh`), "echo old\n");
  notEqual((await Deno.stat(file.path)).ino, inode);
  equal((await Deno.stat(file.path)).mode! & 0o7777, 0o700);
  const names: string[] = [];
  for await (const entry of Deno.readDir(workspace.root)) names.push(entry.name);
  assertEquals(names.sort(), ["a.sh", "other.sh"]);
});

Deno.test({
  name: "EditFile in a worker run as root keeps the owner, group and mode of the file it edits",
  ignore: Deno.uid() !== 0,
  async fn() {
    await using workspace = await createTempWorkspace();
    const file = await fileWith(workspace.root, "theirs.txt", "old\n");
    await Deno.chown(file.path, 1234, 1234);
    await Deno.chmod(file.path, 0o640);
    const result = await editInWorker(workspace.root, file, "old", "new");
    equal(result.isError, false, result.content);
    assertExcludes(result.content, "Note:");
    const info = await Deno.stat(file.path);
    assertEquals([info.uid, info.gid, info.mode! & 0o7777], [1234, 1234, 0o640]);
    equal(await file.text(), "new\n");
  },
});

Deno.test("EditFile in a worker edits a read-only file, keeps its mode and says it was read-only", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "frozen.txt", "old\n");
  await Deno.chmod(file.path, 0o444);
  const result = await editInWorker(workspace.root, file, "old", "new");
  equal(result.isError, false, result.content);
  assertIncludes(
    result.content,
    `Edited "${file.path}": replaced 1 occurrence\n` +
      "Note: the file was read-only (mode 0444); it was rewritten all the same and keeps that mode.\n",
  );
  equal(await file.text(), "new\n");
  equal((await Deno.stat(file.path)).mode! & 0o7777, 0o444);
});

Deno.test("EditFile refuses binary files and directories", async () => {
  await using workspace = await createTempWorkspace();
  const binary = await fileWith(workspace.root, "blob.dat", Uint8Array.of(0x61, 0x00, 0x62));
  const result = await binary.edit({ old_string: "a", new_string: "c" });
  equal(result.isError, true);
  assertIncludes(result.content, "binary");
  await Deno.mkdir(`${workspace.root}/dir`);
  const directory = await editFileTool.execute(toolContext(workspace.root), {
    path: `${workspace.root}/dir`,
    old_string: "a",
    new_string: "b",
  });
  assertIncludes(directory.content, "is a directory");
});

Deno.test("EditFile writes nothing when its call is already cancelled", async () => {
  await using workspace = await createTempWorkspace();
  const file = await fileWith(workspace.root, "a.txt", "one\n");
  const controller = new AbortController();
  controller.abort();
  const result = await editFileTool.execute(
    toolContext(workspace.root, { fileRecords: file.records, signal: controller.signal }),
    { path: file.path, old_string: "one", new_string: "two" },
  );
  equal(result.isError, true);
  assertIncludes(result.content, "cancelled");
  equal(await file.text(), "one\n");
});

Deno.test("EditFile shows a long changed line cut with the same marker as ReadFile", async () => {
  await using workspace = await createTempWorkspace();
  const long = `const data = "${"z".repeat(2100)}";`;
  const file = await fileWith(workspace.root, "long.ts", "a\nb\n");
  const result = await file.edit({ old_string: "b\n", new_string: `${long}\n` });
  equal(result.isError, false, result.content);
  assertIncludes(
    result.content,
    `2\t${long.slice(0, 2000)}… [line cut: ${long.length} characters, first 2000 shown]`,
  );
  equal(await file.text(), `a\n${long}\n`);
});

Deno.test("EditFile run by mewcode refuses a replace_all that would pass 256 MiB and leaves the file as it was", async () => {
  // 990,000 one-letter occurrences each replaced by 1,000 letters: about 944 MiB, which once grew the
  // worker's heap until V8 aborted the whole process. The file itself is 1 MB.
  await using workspace = await createTempWorkspace();
  const home = await Deno.makeTempDir({ prefix: "mewcode-home-" });
  try {
    const file = await fileWith(workspace.root, "big.txt", `${"a".repeat(99)}\n`.repeat(10_000));
    const before = sha256(await file.bytes());
    const input = { path: file.path, old_string: "a", new_string: "b".repeat(1000), replace_all: true };
    const output = await new Deno.Command(new URL("../../scripts/mewcode", import.meta.url).pathname, {
      args: ["tool", "EditFile", JSON.stringify(input)],
      cwd: workspace.root,
      env: { MEWCODE_HOME: home },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const result = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      content: string;
      is_error: boolean;
    };
    equal(output.code, 1, new TextDecoder().decode(output.stderr));
    equal(result.is_error, true);
    equal(
      result.content,
      `Cannot edit file "${file.path}": replacing 990000 occurrences would make it 944 MB, more than the 256 MB ` +
        "an edit may produce; edit a smaller part (without replace_all) or use Bash",
    );
    equal(sha256(await file.bytes()), before);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** EditFile of `file` (read first) in a tool worker with the writers' permissions. */
async function editInWorker(
  root: string,
  file: { path: string; records: Record<string, string> },
  oldString: string,
  newString: string,
): Promise<ToolResult> {
  using worker = startToolWorker(FILE_TOOL_MODULES, workerPermissions(root, "read-write"));
  return await worker.execute(
    "editFileTool",
    callContext(root, { fileRecords: file.records }),
    { path: file.path, old_string: oldString, new_string: newString },
  );
}
