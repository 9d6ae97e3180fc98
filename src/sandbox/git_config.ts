/**
 * A reader of git's config file format, and the table of config keys that make the user's git run a
 * command, load more config or look elsewhere for its repository.
 *
 * The parser follows git's own (config.c): section names and keys are case-insensitive (lowercased
 * here), subsections in `[section "sub"]` keep their case and take `\"` and `\\` escapes, the deprecated
 * `[section.sub]` is lowercased whole, a key may follow its header on the same line, a key alone means
 * true (value null), values drop unquoted `#`/`;` comments and surrounding blanks, keep quoted text as is,
 * decode `\n \t \b \\ \"` and continue over a backslash at the end of a line. Where git would stop with
 * "bad config line", this parser records the error and goes on at the next line, so that a file git
 * reads differently from this parser still has its later entries reported rather than hidden.
 *
 * @module
 */

/** One `name = value` line of a git config file. */
export interface GitConfigEntry {
  /** Section name, lowercased: "core", "filter", "includeif". */
  section: string;
  /** Subsection as written (case kept), or null: "lfs" in `[filter "lfs"]`. */
  subsection: string | null;
  /** Key, lowercased: "fsmonitor". */
  key: string;
  /** The full name git uses: `section.subsection.key`, or `section.key` without a subsection. */
  name: string;
  /** The decoded value, or null for a key written without `=` (which git reads as true). */
  value: string | null;
  /** 1-based line where the key starts. */
  line: number;
}

/** A line git would reject: it stops reading the file there ("bad config line"). */
export interface GitConfigError {
  /** 1-based line of the problem. */
  line: number;
  /** What is wrong, e.g. `unterminated subsection name`. */
  message: string;
}

/** The entries of a config file in file order, and the lines git would reject. */
export interface ParsedGitConfig {
  entries: GitConfigEntry[];
  errors: GitConfigError[];
}

const END = "";

class ConfigSyntaxError extends Error {
  override name = "ConfigSyntaxError";
}

/** Reads git config text (as git does, see the module note); never throws. */
export function parseGitConfig(text: string): ParsedGitConfig {
  const source = new Source(text.replace(/^\uFEFF/, "").replaceAll("\r\n", "\n"));
  const entries: GitConfigEntry[] = [];
  const errors: GitConfigError[] = [];
  let base = "";
  let inComment = false;
  for (;;) {
    const character = source.next();
    if (character === END) return { entries, errors };
    if (character === "\n") {
      inComment = false;
      continue;
    }
    if (inComment || isSpace(character)) continue;
    if (character === "#" || character === ";") {
      inComment = true;
      continue;
    }
    const line = source.line;
    try {
      if (character === "[") {
        base = readSectionHeader(source);
        continue;
      }
      if (!isAlpha(character)) throw new ConfigSyntaxError(`unexpected character "${character}"`);
      entries.push(readEntry(source, base, character, line));
    } catch (error) {
      if (!(error instanceof ConfigSyntaxError)) throw error;
      errors.push({ line: source.line, message: error.message });
      if (source.previous !== "\n") source.skipLine();
    }
  }
}

/** Reads `section]` or `section "subsection"]` after the `[`, returning "section" or "section.sub". */
function readSectionHeader(source: Source): string {
  let name = "";
  for (;;) {
    const character = source.next();
    if (character === END || character === "\n") throw new ConfigSyntaxError("unterminated section header");
    if (character === "]") {
      if (name === "") throw new ConfigSyntaxError("empty section name");
      return name;
    }
    if (isSpace(character)) return `${name}.${readSubsection(source)}`;
    if (!isKeyCharacter(character) && character !== ".") {
      throw new ConfigSyntaxError(`invalid character "${character}" in section name`);
    }
    name += character.toLowerCase();
  }
}

