/**
 * Ignore-aware directory walking shared by Glob and Grep.
 *
 * Skips the default excluded directories and whatever `.gitignore` files (nested ones too) and
 * `.git/info/exclude` ignore, counting what it skipped. Follows symlinks only to targets inside the
 * workspace, enters every real directory at most once (so symlink loops end), and lists files only.
 *
 * Directories are identified by real path rather than by device and inode: the real path of a child that
 * is not a symlink is its parent's plus its name, so only symlinks cost a system call (realpath + stat),
 * and plain directories need no stat at all. Entry types come from the directory listing.
 *
 * The walk uses Deno's synchronous directory calls; `walkFiles` yields to the event loop every few
 * milliseconds. Measured on a 20,000-file tree, `readDirSync` walks 2–3× faster than `readDir` with any
 * concurrency, because each async call costs more than the system call it wraps.
 *
 * @module
 */
import ignore, { type Ignore } from "ignore";
import { setImmediate } from "node:timers";
import { isWithinRoot } from "./_paths.ts";

/** Directory names never entered, whatever the ignore files say. */
export const EXCLUDED_DIRECTORY_NAMES: ReadonlySet<string> = new Set([
  ".git",
  "node_modules",
  "vendor",
  ".idea",
  "__pycache__",
]);

/** Options of `walkFiles`. */
export interface WalkOptions {
  /** Real path of the workspace root: symlinks are followed only to targets inside it. */
  root: string;
  /**
   * Keeps only the files whose path relative to the start directory passes; the others are neither listed
   * nor counted as ignored. Called for files only: directories are entered unless excluded or ignored.
   */
  filter?: (relativePath: string) => boolean;
  /** Stops the walk early; the result then has `aborted: true`. */
  signal?: AbortSignal;
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
}

/** What `walkFiles` found and skipped. */
export interface WalkResult extends WalkCounts {
  /** Files in walk order (see `Walker`). */
  files: WalkedFile[];
  /** Whether the signal stopped the walk before it finished. */
  aborted: boolean;
}

/**
 * Rules of one ignore file and how to express a walked path relative to the file's directory.
 *
 * Testing a short basename is about twice as fast as testing a full path with the `ignore` library, so a
 * file whose patterns all name single path segments is tested by basename: `shallow` for entries directly
 * in the file's directory (where a basename is the whole relative path), `deep` (the same rules minus
 * the anchored ones such as "/build") for entries further down. Other files are tested by full path.
 */
interface RuleSet {
  /** Relative path of the ignore file's directory from the start directory ("" for the start itself). */
  base: string;
  /** Prepended to paths relative to the start directory when `base` lies above the start directory. */
  prefix: string;
  shallow: Ignore;
  /** The rules for entries below the base's direct children, or null to test full paths with `shallow`. */
  deep: Ignore | null;
}

interface Directory {
  /** Absolute path as walked. */
  path: string;
  /** Relative to the start directory, "" for the start itself, else ending without "/". */
  relativePath: string;
  /** Real path, used to enter each directory once. */
  realPath: string;
  /** Number of path segments in `relativePath`. */
  depth: number;
  /** The rules that apply to the directory's entries (its own .gitignore included once read). */
  ruleSets: readonly RuleSet[];
}

interface Frame {
  directory: Directory;
  entries: Deno.DirEntry[];
  next: number;
}

/** Milliseconds of synchronous work between two yields to the event loop. */
const SLICE_MS = 50;

/**
 * Walks the files under `start` lazily, in a stable order: entries sorted by name, depth first, then
 * directories reached only through symlinks (also in order). The counters cover what was walked so far.
 */
export class Walker {
  /** Files that passed the filter but were ignored by a `.gitignore` rule. */
  ignoredFiles = 0;
  /** Directories not entered: default exclusions and `.gitignore` rules (their contents are not counted). */
  ignoredDirectories = 0;
  /** Symlinks not followed because their target is outside the workspace, dangling or a loop. */
  skippedSymlinks = 0;
  #start: string;
  #root: string;
  #filter: ((relativePath: string) => boolean) | undefined;

  /** Prepares a walk of `start`, a real directory inside `options.root` (as returned by safePath). */
  constructor(start: string, options: Omit<WalkOptions, "signal">) {
    this.#start = start;
    this.#root = options.root;
    this.#filter = options.filter;
  }

