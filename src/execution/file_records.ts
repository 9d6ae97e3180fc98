/**
 * The session's memory of file contents: which files were read or written, and the hash of what was seen.
 * WriteFile and EditFile compare it with the file on disk right before writing.
 *
 * @module
 */
import type { FileRecord, ToolResult } from "../tools/tool.ts";

/** Content hashes of the files this session has seen, by canonical path. */
export class FileRecordStore {
  #hashes = new Map<string, string>();

  /** A plain copy for a tool call's context. */
  snapshot(): Record<string, string> {
    return Object.fromEntries(this.#hashes);
  }

  /** The hash recorded for a canonical path, if any. */
  get(path: string): string | undefined {
    return this.#hashes.get(path);
  }

  /** Remembers the file a successful result reports in `metadata.fileRecord`. */
  recordFrom(result: ToolResult): void {
    if (result.isError) return;
    const record = result.metadata.fileRecord;
    if (isFileRecord(record)) this.#hashes.set(record.path, record.hash);
  }
}

function isFileRecord(value: unknown): value is FileRecord {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.path === "string" && typeof record.hash === "string";
}
