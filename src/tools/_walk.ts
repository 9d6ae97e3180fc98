/**
 * Ignore-aware directory walking shared by Glob and Grep.
 *
 * Skips the default excluded directories and whatever `.gitignore` files (nested ones too) and
 * `.git/info/exclude` ignore, counting what it skipped. Follows symlinks only to targets inside the
 * workspace, enters every real directory at most once (so symlink loops end), and lists files only.
 *
 * Directories are identified by real path rather than by device and inode: the real path of a child that
 * is not a symlink is its parent's plus its name, so only symlinks cost a system call to resolve (realpath +
 * stat). Entry types come from the directory listing.
 *
 * After a directory is listed, it is checked to be the one found: a directory swapped for a symlink
 * between the listing of its parent and its own listing is skipped and counted. The check is two lstats
 * (`#isStill`): the directory is no symlink, and its parent still leads to the directory verified before it,
 * so no folder above it was swapped for a symlink to elsewhere. A realpath would say the same, but costs time
 * quadratic in the depth (glibc reads every prefix as a link): a hostile repository's folder 2,000 levels
 * deep made each walk take over a minute of system time. A swap undone within the microseconds between the
 * listing and the check is not caught: Glob lists names only, and Grep verifies every file it opens.
 * Directories that cannot be listed (permission denied, a path longer than the system opens) are counted
 * with the reason, and the tools say so: their files are missing from the result. Folders in
 * `excludedPaths` (mewcode's own state) are treated as outside the workspace.
 *
 * The walk uses Deno's synchronous directory calls; `walkFiles` yields to the event loop every few
 * milliseconds, and `Walker.files` yields `null` when its time slice is used up so that its caller can.
 * Measured on a 20,000-file tree, `readDirSync` walks 2–3× faster than `readDir` with any concurrency,
 * because each async call costs more than the system call it wraps.
 *
 * Given a memory of earlier walks (`_walk_memory.ts`), a walk takes each directory whose stamps are current
 * from it instead of listing it: an lstat instead of a listing and its check, 3× faster on that tree.
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { displayPath } from "./_display_path.ts";
import { IgnoreRules, isIgnored, MAX_IGNORE_FILE_BYTES, type RuleSet } from "./_gitignore.ts";
import { EXCLUDED_DIRECTORY_NAMES } from "./_shared.ts";
import { isExcludedPath, isWithinRoot, normalizedExcluded, resolveLink, rootContaining } from "./_paths.ts";
import { TimeSlicer } from "./_time_slicer.ts";
import type { DeniedFiles } from "./_read_denials.ts";
import { readVerifiedSync } from "./_verified_read.ts";
import { type Listing, ListingRecorder, unpackEntries, type WalkMemory } from "./_walk_memory.ts";
import { stampOf, stampOfInfo, type WalkStamps } from "./_walk_stamps.ts";

/** Options of `walkFiles`. */
export interface WalkOptions {
  /** Real path of the workspace root: symlinks are followed only to targets inside it or an added folder. */
  root: string;
  /** Real paths of the folders added to the workspace (`--add-dir`), which count as inside like the root. */
  additionalRoots?: readonly string[] | undefined;
  /**
   * Keeps only the files whose path relative to the start directory passes; the others are neither listed
   * nor counted as ignored. Called for files only: directories are entered unless excluded or ignored.
   */
  filter?: (relativePath: string) => boolean;
  /** Real paths of folders inside the root that count as outside it: never entered or listed. */
  excludedPaths?: readonly string[] | undefined;
  /**
   * The deny rules of the call (`ToolCallContext.deniedReads`, compiled): a file one of them covers, as
   * walked or as it really is, is left out and counted (`deniedFiles`) once it passed the filter and the
   * ignore files. Checked file by file, after the listing: the memory of earlier walks keeps listings, not
   * this call's verdicts, so a walk recalled under other rules decides again.
   */
  denied?: DeniedFiles | null;
  /** Stops the walk early; the result then has `aborted: true`. */
  signal?: AbortSignal;
  /** When the walk must end (a `performance.now()` time); the result then has `aborted: true`. */
  deadline?: number;
  /**
   * Walks from the listings of an earlier walk of the same start, roots and excluded folders whose stamps
   * are current, and otherwise records this walk's listings for later walks.
   */
  memory?: WalkMemory;
}

