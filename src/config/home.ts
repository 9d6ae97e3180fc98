/**
 * Where mewcode keeps its state: `$MEWCODE_HOME` (default `~/.mewcode`) and the per-workspace folders in it.
 *
 * @module
 */
import { join } from "../common/path.ts";

/** The environment variables this module reads. */
export interface HomeEnv {
  MEWCODE_HOME?: string | undefined;
  HOME?: string | undefined;
  USERPROFILE?: string | undefined;
}

/** Resolves mewcode's state directory: `MEWCODE_HOME`, else `~/.mewcode`. Throws a TypeError without either. */
export function resolveMewcodeHome(env: HomeEnv): string {
  const configured = env.MEWCODE_HOME?.trim();
  if (configured) return configured;
  const home = env.HOME?.trim() || env.USERPROFILE?.trim();
  if (!home) throw new TypeError("Cannot find mewcode's state directory: set MEWCODE_HOME or HOME");
  return join(home, ".mewcode");
}

const MAX_SLUG_LENGTH = 120;

/**
 * A folder name for a workspace: its real path with every character other than letters and digits
 * replaced by "-" (as Claude Code does, so "/home/ada/app" becomes "-home-ada-app"); long paths keep
 * their tail and gain a short hash so two workspaces never share a folder.
 */
export async function workspaceSlug(root: string): Promise<string> {
  const slug = root.replace(/[^A-Za-z0-9]/g, "-");
  if (slug.length <= MAX_SLUG_LENGTH) return slug;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root));
  const hash = [...new Uint8Array(digest).slice(0, 6)].map((byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
  return `${slug.slice(slug.length - (MAX_SLUG_LENGTH - hash.length - 1))}-${hash}`;
}

/**
 * The interactive session's prompt history in a workspace's folder, beside the transcripts (`<id>.jsonl`):
 * the session list passes over it.
 */
export const HISTORY_FILE = "history.jsonl";

/** The folder holding a workspace's sessions: `<home>/projects/<slug>`. */
export async function projectDir(home: string, root: string): Promise<string> {
  return join(home, "projects", await workspaceSlug(root));
}
