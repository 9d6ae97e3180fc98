/**
 * What a ReadFile call does, without its input schema: the tool worker loads this (and no zod), the
 * definition in `read_file.ts` offers it to the model.
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { describeMissing, type FsFailure, readVerified, sha256Hex } from "./_fs.ts";
import { safePath } from "./_paths.ts";
import { DEFAULT_READ_LIMIT, MAX_READ_CHARACTERS, pagingProblem } from "./_shared.ts";
import {
  decodeFile,
  isBinaryPath,
  legacyEncodingName,
  looksBinary,
  MAX_LINE_CHARACTERS,
  numbered,
} from "./_text.ts";
import { errorResult, textResult } from "./results.ts";
import type { FileRecord, ToolContext, ToolResult, ToolRunner } from "./tool.ts";
import type { ReadFileInput } from "./read_file.ts";

/** ReadFile's call: reads a text file with line numbers; records the file's hash for later writes. */
export const readFileRunner: ToolRunner<ReadFileInput> = {
  name: "ReadFile",
  async execute(context: ToolContext, input: ReadFileInput): Promise<ToolResult> {
    const fail = (message: string, reason: string): ToolResult =>
      errorResult(`Cannot read file "${input.path}": ${message}`, { reason });
    const paging = pagingProblem(input);
    if (paging !== null) return errorResult(paging, { reason: "invalid-input" });
    const resolved = await safePath(context.root, input.path, {
      aliases: context.rootAliases,
      excluded: context.excludedPaths,
      additionalRoots: context.additionalRoots,
    });
    if (!resolved.ok) return fail(resolved.message, resolved.reason);
    const path = resolved.path;
    if (!resolved.exists) {
      return fail(await describeMissing(path), "not-found");
    }
    if (resolved.info?.isDirectory) {
      return fail(
        `it is a directory; use Glob to list its files (for example pattern "**/*" with path "${path}")`,
        "is-directory",
      );
    }
    if (isBinaryPath(path)) return fail(binaryMessage(posix.extname(path)), "binary");
    const read = await readVerified(path, { strictLinks: context.strictLinks });
    if (!read.ok) return fail(readFailureMessage(read), read.reason);
    const { bytes } = read;
    if (looksBinary(bytes)) return fail(binaryMessage(null), "binary");
    const fileRecord: FileRecord = { path, hash: await sha256Hex(bytes) };

    const notes: string[] = [];
    if (read.links > 1) {
      notes.push(
        `Note: this file has ${read.links} hard links; its other names may be elsewhere, even outside the workspace. ` +
          "WriteFile and EditFile replace this name only; the other links keep the old content.",
      );
    }
    const decoded = decodeFile(bytes);
    if (!decoded.ok) {
      return fail(
        `the file starts with a ${decoded.encoding.toUpperCase()} byte order mark but is not valid ${decoded.encoding.toUpperCase()}; inspect it with Bash`,
        "invalid-encoding",
      );
    }
    const { text, invalidUtf8 } = decoded;
    const encoding = decoded.format.encoding;
    if (invalidUtf8 !== null) {
      notes.push(
        `Warning: the file is not valid UTF-8 (first invalid byte at offset ${invalidUtf8.offset}); ` +
          `it looks like ${legacyEncodingName(invalidUtf8.looksLike)} and is shown decoded as such. ` +
          "EditFile keeps this encoding and every byte outside the edited text.",
      );
    } else if (encoding !== "utf-8") {
      notes.push(`Note: the file is ${encoding.toUpperCase()} with a BOM; shown decoded.`);
    }
    const metadata = { fileRecord, path, encoding, links: read.links, bytes: bytes.length };
    if (text === "") {
      return textResult(
        [
          ...notes,
          `File "${input.path}" is empty (0 lines${
            bytes.length > 0 ? `, ${bytes.length} bytes of BOM` : ""
          })`,
        ]
          .join("\n"),
        { ...metadata, totalLines: 0 },
      );
    }
    const offset = input.offset ?? 1;
    const limit = input.limit ?? DEFAULT_READ_LIMIT;
    const page = pageLines(text, offset, limit);
    if (page.lines.length === 0) {
      return textResult(
        [
          ...notes,
          `File "${input.path}" has ${page.totalLines} line${page.totalLines === 1 ? "" : "s"}; ` +
          `offset ${offset} is past the end. Use an offset from 1 to ${page.totalLines}`,
        ].join("\n"),
        { ...metadata, totalLines: page.totalLines, startLine: offset, endLine: offset - 1 },
      );
    }
    const endLine = offset + page.lines.length - 1;
    const parts = notes.length > 0 ? [notes.join("\n"), ""] : [];
    parts.push(page.lines.join("\n"));
    if (endLine < page.totalLines) {
      const why = page.stoppedForSize
        ? ` (stopped early to keep the output under ${MAX_READ_CHARACTERS} characters)`
        : "";
      parts.push(
        "",
        `[Showing lines ${offset}-${endLine} of ${page.totalLines}${why}. ` +
          `To read more, call ReadFile with offset ${endLine + 1}.]`,
      );
    }
    return textResult(parts.join("\n"), {
      ...metadata,
      totalLines: page.totalLines,
      startLine: offset,
      endLine,
      truncated: endLine < page.totalLines,
      cutLines: page.cutLines,
    });
  },
};

interface Page {
  lines: string[];
  totalLines: number;
  stoppedForSize: boolean;
  cutLines: number;
}

// Walks the text once: numbers the lines of the requested page and counts all lines.
function pageLines(text: string, offset: number, limit: number): Page {
  const lines: string[] = [];
  let characters = 0;
  let lineNumber = 0;
  let start = 0;
  let stoppedForSize = false;
  let cutLines = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    lineNumber++;
    if (lineNumber >= offset && lines.length < limit && !stoppedForSize) {
      const lineEnd = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
      if (lineEnd - start > MAX_LINE_CHARACTERS) cutLines++;
      const shown = numbered(lineNumber, text.slice(start, lineEnd));
      if (lines.length > 0 && characters + shown.length > MAX_READ_CHARACTERS) stoppedForSize = true;
      else {
        lines.push(shown);
        characters += shown.length + 1;
      }
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return { lines, totalLines: lineNumber, stoppedForSize, cutLines };
}

function binaryMessage(extension: string | null): string {
  const kind = extension
    ? `file is binary (${extension} files are binary)`
    : "file is binary (it contains NUL bytes)";
  return `${kind}; use Bash to inspect it (for example \`file\`, \`xxd | head\`, or a converter for its format)`;
}

function readFailureMessage(failure: FsFailure): string {
  switch (failure.reason) {
    case "is-directory":
      return "it is a directory; use Glob to list its files";
    case "too-large":
      return `${failure.message}; use Grep to find the relevant lines, or Bash (\`head\`, \`sed -n\`) to read parts`;
    default:
      return failure.message;
  }
}