/** One file found by the walk. */
export interface WalkedFile {
  /** Absolute path as walked (through any symlinked directory), usable for reading. */
  path: string;
  /** Path relative to the start directory, with "/" separators. */
  relativePath: string;
}

/** What a walk skipped. */
export interface WalkCounts {
  /** Files that passed the filter but were ignored by a `.gitignore` rule. */
  ignoredFiles: number;
  /** Directories not entered: default exclusions and `.gitignore` rules (their contents are not counted). */
  ignoredDirectories: number;
  /** Symlinks not followed because their target is outside the workspace, dangling or a loop. */
  skippedSymlinks: number;
  /** Directories skipped because they changed (became a symlink) between being found and being listed. */
  changedDirectories: number;
  /** Problems of ignore files (rules left out), one line each, for the notice. */
  ignoreProblems: string[];
  /** Directories that could not be listed, each as its relative path and the reason in parentheses. */
  unreadable: string[];
  /**
   * Files left out because a deny or ask rule covers them (`WalkOptions.denied`), and those rules as "RULE
   * from ORIGIN", deny rules and ask rules apart; absent: none.
   */
  deniedFiles?: number;
  denyingRules?: string[];
  askingRules?: string[];
}

/** What `walkFiles` found and skipped. */
export interface WalkResult extends WalkCounts {
  /** Files in walk order (see `Walker`). */
  files: WalkedFile[];
  /** Directories listed, and taken from the memory of earlier walks instead (see `WalkOptions.memory`). */
  listedDirectories: number;
  recalledDirectories: number;
  /** Whether the signal stopped the walk before it finished. */
  aborted: boolean;
}

interface Directory {
  /** Absolute path as walked. */
  path: string;
  /** Relative to the start directory, "" for the start itself, else ending without "/". */
  relativePath: string;
  /** Real path, used to enter each directory once. */
  realPath: string;
  /** The rules that apply to the directory's entries (its own .gitignore included once read). */
  ruleSets: readonly RuleSet[];
  /** The directory it was found in; null for the start. */
  parent: Directory | null;
  /** Levels below the start (0 for the start). */
  depth: number;
  /** Its device and inode once listed and checked (see `#isStill`); undefined when not known. */
  identity?: string | undefined;
}

interface Frame {
  directory: Directory;
  entries: Deno.DirEntry[];
  next: number;
}

/**
 * Directories more levels below the start are not entered (and said so). Each check of a path costs the
 * kernel time linear in its depth, and some (a file's real path before Grep reads it) are made once per
 * level: a hostile repository's files 2,000 levels deep cost seconds each. No project nests this deep;
 * `node_modules`, which can, is not entered at all.
 */
export const MAX_WALK_DEPTH = 128;

const NO_PROBLEMS: string[] = [];
const NO_RULES: RuleSet[] = [];

/**
 * Walks the files under `start` lazily, in a stable order: entries sorted by name, depth first, then
 * directories reached only through symlinks (also in order). The counters cover what was walked so far.
 */