/** Reads ` "subsection"]` after the blank that ends the section name. */
function readSubsection(source: Source): string {
  let character = source.next();
  while (character !== "\n" && character !== END && isSpace(character)) character = source.next();
  if (character !== '"') throw new ConfigSyntaxError("expected a quoted subsection name");
  let subsection = "";
  for (;;) {
    character = source.next();
    if (character === "\n" || character === END) throw new ConfigSyntaxError("unterminated subsection name");
    if (character === '"') break;
    if (character === "\\") {
      character = source.next();
      if (character === "\n" || character === END) {
        throw new ConfigSyntaxError("unterminated subsection name");
      }
    }
    subsection += character;
  }
  if (source.next() !== "]") throw new ConfigSyntaxError("expected ] after the subsection name");
  return subsection;
}

/** Reads `key`, `key = value` or `key =` starting at its first character. */
function readEntry(source: Source, base: string, first: string, line: number): GitConfigEntry {
  let key = first.toLowerCase();
  let character = source.next();
  while (character !== END && isKeyCharacter(character)) {
    key += character.toLowerCase();
    character = source.next();
  }
  while (character === " " || character === "\t") character = source.next();
  let value: string | null = null;
  if (character !== "\n" && character !== END) {
    if (character !== "=") throw new ConfigSyntaxError(`expected "=" after key "${key}"`);
    value = readValue(source);
  }
  const dot = base.indexOf(".");
  const section = dot === -1 ? base : base.slice(0, dot);
  const subsection = dot === -1 ? null : base.slice(dot + 1);
  const name = base === "" ? key : `${base}.${key}`;
  return { section, subsection, key, name, value, line };
}

