/**
 * The object files git_loose_objects.ts cannot check: packs, the multi-pack index and the commit graph. Each
 * tells git where to find an object or what a commit holds, and git trusts it: a pack index (`.idx`) that
 * names a tracked file's blob at the offset of other content (git looks in its packs, newest first, before
 * the loose objects), a multi-pack index that does the same across packs, or a commit graph that gives a
 * commit another tree. `git status` stays clean, and the next `git checkout -- file`, `git reset --hard` or
 * checkout of a branch writes content the history never held. A sandboxed command may write all of them, as
 * `git gc` and `git fetch` must.
 *
 * At the end of a session, the files of each repository's `objects` folder written during it (by change time,
 * which a command cannot set back) are checked by git itself, in the read-only sandbox: `git verify-pack`
 * indexes each pack again from its content and compares, `git multi-pack-index verify` and
 * `git commit-graph verify` compare with the objects. Within a budget of bytes and time, since a `git gc`
 * during the session rewrites every object into one new pack.
 *
 * @module
 */
import { lstatSyncOrNull } from "../common/fs.ts";
import { assertNever } from "../common/errors.ts";
import { join, relative } from "../common/path.ts";
import { shellQuote } from "../common/shell_quote.ts";
import type { CommandResult } from "./sandboxed_command.ts";

/** Milliseconds before the session's start that still count: file times come from a coarse clock. */
const CLOCK_SLACK_MS = 5_000;
/** Bytes of packs checked at most in one session's check; beyond, the user is told to run `git fsck`. */
export const MAX_CHECKED_PACK_BYTES = 512 * 1024 * 1024;
/** Milliseconds the checks of one session may take together. */
export const PACK_CHECK_TIMEOUT_MS = 30_000;
/** Characters of git's message kept for a line. */
const MAX_MESSAGE = 300;

/** A repository's `objects` folder, and the git directory it belongs to (real paths). */
export interface ObjectFolder {
  gitDir: string;
  objects: string;
}

/** One file to check, written during the session. */
export interface WrittenObjectFile {
  kind: "pack" | "multi-pack-index" | "commit-graph";
  /** The git directory (for `GIT_DIR`: its object format) and the objects folder it belongs to. */
  folder: ObjectFolder;
  /** The `.idx` of a pack, the multi-pack index, or the commit graph (a file or the `commit-graphs` chain). */
  path: string;
  /** Bytes git reads to check it (a pack's `.pack` and `.idx`). */
  bytes: number;
}

/** The pack indexes, multi-pack index and commit graph of the folders changed at or after `since` (epoch ms). */
export function objectFilesWrittenSince(
  folders: readonly ObjectFolder[],
  since: number,
): WrittenObjectFile[] {
  const after = since - CLOCK_SLACK_MS;
  const files: WrittenObjectFile[] = [];
  for (const folder of folders) {
    const pack = join(folder.objects, "pack");
    for (const name of listNames(pack)) {
      if (!/^pack-[0-9a-f]+\.idx$/.test(name)) continue;
      const index = join(pack, name);
      const data = join(pack, name.replace(/\.idx$/, ".pack"));
      if (!changedSince(index, after) && !changedSince(data, after)) continue;
      files.push({ kind: "pack", folder, path: index, bytes: sizeOf(index) + sizeOf(data) });
    }
    const multiPack = join(pack, "multi-pack-index");
    if (changedSince(multiPack, after)) {
      files.push({ kind: "multi-pack-index", folder, path: multiPack, bytes: sizeOf(multiPack) });
    }
    const graph = join(folder.objects, "info", "commit-graph");
    const chain = join(folder.objects, "info", "commit-graphs");
    const chainFiles = listNames(chain).map((name) => join(chain, name));
    if (changedSince(graph, after)) {
      files.push({ kind: "commit-graph", folder, path: graph, bytes: sizeOf(graph) });
    }
    if (chainFiles.some((path) => changedSince(path, after))) {
      const bytes = chainFiles.reduce((total, path) => total + sizeOf(path), 0);
      files.push({ kind: "commit-graph", folder, path: chain, bytes });
    }
  }
  return files;
}

/** What runs a command in the read-only sandbox (`ShellSandbox.runCommand`). */
export type ReadOnlyRunner = (command: string, timeoutMs: number) => Promise<CommandResult>;

/**
 * Checks `files` with `git` (an absolute path) in the read-only sandbox, smallest first until `maxBytes`;
 * one line for the user per file git finds wrong, and one for what was not checked (over the budget, past
 * the time limit, a sandbox that cannot run). `root` shortens the paths shown. Never throws.
 */
