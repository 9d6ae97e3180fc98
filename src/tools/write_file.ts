/**
 * WriteFile: creates a file or replaces a whole file, atomically, keeping the old file's format.
 *
 * @module
 */
import { z } from "zod";
import { readForWrite, sha256Hex, withPathLock } from "./_fs.ts";
import { linkNote, writeAtomic } from "./_fs_write.ts";
import { safePath, validatePathInput } from "./_paths.ts";
import { writeProtection } from "./protected_paths.ts";
import {
  codePointLabel,
  countLines,
  decodeText,
  encodeText,
  type TextFormat,
  withLineEnding,
} from "./_text.ts";
import { defineTool, errorResult, type FileRecord, textResult, type ToolResult } from "./tool.ts";

const WRITE_FILE_DESCRIPTION =
  `Create a new file, or replace the entire content of an existing file, in the workspace.

When to use: to create a new file, or when most of a file changes. For changes to part of an existing file, use EditFile instead: it sends only the changed text and is less error-prone.

Rules:
- path must be an absolute path inside the workspace (for example "/home/me/project/src/new.ts"). Missing parent directories are created.
- To overwrite an existing file you must have read it with ReadFile in this session, and it must not have changed since (checked by content). Otherwise the write is refused with "read it first" or "modified since you read it — read it again"; then call ReadFile and retry.
- content is written exactly as given, character for character: no escaping or quote conversion. Write the complete file; there is no append mode and no placeholder like "rest unchanged".
- When overwriting, the file keeps its format: a CRLF file is written with CRLF line endings throughout, a UTF-8 BOM or UTF-16 encoding is kept, and the file's permissions are kept. New files are UTF-8 with the line endings you give, mode 0644.

Output: "Created" or "Overwrote" with the path, the byte count and the line count. Do not use this tool to create documentation or README files unless asked. To run formatters or build tools after writing, use Bash.`;

const WriteFileInput = z.object({
  path: z.string().describe("Absolute path of the file to create or overwrite, inside the workspace"),
  content: z.string().describe("The complete new content of the file, exactly as it should be written"),
}).strict();

/** The input of WriteFile. */
export type WriteFileInput = z.infer<typeof WriteFileInput>;

/** WriteFile: creates or overwrites a file atomically; overwriting requires a current read. */
export const writeFileTool = defineTool({
  name: "WriteFile",
  category: "file",
  description: WRITE_FILE_DESCRIPTION,
  inputSchema: WriteFileInput,
  isReadOnly: false,
  isDestructive: false,
  validateInput(input, context) {
    const problem = validatePathInput(input.path, context.root);
    return problem === null ? null : `Cannot write file "${input.path}": ${problem.message}`;
  },
  async execute(context, input) {
    const fail = (message: string, reason: string): ToolResult =>
      errorResult(`Cannot write file "${input.path}": ${message}`, { reason });
    const resolved = await safePath(context.root, input.path, {
      aliases: context.rootAliases,
      excluded: context.excludedPaths,
      additionalRoots: context.additionalRoots,
    });
    if (!resolved.ok) return fail(resolved.message, resolved.reason);
    const protection = writeProtection(resolved, context);
    if (protection !== null) return fail(protection.reason, "protected");
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
          notes.push("the old file was not valid UTF-8; the new content is written as UTF-8");
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
        [summary + (notes.length ? `; ${notes.join("; ")}` : ""), ...linkNote(written)].join("\n"),
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
});
