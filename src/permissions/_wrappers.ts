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
  builtin: PLAIN,
  setsid: PLAIN,
  ionice: { ...PLAIN, valueFlags: "cnpPu", longValueFlags: ["class", "classdata", "pid", "pgid", "uid"] },
  chrt: {
    ...PLAIN,
    valueFlags: "TPD",
    longValueFlags: ["sched-runtime", "sched-period", "sched-deadline"],
    operands: 1,
  },
  // "flock -c STRING" is followed as a script (innerScript); "flock FILE CMD…" runs CMD.
  flock: {
    ...PLAIN,
    valueFlags: "wEc",
    longValueFlags: ["timeout", "conflict-exit-code", "command"],
    operands: 1,
  },
  busybox: PLAIN,
  // strace writes its trace wherever -o says and can run the command as another user (-u).
  strace: {
    ...PLAIN,
    valueFlags: "abeEIoOpPsSuUX",
    longValueFlags: ["output", "user"],
    allowsThrough: false,
  },
  // watch runs its arguments through "sh -c" (innerScript follows them too).
  watch: { ...PLAIN, valueFlags: "nq", longValueFlags: ["interval", "equexit"] },
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

/** The script a command runs from a string: known, or computed when it runs (`eval "$x"`). */
export type InnerScript = { kind: "script"; text: string } | { kind: "computed"; reason: string };

const AWKS: ReadonlySet<string> = new Set(["awk", "gawk", "mawk", "nawk"]);

/**
 * The script a command runs from a string, when it does: `bash -c 'SCRIPT'`, `sh -ec 'SCRIPT'`,
 * `eval ARGS…`, `trap 'SCRIPT' EXIT`, `flock -c 'SCRIPT' FILE`, `script -c 'SCRIPT'`, `watch ARGS…` (run by
 * "sh -c"). Computed when the string is known only when it runs, or is an awk program that can run commands
 * (system(), pipes, getline), which cannot be checked. Null when the command runs no script from a string.
 */
export function innerScript(words: readonly RenderedWord[]): InnerScript | null {
  const name = words[0];
  if (name === undefined || name.dynamic) return null;
  const program = programName(name.text);
  if (program === "eval") return joined(words.slice(1), "eval");
  if (program === "watch") {
    const unwrapped = unwrap(words);
    if (unwrapped?.kind !== "command" || words.some((word) => word.text === "-x" || word.text === "--exec")) {
      return null;
    }
    return joined(unwrapped.words, "watch");
  }
  if (program === "trap") return trapAction(words);
  if (program === "flock" || program === "script") return commandOption(words, program);
  if (AWKS.has(program)) return awkProgram(words, program);
  if (!SHELLS.has(program)) return null;
  let fromString = false;
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    const text = word.text;
    if (word.dynamic) return computed(`${program} is given "${text}", known only when it runs`);
    if (text === "--") return null;
    if (text === "-o" || text === "+o" || text === "-O" || text === "+O") {
      index++;
      continue;
    }
    if ((text.startsWith("-") || text.startsWith("+")) && text.length > 1) {
      if (!text.startsWith("--") && text.slice(1).includes("c")) fromString = true;
      continue;
    }
    return fromString ? { kind: "script", text } : null;
  }
  return null;
}

function joined(rest: readonly RenderedWord[], program: string): InnerScript | null {
  if (rest.length === 0) return null;
  const word = rest.find((candidate) => candidate.dynamic);
  if (word !== undefined) return computed(`${program} runs "${word.text}", known only when it runs`);
  return { kind: "script", text: rest.map((candidate) => candidate.text).join(" ") };
}

function computed(reason: string): InnerScript {
  return { kind: "computed", reason };
}

// `trap ACTION SIGNAL…`: the action runs as a script when the signal comes (EXIT: when the shell ends).
function trapAction(words: readonly RenderedWord[]): InnerScript | null {
  let index = 1;
  while (index < words.length && words[index]!.text.startsWith("-") && words[index]!.text !== "-") {
    if (words[index]!.text === "--") {
      index++;
      break;
    }
    index++;
  }
  const action = words[index];
  if (action === undefined || index + 1 >= words.length || action.text === "-") return null;
  if (action.dynamic) return computed(`trap runs "${action.text}", known only when it runs`);
  return action.text.trim() === "" ? null : { kind: "script", text: action.text };
}

// `flock … -c STRING` and `script … -c STRING` (also "-qc STRING", "--command STRING", "--command=STRING").
function commandOption(words: readonly RenderedWord[], program: string): InnerScript | null {
  for (let index = 1; index < words.length; index++) {
    const text = words[index]!.text;
    if (text === "--") return null;
    let value: RenderedWord | undefined;
    if (text.startsWith("--command=")) {
      value = { ...words[index]!, text: text.slice("--command=".length) };
    } else if (text === "--command" || (/^-[A-Za-z]+$/.test(text) && text.endsWith("c"))) {
      value = words[index + 1];
    } else {
      continue;
    }
    if (value === undefined) return null;
    if (value.dynamic) return computed(`${program} -c runs "${value.text}", known only when it runs`);
    return { kind: "script", text: value.text };
  }
  return null;
}

