/**
 * Which entries of a git index (`.git/index`) are marked so that the user's `git status` and `git diff`
 * no longer look at them: `skip-worktree` (an extended flag) and `assume-unchanged` (the "assume valid"
 * bit). A shell command in the sandbox may write the index, as `git add` must; with `git update-index
 * --skip-worktree package.json` it can then change the file and hide the change from the review the user
 * makes before running it. The metadata scan (git_scan.ts) reports entries newly marked so.
 *
 * The index format (git's Documentation/gitformat-index.txt): "DIRC", a version (2, 3 or 4) and an entry
 * count; each entry has 40 bytes of stat data, the object name (20 bytes, 32 in a SHA-256 repository), 16
 * bits of flags, in versions 3 and 4 16 more when the "extended" flag is set, and the path: NUL-terminated
 * and padded to a multiple of 8 bytes in versions 2 and 3, prefix-compressed against the previous path in
 * version 4 (a varint of bytes to drop, then the NUL-terminated rest).
 *
 * @module
 */

/** The paths of the index's marked entries (as bytes decoded as UTF-8), or null when it is not an index. */
export interface IndexMarks {
  skipWorktree: string[];
  assumeUnchanged: string[];
}

const ASSUME_VALID = 0x8000;
const EXTENDED = 0x4000;
const SKIP_WORKTREE = 0x4000;
const STAT_BYTES = 40;

/** Reads the marked entries of an index file's bytes; null for anything that does not parse as one. */
export function markedIndexEntries(bytes: Uint8Array, hashBytes: 20 | 32 = 20): IndexMarks | null {
  if (bytes.length < 12) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0) !== 0x44495243) return null; // "DIRC"
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return null;
  const count = view.getUint32(8);
  const decoder = new TextDecoder();
  const marks: IndexMarks = { skipWorktree: [], assumeUnchanged: [] };
  let offset = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let entry = 0; entry < count; entry++) {
    const start = offset;
    offset += STAT_BYTES + hashBytes;
    if (offset + 2 > bytes.length) return null;
    const flags = view.getUint16(offset);
    offset += 2;
    let extended = 0;
    if ((flags & EXTENDED) !== 0) {
      if (version < 3 || offset + 2 > bytes.length) return null;
      extended = view.getUint16(offset);
      offset += 2;
    }
    let path: Uint8Array;
    if (version === 4) {
      // git's varint: 7 bits a byte, high bit "more", each continuation adding one before the shift.
      if (offset >= bytes.length) return null;
      let byte = bytes[offset++]!;
      let strip = byte & 0x7f;
      while ((byte & 0x80) !== 0) {
        if (offset >= bytes.length || strip > previous.length) return null;
        byte = bytes[offset++]!;
        strip = ((strip + 1) * 128) + (byte & 0x7f);
      }
      const end = bytes.indexOf(0, offset);
      if (end === -1 || strip > previous.length) return null;
      const kept = previous.subarray(0, previous.length - strip);
      path = new Uint8Array(kept.length + end - offset);
      path.set(kept);
      path.set(bytes.subarray(offset, end), kept.length);
      offset = end + 1;
    } else {
      const end = bytes.indexOf(0, offset);
      if (end === -1) return null;
      path = bytes.subarray(offset, end);
      // The entry, from its start, padded with 1 to 8 NUL bytes to a multiple of 8.
      offset = start + ((end - start + 8) & ~7);
      if (offset > bytes.length) return null;
    }
    previous = path;
    if ((extended & SKIP_WORKTREE) !== 0) marks.skipWorktree.push(decoder.decode(path));
    if ((flags & ASSUME_VALID) !== 0) marks.assumeUnchanged.push(decoder.decode(path));
  }
  return marks;
}
