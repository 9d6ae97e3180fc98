import { deepStrictEqual as assertEquals, equal, notEqual, ok as assert } from "node:assert/strict";
import { createHash } from "node:crypto";
import { describeFsError, withPathLock } from "../../src/tools/_fs.ts";
import type { ToolResult } from "../../src/tools/tool.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import {
  assertExcludes,
  assertIncludes,
  callContext,
  createTempWorkspace,
  executeUnprivileged,
  FILE_TOOL_MODULES,
  startToolWorker,
  toolContext,
  workerPermissions,
} from "../_fakes/tool_context.ts";

const WRITE_FILE_MODULE = new URL("../../src/tools/write_file.ts", import.meta.url);
const encoder = new TextEncoder();

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Records a file as read in this session, the way ReadFile's metadata would. */
async function recordOf(path: string): Promise<Record<string, string>> {
  return { [path]: sha256(await Deno.readFile(path)) };
}

async function write(
  root: string,
  path: string,
  content: string,
  fileRecords: Record<string, string> = {},
): Promise<ToolResult> {
  return await writeFileTool.execute(toolContext(root, { fileRecords }), { path, content });
}

/** WriteFile of `content` over `path`, read first, in a tool worker with the writers' permissions. */
async function overwriteInWorker(root: string, path: string, content: string): Promise<ToolResult> {
  using worker = startToolWorker(FILE_TOOL_MODULES, workerPermissions(root, "read-write"));
  return await worker.execute(
    "writeFileTool",
    callContext(root, { fileRecords: await recordOf(path) }),
    { path, content },
  );
}

async function entries(directory: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(directory)) names.push(entry.name);
  return names.sort();
}

Deno.test("WriteFile declares file metadata: not read-only, not destructive, not concurrency-safe", () => {
  equal(writeFileTool.name, "WriteFile");
  equal(writeFileTool.category, "file");
  assert(!writeFileTool.isReadOnly());
  assert(!writeFileTool.isDestructive());
  assert(!writeFileTool.isConcurrencySafe({ path: "/x", content: "" }));
  equal(writeFileTool.jsonSchema.additionalProperties, false);
  for (const property of Object.values(writeFileTool.jsonSchema.properties)) {
    assert(typeof (property as { description?: unknown }).description === "string");
  }
  for (const word of ["ReadFile", "EditFile", "absolute", "CRLF"]) {
    assertIncludes(writeFileTool.description, word);
  }
});

Deno.test("WriteFile creates parent directories 0755 and a new file 0644, and reports bytes and lines", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a/b/new.txt`;
  const result = await write(workspace.root, path, "one\ntwo\n");
  equal(result.isError, false, result.content);
  equal(result.content, `Created "${path}" (8 bytes, 2 lines)`);
  equal(await Deno.readTextFile(path), "one\ntwo\n");
  equal((await Deno.stat(path)).mode! & 0o777, 0o644);
  equal((await Deno.stat(`${workspace.root}/a`)).mode! & 0o777, 0o755);
  equal((await Deno.stat(`${workspace.root}/a/b`)).mode! & 0o777, 0o755);
  assertEquals(result.metadata.fileRecord, { path, hash: sha256(encoder.encode("one\ntwo\n")) });
});

Deno.test("WriteFile writes content byte for byte, without escaping or Unicode changes", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/exact.txt`;
  const content =
    `"quotes" 'single' \`tick\` \\n literal \\t $& $1 $$ é ü 😀 “curly” \u00a0nbsp\ttab\r\nCRLF\n`;
  const result = await write(workspace.root, path, content);
  equal(result.isError, false);
  assertEquals(await Deno.readFile(path), encoder.encode(content));
});

Deno.test("WriteFile refuses to overwrite a file this session has not read", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "original\n");
  const result = await write(workspace.root, path, "new\n");
  equal(result.isError, true);
  assertIncludes(result.content, "read it first");
  equal(await Deno.readTextFile(path), "original\n");
});

