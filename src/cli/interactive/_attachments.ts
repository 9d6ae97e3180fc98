/**
 * Files attached to an interactive prompt with `@path`: read (inside the workspace only, at most
 * `MAX_ATTACHMENT_BYTES` each) and added after the prompt's text.
 *
 * @module
 */

/** The most of an attached file (`@path`) put into the prompt. */
const MAX_ATTACHMENT_BYTES = 256 * 1024;

/** The prompt with each attached file (`@path`) added, between tags, after the text. */
export async function withAttachments(
  text: string,
  attachments: readonly string[],
  root: string,
): Promise<string> {
  const parts = [text];
  for (const attachment of attachments) {
    const path = attachment.startsWith("/") ? attachment : `${root}/${attachment}`;
    let real: string;
    try {
      real = await Deno.realPath(path);
    } catch {
      continue;
    }
    if (real !== root && !real.startsWith(`${root}/`)) continue;
    const info = await Deno.stat(real).catch(() => null);
    if (info === null || !info.isFile) continue;
    const bytes = await Deno.readFile(real).catch(() => null);
    if (bytes === null) continue;
    const cutAt = Math.min(bytes.length, MAX_ATTACHMENT_BYTES);
    const content = new TextDecoder().decode(bytes.subarray(0, cutAt));
    const note = cutAt < bytes.length ? `\n(cut after ${cutAt} of ${bytes.length} bytes)` : "";
    parts.push(`<file path="${real}">\n${content}${note}\n</file>`);
  }
  return parts.join("\n\n");
}
