/**
 * Loose objects whose content no longer matches their name. Git names an object by the hash of its
 * content and trusts the name when it reads it back: a shell command in the sandbox (which may write
 * `.git/objects`, as `git commit` must) can copy another object's file over the file of a tracked file's
 * blob. `git status` still shows nothing (the index's stat data match the working tree), and the next
 * `git checkout -- file` or `git reset --hard` writes the swapped content. The metadata scan
 * (git_scan.ts) checks the loose objects written or changed during the session: each is inflated and
 * hashed as git hashes it (`<type> <size>\0<content>`, SHA-1 or SHA-256) and compared with its name.
 *
 * A file's change time (ctime) is set by the kernel on every write, rename, link or `chmod` and cannot be
 * set back by a command (unlike the modification time, which `touch -d` sets); a file counts as changed
 * when either time is at or after the session's start, less `CLOCK_SLACK_MS` (file times come from a
 * coarse clock that may lag behind `Date.now`). Only those files are read, so the check costs one `stat`
 * per loose object plus the objects the session wrote, within a budget of objects, bytes and time.
 *
 * Packs are not read here: git looks an object up in its packs (newest first) before the loose objects, so
 * a pack written during the session could hold other content under a tracked file's name too; checking one
 * means resolving its deltas, which git itself does at the end of the session (git_packs.ts).
 *
 * @module
 */
import { nextTurn } from "../common/next_turn.ts";
import { join } from "../common/path.ts";

/** How many loose objects and bytes the checks of one scan may still use; decremented as they run. */
export interface LooseObjectBudget {
  /** Loose object files that may still be listed (one `stat` each). */
  listed: number;
  /** Objects that may still be inflated and hashed. */
  objects: number;
  /** Bytes that may still be read (compressed) plus inflated. */
  bytes: number;
  /** When to stop, in `performance.now` milliseconds. */
  deadline: number;
}

/** A loose object whose content does not hash to its name. */
export interface MismatchedObject {
  /** Absolute path of the object file. */
  path: string;
  /** The object name its path spells. */
  name: string;
  /** What its content hashes to, or null when it is not a valid loose object (with `problem`). */
  actual: string | null;
  /** Why it cannot be read as a loose object, or "" when it was read. */
  problem: string;
}

/** What checking one objects folder found. */
export interface LooseObjectCheck {
  mismatched: MismatchedObject[];
  /** Objects inflated and hashed. */
  checked: number;
  /** False when the budget ran out or the signal aborted before every changed object was checked. */
  complete: boolean;
}

/** Options of `checkLooseObjects`. */
export interface LooseObjectOptions {
  /** Epoch milliseconds: objects whose ctime or mtime is at or after it (less the slack) are checked. */
  since: number;
  /** The repository's object format (`extensions.objectFormat`). */
  format: "sha1" | "sha256";
  /** Shared by every objects folder of a scan. */
  budget: LooseObjectBudget;
  signal?: AbortSignal | undefined;
}

/** Milliseconds before `since` that still count: file times come from the kernel's coarse clock. */
const CLOCK_SLACK_MS = 5_000;
/** Loose objects listed between two yields to the event loop. */
const LISTED_PER_SLICE = 2_000;
/**
 * Bytes of one object read or inflated at most: Web Crypto hashes whole buffers, and this process loads no
 * `node:` module (see test/execution/main_modules_test.ts), so an object is held in memory to be hashed.
 */
const MAX_OBJECT_BYTES = 64 * 1024 * 1024;
/** Objects up to this size are read synchronously: an asynchronous read waits for Deno's thread pool. */
const MAX_SYNC_READ = 1024 * 1024;
/** Bytes of an object header ("commit 1234567") at most. */
const MAX_HEADER_BYTES = 64;
const OBJECT_TYPES: ReadonlySet<string> = new Set(["blob", "tree", "commit", "tag"]);

/**
 * Lists the loose objects of `objects` (a git directory's `objects` folder) changed since `options.since`
 * and returns those whose content does not hash to their name. Never throws: an unreadable folder has
 * nothing to check.
 */
