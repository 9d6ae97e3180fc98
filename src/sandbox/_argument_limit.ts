/**
 * What keeps the bubblewrap command line within what it and Linux accept, however many protected entries a
 * repository holds.
 *
 * bubblewrap refuses more than 9,000 arguments ("Exceeded maximum number of arguments 9000"), and counts
 * those read with `--args FD` in the same total (measured with bubblewrap 0.8.0: 6,000 from a file and 3,000
 * on the command line fail), so no way of passing them lifts it. Linux refuses to start a program whose
 * arguments and environment exceed a quarter of its stack limit (E2BIG, 2 MiB by default). Each protected
 * entry costs a mount of three arguments, and one more for each folder on its way that is pinned (see
 * bubblewrap.ts `pinnedFolders`): a repository that plants a few thousand `.vscode` folders or nested `.git`s
 * would make every Bash call fail.
 *
 * Past the budget, `fitMounts` binds a folder that holds many of those mounts read-only whole, in place of
 * the mounts below it: the deepest such folders first, those holding the most first, and only as many as
 * it takes. Every protected entry stays under a read-only mount (one the command can neither write into nor
 * rename); what else those folders hold is read-only too for as long as they are so many, and the model is
 * told which folders.
 *
 * @module
 */
import { isAtOrBelow } from "./bubblewrap.ts";

/** bubblewrap's limit on its arguments, all of them counted (options, the command and its arguments). */
export const BWRAP_MAX_ARGUMENTS = 9_000;

/** The arguments the wrapper may hold: the rest of BWRAP_MAX_ARGUMENTS is for the shell and its arguments. */
const ARGUMENT_BUDGET = BWRAP_MAX_ARGUMENTS - 100;

/**
 * The bytes the wrapper's arguments may take (each with its NUL and pointer): a quarter of Linux's usual
 * 2 MiB for arguments and environment together, which leaves room for the environment of settings' `env`
 * and a long command.
 */
const BYTE_BUDGET = 512 * 1024;

/** How far a command line is over the budgets (zero or less: within). */
export interface Excess {
  arguments: number;
  bytes: number;
}

const encoder = new TextEncoder();

/** The bytes an argument takes on the stack of a new program: its UTF-8, its NUL and its pointer. */
function argumentBytes(argument: string): number {
  // Only non-ASCII text needs encoding to be measured.
  // deno-lint-ignore no-control-regex
  const length = /^[\x00-\x7f]*$/.test(argument) ? argument.length : encoder.encode(argument).length;
  return length + 1 + 8;
}

/** How far `wrapper` (bubblewrap's path, then its arguments) is over the budgets. */
export function excessOf(wrapper: readonly string[]): Excess {
  let bytes = 0;
  for (const argument of wrapper) bytes += argumentBytes(argument);
  return { arguments: wrapper.length - 1 - ARGUMENT_BUDGET, bytes: bytes - BYTE_BUDGET };
}

/** Whether an excess is still over either budget. */
export function isOver(excess: Excess): boolean {
  return excess.arguments > 0 || excess.bytes > 0;
}

/** The protected mounts of a call, as `CallProtection` holds them. */
export interface ProtectedMounts {
  keepInPlace: readonly string[];
  readOnly: readonly string[];
  placeholders: readonly string[];
}

/** Mounts that fit, and the folders now bound read-only whole (shallowest first). */
export interface FittedMounts {
  keepInPlace: string[];
  readOnly: string[];
  placeholders: string[];
  readOnlyWhole: string[];
}

interface Node {
  path: string;
  depth: number;
  parent: Node | null;
  /** Whether the path is mounted itself (not only a folder on the way to a mount). */
  mounted: boolean;
  /** Mounts strictly below. */
  mountsBelow: number;
  /** The arguments and bytes of the mounts and pins strictly below. */
  below: { arguments: number; bytes: number };
  /** What the node itself costs: its mount, or its pin (a folder above a mount), or both. */
  own: { arguments: number; bytes: number };
  collapsed: boolean;
}

/** `--ro-bind PATH PATH` (or `--bind` to pin a folder). */
function bindCost(path: string): { arguments: number; bytes: number } {
  return { arguments: 3, bytes: argumentBytes("--ro-bind") + 2 * argumentBytes(path) };
}

/**
 * Reduces the protected mounts of `roots` by at least `excess`, binding folders that hold several of them
 * read-only whole (deepest first, then those saving most, then by path: the same mounts always give the same
 * result); a root itself only when nothing below it is enough. `isFolder` says whether a path is a real
 * folder on the host now (a folder above only missing entries may not exist). Returns the mounts unchanged
 * when within the budget.
 */
