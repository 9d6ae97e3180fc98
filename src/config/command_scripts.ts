/**
 * The workspace files a hook or the approval command runs (`sh scripts/hook.sh`, `node
 * "$CLAUDE_PROJECT_DIR"/.claude/hooks/check.js`, `./approve.sh`, `cd .hooks && sh check.sh`, `npm run lint`),
 * protected like `.mewcode` for the session and fingerprinted into a repository's trust: trust covers a
 * repository's settings and what they run, and a model that rewrote a script (WriteFile in acceptEdits, or
 * a command) would decide its own calls, or run its code outside the sandbox through the user's hook.
 *
 * A command is read the way a shell would find its files, without running it: `$MEWCODE_PROJECT_DIR`,
 * `$CLAUDE_PROJECT_DIR`, `$PWD` and `$(pwd)` are the root; a folder it changes to (`cd`, `pushd`) is
 * protected whole and its words are looked up there too; a word names a file as written or with a script's
 * extension (`node .hooks/check` runs `.hooks/check.js`); a path that does not exist yet is protected as
 * named, so it cannot be made; and a task runner's file is its script (`npm run` reads package.json, `make`
 * the Makefile).
 *
 * @module
 */
import { realPathOrNull, statOrNull } from "../common/fs.ts";
import { basename, dirname, isAbsolute, join, normalize, relative } from "../common/path.ts";
import { isWithinRoot } from "../tools/_paths.ts";
import type { ProtectedPath } from "../tools/tool.ts";

const REASON = "a hook or the approval command of this session runs it, outside the model's control; " +
  "writing it is refused. Ask the user to make this change";

/** The root, as a command may name it. */
const PROJECT_DIR = /\$\{?(?:MEWCODE_PROJECT_DIR|CLAUDE_PROJECT_DIR|PWD)\}?|\$\(\s*pwd\s*\)|`\s*pwd\s*`/g;

/** Extensions an interpreter or a loader adds to a name given without one. */
const SCRIPT_EXTENSIONS = [".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".rb", ".pl", ".php"];

/** Programs that run what a file of the project says: the file is their script. */
const TASK_FILES: Readonly<Record<string, readonly string[]>> = {
  npm: ["package.json"],
  npx: ["package.json"],
  yarn: ["package.json"],
  pnpm: ["package.json"],
  bun: ["package.json"],
  deno: ["deno.json", "deno.jsonc"],
  make: ["Makefile", "makefile", "GNUmakefile"],
  just: ["justfile", "Justfile", ".justfile"],
  rake: ["Rakefile"],
  composer: ["composer.json"],
};

/** Characters after which a word is a pattern or an expansion, never a file's name. */
const NOT_A_NAME = /[$*?[\]{}`~]/;

/**
 * The protections of what `commands` run inside `root`: workspace-relative paths (as their real paths name
 * them, or as named when missing), folders a command changes to marked `folder`.
 */
export async function commandScriptProtections(
  root: string,
  commands: readonly string[],
): Promise<ProtectedPath[]> {
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const command of commands) {
    const words = command.replaceAll(PROJECT_DIR, root).split(/[\s;&|()<>=]+/).map((part) =>
      part.replaceAll(/["']/g, "")
    );
    const bases = [root];
    for (const [index, word] of words.entries()) {
      if (index === 0 || !["cd", "pushd"].includes(words[index - 1]!) || NOT_A_NAME.test(word)) continue;
      const real = await realPathOrNull(isAbsolute(word) ? word : join(root, word));
      if (real === null || real === root || !isWithinRoot(root, real)) continue;
      if ((await statOrNull(real))?.isDirectory !== true) continue;
      folders.add(relative(root, real));
      bases.push(real);
    }
    for (const word of words) {
      if (word === "" || word.startsWith("-") || NOT_A_NAME.test(word)) continue;
      for (const name of TASK_FILES[basename(word)] ?? []) {
        for (const base of bases) await addFile(root, join(base, name), files);
      }
      let found = false;
      for (const base of isAbsolute(word) ? [root] : bases) {
        const named = isAbsolute(word) ? word : join(base, word);
        for (const candidate of [named, ...SCRIPT_EXTENSIONS.map((extension) => named + extension)]) {
          if (await addFile(root, candidate, files)) found = true;
        }
      }
      if (!found && (word.includes("/") || SCRIPT_EXTENSIONS.some((extension) => word.endsWith(extension)))) {
        await addMissing(root, isAbsolute(word) ? word : join(root, word), files);
      }
    }
  }
  return [
    ...[...folders].map((path) => ({ path, anyDepth: false, folder: true, reason: REASON })),
    ...[...files].filter((path) => ![...folders].some((folder) => path.startsWith(`${folder}/`))).map((
      path,
    ) => ({ path, anyDepth: false, reason: REASON })),
  ];
}

/** Adds the file at `path` when it is one inside the root (by its real path); whether it was. */
async function addFile(root: string, path: string, files: Set<string>): Promise<boolean> {
  const real = await realPathOrNull(path);
  if (real === null || real === root || !isWithinRoot(root, real)) return false;
  if ((await statOrNull(real))?.isFile !== true) return false;
  files.add(relative(root, real));
  return true;
}

/**
 * Adds a path that names nothing yet, when it would lie inside the root: it cannot be made. Named from the
 * real path of its nearest folder that exists (the folders below it would be made too).
 */
async function addMissing(root: string, path: string, files: Set<string>): Promise<void> {
  if (await statOrNull(path) !== null) return;
  let existing = normalize(path);
  const rest: string[] = [];
  while (true) {
    rest.unshift(basename(existing));
    existing = dirname(existing);
    const real = await realPathOrNull(existing);
    if (real !== null) {
      if (real !== root && !isWithinRoot(root, real)) return;
      const named = relative(root, join(real, ...rest));
      if (named !== "" && !named.startsWith("..")) files.add(named);
      return;
    }
    if (existing === dirname(existing)) return;
  }
}