Deno.test("WriteFile overwrites a never-read file when the caller does not require a read", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "original\n");
  const result = await writeFileTool.execute(toolContext(workspace.root, { requireRead: false }), {
    path,
    content: "typed by the user\n",
  });
  equal(result.isError, false, result.content);
  equal(await Deno.readTextFile(path), "typed by the user\n");
});

Deno.test("WriteFile refuses to overwrite a file modified since it was read", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "original\n");
  const records = await recordOf(path);
  await Deno.writeTextFile(path, "changed by someone else\n");
  const result = await write(workspace.root, path, "new\n", records);
  equal(result.isError, true);
  assertIncludes(result.content, "modified since you read it — read it again");
  equal(await Deno.readTextFile(path), "changed by someone else\n");
});

Deno.test("WriteFile compares content hashes, so a touch alone does not fail the write", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  await Deno.writeTextFile(path, "original\n");
  const records = await recordOf(path);
  await Deno.utime(path, new Date(2001, 1, 1), new Date(2001, 1, 1));
  const result = await write(workspace.root, path, "new\n", records);
  equal(result.isError, false, result.content);
  equal(result.content, `Overwrote "${path}" (4 bytes, 1 line)`);
  equal(await Deno.readTextFile(path), "new\n");
});

Deno.test("WriteFile keeps the mode of an existing file and replaces it atomically (new inode, no temp left)", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/run.sh`;
  await Deno.writeTextFile(path, "#!/bin/sh\n");
  await Deno.chmod(path, 0o750);
  const inodeBefore = (await Deno.stat(path)).ino;
  const result = await write(workspace.root, path, "#!/bin/sh\necho hi\n", await recordOf(path));
  equal(result.isError, false, result.content);
  equal((await Deno.stat(path)).mode! & 0o7777, 0o750);
  notEqual((await Deno.stat(path)).ino, inodeBefore);
  assertEquals(await entries(workspace.root), ["run.sh"]);
});

Deno.test("WriteFile writes CRLF throughout when overwriting a CRLF file, and new files as given", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeTextFile(`${root}/dos.txt`, "a\r\nb\r\n");
  const result = await write(root, `${root}/dos.txt`, "x\ny\r\nz\n", await recordOf(`${root}/dos.txt`));
  equal(result.isError, false);
  equal(await Deno.readTextFile(`${root}/dos.txt`), "x\r\ny\r\nz\r\n");
  assertIncludes(result.content, "CRLF");
  await write(root, `${root}/new-lf.txt`, "a\nb\n");
  equal(await Deno.readTextFile(`${root}/new-lf.txt`), "a\nb\n");
  await write(root, `${root}/new-crlf.txt`, "a\r\nb\r\n");
  equal(await Deno.readTextFile(`${root}/new-crlf.txt`), "a\r\nb\r\n");
  await Deno.writeTextFile(`${root}/unix.txt`, "a\nb\n");
  await write(root, `${root}/unix.txt`, "c\nd\n", await recordOf(`${root}/unix.txt`));
  equal(await Deno.readTextFile(`${root}/unix.txt`), "c\nd\n");
});

Deno.test("WriteFile keeps the CRLF line endings of a file that is not valid UTF-8", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/latin.txt`;
  await Deno.writeFile(path, Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a, 0x62, 0x0d, 0x0a));
  const result = await write(workspace.root, path, "cafe\nb\n", await recordOf(path));
  equal(result.isError, false, result.content);
  equal(await Deno.readTextFile(path), "cafe\r\nb\r\n");
  assertIncludes(result.content, "kept CRLF line endings");
});