export class Walker implements WalkCounts {
  /** Files that passed the filter but were ignored by a `.gitignore` rule. */
  ignoredFiles = 0;
  /** Directories not entered: default exclusions and `.gitignore` rules (their contents are not counted). */
  ignoredDirectories = 0;
  /** Symlinks not followed because their target is outside the workspace, dangling or a loop. */
  skippedSymlinks = 0;
  /** Directories skipped because they changed (became a symlink) between being found and being listed. */
  changedDirectories = 0;
  /** Problems of ignore files (rules left out), one line each. */
  ignoreProblems: string[] = [];
  /** Directories that could not be listed: relative path and reason. */
  unreadable: string[] = [];
  /** Files a deny rule covers, left out; and the rules that did, in the order they first did. */
  deniedFiles = 0;
  denyingRules: string[] = [];
  askingRules: string[] = [];
  /**
   * The paths relative to the start of the left-out files reached without a symlink, in walk order: where a
   * search that follows none (ripgrep) finds them.
   */
  deniedPaths: string[] = [];
  #denied: DeniedFiles | null;
  #start: string;
  /** The root, then the added folders. */
  #roots: readonly string[];
  /** The folder whose ignore files apply above the start: the root, or the added folder holding the start. */
  #base: string;
  #filter: ((relativePath: string) => boolean) | undefined;
  #excluded: readonly string[] | undefined;
  /**
   * The excluded paths, for the check of each file (a file is left out when it is one of them), and their
   * last names: only a file of such a name is looked up (its path would otherwise be built for nothing).
   */
  #excludedFiles: ReadonlySet<string>;
  #excludedNames: ReadonlySet<string>;
  #slicer: Pick<TimeSlicer, "due"> | undefined;
  /** The stamps so far; null when not stamping, or once the walk saw what stamps cannot vouch for. */
  #stamps: { takenAt: number; paths: string[]; values: number[] } | null = null;
  /** Whether the caller asked for the stamps. */
  #stampsWanted: boolean;
  /** `Date.now()` when the walk was prepared: the time of its stamps. */
  #takenAt: number;
  #memory: WalkMemory | undefined;
  #ignoredPaths: string[] | null;
  /** This walk's side of the memory; null without one, or when the walk neither recalls nor records. */
  #recorder: ListingRecorder | null = null;
  /** Directories listed, and directories taken from the memory's listings instead (their stamps current). */
  listedDirectories = 0;
  recalledDirectories = 0;

  /**
   * Prepares a walk of `start`, a real directory inside `options.root` or an added folder (as returned by
   * safePath). With a `slicer`, `files` yields `null` whenever the slicer's time slice is used up.
   */
  constructor(
    start: string,
    options: Omit<WalkOptions, "signal" | "deadline"> & {
      slicer?: Pick<TimeSlicer, "due">;
      /** Stamps what the walk sees (`stamps`), to tell later whether the tree changed. */
      stamp?: boolean;
      /** Collects the paths (relative to the start) of the files ignore files left out, in walk order. */
      ignoredPaths?: string[];
    },
  ) {
    this.#start = start;
    this.#stampsWanted = options.stamp === true;
    this.#memory = options.memory;
    this.#ignoredPaths = options.ignoredPaths ?? null;
    this.#takenAt = Date.now();
    if (this.#stampsWanted) this.#stamps = { takenAt: this.#takenAt, paths: [], values: [] };
    this.#roots = [options.root, ...options.additionalRoots ?? []];
    this.#base = rootContaining(this.#roots, start) ?? options.root;
    this.#filter = options.filter;
    this.#excluded = options.excludedPaths;
    this.#excludedFiles = new Set(
      normalizedExcluded(options.excludedPaths ?? []).map(({ folder }) => folder),
    );
    this.#excludedNames = new Set([...this.#excludedFiles].map((path) => posix.basename(path)));
    this.#slicer = options.slicer;
    this.#denied = options.denied ?? null;
  }

