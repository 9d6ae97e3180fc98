/**
 * End to end: `mewcode completions bash|zsh|fish` prints a script that real shells load and that completes
 * the option table's options, choices, files and directories, and the command words.
 *
 * bash is driven through its completion function (COMP_WORDS/COMP_CWORD, as readline calls it); zsh through
 * a real interactive zsh in a pseudo-terminal (zpty) with TAB pressed, recording what the completion system
 * offers; fish through `complete -C`. The shells must be installed (Debian: apt-get install zsh fish; .ci/run
 * does it): a missing shell fails its test, it is never skipped.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { OUTPUT_FORMATS, PROVIDERS, SANDBOX_MODES } from "../../src/cli/options.ts";
import { PERMISSION_MODES } from "../../src/permissions/modes.ts";
import { runMewcode } from "../_fakes/run_cli.ts";

const COMMAND_WORDS = [
  "completions",
  "doctor",
  "help",
  "permissions",
  "sessions",
  "tool",
  "tools",
  "trust",
  "version",
];

/** The shell's path; a shell that is not installed fails the test that needs it, with what to install. */
function shell(name: string): string {
  const path = findShell(name);
  if (path === null) throw new Error(`${name} is not installed: apt-get install ${name}`);
  return path;
}

function findShell(name: string): string | null {
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin"]) {
    try {
      Deno.statSync(join(dir, name));
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** A temp directory with a file and two directories to complete, and the script mewcode printed. */
async function setUp(
  shell: "bash" | "zsh" | "fish",
): Promise<{ dir: string; script: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-completions-" });
  await Deno.writeTextFile(join(dir, "notes.txt"), "");
  await Deno.mkdir(join(dir, "docs"));
  await Deno.mkdir(join(dir, "dist"));
  await Deno.mkdir(join(dir, "home"));
  const run = await runMewcode(["completions", shell], { cwd: dir });
  equal(run.code, 0, run.stderr);
  equal(run.stderr, "");
  const script = join(dir, "home", `mewcode.${shell}`);
  await Deno.writeTextFile(script, run.stdout);
  return { dir, script, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

async function output(command: string, args: string[], cwd: string, home: string): Promise<string> {
  const result = await new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: { HOME: home, PATH: "/usr/bin:/bin", TERM: "dumb" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  equal(result.code, 0, decoder.decode(result.stderr));
  return decoder.decode(result.stdout);
}

function sorted(words: readonly string[]): string[] {
  return [...new Set(words)].sort();
}

/** [the words of the command line, the current word last; the candidates expected] */
type Case = readonly [readonly string[], readonly string[]];

/** Options, their values, subcommands and prompts: the same in every shell. */
const VALUE_CASES: readonly Case[] = [
  [["mewcode", "--permission-mode", ""], PERMISSION_MODES],
  [["mewcode", "--output-format", ""], OUTPUT_FORMATS],
  [["mewcode", "--provider", ""], PROVIDERS],
  [["mewcode", "--sandbox", "r"], SANDBOX_MODES.filter((mode) => mode.startsWith("r"))],
  [["mewcode", "--cd", ""], ["dist", "docs", "home"]],
  [["mewcode", "-qC", "d"], ["dist", "docs"]],
  [["mewcode", "--add-dir", "do"], ["docs"]],
  [["mewcode", "--add-dir", "n"], []],
  [["mewcode", "--system-prompt-file", "n"], ["notes.txt"]],
  [["mewcode", "permissions", ""], ["test"]],
  [["mewcode", "completions", ""], ["bash", "fish", "zsh"]],
  [["mewcode", "-p", "fix", "n"], ["notes.txt"]],
  [["mewcode", "--per"], ["--permission-mode"]],
];

/** The first word after the options: a command word (bash and zsh offer files only when none matches). */
const FIRST_WORD_CASES: readonly Case[] = [
  [["mewcode", ""], COMMAND_WORDS],
  [["mewcode", "--model", "x", "t"], ["tool", "tools", "trust"]],
  [["mewcode", "--allowed-tools", "x", "d"], ["doctor"]],
  [["mewcode", "--", "d"], ["dist", "docs"]],
];

Deno.test({
  name: "mewcode completions bash registers _mewcode and completes options, choices, paths and commands",
  async fn(t) {
    await using box = await setUp("bash");
    const home = join(box.dir, "home");
    const registered = await output(
      shell("bash"),
      ["--norc", "--noprofile", "-c", `source "$0"; complete -p mewcode`, box.script],
      box.dir,
      home,
    );
    equal(registered.trim(), "complete -F _mewcode mewcode");
    // A name that is also a pattern (it matches notes.txt): offered as itself.
    await Deno.writeTextFile(join(box.dir, "[n]otes.txt"), "");
    const candidates = async (words: readonly string[]) => {
      // COMP_WORDS as bash builds them (an option's "=" is a word of its own), the function called as readline does.
      const program = `source "$0"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; ` +
        `COMP_POINT=\${#COMP_LINE}; _mewcode mewcode "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"; ` +
        `printf '%s\\n' "\${COMPREPLY[@]}"`;
      const printed = await output(
        shell("bash"),
        ["--norc", "--noprofile", "-c", program, box.script, "x", ...words],
        box.dir,
        home,
      );
      return printed.split("\n").filter((line) => line !== "");
    };
    const cases: readonly Case[] = [
      ...VALUE_CASES,
      ...FIRST_WORD_CASES,
      [["mewcode", "--permission-mode", "="], PERMISSION_MODES],
      [["mewcode", "--output-format", "=", "s"], ["stream-json"]],
      [["mewcode", "--cd", "=", "do"], ["docs"]],
      [["mewcode", "tools", ""], []],
      [["mewcode", "-r", ""], []],
      [["mewcode", "-r", "3f2a9c1e", "do"], ["doctor"]],
      [["mewcode", "--model", ""], []],
      [["mewcode", "--system-prompt-file", "["], ["[n]otes.txt"]],
      [["mewcode", "-p", "fix", "["], ["[n]otes.txt"]],
    ];
    for (const [words, expected] of cases) {
      await t.step(words.join(" ") || "(empty)", async () => {
        deepStrictEqual(sorted(await candidates(words)), sorted(expected));
      });
    }
  },
});

/**
 * Types each command line and TAB into one interactive `zsh -f` in a pseudo-terminal, after compinit and the
 * script; `compadd` is wrapped to append every candidate the completion system adds to a file, and a key
 * bound after TAB writes "<finished>" there and clears the line. (compinit alone takes a second or more.)
 */
const ZSH_CAPTURE = `
zmodload zsh/zpty
local script=$1 out=$2
shift 2
zpty shell zsh -f -i
zpty -w shell "PROMPT=''; autoload -U compinit && compinit -u -D"
zpty -w shell "source \${(q)script}"
zpty -w shell 'compadd () {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
  local -a hits
  builtin compadd -A hits "$@"
  (( $#hits )) || return 1
  print -rl -- "\${hits[@]}" >> '"\${(q)out}"'
  builtin compadd "$@"
}'
zpty -w shell 'finished () { print -r -- "<finished>" >> '"\${(q)out}"'; zle kill-whole-line }; zle -N finished'
zpty -w shell 'bindkey "^I" complete-word; bindkey "^X" finished'
integer count=0 waited
local line
for line in "$@"; do
  zpty -n -w shell "$line"$'\\t'
  zpty -n -w shell $'\\x18'
  (( count++ ))
  for (( waited = 0; waited < 500; waited++ )); do
    [[ -f $out && $(grep -c '<finished>' $out) -ge $count ]] && break
    sleep 0.02
  done
done
zpty -d shell
`;

Deno.test({
  name: "mewcode completions zsh completes options, choices, paths and commands in a real zsh",
  async fn(t) {
    await using box = await setUp("zsh");
    const home = join(box.dir, "home");
    await output(shell("zsh"), ["-n", box.script], box.dir, home);
    const capture = join(home, "capture.zsh");
    await Deno.writeTextFile(capture, ZSH_CAPTURE);
    const cases: readonly Case[] = [
      ...VALUE_CASES,
      ...FIRST_WORD_CASES,
      [["mewcode", "--output-format=s"], ["stream-json"]],
    ];
    const hits = join(home, "hits");
    await output(
      shell("zsh"),
      ["-f", capture, box.script, hits, ...cases.map(([words]) => words.join(" "))],
      box.dir,
      home,
    );
    const answers = (await Deno.readTextFile(hits)).split("<finished>\n");
    equal(
      answers.length,
      cases.length + 1,
      `zsh finished every completion:\n${answers.join("<finished>\n")}`,
    );
    for (const [index, [words, expected]] of cases.entries()) {
      await t.step(words.join(" ").trim() || "(empty)", () => {
        const candidates = answers[index]!.split("\n").filter((word) => word !== "");
        deepStrictEqual(sorted(candidates.map((word) => word.replace(/\/$/, ""))), sorted(expected));
      });
    }
  },
});

Deno.test({
  name: "mewcode completions fish completes options, choices, paths and commands in a real fish",
  async fn(t) {
    await using box = await setUp("fish");
    const home = join(box.dir, "home");
    await output(shell("fish"), ["--no-config", "-n", box.script], box.dir, home);
    const candidates = async (line: string) => {
      const printed = await output(
        shell("fish"),
        ["--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, box.script, line],
        box.dir,
        home,
      );
      // "candidate<TAB>description"; fish marks directories with "/".
      return printed.split("\n").filter((row) => row !== "").map((row) =>
        row.split("\t")[0]!.replace(/\/$/, "")
      );
    };
    // fish offers files beside the command words in the first position (a prompt may name one).
    const files = ["dist", "docs", "home", "notes.txt"];
    const cases: readonly Case[] = [
      ...VALUE_CASES,
      [["mewcode", ""], [...COMMAND_WORDS, ...files]],
      [["mewcode", "--model", "x", "t"], ["tool", "tools", "trust"]],
      [["mewcode", "--allowed-tools", "x", "d"], ["dist", "docs", "doctor"]],
      [["mewcode", "-r", "3f2a9c1e", "do"], ["docs", "doctor"]],
      [["mewcode", "--output-format=s"], ["--output-format=stream-json"]],
      [["mewcode", "tools", ""], []],
    ];
    for (const [words, expected] of cases) {
      await t.step(words.join(" ").trim() || "(empty)", async () => {
        deepStrictEqual(sorted(await candidates(words.join(" "))), sorted(expected));
      });
    }
  },
});