Deno.test("WriteFile keeps the Windows-1252 encoding of a file that is not UTF-8 when the content fits it", async () => {
  // ReadFile shows such a file decoded as Windows-1252 and EditFile keeps its bytes: rewritten as UTF-8, every
  // accented letter of lines the model never meant to change would change.
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/legacy.txt`;
  await Deno.writeFile(path, Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0a, 0x80, 0x0a)); // "café\n€\n"
  const result = await write(workspace.root, path, "café\n€\nnaïve\n", await recordOf(path));
  equal(result.isError, false, result.content);
  assertEquals(
    await Deno.readFile(path),
    Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0a, 0x80, 0x0a, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0a),
  );
  assertIncludes(result.content, "kept the file's Windows-1252 encoding");
  // Content the encoding cannot hold is written as UTF-8, and the model is told.
  const wide = await write(workspace.root, path, "café ✓\n", await recordOf(path));
  equal(wide.isError, false, wide.content);
  equal(await Deno.readTextFile(path), "café ✓\n");
  assertIncludes(wide.content, "it is written as UTF-8");
});

Deno.test("WriteFile keeps the UTF-8 BOM of the old file without doubling it", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/bom.txt`;
  const bom = [0xef, 0xbb, 0xbf];
  await Deno.writeFile(path, Uint8Array.of(...bom, 0x61));
  await write(workspace.root, path, "new", await recordOf(path));
  assertEquals(await Deno.readFile(path), Uint8Array.of(...bom, ...encoder.encode("new")));
  await write(workspace.root, path, "\uFEFFagain", await recordOf(path));
  assertEquals(await Deno.readFile(path), Uint8Array.of(...bom, ...encoder.encode("again")));
});

Deno.test("WriteFile keeps UTF-16 LE encoding with its BOM", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/wide.txt`;
  await Deno.writeFile(path, Uint8Array.of(0xff, 0xfe, 0x61, 0x00));
  const result = await write(workspace.root, path, "hé", await recordOf(path));
  equal(result.isError, false);
  assertEquals(await Deno.readFile(path), Uint8Array.of(0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00));
});

Deno.test("WriteFile returns the new hash, so a second write works without a re-read", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/a.txt`;
  const first = await write(workspace.root, path, "one\n");
  const record = first.metadata.fileRecord as { path: string; hash: string };
  const second = await write(workspace.root, path, "two\n", { [record.path]: record.hash });
  equal(second.isError, false, second.content);
  equal(await Deno.readTextFile(path), "two\n");
});

Deno.test("WriteFile on a directory returns an error", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(`${workspace.root}/dir`);
  const result = await write(workspace.root, `${workspace.root}/dir`, "x");
  equal(result.isError, true);
  assertIncludes(result.content, "is a directory");
});

Deno.test("WriteFile refuses a dangling symlink and creates nothing at its target", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.symlink(`${root}/target.txt`, `${root}/link.txt`);
  const result = await write(root, `${root}/link.txt`, "x");
  equal(result.isError, true);
  assertIncludes(result.content, "symlink");
  assertEquals(await entries(root), ["link.txt"]);
});

Deno.test("WriteFile rejects a relative path with the absolute path meant, and paths outside", async () => {
  await using workspace = await createTempWorkspace();
  const relative = await write(workspace.root, "a.txt", "x");
  assertIncludes(relative.content, `"${workspace.root}/a.txt"`);
  assertIncludes(
    writeFileTool.validateInput({ path: "a.txt", content: "" }, { root: "/ws" })!,
    '"/ws/a.txt"',
  );
  const outside = await write(workspace.root, `${workspace.root}/../mewcode-never.txt`, "x");
  assertIncludes(outside.content, "outside the workspace");
  assertEquals(await entries(workspace.root), []);
});

Deno.test("WriteFile reports permission denied (EACCES) and leaves no temp file", async () => {
  await using workspace = await createTempWorkspace();
  const directory = `${workspace.root}/locked`;
  await Deno.mkdir(directory);
  await Deno.chmod(directory, 0o555);
  try {
    const result = await executeUnprivileged(
      WRITE_FILE_MODULE,
      "writeFileTool",
      callContext(workspace.root),
      {
        path: `${directory}/new.txt`,
        content: "x",
      },
    );
    equal(result.isError, true);
    equal(result.content, `Cannot write file "${directory}/new.txt": permission denied`);
    assertEquals(await entries(directory), []);
  } finally {
    await Deno.chmod(directory, 0o755);
  }
});

