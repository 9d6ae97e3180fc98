/**
 * Shell words as rules see them: the text a program receives after quote removal, and whether the shell
 * computes part of it when it runs (an expansion, a substitution, a glob), which no rule can predict.
 *
 * @module
 */
import type { Assignment, DoubleQuotedChild, Word, WordPart } from "unbash";
import { assertNever } from "../common/errors.ts";

/** A word's text after quote removal; `dynamic` when the shell computes part of it (then `text` is source). */
export interface RenderedWord {
  text: string;
  dynamic: boolean;
  /** The word starts with an unquoted "~", which the shell expands to a home folder. */
  tilde: boolean;
}

/** "*" of a Bash rule: any characters. */
export const WILDCARD: unique symbol = Symbol("wildcard");
/** A piece of a Bash rule: literal text or a wildcard. */
export type PatternPiece = string | typeof WILDCARD;

/** Renders a command's word; expansions and globs stay as written and make the word dynamic. */
export function renderWord(word: Word): RenderedWord {
  const tilde = word.text.startsWith("~");
  if (word.parts === undefined) return { text: word.value, dynamic: false, tilde };
  let text = "";
  let dynamic = false;
  for (const part of word.parts) {
    const rendered = renderPart(part);
    text += rendered.text;
    dynamic ||= rendered.dynamic;
  }
  return { text, dynamic, tilde };
}

/** Renders an assignment ("NAME=value"); an array or indexed assignment is dynamic. */
export function renderAssignment(assignment: Assignment): RenderedWord & { name: string } {
  const { name } = assignment;
  if (assignment.value.type !== "Word" || assignment.index !== undefined) {
    return { name, text: assignment.text, dynamic: true, tilde: false };
  }
  const value = renderWord(assignment.value);
  const operator = assignment.append === true ? "+=" : "=";
  return { name, text: `${name}${operator}${value.text}`, dynamic: value.dynamic, tilde: false };
}

/** The pieces of a Bash rule's word: an unquoted "*" is a wildcard, everything else literal text. */
export function patternPieces(word: Word | Assignment): PatternPiece[] {
  if (word.type === "Assignment") return [renderAssignment(word).text];
  if (word.parts === undefined) return [word.value];
  return word.parts.map((part) =>
    part.type === "Glob" && part.kind === "star" ? WILDCARD : renderPart(part).text
  );
}

function renderPart(part: WordPart): { text: string; dynamic: boolean } {
  switch (part.type) {
    case "Literal":
    case "SingleQuoted":
    case "AnsiCQuoted":
      return { text: part.value, dynamic: false };
    case "DoubleQuoted":
    case "LocaleString":
      return renderQuoted(part.parts);
    case "Glob":
    case "SimpleExpansion":
    case "ParameterExpansion":
    case "CommandExpansion":
    case "ArithmeticExpansion":
    case "ProcessSubstitution":
    case "ExtendedGlob":
    case "BraceExpansion":
      return { text: part.text, dynamic: true };
    default:
      return assertNever(part);
  }
}

function renderQuoted(children: readonly DoubleQuotedChild[]): { text: string; dynamic: boolean } {
  let text = "";
  let dynamic = false;
  for (const child of children) {
    if (child.type === "Literal") {
      text += child.value;
      continue;
    }
    text += child.text;
    dynamic = true;
  }
  return { text, dynamic };
}
