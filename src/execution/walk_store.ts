/**
 * Grep's walks kept across processes, in the workspace's state folder (`$MEWCODE_HOME/projects/<slug>/walks`).
 *
 * Why: users fire one-shot prompts from aliases, a new process each time, and every first Grep of a process
 * walked the whole tree again alongside ripgrep (on two cores, the walk slows ripgrep's search too). A walk
 * kept here is used only after the worker has checked its stamps (`walkIsCurrent` in src/tools/_walk.ts):
 * an lstat of each directory it listed and each ignore file it read, about a tenth of a walk's time. A walk
 * without usable stamps (it met a symlink, or the tree had just changed) is never kept.
 *
 * One JSON file per walked path and glob, named by a hash of what the walk depends on (the path, the glob,
 * the workspace's folders and excluded folders, the deny and ask rules) and holding that key too; written atomically, at most
 * `MAX_KEPT_WALKS` files (the oldest go), none larger than `MAX_WALK_FILE_BYTES`. Anything unreadable or
 * of another shape is ignored: the walk is then simply done again.
 *
 * @module
 */
import { join } from "../common/path.ts";
import { sha256HexSync } from "../common/sha256.ts";
import { writeFileAtomic } from "../config/_atomic_write.ts";
import type { GrepWalkReport } from "../tools/_grep_prepass.ts";
import type { WalkKeeper, WalkKey } from "../tools/grep_ripgrep.ts";
import { STAMP_FIELDS, type WalkStamps } from "../tools/_walk_stamps.ts";

/** The format of the files; a file of another version is ignored. */
const FORMAT = 1;
/** Walk files kept per workspace. */
export const MAX_KEPT_WALKS = 16;
/** Age after which a temporary file (`writeFileAtomic`'s) is taken as left behind. */
const STALE_TEMPORARY_MS = 60_000;
/** The largest walk file written or read (a tree of about a million files). */
export const MAX_WALK_FILE_BYTES = 64 * 1024 * 1024;

/** Walks kept on disk for one workspace. */
export class WalkStore implements WalkKeeper {
  #directory: string;
  #maxWalks: number;

  constructor(directory: string, options: { maxWalks?: number } = {}) {
    this.#directory = directory;
    this.#maxWalks = options.maxWalks ?? MAX_KEPT_WALKS;
  }