export function fitMounts(
  mounts: ProtectedMounts,
  options: { roots: readonly string[]; excess: Excess; isFolder: (path: string) => boolean },
): FittedMounts {
  const unchanged = {
    keepInPlace: [...mounts.keepInPlace],
    readOnly: [...mounts.readOnly],
    placeholders: [...mounts.placeholders],
    readOnlyWhole: [],
  };
  if (!isOver(options.excess)) return unchanged;
  const nodes = new Map<string, Node>();
  const node = (path: string, root: string): Node => {
    const known = nodes.get(path);
    if (known !== undefined) return known;
    const parentPath = path === root ? null : path.slice(0, path.lastIndexOf("/")) || "/";
    const parent = parentPath === null ? null : node(parentPath, root);
    const made: Node = {
      path,
      depth: parent === null ? 0 : parent.depth + 1,
      parent,
      mounted: false,
      mountsBelow: 0,
      below: { arguments: 0, bytes: 0 },
      own: { arguments: 0, bytes: 0 },
      collapsed: false,
    };
    nodes.set(path, made);
    return made;
  };
  const roots = [...options.roots].sort((a, b) => b.length - a.length);
  const placeholders = new Set(mounts.placeholders);
  for (const path of [...mounts.keepInPlace, ...mounts.readOnly, ...mounts.placeholders]) {
    const root = roots.find((folder) => isAtOrBelow(path, folder) && path !== folder);
    if (root === undefined) continue;
    const entry = node(path, root);
    if (entry.mounted) continue;
    entry.mounted = true;
    const cost = bindCost(path);
    // A placeholder is `--tmpfs PATH --remount-ro PATH`.
    entry.own.arguments += placeholders.has(path) ? 4 : cost.arguments;
    entry.own.bytes += cost.bytes;
  }
  // Each folder between a root and a mount is pinned (`--bind F F`) unless it is mounted itself.
  const ordered = [...nodes.values()].sort((a, b) => b.depth - a.depth);
  for (const entry of ordered) {
    const parent = entry.parent;
    if (parent === null) continue;
    if (parent.mountsBelow === 0 && parent.parent !== null && !parent.mounted) {
      const cost = bindCost(parent.path);
      parent.own.arguments += cost.arguments;
      parent.own.bytes += cost.bytes;
    }
    parent.mountsBelow += entry.mountsBelow + (entry.mounted ? 1 : 0);
    parent.below.arguments += entry.below.arguments + entry.own.arguments;
    parent.below.bytes += entry.below.bytes + entry.own.bytes;
  }
  const left = { ...options.excess };
  const collapse = (entry: Node): void => {
    const cost = bindCost(entry.path);
    const saved = {
      arguments: entry.below.arguments + entry.own.arguments - cost.arguments,
      bytes: entry.below.bytes + entry.own.bytes - cost.bytes,
    };
    const mountsGone = entry.mountsBelow - (entry.mounted ? 0 : 1);
    entry.collapsed = true;
    entry.mounted = true;
    entry.own = cost;
    entry.below = { arguments: 0, bytes: 0 };
    entry.mountsBelow = 0;
    for (let above = entry.parent; above !== null; above = above.parent) {
      above.below.arguments -= saved.arguments;
      above.below.bytes -= saved.bytes;
      above.mountsBelow -= mountsGone;
    }
    left.arguments -= saved.arguments;
    left.bytes -= saved.bytes;
  };
  const byDepth = new Map<number, Node[]>();
  for (const entry of ordered) {
    if (entry.parent === null) continue;
    const level = byDepth.get(entry.depth) ?? [];
    level.push(entry);
    byDepth.set(entry.depth, level);
  }
  const depths = [...byDepth.keys()].sort((a, b) => b - a);
  for (const depth of depths) {
    if (!isOver(left)) break;
    const level = byDepth.get(depth)!.filter((entry) => entry.mountsBelow >= 2 && !underCollapsed(entry));
    const savings = (entry: Node) => entry.below.arguments + entry.own.arguments;
    level.sort((a, b) => savings(b) - savings(a) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const entry of level) {
      if (!isOver(left)) break;
      if (underCollapsed(entry) || !options.isFolder(entry.path)) continue;
      collapse(entry);
    }
  }
  // Nothing below a root was enough: the roots that hold mounts, read-only whole.
  if (isOver(left)) {
    for (const entry of ordered) {
      if (entry.parent === null && entry.mountsBelow > 0) collapse(entry);
    }
  }
  const readOnlyWhole = shallowestFirst(
    [...nodes.values()].filter((entry) => entry.collapsed && !underCollapsed(entry)).map((entry) =>
      entry.path
    ),
  );
  const covered = (path: string) => {
    const entry = nodes.get(path);
    return entry !== undefined && (entry.collapsed || underCollapsed(entry));
  };
  return {
    keepInPlace: mounts.keepInPlace.filter((path) => !covered(path)),
    readOnly: shallowestFirst([...mounts.readOnly.filter((path) => !covered(path)), ...readOnlyWhole]),
    placeholders: mounts.placeholders.filter((path) => !covered(path)),
    readOnlyWhole,
  };
}

/** Whether a folder above `entry` is bound read-only whole already. */
function underCollapsed(entry: Node): boolean {
  for (let above = entry.parent; above !== null; above = above.parent) {
    if (above.collapsed) return true;
  }
  return false;
}

/** Shallowest first, then by name: a later mount may only go below an earlier one. */
function shallowestFirst(paths: readonly string[]): string[] {
  const depth = (path: string) => {
    let slashes = 0;
    for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) slashes++;
    return slashes;
  };
  return paths.map((path) => ({ path, depth: depth(path) }))
    .sort((a, b) => a.depth - b.depth || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((entry) => entry.path);
}
