/**
 * Hints for people (never the model): the exact flag or rule that would allow a call, ready to paste,
 * such as `--permission-mode acceptEdits or --allowedTools "EditFile(src/**)"`.
 *
 * @module
 */
import { posix } from "../common/path.ts";
import { compileCommandPattern, matchesCommand, matchesWithAnyArguments } from "./command_pattern.ts";
import type { CommandForm } from "./shell_commands.ts";
import { isWithin } from "./real_paths.ts";
import { shellQuote } from "../common/shell_quote.ts";
import { isCredentialPath } from "../common/home_credentials.ts";

/** The flag that adds allow rules, with each rule quoted for the shell. */
export function allowedToolsFlag(rules: readonly string[]): string {
  return `--allowedTools ${rules.map(shellArgument).join(" ")}`;
}

/** The flag that lets the tools reach another folder. */
export function addDirFlag(folder: string): string {
  return `--add-dir ${shellArgument(folder)}`;
}

/**
 * Folders of the machine, not of a project, outside the home: a denial never offers to add them. The path a
 * call asked for may come from a link the model planted (`notes -> /proc/1/environ`), and a hint is pasted
 * as it stands: it must not hand the next session the system's files.
 */
const SYSTEM_FOLDERS = [
  "/proc",
  "/sys",
  "/dev",
  "/run",
  "/etc",
  "/boot",
  "/root",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/snap",
  "/var/run",
  "/var/lib",
  "/var/log",
  "/var/cache",
  "/var/spool",
  "/var/mail",
];

/**
 * Whether a denial outside the workspace may offer `--add-dir folder`: not for `/`, a system folder (one in
 * the home, `/root` for root, is the user's), or a folder of the home's credentials or below one (`~/.ssh`).
 */
export function offersAddDir(folder: string, home: string): boolean {
  if (folder === "/") return false;
  for (let path = folder; path !== "/" && path !== "."; path = posix.dirname(path)) {
    if (isCredentialPath(path)) return false;
  }
  if (home !== "/" && isWithin(home, folder)) return true;
  return !SYSTEM_FOLDERS.some((system) => isWithin(system, folder));
}

/** The flag that switches the permission mode. */
export function modeFlag(mode: string): string {
  return `--permission-mode ${mode}`;
}

/** One argument quoted for a POSIX shell: in double quotes when that is safe, else in single quotes. */
export function shellArgument(text: string): string {
  if (![...'"$`\\!'].some((char) => text.includes(char))) return `"${text}"`;
  return shellQuote(text);
}

/**
 * A Bash rule for a command and the ones like it, from its innermost form: `Bash(git push *)` for
 * `git push origin main`, `Bash(cat *)` for `cat README.md`. Null when no rule could allow it (a command
 * whose name is computed at run time, one run through sudo). The rule is checked to match the command.
 */
export function suggestCommandRule(forms: readonly CommandForm[]): string | null {
  const form = forms.findLast((candidate) => candidate.allowable);
  if (form === undefined || form.words.length === 0) return null;
  const [name, second] = form.words;
  const prefix = [name!];
  if (second !== undefined && isSubcommand(second)) prefix.push(second);
  for (const specifier of [`${prefix.map(ruleWord).join(" ")} *`, form.words.map(ruleWord).join(" ")]) {
    const compiled = compileCommandPattern(specifier);
    if (!compiled.ok) continue;
    const matches = form.appendsArguments
      ? matchesWithAnyArguments(compiled.value, form.text)
      : matchesCommand(compiled.value, form.text);
    if (matches) return `Bash(${specifier})`;
  }
  return null;
}

/** A file rule naming one path: relative to the workspace inside it, else absolute ("//etc/hosts"). */
export function pathRule(tool: string, path: string, { workspace }: { workspace: string }): string {
  return `${tool}(${rulePath(path, workspace)})`;
}

/** A file rule for the folder of a path and everything in it: `EditFile(src/**)`. */
export function folderRule(tool: string, path: string, { workspace }: { workspace: string }): string {
  const folder = posix.dirname(path);
  if (folder === workspace) return pathRule(tool, path, { workspace });
  return `${tool}(${rulePath(folder, workspace)}/**)`;
}

function rulePath(path: string, workspace: string): string {
  if (isWithin(workspace, path) && path !== workspace) return posix.relative(workspace, path);
  return `/${path}`;
}

// A second word that reads like a subcommand ("push", "run", "test"), not a path, flag or file name.
function isSubcommand(word: string): boolean {
  if (word === "" || word.length > 32) return false;
  for (const char of word) {
    const lower = char >= "a" && char <= "z";
    if (!lower && !(char >= "0" && char <= "9") && char !== "-") return false;
  }
  return word[0]! >= "a" && word[0]! <= "z";
}

// A word as it must be written in a Bash rule to mean itself.
function ruleWord(word: string): string {
  const plain = [...word].every((char) =>
    (char >= "a" && char <= "z") || (char >= "A" && char <= "Z") || (char >= "0" && char <= "9") ||
    "_@%+=:,./-".includes(char)
  );
  if (plain && word !== "") return word;
  return `"${word.replace(/["\\$`]/g, (char) => `\\${char}`)}"`;
}