export async function checkObjectFiles(
  files: readonly WrittenObjectFile[],
  options: { git: string; root: string; run: ReadOnlyRunner; maxBytes?: number; timeoutMs?: number },
): Promise<string[]> {
  if (files.length === 0) return [];
  const maxBytes = options.maxBytes ?? MAX_CHECKED_PACK_BYTES;
  const checked: WrittenObjectFile[] = [];
  let bytes = 0;
  // Smallest first: a command cannot keep a small forged index from being checked by writing a large pack.
  for (const file of [...files].sort((a, b) => a.bytes - b.bytes)) {
    if (bytes + file.bytes > maxBytes) continue;
    bytes += file.bytes;
    checked.push(file);
  }
  const show = (path: string): string => {
    const inRoot = relative(options.root, path);
    return inRoot === "" || inRoot.startsWith("..") ? path : inRoot;
  };
  const lines: string[] = [];
  const unchecked = files.filter((file) => !checked.includes(file));
  const timeoutMs = options.timeoutMs ?? PACK_CHECK_TIMEOUT_MS;
  if (checked.length > 0) {
    const result = await options.run(checkScript(options.git, checked), timeoutMs);
    const verdicts = result.status === "failed" ? new Map<number, string>() : parseVerdicts(result.stdout);
    for (const [index, file] of checked.entries()) {
      const verdict = verdicts.get(index);
      if (verdict === undefined) {
        unchecked.push(file);
        continue;
      }
      if (verdict === "") continue;
      lines.push(
        `${show(file.path)} (${describeKind(file.kind)}, written during the session) does not match the ` +
          `objects: ${verdict}. The user's git may write content the history never held (git checkout, ` +
          `git reset --hard); run git fsck, and move it out of the repository if it confirms`,
      );
    }
    if (result.status === "failed" && unchecked.length > 0) {
      lines.push(
        `The packs and commit graph written during the session could not be checked (${result.message}): ` +
          "run git fsck before you check out files in this repository",
      );
      return lines;
    }
    if (result.status === "timed-out" && unchecked.length > 0) {
      lines.push(
        `Checking the packs and commit graph written during the session took longer than ${
          timeoutMs / 1000
        } s; ${unchecked.length} of ${files.length} not checked (${
          unchecked.map((file) => show(file.path)).join(", ")
        }): run git fsck before you check out files in this repository`,
      );
      return lines;
    }
  }
  if (unchecked.length > 0) {
    lines.push(
      `${unchecked.length} of the packs or commit graphs written during the session were not checked ` +
        `(more than ${Math.round(maxBytes / 1024 / 1024)} MiB: ${
          unchecked.map((file) => show(file.path)).join(", ")
        }): run git fsck before you check out files in this repository`,
    );
  }
  return lines;
}

/**
 * One shell script that checks every file, printing `mewcode-check <index> ok` or
 * `mewcode-check <index> bad <git's message on one line>`; the repository's config cannot turn a check off.
 */
function checkScript(git: string, files: readonly WrittenObjectFile[]): string {
  const lines = ["cd /"];
  for (const [index, file] of files.entries()) {
    const gitDir = shellQuote(file.folder.gitDir);
    const objects = shellQuote(file.folder.objects);
    const base = `GIT_DIR=${gitDir} ${shellQuote(git)} -c core.commitGraph=true -c core.multiPackIndex=true`;
    const check = file.kind === "pack"
      ? `${base} verify-pack ${shellQuote(file.path)}`
      : file.kind === "multi-pack-index"
      ? `${base} multi-pack-index --object-dir=${objects} verify`
      : `${base} commit-graph verify --object-dir ${objects}`;
    lines.push(
      `if out=$(${check} 2>&1 >/dev/null); then echo 'mewcode-check ${index} ok'; ` +
        `else printf 'mewcode-check ${index} bad %s\\n' "$(printf '%s' "$out" | tr '\\n' ' ')"; fi`,
    );
  }
  return lines.join("\n");
}

/** The verdict of each check by index: "" when git found it right, else git's message. */
function parseVerdicts(stdout: string): Map<number, string> {
  const verdicts = new Map<number, string>();
  for (const line of stdout.split("\n")) {
    const match = /^mewcode-check (\d+) (ok|bad)(?: (.*))?$/.exec(line);
    if (match === null) continue;
    const message = (match[3] ?? "").trim();
    const shown = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
    verdicts.set(Number(match[1]), match[2] === "ok" ? "" : `git says "${shown || "failed"}"`);
  }
  return verdicts;
}

function describeKind(kind: WrittenObjectFile["kind"]): string {
  switch (kind) {
    case "pack":
      return "a pack index";
    case "multi-pack-index":
      return "the multi-pack index";
    case "commit-graph":
      return "the commit graph";
    default:
      return assertNever(kind);
  }
}

/** Whether a file's ctime or mtime is at or after `after` (epoch ms). */
function changedSince(path: string, after: number): boolean {
  const info = lstatSyncOrNull(path);
  if (info === null || !info.isFile) return false;
  const changed = Math.max(info.ctime?.getTime() ?? 0, info.mtime?.getTime() ?? 0);
  return changed >= after;
}

function sizeOf(path: string): number {
  return lstatSyncOrNull(path)?.size ?? 0;
}

/** The names in a folder (symlinks followed, as git follows them), sorted; none when it cannot be listed. */
function listNames(path: string): string[] {
  try {
    return [...Deno.readDirSync(path)].map((entry) => entry.name).sort();
  } catch {
    return [];
  }
}
