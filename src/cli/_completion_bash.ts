/**
 * The bash completion script: a `complete -F` function that walks COMP_WORDS the way the parser does
 * (options, their values, `--option=VALUE`, clusters like `-qC DIR`, `--`), then completes the current word.
 *
 * @module
 */
import { assertNever } from "../common/errors.ts";
import type { CompletionModel, CompletionOption } from "./completions_command.ts";

/** The bash script (`source <(mewcode completions bash)`; bash 3.2 and later). */
export function bashScript(model: CompletionModel): string {
  const valued = model.options.filter((option) => option.argument !== "none");
  const flagLetters = model.options.filter((option) => option.argument === "none" && option.short !== null)
    .map((option) => option.short).join("");
  const optionWords = model.options.flatMap((option) => [
    ...option.longNames.map((name) => `--${name}`),
    ...option.short === null ? [] : [`-${option.short}`],
  ]);
  const pending = (option: CompletionOption) =>
    `${option.argument === "optional" ? "?" : ""}${option.longNames[0]}`;
  const longCases = valued.map((option) =>
    `    ${option.longNames.map((name) => `--${name}`).join(" | ")}) pending="${pending(option)}" ;;`
  );
  const shortCases = valued.filter((option) => option.short !== null).map((option) =>
    `          ${option.short}) [ -z "$rest" ] && pending="${pending(option)}"; return 0 ;;`
  );
  const valueCases = valued.flatMap((option) => {
    const label = `    ${option.longNames[0]})`;
    switch (option.value.kind) {
      case "choices":
        return [`${label} _mewcode_compgen -W "${option.value.choices.join(" ")}" -- "$2" ;;`];
      case "file":
        return [`${label} _mewcode_paths -f "$2" ;;`];
      case "directory":
        return [`${label} _mewcode_paths -d "$2" ;;`];
      case "text":
        return [];
      default:
        return assertNever(option.value);
    }
  });
  const subcommandCases = Object.entries(model.subcommands).map(([command, list]) =>
    `    1:${command}) _mewcode_compgen -W "${list.map((entry) => entry.word).join(" ")}" -- "$cur" ;;`
  );
  const commandWords = model.commands.map((command) => command.word);
  return `# bash completion for mewcode, generated from its option table by \`mewcode completions bash\`.
# Load it from ~/.bashrc:  source <(mewcode completions bash)

# Sets "pending" (a local of _mewcode) to the option whose value the next word is, for an option word;
# "?NAME" when that value may be left out.
_mewcode_value_option() {
  case "$1" in
${longCases.join("\n")}
    --*) ;;
    -?*)
      local rest="\${1#-}" letter
      while [ -n "$rest" ]; do
        letter="\${rest:0:1}"
        rest="\${rest:1}"
        case "$letter" in
${flagLetters === "" ? "" : `          [${flagLetters}]) ;;\n`}${shortCases.join("\n")}
          *) return 0 ;;
        esac
      done
      ;;
  esac
}

# Sets COMPREPLY to compgen's candidates, its output split as IFS says and never expanded as a pattern:
# a file named "[n]otes.txt" is offered as itself, not as the notes.txt it would match.
_mewcode_compgen() {
  local glob=1
  case "$-" in *f*) glob=0 ;; esac
  set -f
  COMPREPLY=($(compgen "$@"))
  [ "$glob" = 0 ] || set +f
  return 0
}

# Files (-f) or directories (-d) starting with $2.
_mewcode_paths() {
  local IFS=$'\\n'
  _mewcode_compgen "$1" -- "$2"
  # bash 4 and later: a "/" after directories, names quoted when inserted.
  compopt -o filenames 2>/dev/null
  return 0
}

# The value of option $1 starting with $2.
_mewcode_value() {
  case "$1" in
${valueCases.join("\n")}
    *) COMPREPLY=() ;;
  esac
}

_mewcode() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" word pending="" index=1 rest=0
  local -a positionals=()
  COMPREPLY=()
  while [ "$index" -lt "$COMP_CWORD" ]; do
    word="\${COMP_WORDS[index]}"
    index=$((index + 1))
    if [ "$rest" = 1 ]; then
      positionals+=("$word")
      continue
    fi
    if [ -n "$pending" ]; then
      # bash splits --option=VALUE into "--option" "=" "VALUE".
      [ "$word" = "=" ] && continue
      case "$pending:$word" in
        \\?*:-*) pending="" ;;
        *) pending=""; continue ;;
      esac
    fi
    case "$word" in
      --) rest=1 ;;
      --*=*) ;;
      -?*) _mewcode_value_option "$word" ;;
      *) positionals+=("$word") ;;
    esac
  done
  if [ -n "$pending" ]; then
    [ "$cur" = "=" ] && cur=""
    case "$pending:$cur" in
      \\?*:-*) ;;
      \\?*) return 0 ;;
      *) _mewcode_value "$pending" "$cur"; return 0 ;;
    esac
  fi
  if [ "$rest" = 1 ]; then
    _mewcode_paths -f "$cur"
    return 0
  fi
  case "$cur" in
    -*)
      _mewcode_compgen -W "${optionWords.join(" ")}" -- "$cur"
      return 0
      ;;
  esac
  case "\${#positionals[@]}:\${positionals[0]-}" in
    0:)
      _mewcode_compgen -W "${commandWords.join(" ")}" -- "$cur"
      [ "\${#COMPREPLY[@]}" -eq 0 ] && _mewcode_paths -f "$cur"
      ;;
${subcommandCases.join("\n")}
    *:${commandWords.join(" | *:")}) ;;
    *) _mewcode_paths -f "$cur" ;;
  esac
  return 0
}

complete -F _mewcode mewcode
`;
}