  /**
   * What the walk saw, once it has finished; null when it was not asked to stamp, or saw something whose
   * later changes stamps cannot show: a symlink (its target may change anywhere), a directory it could not
   * list or that changed while listed, a path it could not stat.
   */
  get stamps(): WalkStamps | null {
    const stamps = this.#stamps;
    if (!this.#stampsWanted || stamps === null) return null;
    return { ...stamps, values: Float64Array.from(stamps.values) };
  }

  /**
   * Whether the walk still stamps what it sees: false once it saw what stamps cannot vouch for (then `stamps`
   * will be null), and when it was not asked to stamp. Cheap, unlike `stamps`.
   */
  get stamping(): boolean {
    return this.#stampsWanted && this.#stamps !== null;
  }

  /** What a walk's record is kept under: the start, the roots and the excluded folders. */
  get memoryKey(): string {
    return walkMemoryKey(this.#start, this.#roots, this.#excluded ?? []);
  }

  // Stamps a path before it is read, or a directory right after its listing with the lstat that checked it
  // (`info`), for the caller and for the memory.
  #stamp(path: string, info?: Deno.FileInfo): void {
    const stamps = this.#stamps;
    const recorder = this.#recorder?.reading === true ? this.#recorder : null;
    if (stamps === null && (recorder === null || recorder.stampsLater)) {
      recorder?.note(path, undefined);
      return;
    }
    const stamp = info === undefined ? stampOf(path) : stampOfInfo(info);
    if (stamp === null) {
      this.#stamps = null;
    } else {
      stamps?.paths.push(path);
      stamps?.values.push(...stamp);
    }
    recorder?.note(path, stamp);
  }

  // Stops stamping: the walk saw what stamps cannot vouch for (and the place being read is not recorded).
  #unstamp(): void {
    this.#stamps = null;
    this.#recorder?.note("", null);
  }

