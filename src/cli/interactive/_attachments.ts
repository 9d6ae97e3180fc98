/**
 * Files attached to an interactive prompt with `@path`: read (inside the workspace only, at most
 * `MAX_ATTACHMENT_BYTES` each) and added after the prompt's text. An attachment that cannot be added is
 * left out and named, with the reason, for the user to see before the turn runs.
 *
 * A file is opened only once a `stat` of its real path shows a regular file (a named pipe would block the
 * open until a writer came), and the opened handle must be that same file (device and inode): a file swapped
 * in between is left out. Only what is added is read, so attaching a log of gigabytes costs 256 KiB.
 *
 * @module
 */
import { describeError } from "../../common/errors.ts";
import { readInto } from "../../common/fs.ts";
import { looksBinary } from "../../tools/_text.ts";

/** The most of an attached file (`@path`) put into the prompt. */
export const MAX_ATTACHMENT_BYTES = 256 * 1024;

/** An attachment left out of the prompt. */
export interface SkippedAttachment {
  /** The path as the user typed it. */
  path: string;
  /** Why, as the end of "@path not attached: …". */
  reason: string;
}

/** The prompt with each attached file (`@path`) added, between tags, after the text; and those left out. */
export async function withAttachments(
  text: string,
  attachments: readonly string[],
  root: string,
): Promise<{ prompt: string; skipped: SkippedAttachment[] }> {
  const parts = [text];
  const skipped: SkippedAttachment[] = [];
  for (const attachment of attachments) {
    const read = await readAttachment(attachment, root);
    if ("reason" in read) {
      skipped.push({ path: attachment, reason: read.reason });
      continue;
    }
    const content = new TextDecoder().decode(read.bytes);
    const note = read.bytes.length < read.size
      ? `\n(cut after ${read.bytes.length} of ${read.size} bytes)`
      : "";
    parts.push(`<file path="${read.real}">\n${content}${note}\n</file>`);
  }
  return { prompt: parts.join("\n\n"), skipped };
}

/** The first `MAX_ATTACHMENT_BYTES` of an attached file, its real path and size; or why it is left out. */
async function readAttachment(
  attachment: string,
  root: string,
): Promise<{ real: string; bytes: Uint8Array; size: number } | { reason: string }> {
  const path = attachment.startsWith("/") ? attachment : `${root}/${attachment}`;
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch {
    return { reason: "it no longer exists" };
  }
  if (real !== root && !real.startsWith(`${root}/`)) return { reason: "it lies outside the workspace" };
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(real);
  } catch (error) {
    return { reason: `it cannot be read (${describeError(error)})` };
  }
  if (info.isDirectory) return { reason: "it is a directory; name a file in it, or ask about the directory" };
  if (!info.isFile) return { reason: "it is not a regular file (a named pipe, socket or device)" };
  let file: Deno.FsFile;
  try {
    file = await Deno.open(real, { read: true });
  } catch (error) {
    return { reason: `it cannot be read (${describeError(error)})` };
  }
  try {
    const opened = await file.stat();
    if (!opened.isFile || opened.dev !== info.dev || opened.ino !== info.ino) {
      return { reason: "it was replaced while being attached; try again" };
    }
    const bytes = await readUpTo(file, MAX_ATTACHMENT_BYTES);
    if (looksBinary(bytes)) return { reason: "it looks binary (a NUL byte in its first 8 KiB)" };
    return { real, bytes, size: Math.max(opened.size, bytes.length) };
  } catch (error) {
    return { reason: `it cannot be read (${describeError(error)})` };
  } finally {
    file.close();
  }
}

/** Reads from the start of `file` until `limit` bytes or its end, whichever comes first. */
async function readUpTo(file: Deno.FsFile, limit: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(limit);
  return buffer.subarray(0, await readInto(file, buffer));
}
