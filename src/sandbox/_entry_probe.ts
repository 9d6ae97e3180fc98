/**
 * Looks up many paths in the workspace's roots at once: a root's listing, read once, tells that a path whose
 * first name below the root is missing does not exist, without an lstat of it. Deno's lstat of a missing path
 * throws, and building that error costs ~12 µs against ~3 µs for a path that exists; the plan of each Bash
 * call looks up some 40 protected names at the top of each root, most of them missing, and the check after
 * the call as many again.
 *
 * The answer is the one an lstat gives at the moment of the listing: a probe serves one look (planning a
 * call, or checking after it), never across a command. Where the listing could be wrong, the probe looks
 * each path up instead: a root too large to list cheaply (a repository could plant thousands of entries), one
 * that cannot be listed, or one holding a name that is not printable ASCII (a case-insensitive file system
 * could match it to a protected name: the Kelvin sign folds to `k`), and paths whose first name is not a
 * plain one. ASCII names are compared in lower case, as such a file system matches them.
 *
 * @module
 */
import { lstatSyncOrNull } from "../common/fs.ts";
import { isAtOrBelow } from "./bubblewrap.ts";

/**
 * The largest root listed, by the size its folder reports (ext4: ~500 entries; tmpfs: ~800): a larger
 * listing could cost more than the lookups it saves.
 */
const MAX_LISTED_BYTES = 16 * 1024;

/** Printable ASCII only: names a case-insensitive file system matches by ASCII case alone. */
const PLAIN_ASCII = /^[\x20-\x7e]+$/;

/** Lookups of paths in `roots`, each root listed at most once (see the module doc). */
export class EntryProbe {
  readonly #roots: readonly string[];
  readonly #listings = new Map<string, ReadonlySet<string> | null>();

  constructor(roots: readonly string[]) {
    this.#roots = roots;
  }

  /** `lstatSyncOrNull(path)`, without the lookup when the root's listing shows it missing. */
  lstat(path: string): Deno.FileInfo | null {
    return this.mayExist(path) ? lstatSyncOrNull(path) : null;
  }

  /**
   * False when `path` lies in one of the roots (the first that holds it, as `madeEntry` picks) and the root's
   * listing lacks its first name below the root: nothing is there, nor can a symlink be on its way. True
   * otherwise.
   */
  mayExist(path: string): boolean {
    const root = this.#roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
    if (root === undefined) return true;
    const below = root === "/" ? path.slice(1) : path.slice(root.length + 1);
    const slash = below.indexOf("/");
    const first = slash === -1 ? below : below.slice(0, slash);
    if (first === "" || first === "." || first === ".." || !PLAIN_ASCII.test(first)) return true;
    const names = this.#listing(root);
    return names === null || names.has(first.toLowerCase());
  }

  /** The root's names in lower case, or null where a listing could mislead or cost too much. */
  #listing(root: string): ReadonlySet<string> | null {
    const known = this.#listings.get(root);
    if (known !== undefined) return known;
    const names = listing(root);
    this.#listings.set(root, names);
    return names;
  }
}

function listing(folder: string): Set<string> | null {
  const info = lstatSyncOrNull(folder);
  if (info === null || !info.isDirectory || info.size > MAX_LISTED_BYTES) return null;
  const names = new Set<string>();
  try {
    for (const entry of Deno.readDirSync(folder)) {
      if (!PLAIN_ASCII.test(entry.name)) return null;
      names.add(entry.name.toLowerCase());
    }
  } catch {
    return null;
  }
  return names;
}