  // Counts a place taken from the memory as if it had been read: its stamps and its ignore files' problems.
  #took(listing: Listing): Listing {
    const stamps = this.#stamps;
    if (stamps !== null) {
      stamps.paths.push(...listing.stamps.paths);
      stamps.values.push(...listing.stamps.values);
    }
    this.ignoreProblems.push(...listing.problems);
    return listing;
  }

  // The problems found since `from` (the place just read), for its listing.
  #problemsSince(from: number): string[] {
    return this.ignoreProblems.length === from ? NO_PROBLEMS : this.ignoreProblems.slice(from);
  }

  /**
   * The files, one at a time; stop iterating to stop the walk. Unreadable entries are skipped. `null` is a
   * pause point: the walk has used up its time slice, and the caller should yield (`slicer.pause()`).
   */
  *files(): Generator<WalkedFile | null, void, undefined> {
    const memory = this.#memory;
    const recorder = memory === undefined
      ? null
      : ListingRecorder.open(memory, this.memoryKey, this.#takenAt);
    if (recorder === null) return yield* this.#walk();
    this.#recorder = recorder;
    let finished = false;
    try {
      yield* this.#walk();
      finished = true;
    } finally {
      recorder.finish(finished);
    }
  }

  *#walk(): Generator<WalkedFile | null, void, undefined> {
    const visited = new Set<string>();
    const stack: Frame[] = [];
    const roots = this.#roots;
    const filter = this.#filter;
    const slicer = this.#slicer;
    const excludedFiles = this.#excludedFiles;
    const excludedNames = this.#excludedNames;
    const denied = this.#denied;
    const enter = (directory: Directory): void => {
      if (visited.has(directory.realPath)) return;
      visited.add(directory.realPath);
      const frame = this.#open(directory);
      if (frame !== null) stack.push(frame);
    };
    enter({
      path: this.#start,
      relativePath: "",
      realPath: this.#start,
      ruleSets: this.#ancestorRuleSets(),
      parent: null,
      depth: 0,
    });
    // Directories reached through a symlink are entered after every real directory, so which path lists
    // a directory reachable both ways does not depend on the order of directory entries.
    let symlinked: Directory[] = [];
    while (stack.length > 0 || symlinked.length > 0) {
      // Between any two entries: a hostile ignore file makes each test slow, never unbounded.
      if (slicer?.due()) yield null;
      if (stack.length === 0) {
        symlinked.sort((a, b) => compareStrings(b.relativePath, a.relativePath));
        for (const directory of symlinked) enter(directory);
        symlinked = [];
        continue;
      }
      const frame = stack[stack.length - 1]!;
      if (frame.next === frame.entries.length) {
        stack.pop();
        continue;
      }
      const entry = frame.entries[frame.next++]!;
      const directory = frame.directory;
      const name = entry.name;
      const path = `${directory.path}/${name}`;
      const relativePath = directory.relativePath === "" ? name : `${directory.relativePath}/${name}`;
      let isDirectory = entry.isDirectory;
      let isFile = entry.isFile;
      let realPath = `${directory.realPath}/${name}`;
      if (entry.isSymlink) {
        this.#stamps = null;
        const target = resolveLink(roots, path, this.#excluded);
        if (target === null) {
          this.skippedSymlinks++;
          continue;
        }
        ({ isDirectory, isFile, realPath } = target);
      }
      const ruleSets = directory.ruleSets;
      if (isDirectory) {
        if (isExcludedPath(realPath, this.#excluded)) continue;
        if (
          EXCLUDED_DIRECTORY_NAMES.has(name) ||
          (ruleSets.length > 0 && isIgnored(ruleSets, relativePath, name, true))
        ) {
          this.ignoredDirectories++;
          continue;
        }
        if (directory.depth >= MAX_WALK_DEPTH) {
          // Never kept: a kept walk's counts leave out what was not entered.
          this.#stamps = null;
          this.unreadable.push(`${displayPath(relativePath)} (more than ${MAX_WALK_DEPTH} levels deep)`);
          continue;
        }
        const child = {
          path,
          relativePath,
          realPath,
          ruleSets,
          parent: directory,
          depth: directory.depth + 1,
        };
        if (entry.isSymlink) symlinked.push(child);
        else enter(child);
        continue;
      }
      if (!isFile) continue;
      // A file the tools treat as outside the workspace (a credential of a home inside it).
      if (excludedNames.has(name) && excludedFiles.has(realPath)) continue;
      if (filter !== undefined && !filter(relativePath)) continue;
      if (ruleSets.length > 0 && isIgnored(ruleSets, relativePath, name, false)) {
        this.ignoredFiles++;
        this.#ignoredPaths?.push(relativePath);
        continue;
      }
      if (denied !== null) {
        const rule = denied.denying(path, realPath);
        if (rule !== null) {
          this.deniedFiles++;
          if (!entry.isSymlink && directory.path === directory.realPath) this.deniedPaths.push(relativePath);
          const named = rule.asks ? this.askingRules : this.denyingRules;
          if (!named.includes(rule.named)) named.push(rule.named);
          continue;
        }
      }
      yield { path, relativePath };
    }
  }

  // Reads a directory's entries (sorted by name) and its .gitignore; null when it cannot be read or is no
  // longer the directory that was found (its real path changed: a swap for a symlink).
  #open(directory: Directory): Frame | null {
    // Directories reached through a symlink are listed every time: the link may point elsewhere later.
    const real = directory.path === directory.realPath;
    const recalled = real ? this.#recorder?.recallDirectory(directory.path) ?? null : null;
    if (recalled !== null) {
      this.recalledDirectories++;
      this.#took(recalled);
      const ruleSets = recalled.ruleSets.length === 0
        ? directory.ruleSets
        : [...directory.ruleSets, ...recalled.ruleSets];
      return { directory: { ...directory, ruleSets }, entries: unpackEntries(recalled.entries), next: 0 };
    }
    this.listedDirectories++;
    if (real) this.#recorder?.begin();
    let entries: Deno.DirEntry[];
    try {
      entries = Array.from(Deno.readDirSync(directory.path));
    } catch (error) {
      this.#unstamp();
      const reason = unreadableReason(error);
      if (reason !== null) this.unreadable.push(`${displayPath(directory.relativePath || ".")} (${reason})`);
      return null;
    }
    try {
      const still = this.#isStill(directory);
      if (still === null) {
        this.changedDirectories++;
        this.#unstamp();
        return null;
      }
      this.#stamp(directory.path, still);
    } catch {
      // Gone since it was listed.
      this.#unstamp();
      return null;
    }
    entries.sort((a, b) => compareStrings(a.name, b.name));
    const problemsFrom = this.ignoreProblems.length;
    // Like git, never through a symlink: a link could point outside the workspace.
    let set: RuleSet | null = null;
    if (entries.some((entry) => entry.name === ".gitignore" && entry.isFile)) {
      set = this.#readRuleSet(`${directory.path}/.gitignore`, directory.relativePath, "");
      if (set !== null) directory = { ...directory, ruleSets: [...directory.ruleSets, set] };
    }
    this.#recorder?.end(
      directory.path,
      entries,
      set === null ? NO_RULES : [set],
      this.#problemsSince(problemsFrom),
    );
    return { directory, entries, next: 0 };
  }

  /**
   * Whether a directory just listed is still the one found. One reached without a symlink: it is a directory
   * (lstat: a symlink is not), and its parent's path leads to the directory checked before it (any folder
   * above swapped for a symlink to elsewhere would lead to another one; one that leads to the same directory
   * moved elsewhere shows only what was in the workspace). Two lstats, each linear in the depth. The start,
   * a directory under one whose identity is not known (taken from the memory) and one reached through a
   * symlink: its real path. Returns the directory's own lstat (the walk stamps it with that), undefined for
   * one reached through a symlink (not looked at itself), or null when it is no longer the one found.
   */
  #isStill(directory: Directory): Deno.FileInfo | undefined | null {
    const parent = directory.parent;
    if (directory.path !== directory.realPath || parent?.identity === undefined) {
      if (Deno.realPathSync(directory.path) !== directory.realPath) return null;
      if (directory.path !== directory.realPath) return undefined;
      const own = Deno.lstatSync(directory.path);
      directory.identity = identityOf(own);
      return own;
    }
    const own = Deno.lstatSync(directory.path);
    if (!own.isDirectory) return null;
    if (identityOf(Deno.lstatSync(parent.path)) !== parent.identity) return null;
    directory.identity = identityOf(own);
    return own;
  }

  /**
   * Parses an ignore file into a rule set; null when it is missing, unreadable, not a regular file, or
   * not inside the workspace (`.git` or the file itself may be a symlink).
   */
  #readRuleSet(path: string, base: string, prefix: string): RuleSet | null {
    // Stamped present or missing: an ignore file above the start that appears later must show.
    this.#stamp(path);
    const read = readVerifiedSync(path, {
      root: this.#roots[0]!,
      additionalRoots: this.#roots.slice(1),
      excludedPaths: this.#excluded,
      maxBytes: MAX_IGNORE_FILE_BYTES,
      truncate: true,
    });
    if (!read.ok) return null;
    const rules = IgnoreRules.parse(new TextDecoder().decode(read.bytes));
    const problems = [...rules.problems];
    if (read.truncated) problems.unshift(`only its first ${MAX_IGNORE_FILE_BYTES >> 20} MiB were read`);
    if (problems.length > 0) {
      const shown = isWithinRoot(this.#roots[0]!, path) ? path.slice(this.#roots[0]!.length + 1) : path;
      const quoted = displayPath(shown);
      this.ignoreProblems.push(`${quoted.startsWith('"') ? quoted : `"${quoted}"`}: ${problems.join("; ")}`);
    }
    return rules.isEmpty ? null : { base, prefix, rules };
  }

  /**
   * The rules that apply to the start directory from above it: `.git/info/exclude` and the `.gitignore`
   * files of the workspace root (or the added folder that holds the start) and every directory between it
   * and the start. A rule set that ignores the start (or a directory between) is dropped: searching inside an
   * ignored directory on purpose must find its files.
   */
  #ancestorRuleSets(): RuleSet[] {
    const recalled = this.#recorder?.recallAbove() ?? null;
    if (recalled !== null) return this.#took(recalled).ruleSets;
    this.#recorder?.begin();
    const problemsFrom = this.ignoreProblems.length;
    const sets = this.#readAncestorRuleSets();
    this.#recorder?.end(null, [], sets, this.#problemsSince(problemsFrom));
    return sets;
  }

  #readAncestorRuleSets(): RuleSet[] {
    const root = this.#base;
    const start = this.#start;
    const sets: RuleSet[] = [];
    const below = start === root ? "" : start.slice(root.length + 1);
    const segments = below === "" ? [] : below.split("/");
    const add = (path: string, base: string) => {
      // The start directory relative to the ignore file's directory (`base`, relative to the root):
      const startFromBase = below.slice(base === "" ? 0 : base.length + 1);
      const prefix = startFromBase === "" ? "" : `${startFromBase}/`;
      const set = this.#readRuleSet(path, "", prefix);
      if (set === null) return;
      if (startFromBase !== "" && set.rules.ignoresDirectory(startFromBase)) return;
      sets.push(set);
    };
    add(`${root}/.git/info/exclude`, "");
    for (let depth = 0; depth < segments.length; depth++) {
      const base = segments.slice(0, depth).join("/");
      add(`${base === "" ? root : `${root}/${base}`}/.gitignore`, base);
    }
    return sets;
  }
}

