/**
 * `mewcode completions bash|zsh|fish`: the shell completion script, generated from the option table
 * (options.ts), so completion, the parser and `--help` cannot disagree.
 *
 * What each script completes: option names (long, aliases, short); an option's value from its `choices`
 * (`--permission-mode`, `--output-format`, …), files for a `FILE` value, directories for a `DIR` value, and
 * nothing for free text; command words in the first position (else files, since a prompt often names one),
 * subcommands (`permissions test`, the shells of `completions`); files in a prompt and after `--`.
 *
 * @module
 */
import { COMMANDS, OPTIONS, type OptionSpec } from "./options.ts";
import { assertNever } from "../common/errors.ts";
import { bashScript } from "./_completion_bash.ts";
import { fishScript } from "./_completion_fish.ts";
import { zshScript } from "./_completion_zsh.ts";

/** The shells mewcode writes completion scripts for. */
export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
/** One of COMPLETION_SHELLS. */
export type CompletionShell = typeof COMPLETION_SHELLS[number];

/** How an option's value is completed. */
export type ValueCompletion =
  | { kind: "choices"; choices: readonly string[] }
  | { kind: "file" }
  | { kind: "directory" }
  | { kind: "text" };

/** One option as the completion scripts see it. */
export interface CompletionOption {
  /** The long name without dashes, then its aliases. */
  longNames: readonly string[];
  short: string | null;
  /** Whether the option takes no value, an optional one (`-r [ID]`), or a required one. */
  argument: "none" | "optional" | "required";
  value: ValueCompletion;
  /** The value's placeholder without brackets ("ID", "FORMAT"), or "" for a flag. */
  placeholder: string;
  multiple: boolean;
  description: string;
}

/** A word that may follow a command or another word. */
export interface CompletionWord {
  word: string;
  description: string;
}

/** Everything a completion script is generated from. */
export interface CompletionModel {
  options: readonly CompletionOption[];
  /** The command words (`tools`, `doctor`, …). */
  commands: readonly CompletionWord[];
  /** The words allowed right after a command word: `permissions` → `test`, `completions` → the shells. */
  subcommands: Readonly<Record<string, readonly CompletionWord[]>>;
}

/** The completion script for a shell. */
export function completionScript(shell: CompletionShell): string {
  const model = completionModel();
  switch (shell) {
    case "bash":
      return bashScript(model);
    case "zsh":
      return zshScript(model);
    case "fish":
      return fishScript(model);
    default:
      return assertNever(shell);
  }
}

/** The completion model of the option table and the command list. */
export function completionModel(): CompletionModel {
  const options = OPTIONS.map(completionOption);
  const commands: CompletionWord[] = [];
  const subcommands: Record<string, CompletionWord[]> = {};
  for (const command of COMMANDS) {
    const [word = "", sub] = command.name.split(" ");
    // "-p" and "|" are usage lines of the help, not words to type.
    if (!/^[a-z]+$/.test(word)) continue;
    if (sub !== undefined) {
      (subcommands[word] ??= []).push({ word: sub, description: command.description });
      continue;
    }
    if (!commands.some((known) => known.word === word)) {
      commands.push({ word, description: command.description });
    }
  }
  subcommands.completions = COMPLETION_SHELLS.map((shell) => ({
    word: shell,
    description: `${shell} script`,
  }));
  for (const word of [...commands.map((command) => command.word), ...words(subcommands), ...names(options)]) {
    // Every word is pasted into shell code unquoted: the table must keep them plain.
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(word)) {
      throw new TypeError(`Cannot complete "${word}": not a plain word`);
    }
  }
  return { options, commands, subcommands };
}

function completionOption(option: OptionSpec): CompletionOption {
  const argument = option.type === "boolean"
    ? "none"
    : option.optionalValue === undefined
    ? "required"
    : "optional";
  return {
    longNames: [option.name, ...option.aliases ?? []],
    short: option.short ?? null,
    argument,
    value: valueCompletion(option),
    placeholder: (option.value ?? "").replace(/^\[(.*)\]$/, "$1"),
    multiple: option.multiple === true,
    description: option.description,
  };
}

function valueCompletion(option: OptionSpec): ValueCompletion {
  if (option.choices !== undefined) return { kind: "choices", choices: option.choices };
  if (option.value === "FILE") return { kind: "file" };
  if (option.value === "DIR") return { kind: "directory" };
  return { kind: "text" };
}

function words(subcommands: Readonly<Record<string, readonly CompletionWord[]>>): string[] {
  return Object.values(subcommands).flatMap((list) => list.map((entry) => entry.word));
}

/** Every option name, short letter and choice. */
function names(options: readonly CompletionOption[]): string[] {
  return options.flatMap((option) => [
    ...option.longNames,
    ...option.short === null ? [] : [option.short],
    ...option.value.kind === "choices" ? option.value.choices : [],
  ]);
}