  /** The kept walk for `key`, or null (none, unreadable, another shape or key). Never throws. */
  async load(key: WalkKey): Promise<GrepWalkReport | null> {
    const keyText = keyOf(key);
    try {
      const path = join(this.#directory, `${fileNameOf(keyText)}.json`);
      const info = await Deno.lstat(path);
      if (!info.isFile || info.size > MAX_WALK_FILE_BYTES) return null;
      const parsed: unknown = JSON.parse(await Deno.readTextFile(path));
      if (!isRecord(parsed) || parsed.format !== FORMAT || parsed.key !== keyText) return null;
      return walkOf(parsed.walk);
    } catch {
      return null;
    }
  }

  /** Keeps a walk with stamps for `key` (replacing the last one), dropping the oldest files. Never throws. */
  async save(key: WalkKey, walk: GrepWalkReport): Promise<void> {
    if (walk.stamps === null) return;
    const keyText = keyOf(key);
    const text = JSON.stringify({
      format: FORMAT,
      key: keyText,
      walk: {
        ...walk,
        // JSON has no NaN (a missing path's stamp): null stands for it.
        stamps: {
          ...walk.stamps,
          values: Array.from(walk.stamps.values, (value) => Number.isNaN(value) ? null : value),
        },
      },
    });
    if (text.length > MAX_WALK_FILE_BYTES) return;
    try {
      await Deno.mkdir(this.#directory, { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(this.#directory, `${fileNameOf(keyText)}.json`), text, { mode: 0o600 });
      await this.#prune();
    } catch {
      // A walk not kept is done again next time.
    }
  }

  // Removes the oldest walk files beyond the limit.
  async #prune(): Promise<void> {
    const files: { path: string; mtime: number }[] = [];
    for await (const entry of Deno.readDir(this.#directory)) {
      if (!entry.isFile) continue;
      const path = join(this.#directory, entry.name);
      const info = await Deno.lstat(path).catch(() => null);
      const mtime = info?.mtime?.getTime() ?? 0;
      if (entry.name.endsWith(".json")) files.push({ path, mtime });
      // A temporary file a process left when it ended while writing.
      else if (entry.name.endsWith(".tmp") && mtime < Date.now() - STALE_TEMPORARY_MS) {
        await Deno.remove(path).catch(() => {});
      }
    }
    files.sort((a, b) => b.mtime - a.mtime);
    for (const old of files.slice(this.#maxWalks)) await Deno.remove(old.path).catch(() => {});
  }
}

function fileNameOf(keyText: string): string {
  return sha256HexSync(new TextEncoder().encode(keyText));
}

function keyOf(key: WalkKey): string {
  return JSON.stringify([key.path, key.glob, key.roots, key.excluded, key.denied]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

function isCounts(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => Number.isSafeInteger(item) && item >= 0);
}

/** The walk in a parsed file, checked field by field; null for anything else. */
function walkOf(value: unknown): GrepWalkReport | null {
  if (!isRecord(value)) return null;
  const { start, base, files, progress, counts, binaryNames, skippedByType, ripgrepTrap, denied } = value;
  if (typeof start !== "string" || typeof base !== "string" || !isStrings(files) || !isStrings(denied)) {
    return null;
  }
  if (!isCounts(progress) || progress.length !== 2 * files.length) return null;
  if (!isCounts(binaryNames) || binaryNames.some((index) => index >= files.length)) return null;
  if (!Number.isSafeInteger(skippedByType) || (ripgrepTrap !== null && typeof ripgrepTrap !== "string")) {
    return null;
  }
  if (!isRecord(counts) || !isStrings(counts.ignoreProblems)) return null;
  const { denyingRules = [], askingRules = [] } = counts;
  if (!isStrings(denyingRules) || !isStrings(askingRules)) return null;
  const numbers = [
    counts.ignoredFiles,
    counts.ignoredDirectories,
    counts.skippedSymlinks,
    counts.changedDirectories,
    counts.deniedFiles ?? 0,
  ];
  if (!isCounts(numbers)) return null;
  const flags = [value.ancestorRules, value.droppedRules, value.excludeRules, value.prefilterMismatch];
  if (!flags.every((flag) => typeof flag === "boolean")) return null;
  const stamps = stampsOf(value.stamps);
  if (stamps === null) return null;
  return {
    start,
    base,
    files,
    progress,
    counts: {
      ignoredFiles: numbers[0]!,
      ignoredDirectories: numbers[1]!,
      skippedSymlinks: numbers[2]!,
      changedDirectories: numbers[3]!,
      ignoreProblems: counts.ignoreProblems,
      // A walk that could not list a directory has no stamps, and is never kept.
      unreadable: [],
      ...(numbers[4] === 0 ? {} : { deniedFiles: numbers[4]!, denyingRules, askingRules }),
    },
    ancestorRules: flags[0] as boolean,
    droppedRules: flags[1] as boolean,
    excludeRules: flags[2] as boolean,
    prefilterMismatch: flags[3] as boolean,
    binaryNames,
    skippedByType: skippedByType as number,
    ripgrepTrap: ripgrepTrap as string | null,
    denied,
    stamps,
  };
}

function stampsOf(value: unknown): WalkStamps | null {
  if (!isRecord(value) || typeof value.takenAt !== "number" || !isStrings(value.paths)) return null;
  const { values } = value;
  if (!Array.isArray(values) || values.length !== value.paths.length * STAMP_FIELDS) return null;
  if (!values.every((item) => item === null || typeof item === "number")) return null;
  return {
    takenAt: value.takenAt,
    paths: value.paths,
    values: Float64Array.from(values, (item) => item === null ? NaN : item),
  };
}
