/**
 * Builtins that make bash evaluate text as code, or set variables for the commands after them: the name in
 * `printf -v 'a[$(id)]'`, `read`, `test -v`, `declare` and the like is an array subscript that bash evaluates
 * as arithmetic, which runs the command substitutions in it; `let` evaluates its arguments; `declare -i`
 * evaluates every value assigned later; `export PATH=…` changes the program later commands run. A command
 * like these cannot be allowed by a rule that allows the builtin.
 *
 * @module
 */
import type { RenderedWord } from "./_shell_words.ts";
import { isRiskyAssignment, programName } from "./_wrappers.ts";

/** Why no allow rule may allow this command, or null when nothing in it is evaluated. */
export function builtinRisk(words: readonly RenderedWord[]): string | null {
  const name = words[0];
  if (name === undefined || name.dynamic) return null;
  const program = programName(name.text);
  const args = words.slice(1);
  switch (program) {
    case "let":
      return `"let" evaluates its arguments as arithmetic, which can run commands through variables`;
    case "declare":
    case "typeset":
    case "local":
    case "export":
    case "readonly":
      return declarationRisk(program, args);
    case "printf":
      return optionNameRisk(program, args, "v");
    case "wait":
      return optionNameRisk(program, args, "p");
    case "read":
      return namesRisk(program, args, "adinNptu");
    case "mapfile":
    case "readarray":
      if (args.some((word) => /^-[A-Za-z]*C/.test(word.text))) {
        return `"${program} -C" runs a callback command, which cannot be checked`;
      }
      return namesRisk(program, args, "dnOsuCc");
    case "getopts": {
      // getopts OPTSTRING NAME [ARG…]: only NAME is set.
      const name = args[1];
      return name === undefined ? null : nameRisk(program, name);
    }
    case "unset":
      return namesRisk(program, args, "");
    case "test":
    case "[":
      return testRisk(program, args);
    case "hash":
      return args.some((word) => /^-[A-Za-z]*p/.test(word.text))
        ? `"hash -p" chooses the program a later command name runs`
        : null;
    case "enable":
      return args.some((word) => /^-[A-Za-z]*f/.test(word.text))
        ? `"enable -f" loads a shared library into bash`
        : null;
    case "alias":
      return args.some((word) => word.text.includes("=") || word.dynamic)
        ? `"alias" changes what a later command name runs`
        : null;
    default:
      return null;
  }
}

// The variable name a builtin sets: a computed name, or one with a subscript, is evaluated by bash.
function nameRisk(program: string, word: RenderedWord): string | null {
  if (word.dynamic) {
    return `"${program}" sets a variable whose name "${word.text}" is known only when it runs`;
  }
  if (word.text.includes("[")) {
    return `"${program}" sets "${word.text}", whose subscript bash evaluates as arithmetic, running commands`;
  }
  if (isRiskyAssignment(word.text)) {
    return `"${program}" sets ${word.text.split("=")[0]}, which changes what later commands run`;
  }
  return null;
}

// `printf -v NAME`, `printf -vNAME`, `wait -p NAME`.
function optionNameRisk(program: string, args: readonly RenderedWord[], flag: string): string | null {
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    if (word.text === "--" || !word.text.startsWith("-")) return null;
    if (word.text === `-${flag}`) {
      const value = args[index + 1];
      return value === undefined ? null : nameRisk(program, value);
    }
    if (word.text.startsWith(`-${flag}`)) return nameRisk(program, { ...word, text: word.text.slice(2) });
  }
  return null;
}

// The names a builtin sets or unsets, after its options (`valueFlags` take a value; read's -a value is a
// name too).
function namesRisk(program: string, args: readonly RenderedWord[], valueFlags: string): string | null {
  let options = true;
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    const text = word.text;
    if (options && text === "--") {
      options = false;
      continue;
    }
    if (options && !word.dynamic && text.startsWith("-") && text.length > 1) {
      const at = [...text.slice(1)].findIndex((char) => valueFlags.includes(char));
      if (at === -1) continue;
      const value = at === text.length - 2 ? args[++index] : { ...word, text: text.slice(at + 2) };
      if (value !== undefined && program === "read" && text[at + 1] === "a") {
        const risk = nameRisk(program, value);
        if (risk !== null) return risk;
      }
      continue;
    }
    options = false;
    const risk = nameRisk(program, word);
    if (risk !== null) return risk;
  }
  return null;
}

// `declare -i`/`-n` make later assignments evaluated; its NAME=value words are names like read's.
function declarationRisk(program: string, args: readonly RenderedWord[]): string | null {
  for (const word of args) {
    const text = word.text;
    if (!word.dynamic && /^[-+][A-Za-z]+$/.test(text)) {
      if (program !== "export" && program !== "readonly" && /[in]/.test(text)) {
        return `"${program} ${text}" makes bash evaluate the variable's values as arithmetic or names`;
      }
      continue;
    }
    if (word.dynamic && !text.includes("=")) return nameRisk(program, word);
    const equals = text.indexOf("=");
    const target = equals === -1 ? text : text.slice(0, equals);
    if (word.dynamic && /[^A-Za-z0-9_+]/.test(target)) return nameRisk(program, word);
    const risk = nameRisk(program, { ...word, dynamic: false, text: equals === -1 ? target : text });
    if (risk !== null && (equals !== -1 || target.includes("["))) return risk;
  }
  return null;
}

// `test -v NAME`, `[ -R NAME ]`: the name's subscript is evaluated.
function testRisk(program: string, args: readonly RenderedWord[]): string | null {
  for (let index = 0; index < args.length - 1; index++) {
    const text = args[index]!.text;
    if (text !== "-v" && text !== "-R") continue;
    const operand = args[index + 1]!;
    if (operand.dynamic || operand.text.includes("[")) {
      return `"${program} ${text} ${operand.text}" evaluates the variable name's subscript as arithmetic, ` +
        "which can run commands";
    }
  }
  return null;
}
