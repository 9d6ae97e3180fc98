/**
 * A snapshot of what in the workspace's git metadata can make the user's git run commands, and the
 * difference between two snapshots: the session takes one before the first shell call and compares at the
 * end (and after each call), to warn about what the protection plan cannot stop, such as a repository
 * planted in a subfolder and registered as a submodule.
 *
 * The walk reads every directory of the workspace, `node_modules` included: skipping a folder by name
 * would tell a planted repository where to hide, and a gitlink can make the user's `git status` enter any
 * folder. It enters no symlinked directory and no `.git` directory (those are read by their layout:
 * config, hooks, `modules/**`, `worktrees/*`), and it stops at `maxEntries` entries or after `timeoutMs`,
 * marking the scan incomplete. Directories are read breadth first in name order, so a truncated scan
 * still covers the shallow folders and covers the same ones each time.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { nextTurn } from "../common/next_turn.ts";
import { dirname, join, relative } from "../common/path.ts";
import { type GitConfigEffect, gitConfigEffect } from "./git_config.ts";
import { type GitDirectory, type GitLayout, isInside, readGitLayout } from "./_git_layout.ts";

/** What a finding is about. */
export type GitFindingKind = "repository" | "config" | "config-error" | "hook" | "pointer";

/** One thing in the git metadata that can make the user's git run something. */
export interface GitFinding {
  kind: GitFindingKind;
  /** Identity across scans: the same entry has the same id before and after its content changes. */
  id: string;
  /** `id` plus a hash of the content: equal across scans only when nothing changed. */
  key: string;
  /** The git directory it belongs to, relative to the root (".git", "sub/.git", ".git/modules/sub"). */
  gitDir: string;
  /** The `.git` entry, config file, hook or pointer file, relative to the root. */
  path: string;
  /** Config name (`core.fsmonitor`), hook name, or "" for the other kinds. */
  name: string;
  /** Config value, pointer target or parse error as shown to the user (shortened), "" for the other kinds. */
  value: string;
  /** SHA-256 (hex) of the hook's content, the full config value, the pointer target or the error. */
  sha256: string;
  /** Where the user's git uses it, relative to the root ("." for the root), or null when not known. */
  worktree: string | null;
  /** What a config entry makes git do; null for the other kinds. */
  effect: GitConfigEffect | null;
}

/** A scan of the workspace's git metadata. */
export interface GitScan {
  /** Real path of the workspace root. */
  root: string;
  findings: GitFinding[];
  /** Absolute paths of the `.git` entries found (for `planGitProtection`'s `nestedDotGits`). */
  dotGits: string[];
  /** False when the walk stopped at its entry limit or deadline, or was aborted. */
  complete: boolean;
  /** Directory entries read by the walk. */
  entries: number;
  /** Milliseconds the scan took. */
  elapsedMs: number;
}

/** Options of `scanGitMetadata`. */
export interface GitScanOptions {
  /** Directory entries read at most; default 200,000. */
  maxEntries?: number;
  /** Milliseconds the walk may take; default 2,000. */
  timeoutMs?: number;
  /** The clock in milliseconds; default `performance.now`. */
  now?: () => number;
  /** Stops the walk; the scan is then incomplete. */
  signal?: AbortSignal;
}

const DEFAULT_MAX_ENTRIES = 200_000;
const DEFAULT_TIMEOUT_MS = 2_000;
/** Milliseconds of synchronous walking between two yields to the event loop. */
const SLICE_MS = 20;
/** Hook files larger than this are hashed by their first bytes and their size. */
const MAX_HOOK_BYTES = 16 * 1024 * 1024;
/** Characters of a value kept for display. */
const MAX_SHOWN = 200;

/**
 * Walks the workspace for git metadata (see the module note) and lists what can make git run commands.
 * Never throws: an unreadable root gives an empty, incomplete scan.
 */
export async function scanGitMetadata(root: string, options: GitScanOptions = {}): Promise<GitScan> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const realRoot = await Deno.realPath(root).catch(() => null);
  if (realRoot === null) {
    return { root, findings: [], dotGits: [], complete: false, entries: 0, elapsedMs: now() - started };
  }
  const walk = await findDotGits(realRoot, {
    maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
    deadline: started + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    now,
    signal: options.signal,
  });
  const layout = await readGitLayout(walk.dotGits);
  const findings = await collectFindings(realRoot, layout);
  return {
    root: realRoot,
    findings,
    dotGits: walk.dotGits,
    complete: walk.complete && !layout.truncated,
    entries: walk.entries,
    elapsedMs: now() - started,
  };
}

interface WalkLimits {
  maxEntries: number;
  deadline: number;
  now: () => number;
  signal: AbortSignal | undefined;
}