// An awk program that runs commands: system("…"), print | "…", "…" | getline. Awk is no shell to parse.
function awkProgram(words: readonly RenderedWord[], program: string): InnerScript | null {
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    const text = word.text;
    if (text === "-f" || text.startsWith("--file") || (text.startsWith("-f") && !text.startsWith("--"))) {
      return computed(`${program} runs a program from a file, which can run commands`);
    }
    if (text === "-v" || text === "-F") {
      index++;
      continue;
    }
    if (text.startsWith("-") && text.length > 1) continue;
    if (word.dynamic) return computed(`${program} runs the program "${text}", known only when it runs`);
    return /system|getline|\|/.test(text)
      ? computed(`the ${program} program "${text}" can run commands, which cannot be checked`)
      : null;
  }
  return null;
}

/** Variables that make a program load other code: set before a command, they keep its allow rules from matching it. */
export function isRiskyVariable(name: string): boolean {
  if (RISKY_PREFIXES.some((prefix) => name.startsWith(prefix))) return true;
  return RISKY_VARIABLES.has(name);
}

/** Whether an assignment statement (`PATH=…;`, `export HOME=…`) changes what later commands run. */
export function isRiskyAssignment(text: string): boolean {
  const equals = text.indexOf("=");
  const name = text.slice(0, equals === -1 ? text.length : equals).replace(/\+$/, "");
  return isRiskyVariable(name);
}

// GIT_* covers GIT_DIR, GIT_EXTERNAL_DIFF, GIT_PROXY_COMMAND…; BASH_FUNC_ names exported functions.
const RISKY_PREFIXES = ["LD_", "DYLD_", "GIT_", "npm_config_", "NPM_CONFIG_", "BASH_FUNC_", "PIP_", "YARN_"];
const RISKY_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  // Programs read their configuration (git's core.fsmonitor, npm's .npmrc, …) from files under these.
  "HOME",
  "XDG_CONFIG_HOME",
  "ZDOTDIR",
  "GCONV_PATH",
  "OPENSSL_CONF",
  "PYTHONUSERBASE",
  "GEM_HOME",
  "GEM_PATH",
  "BUNDLE_GEMFILE",
  "PERL5DB",
  "MAKEFLAGS",
  "MAKEFILES",
  "MFLAGS",
  "LESSOPEN",
  "LESSCLOSE",
  "MANPAGER",
  "BROWSER",
  "SHELL",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "MAVEN_OPTS",
  "GRADLE_OPTS",
  "RUSTC_WRAPPER",
  "RUSTFLAGS",
  "CARGO_HOME",
  "GOFLAGS",
  "DENO_DIR",
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

/** `git [global options] SUBCOMMAND …` read without its global options, for rules to match the subcommand. */
export interface GitCommand {
  /** "git" and the words from the subcommand on. */
  words: RenderedWord[];
  /**
   * Whether an allow rule for the plain subcommand may allow it: not with `-c`, `--config-env` or
   * `--exec-path=DIR`, which choose programs git runs (core.fsmonitor, core.pager, aliases, git-* helpers).
   */
  allowsThrough: boolean;
}

const GIT_VALUE_OPTIONS: ReadonlySet<string> = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env",
]);
const GIT_FLAGS: ReadonlySet<string> = new Set([
  "-p",
  "--paginate",
  "-P",
  "--no-pager",
  "--bare",
  "--no-replace-objects",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-optional-locks",
  "--no-lazy-fetch",
  "--no-advice",
  "--exec-path",
]);
const GIT_PROGRAM_CHOOSERS: readonly string[] = ["-c", "--config-env", "--exec-path"];

/**
 * A git command with its global options (`git -C sub --no-pager push`) removed: "git push". Null when it has
 * none, or when an option is unknown or computed (git then runs no subcommand, or one no rule can tell).
 */
export function withoutGitOptions(words: readonly RenderedWord[]): GitCommand | null {
  const name = words[0];
  if (name === undefined || name.dynamic || programName(name.text) !== "git") return null;
  let allowsThrough = true;
  let index = 1;
  while (index < words.length) {
    const word = words[index]!;
    if (word.dynamic || !word.text.startsWith("-")) break;
    const option = word.text.startsWith("--") ? word.text.split("=")[0]! : word.text;
    if (GIT_PROGRAM_CHOOSERS.includes(option) && (option !== "--exec-path" || word.text.includes("="))) {
      allowsThrough = false;
    }
    if (GIT_VALUE_OPTIONS.has(option)) {
      index += option === word.text ? 2 : 1;
    } else if (GIT_FLAGS.has(option) || (option === "--exec-path" && word.text.includes("="))) {
      index++;
    } else {
      return null;
    }
  }
  if (index === 1 || index >= words.length) return null;
  return { words: [name, ...words.slice(index)], allowsThrough };
}
