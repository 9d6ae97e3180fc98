/**
 * The listings of recent walks, kept in the process (a tool worker) so that the next Glob or Grep of the same
 * tree lists only the directories that changed: a walk spends most of its time in directory listings and the
 * check of each directory's real path (measured on the 20,000-file benchmark tree: ~90 of ~135 ms), where
 * taking a directory from here costs one lstat.
 *
 * A walk takes a directory's listing from here only when its stamps are current (`Walker`: an lstat of the
 * directory and of its `.gitignore` as they were before it was listed; any change to its entries changes the
 * directory's modification time, and forging that changes its status-change time), so it finds exactly what
 * listing it again would. A listing is kept only when its stamps can show a change at all (`stampsUsable`:
 * taken 3 s after what they stamped last changed), and only for a directory reached without a symlink. Names
 * come only from listings of directories that were inside the workspace when listed; a directory swapped for
 * a symlink since fails its own stamp or its parent's.
 *
 * @module
 */
import type { RuleSet } from "./_walk.ts";
import { stampsUsable } from "./_walk_stamps.ts";

/**
 * What a walk read in one place: a directory's entries and `.gitignore`, or the ignore files above the
 * start; with the stamps of what it read, which tell whether reading it again would give the same.
 */
export interface Listing {
  /**
   * The stamps (`STAMP_FIELDS` numbers per path) of the directory, taken before its listing, then of its
   * `.gitignore` when read; or of each ignore file above the start read or looked for.
   */
  stamps: { takenAt: number; paths: string[]; values: number[] };
  /** The entries, sorted by name (none for the place above the start). */
  entries: Deno.DirEntry[];
  /** The rule sets the place adds (with rules only). */
  ruleSets: RuleSet[];
  /** The problems its ignore files gave, one line each. */
  problems: string[];
}

/** What a walk listed and read, place by place (see `WalkMemory`). */
export interface RecordedWalk {
  /** The ignore files above the start; null when not read. */
  above: Listing | null;
  /** By directory path (real paths only: directories reached through a symlink are not recorded). */
  listings: Map<string, Listing>;
  /** How many entries the listings hold in all (their memory). */
  entries: number;
}

/**
 * Keeps walks' listings for later walks of the same start (`_walk_memory.ts`). A walk given one takes each
 * place from the record whose stamps are current, reads the others (changed since, or new), and offers what
 * it saw back, so a walk of a tree where one folder changed lists only that folder.
 */
export interface WalkMemory {
  /** What earlier walks of `key` (see `Walker.memoryKey`) listed, or null. */
  recall(key: string): RecordedWalk | null;
  /** Offers what a walk of `key` listed; the memory keeps the places whose stamps can show later changes. */
  keep(key: string, walk: RecordedWalk): void;
}

/** How long before a walk began the times of what it stamped must lie (see `stampsUsable`). */
export const MEMORY_STAMP_MARGIN_MS = 3000;
/** Walks kept at most (of different starts, roots or excluded folders). */
export const MAX_KEPT_WALKS = 4;
/** Directory entries kept at most in all (about 100 bytes each): larger walks are not kept. */
export const MAX_KEPT_ENTRIES = 250_000;

/** Recent walks' listings, the most recently used kept when there are too many. */
export class RecentWalks implements WalkMemory {
  #walks = new Map<string, RecordedWalk>();
  /** How long before a walk began the times of what it stamped must lie for it to be kept (tests set 0). */
  marginMs: number;
  #maxEntries: number;

  constructor(options: { marginMs?: number; maxEntries?: number } = {}) {
    this.marginMs = options.marginMs ?? MEMORY_STAMP_MARGIN_MS;
    this.#maxEntries = options.maxEntries ?? MAX_KEPT_ENTRIES;
  }

  recall(key: string): RecordedWalk | null {
    const walk = this.#walks.get(key);
    if (walk === undefined) return null;
    // The most recently used last (a Map iterates in insertion order).
    this.#walks.delete(key);
    this.#walks.set(key, walk);
    return walk;
  }

  keep(key: string, walk: RecordedWalk): void {
    this.#walks.delete(key);
    const usable = (listing: Listing | null) =>
      listing !== null && stampsUsable(listing.stamps, this.marginMs);
    const kept: RecordedWalk = {
      above: usable(walk.above) ? walk.above : null,
      listings: new Map(),
      entries: 0,
    };
    for (const [path, listing] of walk.listings) {
      if (!usable(listing)) continue;
      kept.listings.set(path, listing);
      kept.entries += listing.entries.length;
    }
    if (kept.listings.size === 0 || kept.entries > this.#maxEntries) return;
    this.#walks.set(key, kept);
    let total = 0;
    for (const other of this.#walks.values()) total += other.entries;
    for (const [oldest, other] of this.#walks) {
      if (this.#walks.size <= MAX_KEPT_WALKS && total <= this.#maxEntries) break;
      this.#walks.delete(oldest);
      total -= other.entries;
    }
  }

  /** How many walks are kept. */
  get size(): number {
    return this.#walks.size;
  }

  /** How many directory listings a walk of `key` would find here. */
  listingsOf(key: string): number {
    return this.#walks.get(key)?.listings.size ?? 0;
  }
}

/** The walks of this process (in a tool worker: that worker's), shared by Glob and Grep. */
export const recentWalks: RecentWalks = new RecentWalks();
