/**
 * What a WriteFile call does, without its input schema: the tool worker loads this (and no zod), the
 * definition in `write_file.ts` offers it to the model.
 *
 * @module
 */
import { readForWrite, sha256Hex, withPathLock } from "./_fs.ts";
import { replaceNotes, writeAtomic } from "./_fs_write.ts";
import { resolveWritablePath } from "./protected_paths.ts";
import {
  codePointLabel,
  countLines,
  decodeLegacy,
  decodeText,
  detectLineEnding,
  encodeText,
  type TextFormat,
  withLineEnding,
} from "./_text.ts";
import { errorResult, textResult } from "./results.ts";
import type { FileRecord, ToolContext, ToolResult, ToolRunner } from "./tool.ts";
import type { WriteFileInput } from "./write_file.ts";

/** WriteFile's call: creates or overwrites a file atomically; overwriting requires a current read. */
export const writeFileRunner: ToolRunner<WriteFileInput> = {
  name: "WriteFile",
  async execute(context: ToolContext, input: WriteFileInput): Promise<ToolResult> {
    const fail = (message: string, reason: string): ToolResult =>
      errorResult(`Cannot write file "${input.path}": ${message}`, { reason });
    const resolved = await resolveWritablePath(context, input.path);
    if (!resolved.ok) return fail(resolved.message, resolved.reason);
    const path = resolved.path;
    if (resolved.info?.isDirectory) return fail("it is a directory; give the path of a file", "is-directory");
    return await withPathLock(path, async () => {
      const notes: string[] = [];
      let format: Pick<TextFormat, "encoding" | "bom"> = { encoding: "utf-8", bom: false };
      let content = input.content;
      const existing = await readForWrite(path, context.fileRecords, "write", context.requireRead ?? true);
      if (!existing.ok && existing.reason !== "not-found") return fail(existing.message, existing.reason);
      if (existing.ok) {
        const decoded = decodeText(existing.bytes);
        if (decoded.ok) {
          format = { encoding: decoded.encoding, bom: decoded.bom };
          if (decoded.lineEnding === "\r\n") {
            content = withLineEnding(content, "\r\n");
            notes.push("kept CRLF line endings");
          }
          if (decoded.bom) {
            if (content.startsWith("\uFEFF")) content = content.slice(1);
            notes.push(
              decoded.encoding === "utf-8" ? "kept the UTF-8 BOM" : `kept ${decoded.encoding.toUpperCase()}`,
            );
          }
        } else if (decoded.reason === "invalid-utf-8") {
          const crlf = detectLineEnding(decodeLegacy(existing.bytes)) === "\r\n";
          if (crlf) content = withLineEnding(content, "\r\n");
          // As ReadFile showed it and EditFile keeps it: a legacy file rewritten as UTF-8 would change every
          // byte above 0x7F, in lines the model never meant to touch. Content it cannot hold goes as UTF-8.
          if (encodeText(content, { encoding: "windows-1252", bom: false }).ok) {
            format = { encoding: "windows-1252", bom: false };
            notes.push("kept the file's Windows-1252 encoding (it is not UTF-8)");
          } else {
            notes.push(
              "the old file was not valid UTF-8 (Windows-1252) and the content holds characters that encoding " +
                "cannot; it is written as UTF-8",
            );
          }
          if (crlf) notes.push("kept CRLF line endings");
        }
      }
      const encoded = encodeText(content, format);
      if (!encoded.ok) {
        const code = codePointLabel(encoded.character);
        return fail(
          `content contains ${code} at index ${encoded.index}, which cannot be written as ${format.encoding.toUpperCase()}`,
          "unencodable",
        );
      }
      if (context.signal.aborted) {
        return fail("the call was cancelled before anything was written", "aborted");
      }
      const written = await writeAtomic(path, encoded.bytes, {
        ...(existing.ok ? { expected: existing.version } : {}),
        root: context.root,
        additionalRoots: context.additionalRoots,
        excluded: context.excludedPaths,
      });
      if (!written.ok) return fail(written.message, written.reason);
      const fileRecord: FileRecord = { path, hash: await sha256Hex(encoded.bytes) };
      const lines = countLines(content);
      const verb = written.created ? "Created" : "Overwrote";
      const summary = `${verb} "${input.path}" (${encoded.bytes.length} bytes, ${lines} line${
        lines === 1 ? "" : "s"
      })`;
      return textResult(
        [summary + (notes.length ? `; ${notes.join("; ")}` : ""), ...replaceNotes(written)].join("\n"),
        {
          fileRecord,
          path,
          created: written.created,
          bytes: encoded.bytes.length,
          lines,
          mode: written.mode,
          previousLinks: written.previousLinks,
        },
      );
    });
  },
};
