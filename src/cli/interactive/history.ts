/**
 * The prompts a user sent in a workspace, oldest first, kept across sessions in
 * `$MEWCODE_HOME/projects/<workspace slug>/history.jsonl`: one JSON string per line (so multi-line prompts
 * survive), appended one whole line per write (O_APPEND, so two sessions of a workspace interleave lines, not
 * bytes), mode 0600, trimmed to the newest `maxEntries` when the file grows past twice that.
 *
 * History is a convenience, never a reason to stop: a torn or garbage line is skipped, an entry too long to keep
 * stays in memory only, and a file that cannot be used — above all a symbolic link planted where the folder or
 * the file should be, which would make mewcode write elsewhere — turns history into memory only for the session,
 * reported once through `onWarning`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { HISTORY_FILE, projectDir } from "../../config/home.ts";
import { lstatIfExists } from "../../common/fs.ts";

/** How history is kept; all optional. */
export interface HistoryOptions {
  /** The most entries kept; 1000 by default. */
  maxEntries?: number;
  /** Told once when history cannot be read or written and stays in memory for the session. */
  onWarning?: (message: string) => void;
}

/** Where a History keeps its file and how. */
export interface HistoryFileOptions {
  /** `$MEWCODE_HOME/projects`: no folder from there down to the file may be a symbolic link. */
  projectsDir: string;
  maxEntries: number;
  onWarning: (message: string) => void;
}

const DEFAULT_MAX_ENTRIES = 1000;
/** Longer entries (a large paste) are remembered for the session but not written. */
const MAX_PERSISTED_CHARS = 64 * 1024;
/** Only the end of a larger file is read. */
const MAX_READ_BYTES = 8 * 1024 * 1024;
const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;

/** The history file of a workspace under mewcode's home. */
export async function historyPath(home: string, root: string): Promise<string> {
  return join(await projectDir(home, root), HISTORY_FILE);
}

/** Loads a workspace's prompt history; see the module documentation for what happens when it cannot. */
export async function openHistory(
  home: string,
  root: string,
  options: HistoryOptions = {},
): Promise<History> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(
      `Cannot open prompt history: maxEntries must be a positive integer, got ${maxEntries}`,
    );
  }
  const path = await historyPath(home, root);
  const history = new History(path, {
    projectsDir: join(home, "projects"),
    maxEntries,
    onWarning: options.onWarning ?? (() => undefined),
  });
  await history.load();
  return history;
}

/** A workspace's prompt history, oldest first. */
export class History {
  /** The file the history is kept in. */
  readonly path: string;
  #projectsDir: string;
  #maxEntries: number;
  #onWarning: (message: string) => void;
  #entries: string[] = [];
  /** Lines in the file, counted to know when to trim it. */
  #fileLines = 0;
  #persist = true;

  /** An empty history kept in `path`, checked for links from `projectsDir` down; `openHistory` also loads it. */
  constructor(path: string, options: HistoryFileOptions) {
    this.path = path;
    this.#projectsDir = options.projectsDir;
    this.#maxEntries = options.maxEntries;
    this.#onWarning = options.onWarning;
  }

  /** The entries, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /** Reads the file again, if there is one. */
  async load(): Promise<void> {
    try {
      const state = await this.#check();
      if (state === "missing") return;
      const entries = parseLines(await readTail(this.path));
      this.#fileLines = entries.lines;
      this.#entries = entries.values.slice(-this.#maxEntries);
    } catch (error) {
      this.#stopPersisting(`Cannot read prompt history "${this.path}": ${describe(error)}`);
    }
  }