export async function checkLooseObjects(
  objects: string,
  options: LooseObjectOptions,
): Promise<LooseObjectCheck> {
  const { budget } = options;
  const nameLength = options.format === "sha256" ? 62 : 38;
  const since = options.since - CLOCK_SLACK_MS;
  const changed: { path: string; name: string }[] = [];
  let complete = true;
  let sinceYield = 0;
  for (const fanout of listNames(objects, /^[0-9a-f]{2}$/)) {
    for (const rest of listNames(join(objects, fanout), /^[0-9a-f]+$/)) {
      if (rest.length !== nameLength) continue;
      if (budget.listed <= 0 || outOfTime(budget, options.signal)) {
        complete = false;
        break;
      }
      budget.listed--;
      if (++sinceYield >= LISTED_PER_SLICE) {
        sinceYield = 0;
        await nextTurn();
      }
      const path = join(objects, fanout, rest);
      if (changedSince(path, since)) changed.push({ path, name: fanout + rest });
    }
  }
  const mismatched: MismatchedObject[] = [];
  let checked = 0;
  for (const object of changed) {
    if (budget.objects <= 0 || outOfTime(budget, options.signal)) {
      return { mismatched, checked, complete: false };
    }
    budget.objects--;
    const result = await hashLooseObject(object.path, options.format, budget);
    if (result === "over-budget") return { mismatched, checked, complete: false };
    checked++;
    if ("problem" in result) mismatched.push({ ...object, actual: null, problem: result.problem });
    else if (result.hash !== object.name) mismatched.push({ ...object, actual: result.hash, problem: "" });
  }
  return { mismatched, checked, complete };
}

function outOfTime(budget: LooseObjectBudget, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || performance.now() > budget.deadline;
}

/** The sorted names in a folder that match `pattern` (symlinks followed, as git follows them). */
function listNames(path: string, pattern: RegExp): string[] {
  try {
    return [...Deno.readDirSync(path)].map((entry) => entry.name).filter((name) => pattern.test(name)).sort();
  } catch {
    return [];
  }
}

/** Whether the file, or the symlink at its path, changed at or after `since`; true when no time is known. */
function changedSince(path: string, since: number): boolean {
  const infos: Deno.FileInfo[] = [];
  try {
    const link = Deno.lstatSync(path);
    infos.push(link);
    if (link.isSymlink) infos.push(Deno.statSync(path));
  } catch {
    // A dangling symlink or a file removed meanwhile: git cannot read it either, nothing to swap.
    return false;
  }
  return infos.some((info) => {
    const times = [info.ctime, info.mtime].filter((time): time is Date => time !== null);
    return times.length === 0 || times.some((time) => time.getTime() >= since);
  });
}

type HashResult = { hash: string } | { problem: string } | "over-budget";

/**
 * The hash of a loose object's inflated bytes (header included, as git hashes them), a problem when it is
 * not a loose object, or "over-budget" when it is larger than the budget or `MAX_OBJECT_BYTES` allows.
 */
async function hashLooseObject(
  path: string,
  format: "sha1" | "sha256",
  budget: LooseObjectBudget,
): Promise<HashResult> {
  const limit = Math.min(budget.bytes, MAX_OBJECT_BYTES);
  let compressed: Uint8Array<ArrayBuffer>;
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return { problem: "not a file" };
    if (info.size > limit) return "over-budget";
    compressed = info.size <= MAX_SYNC_READ ? Deno.readFileSync(path) : await Deno.readFile(path);
  } catch (error) {
    return { problem: `unreadable (${error instanceof Error ? error.name : String(error)})` };
  }
  budget.bytes -= compressed.length;
  const inflated = await inflate(compressed, Math.min(budget.bytes, MAX_OBJECT_BYTES));
  if (inflated === "too-large") return "over-budget";
  if (inflated === null) return { problem: "not a zlib stream" };
  budget.bytes -= inflated.length;
  const problem = headerProblem(inflated);
  if (problem !== null) return { problem };
  const digest = await crypto.subtle.digest(format === "sha256" ? "SHA-256" : "SHA-1", inflated);
  return { hash: Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("") };
}

/** Zlib-inflated bytes, null when they are not a zlib stream, "too-large" beyond `max` bytes. */
async function inflate(
  compressed: Uint8Array<ArrayBuffer>,
  max: number,
): Promise<Uint8Array<ArrayBuffer> | null | "too-large"> {
  const stream = new DecompressionStream("deflate");
  const writer = stream.writable.getWriter();
  // Their failures are the reader's: a stream that is not zlib rejects both.
  writer.write(compressed).catch(() => undefined);
  writer.close().catch(() => undefined);
  const reader = stream.readable.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > max) {
        await reader.cancel().catch(() => undefined);
        return "too-large";
      }
      chunks.push(value);
    }
  } catch {
    return null;
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** What is wrong with an object's `<type> <size>\0` framing (git refuses such an object), or null. */
function headerProblem(inflated: Uint8Array): string | null {
  const end = inflated.subarray(0, MAX_HEADER_BYTES + 1).indexOf(0);
  if (end === -1) return "no object header";
  const match = /^([a-z]+) (0|[1-9][0-9]*)$/.exec(String.fromCharCode(...inflated.subarray(0, end)));
  if (match === null || !OBJECT_TYPES.has(match[1]!)) return "no object header";
  if (Number(match[2]) !== inflated.length - end - 1) return "size differs from its header";
  return null;
}