  /** The files, one at a time; stop iterating to stop the walk. Unreadable entries are skipped. */
  *files(): Generator<WalkedFile, void, undefined> {
    const root = this.#root;
    const filter = this.#filter;
    const visited = new Set<string>();
    const stack: Frame[] = [];
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
      depth: 0,
      ruleSets: ancestorRuleSets(root, this.#start),
    });
    // Directories reached through a symlink are entered after every real directory, so which path lists
    // a directory reachable both ways does not depend on the order of directory entries.
    let symlinked: Directory[] = [];
    while (stack.length > 0 || symlinked.length > 0) {
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
      const depth = directory.depth + 1;
      let isDirectory = entry.isDirectory;
      let isFile = entry.isFile;
      let realPath = `${directory.realPath}/${name}`;
      if (entry.isSymlink) {
        const target = resolveLink(root, path);
        if (target === null) {
          this.skippedSymlinks++;
          continue;
        }
        ({ isDirectory, isFile, realPath } = target);
      }
      const ruleSets = directory.ruleSets;
      if (isDirectory) {
        if (
          EXCLUDED_DIRECTORY_NAMES.has(name) ||
          (ruleSets.length > 0 && isIgnored(ruleSets, `${relativePath}/`, depth, `${name}/`))
        ) {
          this.ignoredDirectories++;
          continue;
        }
        const child = { path, relativePath, realPath, depth, ruleSets };
        if (entry.isSymlink) symlinked.push(child);
        else enter(child);
        continue;
      }
      if (!isFile) continue;
      if (filter !== undefined && !filter(relativePath)) continue;
      if (ruleSets.length > 0 && isIgnored(ruleSets, relativePath, depth, name)) {
        this.ignoredFiles++;
        continue;
      }
      yield { path, relativePath };
    }
  }

  // Reads a directory's entries (sorted by name) and its .gitignore; null when it cannot be read.
  #open(directory: Directory): Frame | null {
    let entries: Deno.DirEntry[];
    try {
      entries = Array.from(Deno.readDirSync(directory.path));
    } catch {
      return null;
    }
    entries.sort((a, b) => compareStrings(a.name, b.name));
    // Like git, never through a symlink: a link could point outside the workspace.
    if (entries.some((entry) => entry.name === ".gitignore" && entry.isFile)) {
      const set = readRuleSet(`${directory.path}/.gitignore`, directory.relativePath, "");
      if (set !== null) directory = { ...directory, ruleSets: [...directory.ruleSets, set] };
    }
    return { directory, entries, next: 0 };
  }
}

/**
 * Lists every file under `start` (a real directory inside `options.root`, as returned by safePath), in
 * the order of `Walker`, skipping excluded and ignored paths, and yielding to the event loop now and then.
 */
export async function walkFiles(start: string, options: WalkOptions): Promise<WalkResult> {
  const walker = new Walker(start, options);
  const slicer = new TimeSlicer(options.signal);
  const files: WalkedFile[] = [];
  let aborted = false;
  let sinceCheck = 0;
  for (const file of walker.files()) {
    files.push(file);
    if (++sinceCheck === 256) {
      sinceCheck = 0;
      if (await slicer.pause()) {
        aborted = true;
        break;
      }
    }
  }
  return {
    files,
    ignoredFiles: walker.ignoredFiles,
    ignoredDirectories: walker.ignoredDirectories,
    skippedSymlinks: walker.skippedSymlinks,
    aborted,
  };
}

/** A notice for the model about what a walk skipped, or null when it skipped nothing. */
export function skippedNotice(walk: WalkCounts): string | null {
  const parts: string[] = [];
  if (walk.ignoredFiles > 0) {
    parts.push(
      `${walk.ignoredFiles} file${walk.ignoredFiles === 1 ? " was" : "s were"} ignored by .gitignore`,
    );
  }
  if (walk.ignoredDirectories > 0) {
    parts.push(
      `${walk.ignoredDirectories} director${
        walk.ignoredDirectories === 1 ? "y was" : "ies were"
      } not entered ` +
        `(${[...EXCLUDED_DIRECTORY_NAMES].join(", ")} or ignored by .gitignore)`,
    );
  }
  if (walk.skippedSymlinks > 0) {
    parts.push(
      `${walk.skippedSymlinks} symlink${walk.skippedSymlinks === 1 ? " was" : "s were"} not followed ` +
        "(target outside the workspace, missing, or a loop)",
    );
  }
  if (parts.length === 0) return null;
  return `(Skipped: ${parts.join("; ")}. Use Bash to look inside ignored paths.)`;
}

/** Orders strings by UTF-16 code units: fast, and the same on every machine (unlike localeCompare). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Lets long synchronous loops give the event loop a turn every few milliseconds, so messages (such as a
 * cancellation) are handled, and reports whether the signal has been aborted.
 */
export class TimeSlicer {
  #signal: AbortSignal | undefined;
  #sliceStart = performance.now();

  /** Creates a slicer that watches `signal`. */
  constructor(signal: AbortSignal | undefined) {
    this.#signal = signal;
  }

  /** Whether the current slice is used up: cheap, so a loop can call `pause` only when it is. */
  due(): boolean {
    return performance.now() - this.#sliceStart >= SLICE_MS;
  }

