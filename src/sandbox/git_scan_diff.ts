/**
 * What changed between two metadata scans (git_scan.ts), said to the user: each finding that is new or
 * changed gets a sentence naming the file, what git does with it and where (`sub/.git/config sets
 * core.fsmonitor = "…" (runs when you use git in sub)`), with what to do about it when that is not
 * obvious. Removals are not reported: what the session deleted runs nothing.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { escapeHidden } from "../common/hidden_chars.ts";
import type { GitConfigEffect } from "./git_config.ts";
import type { GitFinding, GitScan } from "./git_scan.ts";

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

/**
 * What a comparison needs of the earlier scan: a `GitScan`, or what a session kept of its first one
 * (_unchecked_git_scan.ts).
 */
export interface GitBaseline {
  complete: boolean;
  findings: readonly Pick<GitFinding, "id" | "key">[];
}

/** Lists what is new or changed in `after` compared with `before` (removals are not reported). */
export function diffGitFindings(before: GitBaseline, after: GitScan): GitMetadataDiff {
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

function incompleteNotice(before: GitBaseline, after: GitScan): string | null {
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
  const path = escapeHidden(finding.path);
  const where = finding.worktree === null
    ? `the repository ${escapeHidden(finding.gitDir)}`
    : finding.worktree === "."
    ? "the workspace"
    : escapeHidden(finding.worktree);
  switch (finding.kind) {
    case "repository":
      if (finding.name === "git-directory") {
        const folder = finding.path === "." ? "The workspace folder" : path;
        return `${folder} is laid out as a git directory, which git takes for a repository (its hooks and ` +
          `config run when you use git in ${where})`;
      }
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
    case "todo-exec":
      if (finding.name === "too-large") {
        return `${path} is too large to check for exec lines (${finding.value}): check it by hand`;
      }
      return finding.path.endsWith("sequencer/todo")
        ? `${path} has an exec line, which git never writes there: ${quote(finding.value)} (git refuses ` +
          `to continue a cherry-pick or revert with it; check the file by hand)`
        : `${path} has an exec line: ${quote(finding.value)} (git runs it when you continue the rebase ` +
          `in ${where}, e.g. with git rebase --continue)`;
    case "strategy":
      return `${path} names the merge strategy ${quote(finding.value)}, which is not git's own: git runs ` +
        `it as the program git-merge-${escapeHidden(finding.value)} when you continue the rebase or ` +
        `cherry-pick in ${where} (git rebase --continue); abort it instead (git rebase --abort)`;
    case "unlisted":
      return `${path} cannot be listed (its name is not valid UTF-8, or it may not be read), so mewcode ` +
        `cannot tell whether it holds a git repository your git would use: look inside it (ls -b) before ` +
        `you run git in the workspace`;
    case "writable": {
      const who = finding.name === "others" ? "other users" : "users of its group";
      const folder = finding.path === "." ? "The workspace folder" : path;
      return `${folder} is writable by ${who} (mode ${finding.value}): any of them can change what git ` +
        `runs or checks out (its hooks, config, refs or objects) when you use git in ${where}; if you did ` +
        `not mean to share it, run chmod go-w ${shellQuote(finding.path)} in the workspace folder`;
    }
    case "index-mark": {
      const mark = finding.name.startsWith("skip-worktree") ? "skip-worktree" : "assume-unchanged";
      if (finding.name.endsWith("#many")) {
        return `${path} marks ${finding.value} files ${mark}: git status and git diff in ${where} do not ` +
          `show their changes (a sparse checkout does this; if you did not set one up, check them with ` +
          `git ls-files -v)`;
      }
      return `${path} marks ${quote(finding.value)} ${mark}: git status and git diff in ${where} do not ` +
        `show its changes; review it after git update-index --no-${mark} -- ${quote(finding.value)}`;
    }
    case "replace-ref":
      return describeReplaceRef(finding, where);
    case "object":
      return describeObject(finding, where);
    default:
      return assertNever(finding.kind);
  }
}

function describeReplaceRef(finding: GitFinding, where: string): string {
  const path = escapeHidden(finding.path);
  if (finding.name === "#many") {
    return `${path} has ${finding.value} replace refs, which make git use other objects in place of the ones ` +
      `your files' history names: list them with git replace -l in ${where}`;
  }
  const replaced = escapeHidden(finding.name.slice("refs/replace/".length));
  const target = /^[0-9a-f]+$/.test(finding.value) ? finding.value : quote(finding.value);
  return `${path} (a replace ref) makes git use object ${target} wherever object ${replaced} is named: git status in ` +
    `${where} does not show it, but git checkout and git reset write the replacement's content; if you ` +
    `did not make it, delete it with git replace -d ${replaced} (in ${where}) and look at what it pointed ` +
    `to with git cat-file -p ${target}`;
}

function describeObject(finding: GitFinding, where: string): string {
  const path = escapeHidden(finding.path);
  if (finding.name === "stopped") {
    return `mewcode stopped checking the loose objects written during the session in ${path} after ` +
      `${finding.value} (its limit of objects, bytes or time): the others were not compared with their names; ` +
      `check them with git fsck in ${where}`;
  }
  if (finding.name === "#many") {
    return `${path} holds ${finding.value} loose objects written during the session whose content does not ` +
      `match their names: git checkout and git reset in ${where} would write that content while git ` +
      `status shows nothing; list them with git fsck`;
  }
  if (!/^[0-9a-f]+$/.test(finding.value)) {
    return `${path} cannot be read as a loose object (${escapeHidden(finding.value)}), yet it was written ` +
      `during the session: check the repository with git fsck in ${where}`;
  }
  return `${path} holds content that does not hash to its name (it hashes to ${finding.value}): git ` +
    `status in ${where} does not show it, but git checkout and git reset write that content wherever ` +
    `object ${finding.name} is used; check with git fsck, then delete the file and restore the object ` +
    `(git hash-object -w on the file's unchanged copy, or fetch it again)`;
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
  return `"${escapeHidden(value.replaceAll("\\", "\\\\").replaceAll('"', '\\"'))}"`;
}

/** A path quoted for a POSIX shell, with control and bidirectional characters escaped for display. */
function shellQuote(path: string): string {
  return escapeHidden(`'${path.replaceAll("'", "'\\''")}'`);
}
