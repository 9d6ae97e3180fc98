import { deepStrictEqual as assertEquals, equal, ok as assert } from "node:assert/strict";
import { createHash } from "node:crypto";
import { MAX_READ_CHARACTERS, readFileTool } from "../../src/tools/read_file.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import {
  assertExcludes,
  assertIncludes,
  callContext,
  createTempWorkspace,
  executeUnprivileged,
  toolContext,
} from "../_fakes/tool_context.ts";

const READ_FILE_MODULE = new URL("../../src/tools/read_file.ts", import.meta.url);

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function read(root: string, input: Record<string, unknown>, strictLinks = false): Promise<ToolResult> {
  return await readFileTool.execute(toolContext(root, { strictLinks }), input as never);
}

function numbered(from: number, lines: string[]): string {
  return lines.map((line, index) => `${from + index}\t${line}`).join("\n");
}

Deno.test("ReadFile declares file metadata: read-only, not destructive, concurrency-safe", () => {
  equal(readFileTool.name, "ReadFile");
  equal(readFileTool.category, "file");
  assert(readFileTool.isReadOnly());
  assert(!readFileTool.isDestructive());
  assert(readFileTool.isConcurrencySafe({ path: "/x" }));
  for (const [name, property] of Object.entries(readFileTool.jsonSchema.properties)) {
    assert(
      typeof (property as { description?: unknown }).description === "string",
      `${name} has a description`,
    );
  }
  equal(readFileTool.jsonSchema.additionalProperties, false);
  for (const word of ["Glob", "Grep", "Bash", "absolute", "offset", "WriteFile", "EditFile"]) {
    assertIncludes(readFileTool.description, word);
  }
});

Deno.test("ReadFile numbers lines from 1 with a tab, keeps tabs, hides CRLF \\r and adds no phantom line", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "first\r\n\tindented\r\n\r\nlast\r\n");
  const result = await read(workspace.root, { path });
  equal(result.isError, false);
  equal(result.content, "1\tfirst\n2\t\tindented\n3\t\n4\tlast");
  assertExcludes(result.content, "\r");
  equal(result.metadata.totalLines, 4);
});

Deno.test("ReadFile shows absolute line numbers from offset and stops at limit with a continuation notice", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  const lines = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  const result = await read(workspace.root, { path, offset: 10, limit: 3 });
  equal(result.isError, false);
  assert(result.content.startsWith(numbered(10, ["line 10", "line 11", "line 12"])), result.content);
  assertIncludes(result.content, "of 30");
  assertIncludes(result.content, "offset 13");
  const tail = await read(workspace.root, { path, offset: 29 });
  equal(tail.content, numbered(29, ["line 29", "line 30"]));
});

Deno.test("ReadFile returns 2000 lines by default, then the total and the offset to continue from", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/long.txt`;
  await Deno.writeTextFile(path, Array.from({ length: 2500 }, (_, index) => `l${index + 1}`).join("\n"));
  const result = await read(workspace.root, { path });
  equal(result.isError, false);
  const lines = result.content.split("\n");
  equal(lines[0], "1\tl1");
  equal(lines[1999], "2000\tl2000");
  assertExcludes(result.content, "2001\tl2001");
  assertIncludes(result.content, "of 2500");
  assertIncludes(result.content, "offset 2001");
  assertEquals([result.metadata.startLine, result.metadata.endLine, result.metadata.truncated], [
    1,
    2000,
    true,
  ]);
});

Deno.test("ReadFile returns the first page of a huge file with the notice, not an error", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/huge.log`;
  const line = "x".repeat(100);
  await Deno.writeTextFile(path, `${line}\n`.repeat(60_000)); // 6 MB
  const result = await read(workspace.root, { path });
  equal(result.isError, false);
  assert(result.content.startsWith(`1\t${line}\n`));
  assertIncludes(result.content, "of 60000");
  assertIncludes(result.content, "offset ");
  equal(result.metadata.totalLines, 60_000);
});