/**
 * Lists every file under `start` (a real directory inside `options.root` or an added folder, as returned by
 * safePath), in the order of `Walker`, skipping excluded and ignored paths, and yielding to the event loop
 * now and then.
 */
export async function walkFiles(start: string, options: WalkOptions): Promise<WalkResult> {
  const slicer = new TimeSlicer(
    options.signal,
    options.deadline === undefined ? {} : { deadline: options.deadline },
  );
  const walker = new Walker(start, { ...options, slicer });
  const files: WalkedFile[] = [];
  let aborted = false;
  let sinceCheck = 0;
  for (const file of walker.files()) {
    if (file !== null) files.push(file);
    if ((file === null || ++sinceCheck % 256 === 0) && await slicer.pause()) {
      aborted = true;
      break;
    }
  }
  return {
    files,
    ignoredFiles: walker.ignoredFiles,
    ignoredDirectories: walker.ignoredDirectories,
    skippedSymlinks: walker.skippedSymlinks,
    changedDirectories: walker.changedDirectories,
    ignoreProblems: walker.ignoreProblems,
    unreadable: walker.unreadable,
    deniedFiles: walker.deniedFiles,
    denyingRules: walker.denyingRules,
    askingRules: walker.askingRules,
    listedDirectories: walker.listedDirectories,
    recalledDirectories: walker.recalledDirectories,
    aborted,
  };
}

/** The key of a walk of `start` in a workspace of `roots` (the root first) without `excluded` (`Walker.memoryKey`). */
export function walkMemoryKey(start: string, roots: readonly string[], excluded: readonly string[]): string {
  return [start, ...roots, "", ...excluded].join("\0");
}

/** Orders strings by UTF-16 code units: fast, and the same on every machine (unlike localeCompare). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A directory's device and inode, or undefined where the system gives none (Windows). */
function identityOf(info: Deno.FileInfo): string | undefined {
  return info.ino === null ? undefined : `${info.dev}:${info.ino}`;
}

/** Why a directory could not be listed, for the notice; null when it is simply gone (removed meanwhile). */
function unreadableReason(error: unknown): string | null {
  if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return null;
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotCapable) return "outside what the tool may read";
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : null;
  if (code === "ENAMETOOLONG") return "the path is too long";
  return error instanceof Error ? error.message : String(error);
}
