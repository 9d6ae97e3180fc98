/**
 * Commands that run another command (`sudo`, `env`, `timeout`, `nice`, `xargs`, …) and shells given a
 * script (`bash -c`, `eval`): rules look through them, so `sudo rm -rf /` is `rm -rf /` to a deny rule.
 *
 * @module
 */
import type { RenderedWord } from "./_shell_words.ts";

/** How a wrapper's own options are read, so that the command it runs can be found. */
interface WrapperSpec {
  /** Short options that take a value, separate ("-u root") or attached ("-uroot"). */
  valueFlags: string;
  /** Long options that take a separate value ("--user root"); "--user=root" needs no entry. */
  longValueFlags: readonly string[];
  /** Options after which the rest is a command line in one string, which cannot be checked (env -S). */
  opaqueFlags?: string;
  opaqueLongFlags?: readonly string[];
  /** Operands before the command (timeout's duration). */
  operands: number;
  /** NAME=value words before the command set its environment. */
  assignments: boolean;
  /** The command gets arguments no rule can see (xargs reads them from standard input). */
  appendsArguments: boolean;
  /**
   * Whether an allow rule for the wrapped command alone allows it through this wrapper: not for sudo and
   * doas, which run it as another user (deny and ask rules always look through).
   */
  allowsThrough: boolean;
}

const PLAIN: WrapperSpec = {
  valueFlags: "",
  longValueFlags: [],
  operands: 0,
  assignments: false,
  appendsArguments: false,
  allowsThrough: true,
};

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  sudo: {
    ...PLAIN,
    valueFlags: "CDghpRrtTUu",
    longValueFlags: [
      "chdir",
      "chroot",
      "close-from",
      "command-timeout",
      "group",
      "host",
      "other-user",
      "prompt",
      "role",
      "type",
      "user",
    ],
    assignments: true,
    allowsThrough: false,
  },
  doas: { ...PLAIN, valueFlags: "Cu", allowsThrough: false },
  env: {
    ...PLAIN,
    valueFlags: "uCP",
    longValueFlags: ["unset", "chdir"],
    opaqueFlags: "S",
    opaqueLongFlags: ["split-string"],
    assignments: true,
  },
  timeout: { ...PLAIN, valueFlags: "ks", longValueFlags: ["kill-after", "signal"], operands: 1 },
  nice: { ...PLAIN, valueFlags: "n", longValueFlags: ["adjustment"] },
  nohup: PLAIN,
  xargs: {
    ...PLAIN,
    valueFlags: "adEILnPs",
    longValueFlags: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
    appendsArguments: true,
  },
  command: PLAIN,
  exec: { ...PLAIN, valueFlags: "a" },
  stdbuf: { ...PLAIN, valueFlags: "ioe", longValueFlags: ["input", "output", "error"] },
  time: { ...PLAIN, valueFlags: "fo", longValueFlags: ["format", "output"] },
};

const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh"]);

/** The command a wrapper runs, or why it cannot be told. */
export type Unwrapped =
  | {
    kind: "command";
    /** The wrapped command's words (empty when the wrapper runs none, as in `sudo -l`). */
    words: RenderedWord[];
    /** NAME=value words the wrapper put in the command's environment. */
    assignments: RenderedWord[];
    appendsArguments: boolean;
    allowsThrough: boolean;
  }
  | { kind: "opaque"; reason: string };

