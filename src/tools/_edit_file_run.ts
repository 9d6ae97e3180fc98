/**
 * What an EditFile call does, without its input schema: the tool worker loads this (and no zod), the
 * definition in `edit_file.ts` offers it to the model.
 *
 * @module
 */
import { describeMissing, readForWrite, readVerified, sha256Hex, withPathLock } from "./_fs.ts";
import { replaceNotes, writeAtomic, type WriteOptions } from "./_fs_write.ts";
import { applyEdit, type Change, keepFinalNewline, MAX_EDIT_BYTES } from "./_edit_apply.ts";
import { resolveWritablePath } from "./protected_paths.ts";
import { identicalMessage } from "./_shared.ts";
import {
  codePointLabel,
  countLines,
  decodeFile,
  decodeText,
  encodeText,
  isBinaryPath,
  looksBinary,
  numbered,
  type TextFormat,
} from "./_text.ts";
import { errorResult, textResult } from "./results.ts";
import { assertNever } from "../common/errors.ts";
import type { FileRecord, ToolContext, ToolResult, ToolRunner } from "./tool.ts";
import type { EditFileInput } from "./edit_file.ts";

/** Lines of context shown before and after each change in the result. */
const SNIPPET_CONTEXT = 3;
const MAX_SNIPPET_REGIONS = 5;
const MAX_REGION_LINES = 40;

/** EditFile's call: exact (or one whitespace-flexible) text replacement that preserves the rest of the file. */
export const editFileRunner: ToolRunner<EditFileInput> = {
  name: "EditFile",
  async execute(context: ToolContext, input: EditFileInput): Promise<ToolResult> {
    const fail = (message: string, reason: string, metadata: Record<string, unknown> = {}): ToolResult =>
      errorResult(`Cannot edit file "${input.path}": ${message}`, { reason, ...metadata });
    if (input.old_string === input.new_string) {
      return errorResult(identicalMessage(input.path), { reason: "no-change" });
    }
    const resolved = await resolveWritablePath(context, input.path);
    if (!resolved.ok) return fail(resolved.message, resolved.reason);
    const path = resolved.path;
    const place: WriteOptions = {
      root: context.root,
      additionalRoots: context.additionalRoots,
      excluded: context.excludedPaths,
    };
    if (resolved.info?.isDirectory) return fail("it is a directory; give the path of a file", "is-directory");
    if (isBinaryPath(path)) return fail("file is binary; EditFile only edits text files", "binary");

    return await withPathLock(path, async () => {
      const current = await Deno.lstat(path).then(() => true, () => false);
      if (!current) {
        if (input.old_string !== "") {
          const missing = await describeMissing(path);
          const separator = missing.endsWith("?") ? " " : ". ";
          return fail(
            `${missing}${separator}To create a file, use WriteFile or an empty old_string`,
            "not-found",
          );
        }
        return await create(path, input.new_string, place, input.path);
      }
      if (input.old_string === "") {
        const peek = await readVerified(path);
        if (!peek.ok) return fail(peek.message, peek.reason);
        const decoded = decodeText(peek.bytes);
        if (!decoded.ok || decoded.text !== "") {
          return fail(
            "old_string is empty but the file already exists and is not empty; give the text to replace in " +
              "old_string, or use WriteFile to replace the whole file",
            "exists",
          );
        }
      }
      const existing = await readForWrite(path, context.fileRecords, "edit", context.requireRead ?? true);
      if (!existing.ok) return fail(existing.message, existing.reason);
      if (looksBinary(existing.bytes)) {
        return fail("file is binary; EditFile only edits text files", "binary");
      }
      const decoded = decodeFile(existing.bytes);
      if (!decoded.ok) {
        const encoding = decoded.encoding.toUpperCase();
        return fail(
          `the file has a ${encoding} byte order mark but is not valid ${encoding}; ` +
            "refusing to edit it rather than corrupt it",
          "invalid-encoding",
        );
      }
      const { text, format } = decoded;

      const edit = input.old_string === ""
        ? {
          ok: true as const,
          text: input.new_string,
          changes: [{ start: 0, length: input.new_string.length }],
        }
        : applyEdit(text, format.lineEnding, input, {
          encoded: {
            fileBytes: existing.bytes.length,
            byteLength: byteLengthIn(format),
            maxBytes: MAX_EDIT_BYTES,
          },
        });
      if (!edit.ok) return fail(edit.message, edit.reason);
      const newText = keepFinalNewline(text, edit.text, format.lineEnding);
      if (newText === text) {
        // Not reported as an edit: the model would believe a change was made (a final newline it added, which
        // the final-newline rule took back, or whitespace the flexible match kept).
        const why = edit.text === text
          ? "new_string is what old_string matched in the file"
          : "EditFile keeps whether the file ends with a newline, so adding or removing only the final newline " +
            "does nothing; use WriteFile for that";
        return fail(`the edit would leave the file unchanged (${why}); nothing was written`, "no-change");
      }
      const encoded = encodeText(newText, format);
      if (!encoded.ok) {
        return fail(unencodableMessage(encoded.character, format), "unencodable");
      }
      if (context.signal.aborted) {
        return fail("the call was cancelled before anything was written", "aborted");
      }
      const written = await writeAtomic(path, encoded.bytes, { ...place, expected: existing.version });
      if (!written.ok) return fail(written.message, written.reason);
      const fileRecord: FileRecord = { path, hash: await sha256Hex(encoded.bytes) };
      const count = edit.changes.length;
      const how = "flexible" in edit && edit.flexible
        ? " using a whitespace-flexible match (the file's whitespace, or how it encodes accented letters, " +
          "differed from old_string); " +
          "new_string was re-indented to the file's indentation"
        : "";
      const summary = input.old_string === ""
        ? `Wrote new_string into the empty file "${input.path}"`
        : `Edited "${input.path}": replaced ${count} occurrence${count === 1 ? "" : "s"}${how}`;
      return textResult([summary, ...replaceNotes(written), "", snippet(newText, edit.changes)].join("\n"), {
        fileRecord,
        path,
        replacements: count,
        flexible: "flexible" in edit && edit.flexible === true,
        created: false,
        previousLinks: written.previousLinks,
      });
    });
  },
};

