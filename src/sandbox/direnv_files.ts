/**
 * The files an `.envrc` has direnv load: `dotenv` (`.env` unless named), `dotenv_if_exists`, `source_env`,
 * `source_env_if_exists`. direnv checks an `.envrc` against the hash the user allowed, never what it loads,
 * and runs it in the user's own shell when they enter the folder. `.envrc.local` is protected by name
 * (src/tools/protected_paths.ts); any other such file cannot be: a `.env` holds the settings agents are asked
 * to change. So the session notes them, with a digest of each, before its first shell call or write, and at
 * its end tells the user which one changed and which `.envrc` loads it.
 *
 * @module
 */
import { readFileHead } from "../common/fs.ts";
import { dirname, relative, resolve } from "../common/path.ts";
import { isAtOrBelow } from "./bubblewrap.ts";
import { simpleCommands } from "./_git_hook_scripts.ts";

/** `.envrc` files read at most. */
const MAX_ENVRCS = 64;
/** Bytes of an `.envrc` read at most. */
const MAX_ENVRC_BYTES = 64 * 1024;
/** Bytes of a loaded file hashed at most (a larger one counts as changed when its first bytes or size do). */
const MAX_LOADED_BYTES = 4 * 1024 * 1024;

/** direnv's commands that load a file, and what the file is to them. */
const LOADERS: Readonly<Record<string, { kind: "variables" | "script"; default: string | null }>> = {
  dotenv: { kind: "variables", default: ".env" },
  dotenv_if_exists: { kind: "variables", default: ".env" },
  source_env: { kind: "script", default: null },
  source_env_if_exists: { kind: "script", default: null },
};

/** A file an `.envrc` loads, and what it held when the session noted it. */
export interface DirenvFileRecord {
  /** Absolute path of the file. */
  path: string;
  /** Absolute path of the `.envrc` that loads it. */
  envrc: string;
  /** The command, as the `.envrc` says it (`dotenv`, `source_env_if_exists .envrc.private`). */
  command: string;
  /** `variables`: direnv exports what it sets; `script`: direnv runs it. */
  kind: "variables" | "script";
  /** Size and SHA-256 of the first bytes; null when it did not exist. */
  digest: string | null;
}

/**
 * The files the `envrcs` (absolute paths of `.envrc` files, as the session's first walk found them) load
 * that lie in one of `roots`, existing or not, with their digests. A word the shell computes (`$HOME/x`) is
 * not followed. Never throws.
 */
export async function recordDirenvFiles(
  envrcs: readonly string[],
  roots: readonly string[],
): Promise<DirenvFileRecord[]> {
  const records: DirenvFileRecord[] = [];
  for (const envrc of envrcs.slice(0, MAX_ENVRCS)) {
    let text: string;
    try {
      text = new TextDecoder().decode((await readFileHead(envrc, MAX_ENVRC_BYTES)).bytes);
    } catch {
      continue;
    }
    for (const parts of simpleCommands(text)) {
      const loader = LOADERS[parts[0] ?? ""];
      if (loader === undefined) continue;
      const name = parts.slice(1).find((word) => !word.startsWith("-")) ?? loader.default;
      if (name === null || name.includes("$")) continue;
      const path = resolve(dirname(envrc), name);
      if (records.some((record) => record.path === path)) continue;
      if (!roots.some((root) => isAtOrBelow(path, root) && path !== root)) continue;
      records.push({
        path,
        envrc,
        command: parts.join(" "),
        kind: loader.kind,
        digest: await digestOf(path),
      });
    }
  }
  return records;
}

/**
 * One line for the user per recorded file whose content is not what it was: the `.envrc` that loads it and
 * how, since direnv loads what it says now when the user next enters that folder. Paths are shown relative
 * to `root`.
 */
export async function changedDirenvFiles(
  records: readonly DirenvFileRecord[],
  root: string,
): Promise<string[]> {
  const lines: string[] = [];
  for (const record of records) {
    if ((await digestOf(record.path)) === record.digest) continue;
    const what = record.digest === null ? "appeared" : "changed";
    const effect = record.kind === "script"
      ? "direnv runs it in your shell"
      : "direnv exports what it sets (PATH, LD_PRELOAD and the like run code) into your shell";
    lines.push(
      `${show(root, record.path)} ${what} during the session, and \`${record.command}\` in ` +
        `${show(root, record.envrc)} loads it: ${effect}, outside any sandbox, when you next enter that ` +
        "folder; look at what it holds before you do",
    );
  }
  return lines;
}

/** Size and SHA-256 (hex) of the file's first bytes; null when it cannot be read (gone, or a folder). */
async function digestOf(path: string): Promise<string | null> {
  try {
    const { bytes, size } = await readFileHead(path, MAX_LOADED_BYTES);
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
    return `${size}:${[...hash].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
  } catch {
    return null;
  }
}

function show(root: string, path: string): string {
  const inRoot = relative(root, path);
  return inRoot === "" || inRoot.startsWith("..") ? path : inRoot;
}
