import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_ATTACHMENT_BYTES, withAttachments } from "../../../src/cli/interactive/_attachments.ts";
import { createTempWorkspace } from "../../_fakes/tool_context.ts";

Deno.test("@path attachments add files after the prompt and name each one left out, with why", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace();
  const root = workspace.root;
  await Deno.writeTextFile(join(root, "notes.md"), "# Notes\nremember the milk\n");
  await Deno.mkdir(join(root, "src"));
  await Deno.writeTextFile(join(outside.root, "secret.txt"), "top secret\n");
  await Deno.symlink(join(outside.root, "secret.txt"), join(root, "link.txt"));
  await Deno.writeFile(join(root, "image.bin"), new Uint8Array([0x89, 0x50, 0x00, 0x01]));
  const mkfifo = await new Deno.Command("mkfifo", { args: [join(root, "pipe")] }).output();
  ok(mkfifo.success);
  const { prompt, skipped } = await withAttachments(
    "look at these",
    ["notes.md", "src", "link.txt", "image.bin", "pipe", "gone.txt"],
    root,
  );
  equal(prompt, `look at these\n\n<file path="${root}/notes.md">\n# Notes\nremember the milk\n\n</file>`);
  deepStrictEqual(skipped, [
    { path: "src", reason: "it is a directory; name a file in it, or ask about the directory" },
    { path: "link.txt", reason: "it lies outside the workspace" },
    { path: "image.bin", reason: "it looks binary (a NUL byte in its first 8 KiB)" },
    { path: "pipe", reason: "it is not a regular file (a named pipe, socket or device)" },
    { path: "gone.txt", reason: "it no longer exists" },
  ]);
});

Deno.test("an @path attachment of a huge file reads only the part it adds", async () => {
  await using workspace = await createTempWorkspace();
  const path = join(workspace.root, "huge.log");
  // 4 GiB, sparse past its first 18 KiB of text: read whole, it could not even be held in one buffer.
  const size = 4 * 1024 ** 3;
  const text = "a line of the log\n".repeat(1024);
  await Deno.writeTextFile(path, text);
  await Deno.truncate(path, size);
  const { prompt, skipped } = await withAttachments("summarize", ["huge.log"], workspace.root);
  deepStrictEqual(skipped, []);
  ok(prompt.startsWith(`summarize\n\n<file path="${path}">\n${text}`));
  ok(prompt.endsWith(`\n(cut after ${MAX_ATTACHMENT_BYTES} of ${size} bytes)\n</file>`));
});