async function create(
  path: string,
  content: string,
  place: WriteOptions,
  shown: string,
): Promise<ToolResult> {
  const encoded = encodeText(content, { encoding: "utf-8", bom: false });
  if (!encoded.ok) {
    return errorResult(`Cannot edit file "${shown}": ${unencodableMessage(encoded.character, null)}`, {
      reason: "unencodable",
    });
  }
  const written = await writeAtomic(path, encoded.bytes, place);
  if (!written.ok) {
    return errorResult(`Cannot edit file "${shown}": ${written.message}`, { reason: written.reason });
  }
  const lines = countLines(content);
  return textResult(
    [
      `Created "${shown}" (${encoded.bytes.length} bytes, ${lines} line${lines === 1 ? "" : "s"})`,
      "",
      snippet(content, [{ start: 0, length: content.length }]),
    ].join("\n"),
    { fileRecord: { path, hash: await sha256Hex(encoded.bytes) }, path, replacements: 0, created: true },
  );
}

// How many bytes a string takes in the file's encoding, to bound an edit's result before it is built.
function byteLengthIn(format: TextFormat): (text: string) => number {
  switch (format.encoding) {
    case "utf-8":
      return (text) => new TextEncoder().encode(text).length;
    case "utf-16le":
    case "utf-16be":
      return (text) => text.length * 2;
    case "windows-1252":
      return (text) => text.length;
    default:
      return assertNever(format.encoding);
  }
}

function unencodableMessage(character: string, format: TextFormat | null): string {
  const code = codePointLabel(character);
  if (format?.encoding === "windows-1252") {
    return `new_string contains "${character}" (${code}), which the file's encoding cannot represent: the file ` +
      "is not UTF-8 (it looks like Windows-1252/Latin-1), and EditFile keeps its encoding rather than corrupt " +
      "it. Use only characters of that encoding, or convert the file to UTF-8 with Bash (iconv) first";
  }
  const encoding = (format?.encoding ?? "utf-8").toUpperCase();
  return `the edited text would contain a lone surrogate (${code}), which cannot be written as ${encoding}: ` +
    "new_string must hold whole characters, and old_string must not take half of one";
}

// A few numbered lines around each change, regions merged when they touch. It walks the text once, keeping
// only the regions it shows: a list of every line's start (and of every line) ran out of array space on a
// file of 150 million short lines, after the write, so the model was told an edit that was made had failed.
function snippet(text: string, changes: readonly Change[]): string {
  if (text === "") return "The file is now empty.";
  const total = lineCount(text);
  const lineOf = lineCursor(text);
  const shown: { from: number; to: number }[] = [];
  let previous: { from: number; to: number } | undefined;
  let regions = 0;
  for (const change of changes) {
    const first = Math.min(total, lineOf(change.start));
    const last = Math.min(total, lineOf(Math.max(change.start, change.start + change.length - 1)));
    const from = Math.max(1, first - SNIPPET_CONTEXT);
    const to = Math.min(total, last + SNIPPET_CONTEXT);
    if (previous !== undefined && from <= previous.to + 1) {
      previous.to = Math.max(previous.to, to);
      continue;
    }
    previous = { from, to };
    regions++;
    if (shown.length < MAX_SNIPPET_REGIONS) shown.push(previous);
  }
  const lineAt = lineReader(text);
  const blocks = shown.map((region) => {
    const show = (number: number): string => numbered(number, lineAt(number));
    const lines: string[] = [];
    const long = region.to - region.from + 1 > MAX_REGION_LINES;
    const headEnd = long ? region.from + MAX_REGION_LINES - 11 : region.to;
    for (let number = region.from; number <= headEnd; number++) lines.push(show(number));
    if (long) {
      lines.push(`… ${region.to - 10 - headEnd} lines not shown`);
      for (let number = region.to - 9; number <= region.to; number++) lines.push(show(number));
    }
    return lines.join("\n");
  });
  const hidden = regions - shown.length;
  if (hidden > 0) blocks.push(`… ${hidden} more changed region${hidden === 1 ? "" : "s"} not shown`);
  return blocks.join("\n…\n");
}

// Lines as the snippet numbers them: a final line break ends the last line rather than starting another.
function lineCount(text: string): number {
  let count = 1;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) count++;
  return text.endsWith("\n") ? count - 1 : count;
}

// The 1-based line of an offset, for offsets in ascending order: it scans forward from the last one.
function lineCursor(text: string): (offset: number) => number {
  let line = 1;
  let next = text.indexOf("\n");
  return (offset) => {
    while (next !== -1 && next < offset) {
      line++;
      next = text.indexOf("\n", next + 1);
    }
    return line;
  };
}

// The text of a line (without "\r\n" or "\n"), for line numbers in ascending order.
function lineReader(text: string): (line: number) => string {
  let current = 1;
  let start = 0;
  return (line) => {
    while (current < line) {
      start = text.indexOf("\n", start) + 1;
      current++;
    }
    const end = text.indexOf("\n", start);
    return text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "");
  };
}
