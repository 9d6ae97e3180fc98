/**
 * ripgrep's file-name filters for Grep: the files Grep skips by extension as binary (never read), and the
 * glob of the call. Both are ripgrep "types", which select files by name only, after the ignore rules (a
 * `-g` glob would override `.gitignore`). Each comes with the same test written in TypeScript, so the
 * runtime can count the files ripgrep should search from Grep's own walk.
 *
 * @module
 */
import { isBinaryPath } from "./_text.ts";

/** The ripgrep type of the files Grep skips by extension. */
export const BINARY_TYPE = "mewcodebinary";
/** The ripgrep type of the files the glob selects. */
export const GLOB_TYPE = "mewcodeglob";

/**
 * Extensions of binary formats, kept only where `isBinaryPath` agrees (so ripgrep never skips a file Grep
 * reads); one Grep skips that is missing here is searched by ripgrep and then skipped by the runtime.
 */
const BINARY_CANDIDATES = [
  "png jpg jpeg gif bmp ico icns webp tif tiff psd heic avif",
  "zip gz tgz bz2 xz lz lzma zst 7z rar tar jar war ear apk deb rpm dmg iso cab whl crx xpi",
  "exe dll so dylib a lib o obj class pyc pyo pyd wasm node bin elf",
  "mp3 mp4 m4a m4v wav ogg oga flac aac avi mov mkv webm wmv wma",
  "ttf otf woff woff2 eot",
  "pdf doc docx xls xlsx ppt pptx odt ods odp sqlite sqlite3 db mdb",
  "pack idx swf pdb keystore jks p12 pfx der",
].join(" ").split(" ").filter((extension) =>
  isBinaryPath(`file.${extension}`) && /^[a-z0-9]+$/.test(extension)
);

const BINARY_NAME = new RegExp(`^[^]+\\.(?:${BINARY_CANDIDATES.join("|")})$`, "i");

/**
 * The `--type-add` argument of `BINARY_TYPE`: `?*.{[pP][nN][gG],…}`, a dot not first as for `isBinaryPath`.
 * One glob: ripgrep compiles (and with `--debug` logs) each glob of a type separately.
 */
export function binaryTypeArguments(): string[] {
  const extensions = BINARY_CANDIDATES.map((extension) => [...extension].map(caseClass).join(""));
  return ["--type-add", `${BINARY_TYPE}:?*.{${extensions.join(",")}}`];
}

/** Whether ripgrep's `BINARY_TYPE` skips a file: its name (after the last "/") against the globs above. */
export function skippedByBinaryType(relativePath: string): boolean {
  return BINARY_NAME.test(relativePath.slice(relativePath.lastIndexOf("/") + 1));
}

function caseClass(character: string): string {
  const lower = character.toLowerCase();
  const upper = character.toUpperCase();
  return lower === upper ? character : `[${lower}${upper}]`;
}

/** Characters a name glob may hold besides `*` and one `{…,…}`: none that ripgrep's globs treat specially. */
const PLAIN = /^[A-Za-z0-9._+@#%=~ -]*$/;

/**
 * The ripgrep type globs that select exactly the files a Grep glob matches, or null when there are none:
 * the glob must match a file by its name (no "/" other than a leading "**\/"), not be negated, and hold only
 * plain characters, `*` and one `{a,b}` group, which becomes one glob per alternative. Grep's `*` matches any
 * characters of a name, as ripgrep's does; each glob is then literal text and `*`.
 */
export function ripgrepGlob(glob: string): string[] | null {
  let body = glob;
  while (body.startsWith("./")) body = body.slice(2);
  if (body.startsWith("**/")) body = body.slice(3);
  if (body.includes("/") || body.includes("**")) return null;
  const open = body.indexOf("{");
  if (open === -1) return PLAIN.test(body.replaceAll("*", "")) && body !== "" ? [body] : null;
  const close = body.indexOf("}", open);
  if (close === -1 || body.indexOf("{", open + 1) !== -1 || body.indexOf("}", close + 1) !== -1) return null;
  const alternatives = body.slice(open + 1, close).split(",");
  if (alternatives.length < 2) return null;
  const globs = alternatives.map((alternative) => body.slice(0, open) + alternative + body.slice(close + 1));
  if (!globs.every((candidate) => PLAIN.test(candidate.replaceAll("*", "")))) return null;
  return [...new Set(globs.filter((candidate) => candidate !== ""))];
}

/** The `--type-add` and `--type` arguments that keep only the files the globs select. */
export function globTypeArguments(globs: readonly string[]): string[] {
  return [...globs.flatMap((glob) => ["--type-add", `${GLOB_TYPE}:${glob}`]), "--type", GLOB_TYPE];
}
