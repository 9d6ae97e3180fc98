/**
 * The git metadata of a session's folders as it was before its first shell call, kept to compare with at the
 * end of the session (`ShellSandbox.endOfSession`): what the mounts cannot stop (see git_metadata.ts), said
 * to the user once the session is over.
 *
 * @module
 */
import { isAtOrBelow } from "./bubblewrap.ts";
import { diffGitFindings, type GitScan, scanGitMetadata } from "./git_metadata.ts";
import type { UserGitConfig } from "./_user_git_config.ts";

/** The scans of the root and of each added folder that no other of them contains. */
export class GitWatch {
  #scans: readonly { root: string; scan: GitScan }[];
  #user: UserGitConfig;

  private constructor(scans: readonly { root: string; scan: GitScan }[], user: UserGitConfig) {
    this.#scans = scans;
    this.#user = user;
  }

  /**
   * Scans the outermost of `roots` (the workspace root first, then the added folders). `user` is the config
   * the user's git reads besides each repository's (`userGitConfig` of the session's environment, as the
   * protection plan reads it): a global `core.hooksPath` says where hooks are looked for.
   */
  static async start(roots: readonly string[], user: UserGitConfig): Promise<GitWatch> {
    const outermost = roots.filter((root) =>
      !roots.some((other) => other !== root && isAtOrBelow(root, other))
    );
    return new GitWatch(
      await Promise.all(
        outermost.map(async (root) => ({ root, scan: await scanGitMetadata(root, { user }) })),
      ),
      user,
    );
  }

  /** The `.git` entries found below the roots, for the mounts that protect nested repositories. */
  get dotGits(): string[] {
    return this.#scans.flatMap(({ scan }) => scan.dotGits);
  }

  /**
   * What gained hooks or command-running configuration since the scan, or objects or replace refs that make
   * git write other content (only loose objects written since the scan are read), one line each for the
   * user; findings in an added folder say which (`root` is the workspace's).
   */
  async changes(root: string): Promise<string[]> {
    const lines: string[] = [];
    for (const { root: scanned, scan } of this.#scans) {
      const after = await scanGitMetadata(scanned, {
        user: this.#user,
        looseObjects: { since: scan.startedAt },
      });
      const diff = diffGitFindings(scan, after);
      // Findings are relative to the folder scanned.
      const where = scanned === root ? "" : `In the added folder "${scanned}": `;
      for (const change of diff.changes) lines.push(`${where}${change.message}`);
      if (diff.notice !== null) lines.push(`${where}${diff.notice}`);
    }
    return lines;
  }
}