Deno.test("ReadFile cuts lines longer than 2000 characters with a visible marker", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/wide.txt`;
  const long = "a".repeat(1990) + "b".repeat(20) + "TAIL";
  await Deno.writeTextFile(path, `short\n${long}\n`);
  const result = await read(workspace.root, { path });
  const second = result.content.split("\n")[1]!;
  assert(second.startsWith(`2\t${"a".repeat(1990)}${"b".repeat(10)}…`), second.slice(0, 40));
  assertExcludes(second, "TAIL");
  assertIncludes(second, "line cut: 2014 characters");
  equal(result.content.split("\n")[0], "1\tshort");
});

Deno.test("ReadFile offset and limit must be positive integers: schema and validation name the parameter", () => {
  for (
    const [input, name] of [
      [{ offset: 0 }, "offset"],
      [{ offset: 1.5 }, "offset"],
      [{ limit: -1 }, "limit"],
      [{
        limit: "3",
      }, "limit"],
    ] as const
  ) {
    const parsed = readFileTool.inputSchema.safeParse({ path: "/ws/a.txt", ...input });
    assert(!parsed.success, JSON.stringify(input));
    const issue = parsed.error.issues[0]!;
    assertEquals(issue.path, [name]);
    assertIncludes(issue.message, `${name} must be a positive integer`);
  }
  equal(
    readFileTool.validateInput({ path: "/ws/a.txt", offset: 0 }, { root: "/ws" })?.includes("offset"),
    true,
  );
  assert(!readFileTool.inputSchema.safeParse({ path: "/ws/a.txt", extra: 1 }).success);
});

Deno.test("ReadFile execute also rejects a non-positive offset, naming it", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/a.txt`, "a\n");
  const result = await read(workspace.root, { path: `${workspace.root}/a.txt`, offset: 0 });
  equal(result.isError, true);
  assertIncludes(result.content, "offset must be a positive integer");
});

Deno.test("ReadFile with an offset past the end returns no content and says how many lines the file has", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "one\ntwo\nthree\n");
  const result = await read(workspace.root, { path, offset: 10 });
  equal(result.isError, false);
  assertIncludes(result.content, "has 3 lines");
  assertExcludes(result.content, "\tone");
});

Deno.test("ReadFile reports an empty file explicitly and still records it", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/empty.txt`;
  await Deno.writeFile(path, new Uint8Array(0));
  const result = await read(workspace.root, { path });
  equal(result.isError, false);
  assertIncludes(result.content, "is empty");
  assertEquals(result.metadata.fileRecord, { path, hash: sha256(new Uint8Array(0)) });
});

Deno.test("ReadFile records the canonical path and the hash of all bytes, even for a partial read", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.mkdir(`${root}/real`);
  const content = new TextEncoder().encode("a\nb\nc\n");
  await Deno.writeFile(`${root}/real/f.txt`, content);
  await Deno.symlink(`${root}/real`, `${root}/alias`);
  const result = await read(root, { path: `${root}/alias/f.txt`, offset: 2, limit: 1 });
  equal(result.content.split("\n")[0], "2\tb");
  assertEquals(result.metadata.fileRecord, { path: `${root}/real/f.txt`, hash: sha256(content) });
});

Deno.test("ReadFile suggests up to 3 similar names when the file is not found", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  for (const name of ["main.ts", "main.tsx", "mains.ts", "main.js", "domain.ts", "unrelated.md"]) {
    await Deno.writeTextFile(`${root}/${name}`, "");
  }
  const result = await read(root, { path: `${root}/mian.ts` });
  equal(result.isError, true);
  assertIncludes(result.content, "file not found");
  const suggested = [...result.content.matchAll(/"([^"]+)"/g)].map((match) => match[1]).slice(1);
  equal(suggested.length, 3, result.content);
  assert(suggested.includes(`${root}/main.ts`), result.content);
  assertExcludes(result.content, "unrelated.md");
  const none = await read(root, { path: `${root}/zzzzzzzzzz.py` });
  assertIncludes(none.content, "file not found");
  assertExcludes(none.content, "Did you mean");
  const deep = await read(root, { path: `${root}/no/such/dir/file.ts` });
  assertIncludes(deep.content, "does not exist");
});

Deno.test("ReadFile on a directory returns an error that suggests Glob", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(`${workspace.root}/src`);
  const result = await read(workspace.root, { path: `${workspace.root}/src` });
  equal(result.isError, true);
  assertIncludes(result.content, "is a directory");
  assertIncludes(result.content, "Glob");
});

Deno.test("ReadFile refuses binary files by NUL byte and by extension, suggesting Bash", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeFile(`${root}/data.bin.txt`, Uint8Array.of(0x41, 0x00, 0x42));
  await Deno.writeTextFile(`${root}/picture.png`, "looks like text");
  for (const name of ["data.bin.txt", "picture.png"]) {
    const result = await read(root, { path: `${root}/${name}` });
    equal(result.isError, true, name);
    assertIncludes(result.content, `Cannot read file "${root}/${name}": file is binary`);
    assertIncludes(result.content, "Bash");
  }
});

Deno.test("ReadFile reports permission denied", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/locked.txt`;
  await Deno.writeTextFile(path, "secret\n");
  await Deno.chmod(path, 0o000);
  const result = await executeUnprivileged(READ_FILE_MODULE, "readFileTool", callContext(workspace.root), {
    path,
  });
  equal(result.isError, true);
  equal(result.content, `Cannot read file "${path}": permission denied`);
});