/** The `.git` entries under the root, breadth first; synchronous reads, yielding every few milliseconds. */
async function findDotGits(
  root: string,
  limits: WalkLimits,
): Promise<{ dotGits: string[]; complete: boolean; entries: number }> {
  const dotGits: string[] = [];
  const queue = [root];
  let entries = 0;
  let sliceEnd = limits.now() + SLICE_MS;
  for (let next = 0; next < queue.length; next++) {
    const directory = queue[next]!;
    const time = limits.now();
    if (time > limits.deadline || limits.signal?.aborted === true) {
      return { dotGits, complete: false, entries };
    }
    if (time > sliceEnd) {
      await nextTurn();
      sliceEnd = limits.now() + SLICE_MS;
    }
    let listing: Deno.DirEntry[];
    try {
      listing = [...Deno.readDirSync(directory)];
    } catch {
      continue;
    }
    listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of listing) {
      if (++entries > limits.maxEntries) return { dotGits, complete: false, entries: entries - 1 };
      const path = `${directory === "/" ? "" : directory}/${entry.name}`;
      if (entry.name === ".git") dotGits.push(path);
      else if (entry.isDirectory) queue.push(path);
    }
  }
  return { dotGits, complete: true, entries };
}

async function collectFindings(root: string, layout: GitLayout): Promise<GitFinding[]> {
  const show = (path: string): string => (isInside(root, path) ? relative(root, path) || "." : path);
  const findings: GitFinding[] = [];
  const add = async (
    fields: Omit<GitFinding, "id" | "key" | "sha256" | "value">,
    content: string | Uint8Array,
    value = "",
  ): Promise<void> => {
    const id = `${fields.kind} ${fields.gitDir} ${fields.path} ${fields.name}`;
    const sha256 = await hashHex(content);
    findings.push({ ...fields, id, key: `${id} ${sha256}`, sha256, value: shorten(value) });
  };
  const directoryOf = new Map(layout.directories.map((directory) => [directory.path, directory]));
  for (const directory of layout.directories) {
    if (!isInside(root, directory.path)) continue;
    const gitDir = show(directory.path);
    const worktree = directory.worktree !== null && isInside(root, directory.worktree)
      ? show(directory.worktree)
      : null;
    const base = { gitDir, worktree, effect: null };
    await add({ ...base, kind: "repository", path: show(directory.dotGit ?? directory.path), name: "" }, "");
    for (const file of directory.configFiles) {
      const path = show(file.path);
      const occurrences = new Map<string, number>();
      for (const entry of file.parsed?.entries ?? []) {
        const effect = gitConfigEffect(entry);
        if (effect === null) continue;
        const occurrence = occurrences.get(entry.name) ?? 0;
        occurrences.set(entry.name, occurrence + 1);
        const name = occurrence === 0 ? entry.name : `${entry.name}#${occurrence + 1}`;
        const shown = entry.value ?? "true";
        await add(
          { ...base, kind: "config", path, name, effect },
          entry.value === null ? "\0" : shown,
          shown,
        );
      }
      for (const [index, error] of (file.parsed?.errors ?? []).entries()) {
        const text = `line ${error.line}: ${error.message}`;
        await add({ ...base, kind: "config-error", path, name: `error#${index + 1}` }, text, text);
      }
    }
    for (const hook of await listHooks(root, directory)) {
      const content = await readHook(hook.path);
      await add({ ...base, kind: "hook", path: show(hook.path), name: hook.name }, content);
    }
  }
  for (const pointer of layout.pointers) {
    if (!isInside(root, pointer.path)) continue;
    const owner = pointer.path.endsWith("/.git") ? null : directoryOf.get(dirname(pointer.path));
    const worktree = owner === undefined || owner === null ? dirname(pointer.path) : owner.worktree;
    await add(
      {
        kind: "pointer",
        gitDir: show(owner?.path ?? pointer.path),
        path: show(pointer.path),
        name: "",
        worktree: worktree !== null && isInside(root, worktree) ? show(worktree) : null,
        effect: null,
      },
      pointer.target,
      show(pointer.target),
    );
  }
  return findings;
}