Deno.test("File errors map ENOSPC, EACCES, EISDIR and NotCapable to specific messages", async () => {
  const full = await Deno.open("/dev/full", { write: true });
  try {
    await full.write(new Uint8Array(16));
    throw new Error("writing to /dev/full should fail");
  } catch (error) {
    assertEquals(describeFsError(error), {
      ok: false,
      reason: "no-space",
      message: "no space left on the device",
    });
  } finally {
    full.close();
  }
  equal(
    describeFsError(new Deno.errors.PermissionDenied("Permission denied (os error 13)")).reason,
    "permission-denied",
  );
  equal(describeFsError(new Deno.errors.IsADirectory("Is a directory (os error 21)")).reason, "is-directory");
  const sandboxed = describeFsError(new Deno.errors.NotCapable('Requires write access to "/etc/x"'));
  equal(sandboxed.reason, "outside-workspace");
  assertIncludes(sandboxed.message, "outside the workspace");
});

Deno.test("WriteFile replaces a hard-linked file's link and says the other links keep the old content", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeTextFile(`${root}/a.txt`, "old\n");
  await Deno.link(`${root}/a.txt`, `${root}/b.txt`);
  const inode = (await Deno.stat(`${root}/b.txt`)).ino;
  const result = await write(root, `${root}/a.txt`, "new\n", await recordOf(`${root}/a.txt`));
  equal(result.isError, false, result.content);
  assertIncludes(result.content, "replaced the link");
  assertIncludes(result.content, "other links keep the old content");
  equal(await Deno.readTextFile(`${root}/a.txt`), "new\n");
  equal(await Deno.readTextFile(`${root}/b.txt`), "old\n");
  equal((await Deno.stat(`${root}/b.txt`)).ino, inode);
});

Deno.test({
  name:
    "WriteFile in a worker run as root keeps the owner and group of the file it overwrites, not its setgid bit",
  ignore: Deno.uid() !== 0,
  async fn() {
    await using workspace = await createTempWorkspace();
    const path = `${workspace.root}/theirs.sh`;
    await Deno.writeTextFile(path, "old\n");
    await Deno.chown(path, 1234, 1234);
    // The model's content never runs with another user's rights: the set-ID bits go, as when anyone
    // without CAP_FSETID writes the file.
    await Deno.chmod(path, 0o2750);
    const result = await overwriteInWorker(workspace.root, path, "new\n");
    equal(result.isError, false, result.content);
    equal(
      result.content,
      `Overwrote "${path}" (4 bytes, 1 line)\nNote: the old file was set-user-ID or set-group-ID; the new file ` +
        "is not (mode 0750), as when anyone else writes it.",
    );
    const info = await Deno.stat(path);
    assertEquals([info.uid, info.gid, info.mode! & 0o7777], [1234, 1234, 0o750]);
    equal(await Deno.readTextFile(path), "new\n");
    assertEquals(await entries(workspace.root), ["theirs.sh"]);
  },
});

Deno.test("WriteFile keeps the set-group-ID bit a folder it creates inherits, so its group reaches the file", async () => {
  await using workspace = await createTempWorkspace();
  const shared = `${workspace.root}/shared`;
  await Deno.mkdir(shared);
  if (Deno.uid() === 0) await Deno.chown(shared, null, 4321);
  await Deno.chmod(shared, 0o2775); // a group's folder: what is made in it belongs to its group
  const result = await write(workspace.root, `${shared}/sub/new.txt`, "n\n");
  equal(result.isError, false, result.content);
  equal((await Deno.stat(`${shared}/sub`)).mode! & 0o7777, 0o2755);
  equal((await Deno.stat(`${shared}/sub/new.txt`)).gid, (await Deno.stat(shared)).gid);
});

