/**
 * The fish completion script: one `complete` line per option, command word and subcommand, with a helper
 * that finds the words of the command line that are not options (or their values).
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { CompletionModel, CompletionOption } from "./completions_command.ts";

/** The fish script (for ~/.config/fish/completions/mewcode.fish, or `mewcode completions fish | source`). */
export function fishScript(model: CompletionModel): string {
  const valued = model.options.filter((option) => option.argument !== "none");
  const required = valued.filter((option) => option.argument === "required");
  const optional = valued.filter((option) => option.argument === "optional");
  const flagLetters = model.options.filter((option) => option.argument === "none" && option.short !== null)
    .map((option) => option.short).join("");
  const shortPattern = (options: readonly CompletionOption[]) =>
    `^-[${flagLetters}]*[${options.map((option) => option.short ?? "").join("")}]$`;
  const cases = [
    ...caseLine(required, "set skip 1"),
    ...caseLine(optional, "set skip optional"),
  ];
  const shortChecks = [
    ...shortCheck(required, shortPattern(required), "set skip 1"),
    ...shortCheck(optional, shortPattern(optional), "set skip optional"),
  ];
  const commandWords = model.commands.map((command) => command.word);
  const lines = [
    ...model.options.map(optionLine),
    ...model.commands.map((command) =>
      `complete -c mewcode -n '__mewcode_words_are' -a ${command.word} -d ${quote(command.description)}`
    ),
    ...Object.entries(model.subcommands).flatMap(([command, list]) =>
      list.map((entry) =>
        `complete -c mewcode -n '__mewcode_words_are ${command}' -a ${entry.word} -d ${
          quote(entry.description)
        }`
      )
    ),
    `# After a command word, no files (a prompt's words get them).`,
    `complete -c mewcode -n '__mewcode_after_command' -f`,
  ];
  return `# fish completion for mewcode, generated from its option table by \`mewcode completions fish\`.
# Save it as ~/.config/fish/completions/mewcode.fish, or load it:  mewcode completions fish | source

# The words before the cursor that are not options or option values: the command and its arguments, or
# the prompt.
function __mewcode_words
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    set -l rest 0
    for word in $words
        if test $rest = 1
            printf '%s\\n' $word
            continue
        end
        if test $skip = 1
            set skip 0
            continue
        end
        if test $skip = optional
            set skip 0
            if not string match -q -- '-*' $word
                continue
            end
        end
        switch $word
            case --
                set rest 1
${cases.join("\n")}
            case '--*'
            case '-?*'
${shortChecks.join("\n")}
            case '*'
                printf '%s\\n' $word
        end
    end
end

# Whether the words so far (see __mewcode_words) are exactly the arguments.
function __mewcode_words_are
    set -l words (__mewcode_words)
    test "$words" = "$argv"
end

# Whether the first word is a command.
function __mewcode_after_command
    set -l words (__mewcode_words)
    test (count $words) -gt 0; and contains -- $words[1] ${commandWords.join(" ")}
end

${lines.join("\n")}
`;
}

function caseLine(options: readonly CompletionOption[], action: string): string[] {
  if (options.length === 0) return [];
  const spellings = options.flatMap((option) => option.longNames.map((name) => `--${name}`));
  return [`            case ${spellings.join(" ")}`, `                ${action}`];
}

function shortCheck(options: readonly CompletionOption[], pattern: string, action: string): string[] {
  if (!options.some((option) => option.short !== null)) return [];
  return [
    `                if string match -qr -- '${pattern}' $word`,
    `                    ${action}`,
    `                end`,
  ];
}

/** `complete -c mewcode -s C -l cd …` for one option. */
function optionLine(option: CompletionOption): string {
  const parts = ["complete -c mewcode"];
  if (option.short !== null) parts.push(`-s ${option.short}`);
  for (const name of option.longNames) parts.push(`-l ${name}`);
  if (option.argument === "required") parts.push(...requiredValue(option));
  if (option.argument === "optional") parts.push("-f");
  parts.push(`-d ${quote(option.description)}`);
  return parts.join(" ");
}

function requiredValue(option: CompletionOption): string[] {
  switch (option.value.kind) {
    case "choices":
      return ["-x", `-a ${quote(option.value.choices.join(" "))}`];
    case "file":
      return ["-r", "-F"];
    case "directory":
      return ["-x", `-a '(__fish_complete_directories (commandline -ct) "")'`];
    case "text":
      return ["-x"];
    default:
      return assertNever(option.value);
  }
}

/** A single-quoted fish string. */
function quote(text: string): string {
  return `'${text.replace(/[\\']/g, "\\$&")}'`;
}
