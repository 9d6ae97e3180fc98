import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { readBoundedFile } from "../../src/config/_bounded_read.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("readBoundedFile reads a file another process keeps replacing atomically, never calling it changed", async () => {
  // trust.json is rewritten by writing a temporary file and renaming it over the old one: a reader caught
  // between its look and its open must read the new file, not report it unreadable.
  await using folder = await createTempWorkspace("mewcode-bounded-");
  const path = join(folder.root, "trust.json");
  await Deno.writeTextFile(path, "{}\n");
  const script = `const path = ${JSON.stringify(path)}; const end = Date.now() + 1500; let n = 0;
    while (Date.now() < end) { Deno.writeTextFileSync(path + ".tmp", "{}\\n"); Deno.renameSync(path + ".tmp", path); n++; }`;
  const writer = new Deno.Command(Deno.execPath(), { args: ["eval", script] }).spawn();
  let refused = 0;
  let reads = 0;
  const end = Date.now() + 1200;
  while (Date.now() < end) {
    const read = await readBoundedFile(path, { within: null, maxBytes: 1024 });
    reads++;
    if (read.status !== "read") refused++;
  }
  equal((await writer.status).code, 0);
  ok(reads > 100, `only ${reads} reads`);
  equal(refused, 0, `${refused} of ${reads} reads were refused`);
});
