import { deepStrictEqual as assertEquals, equal, ok as assert } from "node:assert/strict";
import {
  applyEdit,
  MAX_EDIT_BYTES,
  MAX_FALLBACK_LINES,
  MAX_REPLACEMENTS,
} from "../../src/tools/_edit_apply.ts";
import { MAX_READ_BYTES } from "../../src/tools/_fs.ts";
import { assertIncludes } from "../_fakes/tool_context.ts";

const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

Deno.test("applyEdit refuses a replace_all whose result would pass maxChars, naming the count and sizes", () => {
  // 1,000 occurrences growing by 9 characters each: 1,000 + 9,000 (+2 for a final line break) characters.
  const text = "a".repeat(1000);
  const input = { old_string: "a", new_string: "b".repeat(10), replace_all: true };
  const refused = applyEdit(text, "\n", input, { maxChars: 10_001 });
  assert(!refused.ok);
  equal(refused.reason, "too-large");
  assertIncludes(refused.message, "replacing 1000 occurrences would make it");
  assertIncludes(refused.message, "edit a smaller part (without replace_all) or use Bash");
  const built = applyEdit(text, "\n", input, { maxChars: 10_002 });
  assert(built.ok);
  equal(built.text, "b".repeat(10_000));
  equal(built.changes.length, 1000);
  assertEquals(built.changes[999], { start: 9990, length: 10 });
});

Deno.test("applyEdit bounds the encoded size, counting the replacement in the file's encoding", () => {
  // "é" is one character but two UTF-8 bytes: the text fits in characters, not in bytes.
  const text = "x\n".repeat(100);
  const input = { old_string: "x", new_string: "éé", replace_all: true };
  const encoded = { fileBytes: utf8Length(text), byteLength: utf8Length, maxBytes: 400 };
  const refused = applyEdit(text, "\n", input, { maxChars: 1000, encoded });
  assert(!refused.ok);
  equal(refused.reason, "too-large");
  assertIncludes(refused.message, "replacing 100 occurrences would make it");
  assertIncludes(refused.message, "MB an edit may produce");
  const built = applyEdit(text, "\n", input, { maxChars: 1000, encoded: { ...encoded, maxBytes: 502 } });
  assert(built.ok);
  equal(utf8Length(built.text), 500);
});

Deno.test("applyEdit refuses a single replacement or a flexible match that would pass the bound", () => {
  const unique = applyEdit("keep\nold\n", "\n", { old_string: "old", new_string: "n".repeat(100) }, {
    maxChars: 50,
  });
  assert(!unique.ok);
  assertIncludes(unique.message, "replacing 1 occurrence would make it");
  assertIncludes(unique.message, "make a smaller change, or use Bash for a file this large");
  // A tab-indented line matched by a space-indented old_string: only the flexible fallback finds it.
  const flexible = applyEdit("\tone\n\ttwo\n", "\n", {
    old_string: "    two",
    new_string: "    " + "t".repeat(100),
  }, {
    maxChars: 50,
  });
  assert(!flexible.ok);
  equal(flexible.reason, "too-large");
});

Deno.test("applyEdit refuses more occurrences than maxReplacements, even when the text does not grow", () => {
  const refused = applyEdit("ab".repeat(50), "\n", { old_string: "a", new_string: "c", replace_all: true }, {
    maxReplacements: 49,
  });
  assert(!refused.ok);
  equal(refused.reason, "too-large");
  assertIncludes(
    refused.message,
    "old_string occurs 50 times, more than the 49 replacements an edit may make",
  );
  const built = applyEdit("ab".repeat(50), "\n", { old_string: "a", new_string: "c", replace_all: true }, {
    maxReplacements: 50,
  });
  assert(built.ok);
  equal(built.text, "cb".repeat(50));
});

Deno.test("applyEdit's default bounds are the read limit and a million replacements", () => {
  equal(MAX_EDIT_BYTES, MAX_READ_BYTES);
  equal(MAX_REPLACEMENTS, 1_000_000);
  // 300,000 occurrences growing by 999 characters: about 286 MiB, past the default bound, refused
  // without building it (building it would take a 300-million-character string).
  const refused = applyEdit("a\n".repeat(300_000), "\n", {
    old_string: "a",
    new_string: "b".repeat(1000),
    replace_all: true,
  });
  assert(!refused.ok);
  equal(refused.reason, "too-large");
  assertIncludes(
    refused.message,
    "replacing 300000 occurrences would make it 300 million characters long, more than the 268 million",
  );
});

Deno.test("applyEdit searches no fallback in a file of more lines than MAX_FALLBACK_LINES, whose heap it would exhaust", () => {
  // 12 million short lines (a 58 MB file) took the flexible match and the closest-region search past the
  // workers' 1.5 GB heap: V8 aborted the whole process. Past the bound, only the exact search runs.
  const text = "l1\n".repeat(MAX_FALLBACK_LINES + 1);
  const started = performance.now();
  const outcome = applyEdit(text, "\n", { old_string: "  l1  \nl2", new_string: "x" });
  equal(outcome.ok, false);
  assert(!outcome.ok);
  equal(outcome.reason, "not-found");
  assertIncludes(outcome.message, `more than ${MAX_FALLBACK_LINES} lines`);
  assert(performance.now() - started < 1000, "only the exact search and a line count ran");
  const exact = applyEdit(text + "end\n", "\n", { old_string: "end", new_string: "END" });
  assert(exact.ok && exact.text.endsWith("l1\nEND\n"));
});