/** Reads a value after `=`, through the end of its (possibly continued) line. */
function readValue(source: Source): string {
  let value = "";
  let quoted = false;
  let inComment = false;
  let pendingSpaces = 0;
  for (;;) {
    let character = source.next();
    if (character === "\n" || character === END) {
      if (quoted) throw new ConfigSyntaxError("unterminated quoted value");
      return value;
    }
    if (inComment) continue;
    if (!quoted && isSpace(character)) {
      if (value !== "") pendingSpaces++;
      continue;
    }
    if (!quoted && (character === "#" || character === ";")) {
      inComment = true;
      continue;
    }
    value += " ".repeat(pendingSpaces);
    pendingSpaces = 0;
    if (character === '"') {
      quoted = !quoted;
      continue;
    }
    if (character === "\\") {
      character = source.next();
      if (character === "\n") continue;
      const escaped = ESCAPES[character];
      if (escaped === undefined) throw new ConfigSyntaxError(`invalid escape "\\${character}" in value`);
      value += escaped;
      continue;
    }
    value += character;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { t: "\t", b: "\b", n: "\n", "\\": "\\", '"': '"' };

/** Characters of a config text with git's line counting. */
class Source {
  #text: string;
  #index = 0;
  /** Line of the character last read (1-based). */
  line = 1;
  /** The character last read. */
  previous = END;

  constructor(text: string) {
    this.#text = text;
  }

  next(): string {
    if (this.previous === "\n") this.line++;
    const character = this.#text[this.#index] ?? END;
    if (character !== END) this.#index++;
    this.previous = character;
    return character;
  }

  skipLine(): void {
    let character = this.next();
    while (character !== "\n" && character !== END) character = this.next();
  }
}

function isSpace(character: string): boolean {
  return character === " " || character === "\t" || character === "\n" || character === "\r";
}

function isAlpha(character: string): boolean {
  return /^[A-Za-z]$/.test(character);
}

function isKeyCharacter(character: string): boolean {
  return /^[A-Za-z0-9-]$/.test(character);
}

/** What a config entry makes the user's git do, for entries that matter to security. */
export type GitConfigEffect =
  | "runs-command"
  | "sets-hooks"
  | "includes-config"
  | "moves-repository"
  | "allows-protocol";

interface EffectRule {
  section: string;
  /** "none": no subsection; "any": with or without; "required": only with one. */
  subsection: "none" | "any" | "required";
  /** Key, or "*" for every key of the section. */
  key: string;
  effect: GitConfigEffect;
  /** Only values that start with "!" (shell aliases, `submodule.*.update`). */
  bangOnly?: true;
}

const RULES: readonly EffectRule[] = [
  ...[
    "fsmonitor",
    "pager",
    "editor",
    "sshcommand",
    "askpass",
    "gitproxy",
    "alternaterefscommand",
  ].map((key): EffectRule => ({ section: "core", subsection: "none", key, effect: "runs-command" })),
  { section: "core", subsection: "none", key: "hookspath", effect: "sets-hooks" },
  { section: "core", subsection: "none", key: "worktree", effect: "moves-repository" },
  { section: "extensions", subsection: "none", key: "worktreeconfig", effect: "includes-config" },
  { section: "include", subsection: "none", key: "path", effect: "includes-config" },
  { section: "includeif", subsection: "required", key: "path", effect: "includes-config" },
  { section: "sequence", subsection: "none", key: "editor", effect: "runs-command" },
  { section: "filter", subsection: "required", key: "clean", effect: "runs-command" },
  { section: "filter", subsection: "required", key: "smudge", effect: "runs-command" },
  { section: "filter", subsection: "required", key: "process", effect: "runs-command" },
  { section: "diff", subsection: "required", key: "textconv", effect: "runs-command" },
  { section: "diff", subsection: "any", key: "command", effect: "runs-command" },
  { section: "diff", subsection: "none", key: "external", effect: "runs-command" },
  { section: "merge", subsection: "required", key: "driver", effect: "runs-command" },
  { section: "credential", subsection: "any", key: "helper", effect: "runs-command" },
  { section: "alias", subsection: "none", key: "*", effect: "runs-command", bangOnly: true },
  { section: "submodule", subsection: "required", key: "update", effect: "runs-command", bangOnly: true },
  { section: "gpg", subsection: "any", key: "program", effect: "runs-command" },
  { section: "gpg", subsection: "required", key: "defaultkeycommand", effect: "runs-command" },
  { section: "remote", subsection: "required", key: "uploadpack", effect: "runs-command" },
  { section: "remote", subsection: "required", key: "receivepack", effect: "runs-command" },
  { section: "remote", subsection: "required", key: "vcs", effect: "runs-command" },
  { section: "uploadpack", subsection: "none", key: "packobjectshook", effect: "runs-command" },
  { section: "pager", subsection: "none", key: "*", effect: "runs-command" },
  { section: "interactive", subsection: "none", key: "difffilter", effect: "runs-command" },
  { section: "difftool", subsection: "required", key: "cmd", effect: "runs-command" },
  { section: "mergetool", subsection: "required", key: "cmd", effect: "runs-command" },
  { section: "man", subsection: "required", key: "cmd", effect: "runs-command" },
  { section: "browser", subsection: "required", key: "cmd", effect: "runs-command" },
  { section: "web", subsection: "none", key: "browser", effect: "runs-command" },
  { section: "guitool", subsection: "required", key: "cmd", effect: "runs-command" },
  { section: "tar", subsection: "required", key: "command", effect: "runs-command" },
  { section: "hook", subsection: "required", key: "command", effect: "runs-command" },
  { section: "imap", subsection: "none", key: "tunnel", effect: "runs-command" },
  ...["sendmailcmd", "smtpserver", "tocmd", "cccmd", "headercmd"].map((key): EffectRule => ({
    section: "sendemail",
    subsection: "any",
    key,
    effect: "runs-command",
  })),
  { section: "protocol", subsection: "any", key: "allow", effect: "allows-protocol" },
  { section: "url", subsection: "required", key: "insteadof", effect: "allows-protocol" },
  { section: "url", subsection: "required", key: "pushinsteadof", effect: "allows-protocol" },
];

/** What the entry makes the user's git do, or null for an entry that neither runs nor redirects anything. */
export function gitConfigEffect(entry: GitConfigEntry): GitConfigEffect | null {
  for (const rule of RULES) {
    if (rule.section !== entry.section) continue;
    if (rule.key !== "*" && rule.key !== entry.key) continue;
    if (rule.subsection === "none" && entry.subsection !== null) continue;
    if (rule.subsection === "required" && entry.subsection === null) continue;
    if (rule.bangOnly === true && !(entry.value ?? "").trimStart().startsWith("!")) continue;
    return rule.effect;
  }
  return null;
}
