/**
 * The zsh completion script: one `_arguments` spec per option of the completion model.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import { shellQuote } from "../common/shell_quote.ts";
import type { CompletionModel, CompletionOption, CompletionWord } from "./completions_command.ts";

/** The zsh script (`#compdef`: autoloadable from $fpath as `_mewcode`, or sourced after compinit). */
export function zshScript(model: CompletionModel): string {
  const specs = model.options.map(optionSpec);
  const arrays = [
    `      local -a mewcode_commands=(${describeEntries(model.commands)})`,
    ...Object.entries(model.subcommands).map(([command, list]) =>
      `      local -a mewcode_${command}=(${describeEntries(list)})`
    ),
  ];
  const subcommands = Object.keys(model.subcommands).map((command) =>
    `        ${command}) (( CURRENT == 2 )) && _describe -t commands '${command} argument' mewcode_${command} ;;`
  );
  return `#compdef mewcode
# zsh completion for mewcode, generated from its option table by \`mewcode completions zsh\`.
# Save it as _mewcode in a directory of $fpath, or load it after compinit:  source <(mewcode completions zsh)

_mewcode() {
  local curcontext="$curcontext" state state_descr line
  typeset -A opt_args
  _arguments -s -S -C \\
${specs.map((spec) => `    ${spec} \\`).join("\n")}
    '*::argument:->argument' && return 0
  case $state in
    argument)
${arrays.join("\n")}
      if (( CURRENT == 1 )); then
        _describe -t commands 'mewcode command' mewcode_commands && return 0
        _files
        return
      fi
      case $words[1] in
${subcommands.join("\n")}
        ${model.commands.map((command) => command.word).join(" | ")}) return 1 ;;
        *) _files ;;
      esac
      ;;
  esac
}

if [ "$funcstack[1]" = "_mewcode" ]; then
  _mewcode "$@"
else
  compdef _mewcode mewcode
fi
`;
}

/** `'(-p --print)'{-p,--print}'[description]'`, with the value's message and action when it takes one. */
function optionSpec(option: CompletionOption): string {
  const suffix = (long: boolean) => option.argument === "none" ? "" : long ? "=" : "+";
  const spellings = [
    ...option.short === null ? [] : [`-${option.short}${suffix(false)}`],
    ...option.longNames.map((name) => `--${name}${suffix(true)}`),
  ];
  const plain = spellings.map((spelling) => spelling.replace(/[=+]$/, ""));
  const exclusion = option.multiple ? "*" : `(${plain.join(" ")})`;
  const names = spellings.length === 1 ? shellQuote(spellings[0]!) : `{${spellings.join(",")}}`;
  const description = `[${escapeBrackets(option.description)}]`;
  return `${shellQuote(exclusion)}${names}${shellQuote(description + valueSpec(option))}`;
}

function valueSpec(option: CompletionOption): string {
  if (option.argument === "none") return "";
  const colons = option.argument === "optional" ? "::" : ":";
  const message = option.placeholder.replaceAll(":", "\\:");
  switch (option.value.kind) {
    case "choices":
      return `${colons}${message}:(${option.value.choices.join(" ")})`;
    case "file":
      return `${colons}${message}:_files`;
    case "directory":
      return `${colons}${message}:_path_files -/`;
    case "text":
      return `${colons}${message}: `;
    default:
      return assertNever(option.value);
  }
}

/** The elements of an array for `_describe`: 'word:description' each. */
function describeEntries(words: readonly CompletionWord[]): string {
  return words.map((entry) => shellQuote(`${entry.word}:${entry.description}`)).join(" ");
}

function escapeBrackets(text: string): string {
  return text.replace(/[\\[\]]/g, "\\$&");
}
