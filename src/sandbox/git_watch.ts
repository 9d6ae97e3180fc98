/**
 * The git metadata of a session's folders as it was before its first shell call, kept to compare with at the
 * end of the session (`ShellSandbox.endOfSession`): what the mounts cannot stop (see git_metadata.ts), said
 * to the user once the session is over.
 *
 * @module
 */
import { lstatSyncOrNull } from "../common/fs.ts";
import { isAtOrBelow } from "./bubblewrap.ts";
import { objectFilesWrittenSince, type WrittenObjectFile } from "./git_packs.ts";
import { diffGitFindings, type GitScan, type GitScanOptions, scanGitMetadata } from "./git_metadata.ts";
import type { UserGitConfig } from "./_user_git_config.ts";
import { nestedNotLookedFor } from "./_nested_protected.ts";
import type { RootBaseline } from "./_unchecked_git_scan.ts";

/** The scans of the root and of each added folder that no other of them contains. */
export class GitWatch {
  #scans: readonly { root: string; scan: GitScan }[];
  #user: UserGitConfig;
  #named: readonly string[];
  #limits: Pick<GitScanOptions, "maxEntries">;
  /** Identity (`dev:ino`) of each named entry the first scans found, by path. */
  #namedAtStart: ReadonlyMap<string, string>;

  private constructor(
    scans: readonly { root: string; scan: GitScan }[],
    user: UserGitConfig,
    named: readonly string[],
    limits: Pick<GitScanOptions, "maxEntries">,
  ) {
    this.#limits = limits;
    this.#scans = scans;
    this.#user = user;
    this.#named = named;
    this.#namedAtStart = identities(scans.flatMap(({ scan }) => scan.named));
  }

  /**
   * Scans the outermost of `roots` (the workspace root first, then the added folders). `user` is the config
   * the user's git reads besides each repository's (`userGitConfig` of the session's environment, as the
   * protection plan reads it): a global `core.hooksPath` says where hooks are looked for. `named` are the
   * names of protected paths that apply at any depth (`.vscode`), listed on the same walk. `limits` bound
   * every scan's walk (default: the scan's own).
   */
  static async start(
    roots: readonly string[],
    user: UserGitConfig,
    named: readonly string[] = [],
    limits: Pick<GitScanOptions, "maxEntries"> = {},
  ): Promise<GitWatch> {
    const outermost = roots.filter((root) =>
      !roots.some((other) => other !== root && isAtOrBelow(root, other))
    );
    return new GitWatch(
      await Promise.all(
        outermost.map(async (root) => ({
          root,
          scan: await scanGitMetadata(root, { ...limits, user, named }),
        })),
      ),
      user,
      named,
      limits,
    );
  }

  /** The `.git` entries found below the roots, for the mounts that protect nested repositories. */
  get dotGits(): string[] {
    return this.#scans.flatMap(({ scan }) => scan.dotGits);
  }

  /**
   * What the end compares with, for a record that outlives a session killed before its end
   * (_unchecked_git_scan.ts).
   */
  get baselines(): RootBaseline[] {
    return this.#scans.map(({ root, scan }) => ({
      root,
      startedAt: scan.startedAt,
      complete: scan.complete,
      findings: scan.findings.map(({ id, key }) => ({ id, key })),
    }));
  }

  /** The entries of the `named` names found below the roots by the first scans, for their mounts. */
  get named(): string[] {
    return this.#scans.flatMap(({ scan }) => scan.named);
  }

  /**
   * What gained hooks or command-running configuration since the scan, or objects or replace refs that make
   * git write other content (only loose objects written since the scan are read), one line each for the
   * user; findings in an added folder say which (`root` is the workspace's).
   */
  async changes(root: string): Promise<string[]> {
    return (await this.end(root)).lines;
  }

  /**
   * `changes`; the entries of the `named` names that the first scans did not find (made since), or found
   * as another entry (a symlink replaced by a folder): what no mount could keep from being made; and the
   * packs, multi-pack index and commit graph written since, which only git can check (git_packs.ts).
   */
  async end(
    root: string,
  ): Promise<{ lines: string[]; madeNamed: string[]; objectFiles: WrittenObjectFile[] }> {
    const lines: string[] = [];
    const madeNamed: string[] = [];
    const objectFiles: WrittenObjectFile[] = [];
    for (const { root: scanned, scan } of this.#scans) {
      const after = await scanGitMetadata(scanned, {
        ...this.#limits,
        user: this.#user,
        looseObjects: { since: scan.startedAt },
        named: this.#named,
      });
      const diff = diffGitFindings(scan, after);
      // Findings are relative to the folder scanned.
      const where = scanned === root ? "" : `In the added folder "${scanned}": `;
      for (const change of diff.changes) lines.push(`${where}${change.message}`);
      if (diff.notice !== null) lines.push(`${where}${diff.notice}`);
      if (!after.complete && this.#named.length > 0) {
        // A command can make the walk stop short (200,000 files) to keep what it made below from being found.
        lines.push(`${where}${nestedNotLookedFor(this.#named)}`);
      }
      for (const [path, identity] of identities(after.named)) {
        if (this.#namedAtStart.get(path) !== identity) madeNamed.push(path);
      }
      objectFiles.push(...objectFilesWrittenSince(after.objectFolders, scan.startedAt));
    }
    return { lines, madeNamed, objectFiles };
  }
}

/** Each entry's identity (`dev:ino`), by path; an entry gone meanwhile has none. */
function identities(paths: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const path of paths) {
    const info = lstatSyncOrNull(path);
    if (info !== null) found.set(path, `${info.dev}:${info.ino}`);
  }
  return found;
}