Deno.test("ReadFile rejects paths outside the workspace and relative paths with the absolute one meant", async () => {
  await using workspace = await createTempWorkspace();
  const outside = await read(workspace.root, { path: "/etc/passwd" });
  equal(outside.isError, true);
  assertIncludes(outside.content, "outside the workspace");
  const relative = await read(workspace.root, { path: "src/a.ts" });
  equal(relative.isError, true);
  assertIncludes(relative.content, `"${workspace.root}/src/a.ts"`);
  assertIncludes(readFileTool.validateInput({ path: "src/a.ts" }, { root: "/ws" })!, '"/ws/src/a.ts"');
});

Deno.test("ReadFile hides a UTF-8 BOM and decodes UTF-16 LE and BE files with a BOM", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeFile(
    `${root}/bom.txt`,
    Uint8Array.of(0xef, 0xbb, 0xbf, ...new TextEncoder().encode("héllo\n")),
  );
  equal((await read(root, { path: `${root}/bom.txt` })).content, "1\théllo");
  const text = "ligne é\r\nzwei\r\n";
  const le = new Uint8Array(2 + text.length * 2);
  const be = new Uint8Array(2 + text.length * 2);
  le.set([0xff, 0xfe]);
  be.set([0xfe, 0xff]);
  for (let index = 0; index < text.length; index++) {
    new DataView(le.buffer).setUint16(2 + index * 2, text.charCodeAt(index), true);
    new DataView(be.buffer).setUint16(2 + index * 2, text.charCodeAt(index), false);
  }
  await Deno.writeFile(`${root}/le.txt`, le);
  await Deno.writeFile(`${root}/be.txt`, be);
  for (const name of ["le.txt", "be.txt"]) {
    const result = await read(root, { path: `${root}/${name}` });
    equal(result.isError, false, result.content);
    assert(result.content.endsWith("1\tligne é\n2\tzwei"), result.content);
    assertEquals(result.metadata.fileRecord, {
      path: `${root}/${name}`,
      hash: sha256(name === "le.txt" ? le : be),
    });
  }
});

Deno.test("ReadFile says a file is not valid UTF-8 and which encoding it looks like, without U+FFFD", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeFile(`${root}/latin1.txt`, Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0a)); // "café" in Latin-1
  const latin = await read(root, { path: `${root}/latin1.txt` });
  equal(latin.isError, false);
  assertIncludes(latin.content, "not valid UTF-8");
  assertIncludes(latin.content, "Latin-1");
  assertIncludes(latin.content, "1\tcafé");
  assertExcludes(latin.content, "\uFFFD");
  await Deno.writeFile(`${root}/cp1252.txt`, Uint8Array.of(0x93, 0x68, 0x69, 0x94, 0x0a)); // “hi” in Windows-1252
  const windows = await read(root, { path: `${root}/cp1252.txt` });
  assertIncludes(windows.content, "Windows-1252");
  assertIncludes(windows.content, "1\t\u201chi\u201d");
});

Deno.test("ReadFile reads a file with several hard links with a note, and refuses it under strictLinks", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeTextFile(`${root}/a.txt`, "shared\n");
  await Deno.link(`${root}/a.txt`, `${root}/b.txt`);
  const relaxed = await read(root, { path: `${root}/a.txt` });
  equal(relaxed.isError, false);
  assertIncludes(relaxed.content, "2 hard links");
  assertIncludes(relaxed.content, "1\tshared");
  const strict = await read(root, { path: `${root}/a.txt` }, true);
  equal(strict.isError, true);
  assertIncludes(strict.content, "2 hard links");
  equal(strict.metadata.fileRecord, undefined);
});

Deno.test("ReadFile refuses a named pipe instead of blocking on it", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/pipe`;
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert(made.success);
  const result = await read(workspace.root, { path });
  equal(result.isError, true);
  assertIncludes(result.content, "not a regular file");
});

Deno.test("ReadFile stops a page early when the numbered text would exceed its character budget", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/wide.txt`;
  await Deno.writeTextFile(path, `${"w".repeat(1500)}\n`.repeat(400));
  const result = await read(workspace.root, { path });
  equal(result.isError, false);
  assert(result.content.length <= MAX_READ_CHARACTERS + 500, String(result.content.length));
  const endLine = result.metadata.endLine as number;
  assert(endLine < 400);
  assertIncludes(result.content, `of 400`);
  assertIncludes(result.content, `offset ${endLine + 1}`);
});