  /**
   * Adds a prompt and appends it to the file. Blank prompts and a repeat of the last entry are not added.
   * Never throws: a failure is reported through `onWarning` and history stays in memory from then on.
   */
  async add(text: string): Promise<void> {
    if (text.trim() === "" || this.#entries.at(-1) === text) return;
    this.#entries.push(text);
    if (this.#entries.length > this.#maxEntries) {
      this.#entries.splice(0, this.#entries.length - this.#maxEntries);
    }
    if (!this.#persist || text.length > MAX_PERSISTED_CHARS) return;
    try {
      await this.#append(`${JSON.stringify(text)}\n`);
      this.#fileLines++;
      if (this.#fileLines > 2 * this.#maxEntries) await this.#trim();
    } catch (error) {
      this.#stopPersisting(`Cannot save prompt history to "${this.path}": ${describe(error)}`);
    }
  }

  #stopPersisting(message: string): void {
    if (!this.#persist) return;
    this.#persist = false;
    this.#onWarning(`${message}; history is kept for this session only`);
  }

  /** Checks that neither the folders from `projects` down nor the file is a symbolic link or something odd. */
  async #check(): Promise<"missing" | "file"> {
    const folders = [this.#projectsDir, dirname(this.path)];
    for (const folder of folders) {
      const info = await lstatIfExists(folder);
      if (info === null) return "missing";
      if (info.isSymlink) throw new Error(`"${folder}" is a symbolic link`);
      if (!info.isDirectory) throw new Error(`"${folder}" is not a folder`);
    }
    const file = await lstatIfExists(this.path);
    if (file === null) return "missing";
    if (file.isSymlink) throw new Error("it is a symbolic link");
    if (!file.isFile) throw new Error("it is not a regular file");
    return "file";
  }

  async #append(line: string): Promise<void> {
    let state = await this.#check();
    if (state === "missing") {
      await Deno.mkdir(dirname(this.path), { recursive: true, mode: DIRECTORY_MODE });
      state = await this.#check();
    }
    const bytes = new TextEncoder().encode(line);
    if (state === "missing") {
      // O_CREAT|O_EXCL fails on any existing path, a symbolic link included, so nothing is followed.
      using file = await Deno.open(this.path, {
        createNew: true,
        write: true,
        append: true,
        mode: FILE_MODE,
      });
      await writeAll(file, bytes);
      return;
    }
    using file = await Deno.open(this.path, { read: true, append: true });
    // The path was a regular file when checked; make sure the file opened is still that one.
    const [opened, atPath] = await Promise.all([file.stat(), Deno.lstat(this.path)]);
    if (atPath.isSymlink || opened.ino !== atPath.ino || opened.dev !== atPath.dev) {
      throw new Error("the file was replaced while it was opened");
    }
    if (opened.mode !== null && (opened.mode & 0o077) !== 0) await Deno.chmod(this.path, FILE_MODE);
    // A torn last line (a crash mid-write) must not swallow the next entry.
    const prefix = opened.size > 0 && !(await endsWithNewline(file, opened.size))
      ? new Uint8Array([0x0a])
      : null;
    await writeAll(file, prefix === null ? bytes : new Uint8Array([...prefix, ...bytes]));
  }

  /** Rewrites the file with its newest `maxEntries` entries: a temporary file renamed over it. */
  async #trim(): Promise<void> {
    if ((await this.#check()) === "missing") return;
    const entries = parseLines(await readTail(this.path)).values.slice(-this.#maxEntries);
    const text = entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
    const temp = join(dirname(this.path), `.history.${crypto.randomUUID().slice(0, 8)}.tmp`);
    try {
      await Deno.writeTextFile(temp, text, { createNew: true, mode: FILE_MODE });
      await Deno.rename(temp, this.path);
      this.#fileLines = entries.length;
    } catch (error) {
      await Deno.remove(temp).catch(() => undefined);
      throw error;
    }
  }
}

/** The strings in JSONL text; lines that are not a JSON string (torn, garbage) are skipped. */
function parseLines(text: string): { values: string[]; lines: number } {
  const values: string[] = [];
  let lines = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    lines++;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "string") values.push(value);
    } catch {
      // A torn or foreign line: skip it.
    }
  }
  return { values, lines };
}

/** Reads a file, or only its last MAX_READ_BYTES without the first, partial line. */
async function readTail(path: string): Promise<string> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const start = Math.max(0, size - MAX_READ_BYTES);
  await file.seek(start, Deno.SeekMode.Start);
  const buffer = new Uint8Array(size - start);
  let filled = 0;
  while (filled < buffer.length) {
    const count = await file.read(buffer.subarray(filled));
    if (count === null) break;
    filled += count;
  }
  const text = new TextDecoder().decode(buffer.subarray(0, filled));
  return start === 0 ? text : text.slice(text.indexOf("\n") + 1);
}

async function endsWithNewline(file: Deno.FsFile, size: number): Promise<boolean> {
  await file.seek(size - 1, Deno.SeekMode.Start);
  const last = new Uint8Array(1);
  return (await file.read(last)) === 1 && last[0] === 0x0a;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length;) offset += await file.write(bytes.subarray(offset));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