/** Executable files in the directory's hooks folder, other than git's `*.sample` files. */
async function listHooks(
  root: string,
  directory: GitDirectory,
): Promise<Array<{ name: string; path: string }>> {
  if (directory.hooks === null) return [];
  const real = await Deno.realPath(directory.hooks).catch(() => null);
  if (real === null || !isInside(root, real)) return [];
  const hooks: Array<{ name: string; path: string }> = [];
  try {
    for await (const entry of Deno.readDir(real)) {
      if (entry.name.endsWith(".sample") || entry.isDirectory) continue;
      const path = join(directory.hooks, entry.name);
      const info = await Deno.stat(path).catch(() => null);
      if (info === null || !info.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
      hooks.push({ name: entry.name, path });
    }
  } catch {
    return [];
  }
  return hooks.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** A hook's bytes (the first `MAX_HOOK_BYTES` and the size when larger), or a marker when unreadable. */
async function readHook(path: string): Promise<Uint8Array | string> {
  try {
    using file = await Deno.open(path);
    const size = (await file.stat()).size;
    const buffer = new Uint8Array(Math.min(size, MAX_HOOK_BYTES));
    let read = 0;
    while (read < buffer.length) {
      const count = await file.read(buffer.subarray(read));
      if (count === null) break;
      read += count;
    }
    return size > MAX_HOOK_BYTES ? `${size}:${await hashHex(buffer)}` : buffer.subarray(0, read);
  } catch (error) {
    return `unreadable: ${error instanceof Error ? error.name : String(error)}`;
  }
}

async function hashHex(content: string | Uint8Array): Promise<string> {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function shorten(value: string): string {
  return value.length <= MAX_SHOWN ? value : `${value.slice(0, MAX_SHOWN)}…`;
}

/** A finding that is new or changed since an earlier scan, with a sentence for the user. */
export interface GitMetadataChange {
  status: "new" | "changed";
  finding: GitFinding;
  /** E.g. `sub/.git/config sets core.fsmonitor = "…" (runs when you use git in sub)`. */
  message: string;
}

/** What changed between two scans, and a notice when either scan was incomplete. */
export interface GitMetadataDiff {
  changes: GitMetadataChange[];
  /** Why the comparison may miss or misreport something, or null when both scans were complete. */
  notice: string | null;
}

/** Lists what is new or changed in `after` compared with `before` (removals are not reported). */
export function diffGitFindings(before: GitScan, after: GitScan): GitMetadataDiff {
  const keys = new Set(before.findings.map((finding) => finding.key));
  const ids = new Set(before.findings.map((finding) => finding.id));
  const changes: GitMetadataChange[] = [];
  for (const finding of after.findings) {
    if (keys.has(finding.key)) continue;
    const status = ids.has(finding.id) ? "changed" : "new";
    changes.push({ status, finding, message: describeChange(status, finding) });
  }
  return { changes, notice: incompleteNotice(before, after) };
}

function incompleteNotice(before: GitScan, after: GitScan): string | null {
  if (!after.complete) {
    return `The git metadata scan stopped after ${after.entries} entries: folders beyond them were not ` +
      "checked for planted repositories";
  }
  if (!before.complete) {
    return "The first git metadata scan was incomplete: some findings reported as new may be older";
  }
  return null;
}

function describeChange(status: "new" | "changed", finding: GitFinding): string {
  const path = printable(finding.path);
  const where = finding.worktree === null
    ? `the repository ${printable(finding.gitDir)}`
    : finding.worktree === "."
    ? "the workspace"
    : printable(finding.worktree);
  switch (finding.kind) {
    case "repository":
      return `${path} is a new git repository (its hooks and config run when you use git in ${where})`;
    case "config": {
      const verb = status === "new" ? `sets ${finding.name} =` : `changes ${finding.name} to`;
      return `${path} ${verb} ${quote(finding.value)} (${effectPhrase(finding.effect, where)})`;
    }
    case "config-error":
      return `${path} has a line git cannot read (${quote(finding.value)}): check the file by hand`;
    case "hook":
      return status === "new"
        ? `${path} is a new hook (runs when you use git in ${where})`
        : `${path} was changed (a hook that runs when you use git in ${where})`;
    case "pointer":
      return `${path} ${status === "new" ? "points" : "now points"} to ${quote(finding.value)} ` +
        `(git uses the repository there when you use git in ${where})`;
    default:
      return assertNever(finding.kind);
  }
}

function effectPhrase(effect: GitConfigEffect | null, where: string): string {
  switch (effect) {
    case "runs-command":
    case null:
      return `runs when you use git in ${where}`;
    case "sets-hooks":
      return `git runs the hooks found there when you use git in ${where}`;
    case "includes-config":
      return `git reads more config, which can run commands, when you use git in ${where}`;
    case "moves-repository":
      return `git uses another working tree for this repository`;
    case "allows-protocol":
      return `lets git fetch or push through transports that can run commands, in ${where}`;
    default:
      return assertNever(effect);
  }
}

/** A value in double quotes with control, quote and bidirectional characters escaped. */
function quote(value: string): string {
  return `"${printable(value.replaceAll("\\", "\\\\").replaceAll('"', '\\"'))}"`;
}

/** Text with control and bidirectional-override characters escaped, safe to print on a terminal. */
function printable(text: string): string {
  return text.replace(
    // deno-lint-ignore no-control-regex -- matching control characters is the point: they are escaped
    /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