/** The command that `words` runs through a wrapper, or null when the first word is no wrapper. */
export function unwrap(words: readonly RenderedWord[]): Unwrapped | null {
  const name = words[0];
  if (name === undefined || name.dynamic) return null;
  const spec = WRAPPERS[programName(name.text)];
  if (spec === undefined) return null;
  const assignments: RenderedWord[] = [];
  let operands = spec.operands;
  let index = 1;
  while (index < words.length) {
    const word = words[index]!;
    const text = word.text;
    if (word.dynamic) break;
    if (text === "--") {
      index++;
      break;
    }
    if (spec.assignments && operands === spec.operands && isAssignment(text)) {
      assignments.push(word);
      index++;
      continue;
    }
    if (text.startsWith("--") && operands === spec.operands) {
      const option = text.slice(2).split("=")[0]!;
      if (spec.opaqueLongFlags?.includes(option)) return opaque(name.text, text);
      index += !text.includes("=") && spec.longValueFlags.includes(option) ? 2 : 1;
      continue;
    }
    if (text.startsWith("-") && text.length > 1 && operands === spec.operands) {
      const skip = shortOptions(text, spec);
      if (skip === null) return opaque(name.text, text);
      index += skip;
      continue;
    }
    if (operands > 0) {
      operands--;
      index++;
      continue;
    }
    break;
  }
  return {
    kind: "command",
    words: words.slice(index),
    assignments,
    appendsArguments: spec.appendsArguments,
    allowsThrough: spec.allowsThrough,
  };
}

/**
 * The script a command runs from a string, when it does and the string is known: `bash -c 'SCRIPT'`,
 * `sh -ec 'SCRIPT'`, `eval ARGS…`. Null otherwise.
 */
export function innerScript(words: readonly RenderedWord[]): string | null {
  const name = words[0];
  if (name === undefined || name.dynamic) return null;
  const program = programName(name.text);
  if (program === "eval") {
    const rest = words.slice(1);
    return rest.length > 0 && rest.every((word) => !word.dynamic)
      ? rest.map((word) => word.text).join(" ")
      : null;
  }
  if (!SHELLS.has(program)) return null;
  let fromString = false;
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    const text = word.text;
    if (text === "--" || word.dynamic) return null;
    if (text === "-o" || text === "+o" || text === "-O" || text === "+O") {
      index++;
      continue;
    }
    if ((text.startsWith("-") || text.startsWith("+")) && text.length > 1) {
      if (!text.startsWith("--") && text.slice(1).includes("c")) fromString = true;
      continue;
    }
    return fromString ? text : null;
  }
  return null;
}

/** Variables that make a program load other code: set before a command, they keep its allow rules from matching it. */
export function isRiskyVariable(name: string): boolean {
  if (RISKY_PREFIXES.some((prefix) => name.startsWith(prefix))) return true;
  return RISKY_VARIABLES.has(name);
}

const RISKY_PREFIXES = ["LD_", "DYLD_", "GIT_CONFIG", "npm_config_", "NPM_CONFIG_"];
const RISKY_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "IFS",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "CLASSPATH",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_ASKPASS",
  "GIT_EDITOR",
  "GIT_PAGER",
  "EDITOR",
  "VISUAL",
  "PAGER",
]);

/** Whether a word is NAME=value with a shell variable name. */
export function isAssignment(text: string): boolean {
  const equals = text.indexOf("=");
  if (equals <= 0) return false;
  for (let index = 0; index < equals; index++) {
    const code = text.charCodeAt(index);
    const letter = (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
    const digit = code >= 0x30 && code <= 0x39;
    if (!letter && !(digit && index > 0)) return false;
  }
  return true;
}

/** The name a program is known by: the last segment of "/usr/bin/env". */
export function programName(text: string): string {
  return text.slice(text.lastIndexOf("/") + 1);
}

// How many words a cluster of short options ("-n5", "-u root", "-0r") takes, or null for an opaque one.
function shortOptions(text: string, spec: WrapperSpec): number | null {
  for (let index = 1; index < text.length; index++) {
    const flag = text[index]!;
    if (spec.opaqueFlags?.includes(flag)) return null;
    if (spec.valueFlags.includes(flag)) return index === text.length - 1 ? 2 : 1;
  }
  return 1;
}

function opaque(wrapper: string, option: string): Unwrapped {
  return {
    kind: "opaque",
    reason: `"${wrapper} ${option}" runs a command line given as one string, which cannot be checked; ` +
      "run the command directly",
  };
}