Deno.test({
  name: "WriteFile overwrites another user's file when it may not chown, and says who owns it now",
  ignore: Deno.uid() !== 0, // executeUnprivileged drops CAP_CHOWN; only root can make the file someone else's
  async fn() {
    await using workspace = await createTempWorkspace();
    const path = `${workspace.root}/theirs.txt`;
    await Deno.writeTextFile(path, "old\n");
    await Deno.chown(path, 1234, 1234);
    const result = await executeUnprivileged(
      WRITE_FILE_MODULE,
      "writeFileTool",
      callContext(workspace.root, { fileRecords: await recordOf(path) }),
      { path, content: "new\n" },
    );
    equal(result.isError, false, result.content);
    assertIncludes(
      result.content,
      "Note: the old file belonged to uid 1234, gid 1234; the new file could not be given that owner " +
        "(permission denied) and belongs to uid 0, gid 0.",
    );
    const info = await Deno.stat(path);
    assertEquals([info.uid, info.gid], [0, 0]);
    equal(await Deno.readTextFile(path), "new\n");
  },
});

Deno.test("WriteFile in a worker rewrites a read-only file, keeps its mode and says it was read-only", async () => {
  await using workspace = await createTempWorkspace();
  const path = `${workspace.root}/frozen.txt`;
  await Deno.writeTextFile(path, "old\n");
  await Deno.chmod(path, 0o444);
  const result = await overwriteInWorker(workspace.root, path, "new\n");
  equal(result.isError, false, result.content);
  equal(
    result.content,
    `Overwrote "${path}" (4 bytes, 1 line)\n` +
      "Note: the file was read-only (mode 0444); it was rewritten all the same and keeps that mode.",
  );
  equal(await Deno.readTextFile(path), "new\n");
  equal((await Deno.stat(path)).mode! & 0o7777, 0o444);
  const writable = await write(workspace.root, `${workspace.root}/other.txt`, "x");
  assertExcludes(writable.content, "read-only");
});

Deno.test("withPathLock runs tasks for the same path one after another, and other paths freely", async () => {
  const events: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const first = withPathLock("/ws/a", async () => {
    events.push("first-start");
    await gate;
    events.push("first-end");
  });
  const second = withPathLock("/ws/a", () => {
    events.push("second");
    return Promise.resolve();
  });
  const other = withPathLock("/ws/b", () => {
    events.push("other");
    return Promise.resolve();
  });
  await other;
  assertEquals(events, ["first-start", "other"]);
  release();
  await Promise.all([first, second]);
  assertEquals(events, ["first-start", "other", "first-end", "second"]);
  const failing = withPathLock("/ws/a", () => Promise.reject(new Error("boom")));
  await failing.catch(() => undefined);
  equal(await withPathLock("/ws/a", () => Promise.resolve("after a failure")), "after a failure");
});

Deno.test("WriteFile writes nothing when its call is already cancelled", async () => {
  await using workspace = await createTempWorkspace();
  const controller = new AbortController();
  controller.abort();
  const path = `${workspace.root}/a.txt`;
  const result = await writeFileTool.execute(toolContext(workspace.root, { signal: controller.signal }), {
    path,
    content: "x",
  });
  equal(result.isError, true);
  assertIncludes(result.content, "cancelled");
  assertEquals(await entries(workspace.root), []);
});

Deno.test("WriteFile through a symlink inside the workspace writes the target and keeps the link", async () => {
  await using workspace = await createTempWorkspace();
  const { root } = workspace;
  await Deno.writeTextFile(`${root}/target.txt`, "old\n");
  await Deno.symlink("target.txt", `${root}/alias.txt`);
  const result = await write(root, `${root}/alias.txt`, "new\n", await recordOf(`${root}/target.txt`));
  equal(result.isError, false, result.content);
  equal(await Deno.readTextFile(`${root}/target.txt`), "new\n");
  assert((await Deno.lstat(`${root}/alias.txt`)).isSymlink);
  assertEquals(result.metadata.fileRecord, {
    path: `${root}/target.txt`,
    hash: sha256(encoder.encode("new\n")),
  });
});
