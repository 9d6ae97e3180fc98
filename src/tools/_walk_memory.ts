/**
 * The listings of recent walks, kept in the process (a tool worker) so that the next Glob or Grep of the same
 * tree lists only the directories that changed: a walk spends most of its time in directory listings and the
 * check of each directory's real path (measured on the 20,000-file benchmark tree: ~90 of ~135 ms), where
 * taking a directory from here costs one lstat.
 *
 * A walk takes a directory's listing from here only when its stamps are current (`Walker`: an lstat of the
 * directory and of its `.gitignore`; any change to its entries changes the directory's modification time, and
 * forging that changes its status-change time), so it finds exactly what listing it again would. A listing
 * is kept only when its stamps can show a change at all and show none since the walk began: their times lie
 * 3 s before the walk's start (`stampsUsable`). Only directories reached without a symlink are kept. Names
 * come only from listings of directories that were inside the workspace when listed; a directory swapped for
 * a symlink since fails its own stamp or its parent's.
 *
 * In a tool worker an lstat costs ~25 µs (Deno checks the worker's permissions on every path), which made a
 * first walk of the benchmark tree 56 ms slower when it stamped as it listed. There the memory stamps once
 * the call's result is sent, a few milliseconds at a time while no call runs (`stampWhileIdle`): a stamp
 * taken after the listing is as good, since any change after the walk began puts the directory's times past
 * the limit and the listing is dropped.
 *
 * Recording costs a walk a fifth to a third more in a fresh worker (the listings it keeps alive are copied
 * out of the young generation, the record is built), and most processes walk a tree once: a run of
 * `mewcode -p` makes a few searches. So the first walk of a start only marks it, and the second records.
 *
 * @module
 */
import type { RuleSet } from "./_gitignore.ts";
import { STAMP_FIELDS, stampOf, stampsUsable, walkIsCurrent } from "./_walk_stamps.ts";

/**
 * What a walk read in one place: a directory's entries and `.gitignore`, or the ignore files above the
 * start; with the stamps of what it read, which tell whether reading it again would give the same.
 */
export interface Listing {
  /**
   * The paths read (the directory, then its `.gitignore` when read; or each ignore file above the start read
   * or looked for), and their stamps: `STAMP_FIELDS` numbers per path, or none yet (`stampsLater`).
   */
  stamps: { takenAt: number; paths: string[]; values: number[] };
  /** The entries, sorted by name, packed into one string (`packEntries`); none for the place above the start. */
  entries: string;
  /** How many entries `entries` holds. */
  size: number;
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
 * Keeps walks' listings for later walks of the same start. A walk given one takes each place from the record
 * whose stamps are current, reads the others (changed since, or new), and offers what it saw back, so a walk
 * of a tree where one folder changed lists only that folder.
 */
export interface WalkMemory {
  /** Whether the memory stamps the places it is offered itself, after the walk: they come without stamps. */
  readonly stampsLater: boolean;
  /** What earlier walks of `key` (see `Walker.memoryKey`) listed, or null. */
  recall(key: string): RecordedWalk | null;
  /** Whether a walk of `key` with nothing to recall records what it lists (`keep`). */
  records(key: string): boolean;
  /** Offers what a walk of `key` listed; the memory keeps the places whose stamps can show later changes. */
  keep(key: string, walk: RecordedWalk): void;
}

/**
 * One walk's side of a memory: gives the walk the places earlier walks recorded whose stamps hold now, and
 * records the places the walk reads (`Walker` calls `begin`, `note` for each path it stamps, then `end`).
 */
export class ListingRecorder {
  readonly #memory: WalkMemory;
  readonly #key: string;
  readonly #takenAt: number;
  readonly #recalled: RecordedWalk | null;
  readonly #record: RecordedWalk = { above: null, listings: new Map(), entries: 0 };
  /** The paths and stamps of the place being read; null between places, or when it cannot be recorded. */
  #place: { paths: string[]; values: number[] } | null = null;

  private constructor(memory: WalkMemory, key: string, takenAt: number, recalled: RecordedWalk | null) {
    this.#memory = memory;
    this.#key = key;
    this.#takenAt = takenAt;
    this.#recalled = recalled;
  }

  /** The recorder of a walk of `key` begun at `takenAt`; null when it neither recalls nor records. */
  static open(memory: WalkMemory, key: string, takenAt: number): ListingRecorder | null {
    const recalled = memory.recall(key);
    if (recalled === null && !memory.records(key)) return null;
    return new ListingRecorder(memory, key, takenAt, recalled);
  }

  /** Whether the memory stamps what it is offered after the walk (`note` then takes paths only). */
  get stampsLater(): boolean {
    return this.#memory.stampsLater;
  }

