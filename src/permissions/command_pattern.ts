/**
 * The specifier of a Bash rule, as Claude Code users write it: `npm test` (exactly that command),
 * `npm test *` (it, with or without more arguments), the legacy `npm test:*` (the same), `git * main`.
 * An unquoted `*` matches any characters, "/" and spaces included; a quoted one is a literal "*". The
 * specifier is read by the same shell parser as commands, so quoting means the same on both sides:
 * `Bash(git commit -m "fix it")` matches `git commit -m 'fix it'`. Matching is linear: literal pieces are
 * found in order, never by a backtracking regex.
 *
 * @module
 */
import { shellParser } from "./shell_parser.ts";
import type { Result } from "./rules.ts";
import { type PatternPiece, patternPieces, WILDCARD } from "./_shell_words.ts";

/** A compiled Bash rule specifier: literal pieces, with a wildcard between each two. */
export interface CommandPattern {
  /** `pieces.length - 1` wildcards separate them; one piece means an exact match. */
  pieces: readonly string[];
  /** The specifier ends in " *" (or ":*"): it also matches the command without further arguments. */
  optionalArguments: boolean;
}

/**
 * Compiles a Bash rule specifier; the error completes `Cannot use rule "Bash(…)": `. The shell parser must
 * be loaded (`loadShellParser`).
 */
export function compileCommandPattern(specifier: string): Result<CommandPattern> {
  let text = specifier.trim();
  if (text.endsWith(":*")) text = `${text.slice(0, -2).trimEnd()} *`;
  const script = shellParser().parse(text);
  const problem = script.errors?.[0];
  if (problem !== undefined) {
    return {
      ok: false,
      error: `the command cannot be parsed: ${problem.message} (at character ${problem.pos + 1})`,
    };
  }
  const statement = script.commands[0];
  if (statement === undefined) return { ok: false, error: "it names no command" };
  if (script.commands.length > 1 || statement.command.type !== "Command" || statement.background === true) {
    return {
      ok: false,
      error: "a Bash rule matches one simple command, without ;, &&, ||, |, & or ( ): " +
        "write one rule per command, e.g. Bash(npm test) and Bash(npm run lint)",
    };
  }
  const command = statement.command;
  if (command.redirects.length > 0) {
    return {
      ok: false,
      error: "a Bash rule cannot contain a redirection: allow the written file with a WriteFile rule, " +
        "e.g. WriteFile(out.txt), and the command without it",
    };
  }
  if (command.name === undefined) return { ok: false, error: "it names no command, only variables" };
  const words = [...command.prefix, command.name, ...command.suffix].filter((node) =>
    node.type === "Word" || node.type === "Assignment"
  );
  const flat: PatternPiece[] = [];
  words.forEach((word, index) => {
    if (index > 0) flat.push(" ");
    flat.push(...patternPieces(word));
  });
  const pieces: string[] = [""];
  for (const piece of flat) {
    if (piece === WILDCARD) pieces.push("");
    else pieces[pieces.length - 1] += piece;
  }
  const last = pieces.length - 1;
  const optionalArguments = last > 0 && pieces[last] === "" && pieces[last - 1]!.endsWith(" ");
  return { ok: true, value: { pieces, optionalArguments } };
}

/** Whether a command (its words joined by single spaces) matches the pattern. */
export function matchesCommand(pattern: CommandPattern, text: string): boolean {
  return matchesPieces(pattern.pieces, text) ||
    (pattern.optionalArguments && matchesPieces(pattern.pieces, `${text} `));
}

/**
 * Whether the pattern matches the command whatever arguments are added to it (for `xargs CMD`): only a
 * final wildcard can take them. U+0001 never occurs in a rule, so only a wildcard can match it.
 */
export function matchesWithAnyArguments(pattern: CommandPattern, text: string): boolean {
  return matchesPieces(pattern.pieces, `${text} \u0001`);
}

/** Whether the pattern matches the command with some arguments added, or none (for deny rules and xargs). */
export function matchesWithSomeArguments(pattern: CommandPattern, text: string): boolean {
  if (matchesCommand(pattern, text)) return true;
  const head = pattern.pieces[0]!;
  const extended = `${text} `;
  return head.startsWith(extended) || (pattern.pieces.length > 1 && extended.startsWith(head));
}

/**
 * Whether the pattern may match a command that begins with `head` (words and a space), whatever follows:
 * for a command whose next argument the shell computes, which may become any words.
 */
export function mayMatchAfter(pattern: CommandPattern, head: string): boolean {
  const first = pattern.pieces[0]!;
  if (first.startsWith(head)) return true;
  return pattern.pieces.length > 1 && head.startsWith(first);
}

// "*"-only matching: the first piece is a prefix, the last a suffix, the ones between are found leftmost
// in order (leftmost is never worse for a later piece).
function matchesPieces(pieces: readonly string[], text: string): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return text === first;
  const last = pieces[pieces.length - 1]!;
  const end = text.length - last.length;
  if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let position = first.length;
  for (let index = 1; index < pieces.length - 1; index++) {
    const piece = pieces[index]!;
    const found = text.indexOf(piece, position);
    if (found === -1 || found + piece.length > end) return false;
    position = found + piece.length;
  }
  return true;
}