  /** Yields when the current slice is used up; resolves to true when the signal is aborted. */
  async pause(): Promise<boolean> {
    if (this.due()) {
      // setImmediate, not setTimeout(0): nested timers are clamped to 4 ms, which cost 10% of a search.
      await new Promise((resolve) => setImmediate(resolve));
      this.#sliceStart = performance.now();
    }
    return this.#signal?.aborted ?? false;
  }
}

// The last rule that matches decides, and a deeper ignore file overrides a shallower one, as in git.
// `relativePath` is relative to the start directory; a directory's path ends with "/".
function isIgnored(
  ruleSets: readonly RuleSet[],
  relativePath: string,
  depth: number,
  basename: string,
): boolean {
  for (let index = ruleSets.length - 1; index >= 0; index--) {
    const set = ruleSets[index]!;
    let outcome: { ignored: boolean; unignored: boolean };
    if (set.deep === null) {
      const local = set.prefix + (set.base === "" ? relativePath : relativePath.slice(set.base.length + 1));
      outcome = set.shallow.test(local);
    } else {
      const direct = set.prefix === "" && depth === baseDepth(set.base) + 1;
      outcome = (direct ? set.shallow : set.deep).test(basename);
    }
    if (outcome.ignored) return true;
    if (outcome.unignored) return false;
  }
  return false;
}

function baseDepth(base: string): number {
  if (base === "") return 0;
  let depth = 1;
  for (let index = base.indexOf("/"); index !== -1; index = base.indexOf("/", index + 1)) depth++;
  return depth;
}

/**
 * Parses an ignore file into a rule set; null when it is missing or unreadable. With `root`, the file is
 * read only when its real path lies inside the root (`.git` or the file itself may be a symlink).
 */
function readRuleSet(path: string, base: string, prefix: string, root?: string): RuleSet | null {
  let text: string;
  try {
    if (root !== undefined && !isWithinRoot(root, Deno.realPathSync(path))) return null;
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  const lines = text.split(/\r?\n/);
  // Git compares ignore patterns case-sensitively on Linux (core.ignoreCase is false there).
  const shallow = ignore({ ignorecase: false }).add(lines);
  const deepLines: string[] = [];
  for (const line of lines) {
    const shape = patternShape(line);
    if (shape === "path") return { base, prefix, shallow, deep: null };
    if (shape === "segment") deepLines.push(line);
  }
  return { base, prefix, shallow, deep: ignore({ ignorecase: false }).add(deepLines) };
}

// "segment": matches one path segment anywhere ("*.log", "dist/"); "anchored": one segment at the top
// ("/build"); "path": anything else ("docs/_build", "**/x"); "none": a blank line or a comment.
function patternShape(line: string): "segment" | "anchored" | "path" | "none" {
  let body = line.trim();
  if (body === "" || body.startsWith("#")) return "none";
  if (body.startsWith("!")) body = body.slice(1);
  if (body.endsWith("/")) body = body.slice(0, -1);
  const slash = body.indexOf("/");
  if (slash === -1) return "segment";
  if (slash === 0 && body.indexOf("/", 1) === -1 && !body.includes("**")) return "anchored";
  return "path";
}

/**
 * The rules that apply to `start` from above it: `.git/info/exclude` and the `.gitignore` files of the
 * workspace root and every directory between it and `start`. A rule set that ignores `start` itself is
 * dropped: searching inside an ignored directory on purpose must find its files.
 */
function ancestorRuleSets(root: string, start: string): RuleSet[] {
  const sets: RuleSet[] = [];
  const below = start === root ? "" : start.slice(root.length + 1);
  const segments = below === "" ? [] : below.split("/");
  const add = (path: string, base: string) => {
    // The start directory relative to the ignore file's directory (`base`, relative to the root):
    const startFromBase = below.slice(base === "" ? 0 : base.length + 1);
    const prefix = startFromBase === "" ? "" : `${startFromBase}/`;
    const set = readRuleSet(path, "", prefix, root);
    if (set === null) return;
    if (prefix !== "" && set.shallow.ignores(prefix)) return;
    sets.push(set);
  };
  add(`${root}/.git/info/exclude`, "");
  for (let depth = 0; depth < segments.length; depth++) {
    const base = segments.slice(0, depth).join("/");
    add(`${base === "" ? root : `${root}/${base}`}/.gitignore`, base);
  }
  return sets;
}

interface LinkTarget {
  isDirectory: boolean;
  isFile: boolean;
  realPath: string;
}

// A symlink is followed only when its real target exists and lies inside the workspace root.
function resolveLink(root: string, path: string): LinkTarget | null {
  try {
    const realPath = Deno.realPathSync(path);
    if (!isWithinRoot(root, realPath)) return null;
    const info = Deno.statSync(realPath);
    return { isDirectory: info.isDirectory, isFile: info.isFile, realPath };
  } catch {
    return null;
  }
}
