/**
 * The first step of command-line parsing (args.ts): argv split into the options given, each checked
 * against the table in options.ts (its name, whether it takes a value, its choices), and the other words;
 * with the usage error every step throws, and the "did you mean" of a misspelled name.
 *
 * @module
 */
import { OPTIONS, type OptionSpec } from "./options.ts";

/** A usage error: main prints it with a hint and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The options given (every value of each, in order) and the other words. */
export interface Tokens {
  values: Map<string, string[]>;
  positionals: string[];
}

const BY_LONG = new Map<string, OptionSpec>(
  OPTIONS.flatMap((option) =>
    [option.name, ...(option.aliases ?? [])].map((name) => [name, option] as const)
  ),
);
const BY_SHORT = new Map<string, OptionSpec>(
  OPTIONS.filter((option) => option.short !== undefined).map((option) => [option.short ?? "", option]),
);

/** Splits argv into options and words, checking each option's name, value and choices. */
export function tokenize(argv: readonly string[]): Tokens {
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  const add = (option: OptionSpec, value: string) => {
    if (option.choices !== undefined && !option.choices.includes(value)) {
      throw new UsageError(
        `Invalid --${option.name} "${value}": use one of ${option.choices.join(", ")}${
          suggestion(value, option.choices, (choice) => `"${choice}"`)
        }`,
      );
    }
    values.set(option.name, [...(values.get(option.name) ?? []), value]);
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "--") {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const name = arg.slice(2, equals === -1 ? undefined : equals);
      const option = BY_LONG.get(name);
      if (option === undefined) throw unknownOption(`--${name}`);
      if (option.type === "boolean") {
        if (equals !== -1) throw new UsageError(`--${option.name} takes no value (got "${arg}")`);
        add(option, "true");
        continue;
      }
      if (equals !== -1) {
        add(option, arg.slice(equals + 1));
        continue;
      }
      if (optionalValueLeftOut(option, argv[index + 1])) {
        add(option, "");
        continue;
      }
      add(option, valueAfter(argv, index, `--${option.name}`, option));
      index += 1;
      while (
        option.continuedBy !== undefined && argv[index + 1] !== undefined &&
        option.continuedBy(argv[index + 1]!)
      ) {
        add(option, argv[index + 1]!);
        index += 1;
      }
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // A cluster of short options: -pq, -C dir, -Cdir.
      for (let at = 1; at < arg.length; at++) {
        const letter = arg[at] ?? "";
        const option = BY_SHORT.get(letter);
        if (option === undefined) throw unknownOption(`-${letter}`, arg);
        if (option.type === "boolean") {
          add(option, "true");
          continue;
        }
        const rest = arg.slice(at + 1);
        if (rest !== "") {
          add(option, rest);
        } else if (optionalValueLeftOut(option, argv[index + 1])) {
          add(option, "");
        } else {
          add(option, valueAfter(argv, index, `-${letter}`, option));
          index += 1;
        }
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values, positionals };
}

/** Whether an option whose value may be left out was given without one (the next word is not a value). */
function optionalValueLeftOut(option: OptionSpec, next: string | undefined): boolean {
  if (option.optionalValue === undefined) return false;
  return next === undefined || isOption(next) || !option.optionalValue(next);
}

function valueAfter(argv: readonly string[], index: number, spelled: string, option: OptionSpec): string {
  const value = argv[index + 1];
  if (value === undefined || isOption(value)) {
    throw new UsageError(`${spelled} needs a value: ${spelled} ${option.value ?? "VALUE"}`);
  }
  return value;
}

/** Whether a word is one of our options (so `--model -p` is a missing value, not the model "-p"). */
function isOption(word: string): boolean {
  if (word.startsWith("--")) return BY_LONG.has(word.slice(2).split("=", 1)[0] ?? "");
  return word.length === 2 && word.startsWith("-") && BY_SHORT.has(word.slice(1));
}

function unknownOption(spelled: string, cluster?: string): UsageError {
  const where = cluster === undefined || cluster === spelled ? "" : ` (in "${cluster}")`;
  const names = [...BY_LONG.keys()].map((name) => `--${name}`);
  const hint = spelled.startsWith("--")
    ? suggestion(spelled, names, (name) => name)
    : '; a prompt that starts with "-" goes after --: mewcode -p -- "-x means…"';
  return new UsageError(`Unknown option ${spelled}${where}${hint}`);
}

/** "; did you mean X?" for the candidate closest to `given`, or "" when none is close. */
export function suggestion(
  given: string,
  candidates: readonly string[],
  show: (candidate: string) => string,
): string {
  const close = closest(given, candidates);
  return close === null ? "" : `; did you mean ${show(close)}?`;
}

/** The candidate within a third of its length in edits (case and dashes aside), or null. */
export function closest(given: string, candidates: readonly string[]): string | null {
  const normalize = (word: string) => word.toLowerCase().replaceAll("-", "");
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const distance = editDistance(normalize(given), normalize(candidate));
    if (best === null || distance < best.distance) best = { candidate, distance };
  }
  if (best === null) return null;
  return best.distance <= Math.max(1, Math.floor(normalize(best.candidate).length / 3))
    ? best.candidate
    : null;
}

/** Levenshtein distance (short words only: option and command names). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