  /** Whether a place is being read (and can still be recorded). */
  get reading(): boolean {
    return this.#place !== null;
  }

  /** The recorded listing of a directory when every path it stamped is as it was; it joins the record. */
  recallDirectory(path: string): Listing | null {
    const listing = current(this.#recalled?.listings.get(path));
    if (listing !== null) this.#keep(path, listing);
    return listing;
  }

  /** The recorded ignore files above the start when every one is as it was; they join the record. */
  recallAbove(): Listing | null {
    const listing = current(this.#recalled?.above);
    if (listing !== null) this.#record.above = listing;
    return listing;
  }

  /** Begins reading a place. */
  begin(): void {
    this.#place = { paths: [], values: [] };
  }

  /** A path the place read, with its stamp (undefined: stamped later; null: cannot be told, not recorded). */
  note(path: string, stamp: readonly number[] | null | undefined): void {
    const place = this.#place;
    if (place === null) return;
    if (stamp === null) {
      this.#place = null;
      return;
    }
    place.paths.push(path);
    if (stamp !== undefined) place.values.push(...stamp);
  }

  /** Ends reading a place: a directory's listing (`path`), or the ignore files above the start (null). */
  end(path: string | null, entries: Deno.DirEntry[], ruleSets: RuleSet[], problems: string[]): void {
    const place = this.#place;
    this.#place = null;
    if (place === null) return;
    const listing = {
      stamps: { takenAt: this.#takenAt, ...place },
      entries: packEntries(entries),
      size: entries.length,
      ruleSets,
      problems,
    };
    if (path === null) this.#record.above = listing;
    else this.#keep(path, listing);
  }

  /** Offers the record to the memory; after an early stop, the places not reached keep their listings. */
  finish(finished: boolean): void {
    for (const [path, listing] of finished ? [] : this.#recalled?.listings ?? []) {
      if (!this.#record.listings.has(path)) this.#keep(path, listing);
    }
    this.#memory.keep(this.#key, this.#record);
  }

  #keep(path: string, listing: Listing): void {
    this.#record.listings.set(path, listing);
    this.#record.entries += listing.size;
  }
}

/**
 * A directory's entries as one string, to keep: each entry as a letter for its kind (`d`irectory, `f`ile,
 * `l`ink, `o`ther) and its name, joined by "/" (which no name holds). The objects Deno's listing returns keep
 * their properties in a dictionary: measured on the benchmark tree, kept as they came its listings took
 * 9.5 MB (copying them out of the young generation cost a recording walk a third of its time), as plain
 * objects 2.5 MB, packed 0.9 MB.
 */
export function packEntries(entries: readonly Deno.DirEntry[]): string {
  return entries.map((entry) =>
    (entry.isDirectory ? "d" : entry.isFile ? "f" : entry.isSymlink ? "l" : "o") + entry.name
  ).join("/");
}

/** The entries `packEntries` packed, in the same order. */
export function unpackEntries(packed: string): Deno.DirEntry[] {
  if (packed === "") return [];
  return packed.split("/").map((item) => {
    const kind = item[0];
    return { name: item.slice(1), isDirectory: kind === "d", isFile: kind === "f", isSymlink: kind === "l" };
  });
}

/** A recorded place when every path it stamped is as it was (then reading it again gives the same), or null. */
function current(listing: Listing | null | undefined): Listing | null {
  return listing === null || listing === undefined || !walkIsCurrent(listing.stamps) ? null : listing;
}

/** How long before a walk began the times of what it stamped must lie (see `stampsUsable`). */
export const MEMORY_STAMP_MARGIN_MS = 3000;
/** Walks kept at most (of different starts, roots or excluded folders). */
export const MAX_KEPT_WALKS = 4;
/** Directory entries kept at most in all (about 40 bytes each, name included): larger walks are not kept. */
export const MAX_KEPT_ENTRIES = 250_000;
/** How long stamping after a call runs before it lets a message in. */
const STAMPING_SLICE_MS = 4;

/** Recent walks' listings, the most recently used kept when there are too many. */
export class RecentWalks implements WalkMemory {
  readonly stampsLater: boolean;
  /** How long before a walk began the times of what it stamped must lie for it to be kept (tests set 0). */
  marginMs: number;
  #walks = new Map<string, RecordedWalk>();
  #maxEntries: number;
  /** Places offered without stamps, and the record they join once stamped. */
  #unstamped: { record: RecordedWalk; places: [string | null, Listing][] } | null = null;
  #stamping: Promise<void> | null = null;
  /** Starts walked once, not recorded (the most recent last); null when first walks record too. */
  #walkedOnce: Set<string> | null;

  constructor(
    options: { marginMs?: number; maxEntries?: number; stampsLater?: boolean; recordFirstWalk?: boolean } =
      {},
  ) {
    this.marginMs = options.marginMs ?? MEMORY_STAMP_MARGIN_MS;
    this.#maxEntries = options.maxEntries ?? MAX_KEPT_ENTRIES;
    this.stampsLater = options.stampsLater ?? false;
    this.#walkedOnce = options.recordFirstWalk === true ? null : new Set();
  }

  records(key: string): boolean {
    const once = this.#walkedOnce;
    if (once === null || once.delete(key)) return true;
    once.add(key);
    // A bound on what it remembers: the keys of the last few starts are enough.
    for (const oldest of once) {
      if (once.size <= MAX_KEPT_WALKS * 4) break;
      once.delete(oldest);
    }
    return false;
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
    if (walk.entries > this.#maxEntries) return;
    const kept: RecordedWalk = { above: null, listings: new Map(), entries: 0 };
    const unstamped: [string | null, Listing][] = [];
    const offer = (path: string | null, listing: Listing) => {
      if (listing.stamps.values.length === 0 && listing.stamps.paths.length > 0) {
        unstamped.push([path, listing]);
      } else this.#add(kept, path, listing);
    };
    if (walk.above !== null) offer(null, walk.above);
    for (const [path, listing] of walk.listings) offer(path, listing);
    this.#walks.set(key, kept);
    this.#evict();
    // A newer walk's places replace those of one still waiting for its stamps.
    this.#unstamped = unstamped.length === 0 ? null : { record: kept, places: unstamped };
  }

  /**
   * Stamps the places offered without stamps, a few milliseconds at a time between messages, until `busy`
   * says a call runs (the next idle time goes on). The tool worker calls it once a call's result is sent.
   */
  stampWhileIdle(busy: () => boolean): void {
    if (this.#unstamped !== null) this.#stamping ??= this.#stampLater(busy);
  }

  /** Resolves once the stamping under way has ended (all stamped, or a call came). */
  async settled(): Promise<void> {
    while (this.#stamping !== null) await this.#stamping;
  }

  /** How many walks are kept. */
  get size(): number {
    return this.#walks.size;
  }

  /** How many directory listings a walk of `key` would find here. */
  listingsOf(key: string): number {
    return this.#walks.get(key)?.listings.size ?? 0;
  }

  // Adds a place to a record when its stamps can show a change, and show none since its walk began.
  #add(record: RecordedWalk, path: string | null, listing: Listing): void {
    if (!stampsUsable(listing.stamps, this.marginMs)) return;
    if (path === null) {
      record.above = listing;
      return;
    }
    record.listings.set(path, listing);
    record.entries += listing.size;
  }

  async #stampLater(busy: () => boolean): Promise<void> {
    try {
      while (this.#unstamped !== null) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (busy()) return;
        const until = performance.now() + STAMPING_SLICE_MS;
        while (this.#unstamped !== null && performance.now() < until) {
          const { record, places } = this.#unstamped;
          const place = places.pop();
          if (place === undefined) {
            this.#unstamped = null;
            this.#evict();
            break;
          }
          const [path, listing] = place;
          const values = stampsOf(listing.stamps.paths);
          if (values !== null) this.#add(record, path, { ...listing, stamps: { ...listing.stamps, values } });
        }
      }
    } finally {
      this.#stamping = null;
    }
  }

  // Drops the least recently used walks beyond the limits.
  #evict(): void {
    let total = 0;
    for (const walk of this.#walks.values()) total += walk.entries;
    for (const [oldest, walk] of this.#walks) {
      if (this.#walks.size <= MAX_KEPT_WALKS && total <= this.#maxEntries) break;
      this.#walks.delete(oldest);
      total -= walk.entries;
    }
  }
}

/** The stamps of paths, `STAMP_FIELDS` numbers each; null when one cannot be told. */
function stampsOf(paths: readonly string[]): number[] | null {
  const values: number[] = [];
  for (const path of paths) {
    const stamp = stampOf(path);
    if (stamp === null) return null;
    for (let field = 0; field < STAMP_FIELDS; field++) values.push(stamp[field]!);
  }
  return values;
}

/**
 * The walks of this process, shared by Glob and Grep: in a tool worker, that worker's, stamped after each
 * call (`workers/tool_worker.ts`); in the main process (direct calls, tests), stamped as the walk lists.
 */
export const recentWalks: RecentWalks = new RecentWalks({
  stampsLater: typeof (globalThis as Record<string, unknown>).WorkerGlobalScope === "function",
});
