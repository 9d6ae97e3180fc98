/**
 * The workspace files a hook or the approval command runs (`sh scripts/hook.sh`, `node
 * "$CLAUDE_PROJECT_DIR"/.claude/hooks/check.js`, `./approve.sh`), protected like `.mewcode` for the session:
 * trust covers a repository's settings, not the scripts they name, and a model that rewrote one (WriteFile in
 * acceptEdits, or a command) would decide its own calls, or run its code outside the sandbox through the
 * user's hook.
 *
 * @module
 */
import { realPathOrNull, statOrNull } from "../common/fs.ts";
import { isAbsolute, join, relative } from "../common/path.ts";
import { isWithinRoot } from "../tools/_paths.ts";
import type { ProtectedPath } from "../tools/tool.ts";

const REASON = "a hook or the approval command of this session runs it, outside the model's control; " +
  "writing it is refused. Ask the user to make this change";

/**
 * The protections of the existing files inside `root` that the commands name: each word (quotes taken off,
 * `$MEWCODE_PROJECT_DIR` and `$CLAUDE_PROJECT_DIR` read as the root) that resolves, relative to the root
 * where hooks run, to a file in it. Workspace-relative paths, as the file's real path names them.
 */
export async function commandScriptProtections(
  root: string,
  commands: readonly string[],
): Promise<ProtectedPath[]> {
  const paths = new Set<string>();
  for (const command of commands) {
    const expanded = command.replaceAll(/\$\{?(?:MEWCODE_PROJECT_DIR|CLAUDE_PROJECT_DIR)\}?/g, root);
    for (const part of expanded.split(/[\s;&|()<>=]+/)) {
      const word = part.replaceAll(/["']/g, "");
      if (word === "" || word.startsWith("-") || word.includes("$")) continue;
      const real = await realPathOrNull(isAbsolute(word) ? word : join(root, word));
      if (real === null || real === root || !isWithinRoot(root, real)) continue;
      if ((await statOrNull(real))?.isFile === true) paths.add(relative(root, real));
    }
  }
  return [...paths].map((path) => ({ path, anyDepth: false, reason: REASON }));
}
