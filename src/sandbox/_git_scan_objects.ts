/**
 * The findings of a metadata scan (git_scan.ts) about what makes the user's git write other content than
 * the files' history holds, while `git status` shows nothing: replace refs (git_replace_refs.ts) and, when
 * the scan is given the time the session started (`looseObjects`), loose objects written since whose
 * content does not hash to their name (git_loose_objects.ts).
 *
 * Private to src/sandbox/.
 *
 * @module
 */
import { join, relative } from "../common/path.ts";
import { type GitLayout, isInside } from "./_git_layout.ts";
import { newFinding, usesSha256 } from "./_git_scan_findings.ts";
import { checkLooseObjects, type LooseObjectBudget } from "./git_loose_objects.ts";
import { readReplaceRefs } from "./git_replace_refs.ts";
import type { GitFinding, GitScanOptions } from "./git_scan.ts";

/** Replace refs reported one by one per git directory; beyond, one finding counts them. */
const MAX_REPLACE_REFS_SHOWN = 50;
/** Mismatched loose objects reported one by one per git directory; beyond, one finding counts them. */
const MAX_OBJECTS_SHOWN = 20;
const DEFAULT_MAX_OBJECTS = 20_000;
const DEFAULT_MAX_OBJECT_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_LISTED_OBJECTS = 200_000;
const DEFAULT_OBJECTS_TIMEOUT_MS = 3_000;

/**
 * The replace refs of the repositories inside the root and, with `options.looseObjects`, their loose
 * objects changed since then that do not hash to their names (linked worktrees' directories share their
 * repository's refs and objects).
 */
export async function collectObjectFindings(
  root: string,
  layout: GitLayout,
  options: GitScanOptions,
): Promise<GitFinding[]> {
  const show = (path: string): string => relative(root, path) || ".";
  const findings: GitFinding[] = [];
  const looseObjects = options.looseObjects;
  const budget: LooseObjectBudget = {
    listed: looseObjects?.maxListed ?? DEFAULT_MAX_LISTED_OBJECTS,
    objects: looseObjects?.maxObjects ?? DEFAULT_MAX_OBJECTS,
    bytes: looseObjects?.maxBytes ?? DEFAULT_MAX_OBJECT_BYTES,
    deadline: performance.now() + (looseObjects?.timeoutMs ?? DEFAULT_OBJECTS_TIMEOUT_MS),
  };
  for (const directory of layout.directories) {
    if (directory.kind !== "repository" || !isInside(root, directory.path)) continue;
    const gitDir = show(directory.path);
    const worktree = directory.worktree !== null && isInside(root, directory.worktree)
      ? show(directory.worktree)
      : null;
    const base = { gitDir, worktree, effect: null };
    const refs = await readReplaceRefs(directory.path);
    for (const ref of refs.slice(0, MAX_REPLACE_REFS_SHOWN)) {
      // The loose ref's path even for a packed ref: `git pack-refs` moves a ref, the finding stays the same.
      const path = show(join(directory.path, ref.ref));
      const fields = { ...base, kind: "replace-ref" as const, path, name: ref.ref };
      findings.push(await newFinding(fields, ref.target, ref.target, false));
    }
    if (refs.length > MAX_REPLACE_REFS_SHOWN) {
      const fields = { ...base, kind: "replace-ref" as const, path: show(directory.path), name: "#many" };
      findings.push(await newFinding(fields, String(refs.length), String(refs.length), false));
    }
    if (looseObjects === undefined) continue;
    const objects = await Deno.realPath(join(directory.path, "objects")).catch(() => null);
    if (objects === null || !isInside(root, objects)) continue;
    const check = await checkLooseObjects(objects, {
      since: looseObjects.since,
      format: usesSha256(directory) ? "sha256" : "sha1",
      budget,
      signal: options.signal,
    });
    for (const object of check.mismatched.slice(0, MAX_OBJECTS_SHOWN)) {
      const value = object.actual ?? object.problem;
      const path = show(join(directory.path, "objects", object.name.slice(0, 2), object.name.slice(2)));
      const fields = { ...base, kind: "object" as const, path, name: object.name };
      findings.push(await newFinding(fields, value, value, false));
    }
    if (check.mismatched.length > MAX_OBJECTS_SHOWN) {
      const count = String(check.mismatched.length);
      const fields = { ...base, kind: "object" as const, path: show(objects), name: "#many" };
      findings.push(await newFinding(fields, count, count, false));
    }
    if (!check.complete) {
      const spent = `${check.checked} objects`;
      const fields = { ...base, kind: "object" as const, path: show(objects), name: "stopped" };
      findings.push(await newFinding(fields, spent, spent, false));
    }
  }
  return findings;
}
