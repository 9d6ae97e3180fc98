/**
 * What a Bash command line does, as rules need it: every simple command it may run (in pipelines, lists,
 * subshells, groups, functions, `$(…)`, backticks, process substitutions, `bash -c` and `eval` strings),
 * each in the forms rules match (with and without its wrappers), and every file its redirections write.
 *
 * Parsed with unbash (a typed Bash parser): quoting cannot hide a command, since `npm test "; rm -rf /"`
 * is one command with the argument "; rm -rf /", and `npm test; rm -rf /` is two.
 *
 * @module
 */
import type { Redirect, SyntaxNode, Word } from "unbash";
import { shellParser } from "./shell_parser.ts";
import { assertNever } from "../common/errors.ts";
import { renderAssignment, type RenderedWord, renderWord } from "./_shell_words.ts";
import { innerScript, isRiskyVariable, programName, unwrap } from "./_wrappers.ts";

/** One way of reading a simple command that rules are matched against. */
export interface CommandForm {
  /** The words after quote removal, joined by single spaces ("git commit -m fix it"). */
  text: string;
  words: readonly string[];
  /**
   * Whether an allow rule matching this form allows the command: false when the command's name is computed
   * at run time, when a variable that loads code is set for it, or when a wrapper changes the user (sudo).
   */
  allowable: boolean;
  /** The command gets more arguments than shown (through xargs). */
  appendsArguments: boolean;
}

/** A simple command: its forms, the full one first, then one per wrapper looked through. */
export interface SimpleCommand {
  text: string;
  forms: readonly CommandForm[];
}

/** A redirection that writes a file. */
export interface RedirectWrite {
  /** As written ("> out.txt"). */
  text: string;
  /** The file, when known before the command runs; null when the shell computes it. */
  target: { path: string; fromHome: boolean } | null;
}

/** What a command line does, or why it cannot be told. */
export type CommandAnalysis =
  | {
    ok: true;
    commands: SimpleCommand[];
    writes: RedirectWrite[];
    /** It changes directory (cd, pushd, popd), so relative redirections may land anywhere. */
    changesDirectory: boolean;
  }
  | { ok: false; error: string };

/** How deep `bash -c '… bash -c …'` strings are followed. */
const MAX_NESTED_SCRIPTS = 4;
/** How many wrappers in a row are looked through (`sudo env timeout 5 nice …`). */
const MAX_WRAPPERS = 8;

const DIRECTORY_CHANGERS: ReadonlySet<string> = new Set(["cd", "pushd", "popd"]);
const HARMLESS_TARGETS: ReadonlySet<string> = new Set([
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
]);

/** Analyzes a command line; never throws for bad input. The shell parser must be loaded (`loadShellParser`). */
export function analyzeCommand(command: string): CommandAnalysis {
  const analyzer = new CommandAnalyzer();
  analyzer.analyze(command, 0);
  if (analyzer.error !== null) return { ok: false, error: analyzer.error };
  return {
    ok: true,
    commands: analyzer.commands,
    writes: analyzer.writes,
    changesDirectory: analyzer.changesDirectory,
  };
}

class CommandAnalyzer {
  readonly commands: SimpleCommand[] = [];
  readonly writes: RedirectWrite[] = [];
  changesDirectory = false;
  error: string | null = null;
  #nesting = 0;

  analyze(source: string, nesting: number): void {
    const outer = this.#nesting;
    this.#nesting = nesting;
    this.#visit(shellParser().parse(source));
    this.#nesting = outer;
  }

  #visit = (node: SyntaxNode): void => {
    if (this.error !== null) return;
    if (node.type === "Script") {
      const problem = node.errors?.[0];
      if (problem !== undefined) {
        this.error = `${problem.message} (at character ${problem.pos + 1})`;
        return;
      }
    } else if (node.type === "Command") {
      this.#command(node.prefix, node.name, node.suffix);
    } else if (node.type === "Redirect") {
      this.#redirect(node);
    } else if (
      (node.type === "CommandExpansion" || node.type === "ProcessSubstitution" ||
        node.type === "ArithmeticCommandExpansion") && node.script === undefined
    ) {
      this.error = `the substitution "${node.text}" cannot be parsed`;
      return;
    } else if (
      (node.type === "ArithmeticExpansion" || node.type === "ArithmeticCommand") &&
      node.expression === undefined &&
      hasSubstitution(node.type === "ArithmeticCommand" ? node.body : node.text)
    ) {
      this.error = "an arithmetic expression with a substitution cannot be parsed";
      return;
    }
    shellParser().forEachChild(node, this.#visit);
  };

  #command(
    prefix: readonly SyntaxNode[],
    name: Word | undefined,
    suffix: readonly SyntaxNode[],
  ): void {
    if (name === undefined) return;
    const assignments = prefix.flatMap((node) => node.type === "Assignment" ? [renderAssignment(node)] : []);
    const words = [renderWord(name)];
    for (const node of suffix) {
      if (node.type === "Word") words.push(renderWord(node));
      else if (node.type === "Assignment") words.push(renderAssignment(node));
    }
    const forms: CommandForm[] = [];
    let allowable = !words[0]!.dynamic;
    forms.push(form([...assignments, ...words], allowable, false));
    if (assignments.length > 0) {
      allowable &&= assignments.every((assignment) =>
        !assignment.dynamic && !isRiskyVariable(assignment.name)
      );
      forms.push(form(words, allowable, false));
    }
    const wordLists: (readonly RenderedWord[])[] = [words];
    const appendsAt = [false];
    let appendsArguments = false;
    for (let depth = 0; depth < MAX_WRAPPERS; depth++) {
      const unwrapped = unwrap(wordLists[wordLists.length - 1]!);
      if (unwrapped === null) break;
      if (unwrapped.kind === "opaque") {
        this.error = unwrapped.reason;
        return;
      }
      if (unwrapped.words.length === 0) break;
      const current = unwrapped.words;
      appendsArguments ||= unwrapped.appendsArguments;
      allowable &&= unwrapped.allowsThrough && !current[0]!.dynamic &&
        unwrapped.assignments.every((word) => !word.dynamic && !isRiskyVariable(word.text.split("=")[0]!));
      forms.push(form(current, allowable, appendsArguments));
      wordLists.push(current);
      appendsAt.push(appendsArguments);
    }
    // "/bin/rm -rf /" is "rm -rf /" to deny and ask rules; an allow rule for "rm" does not allow "./rm".
    wordLists.forEach((list, index) => {
      const program = list[0]!;
      if (program.dynamic || !program.text.includes("/") || programName(program.text) === "") return;
      const renamed = [{ ...program, text: programName(program.text) }, ...list.slice(1)];
      forms.push(form(renamed, false, appendsAt[index]!));
    });
    this.commands.push({ text: forms[0]!.text, forms });
    for (const list of wordLists) this.#inspect(list);
  }

  // Notes a change of directory, and follows a script run from a string.
  #inspect(words: readonly RenderedWord[]): void {
    const first = words[0];
    if (first !== undefined && !first.dynamic && DIRECTORY_CHANGERS.has(programName(first.text))) {
      this.changesDirectory = true;
    }
    const script = innerScript(words);
    if (script === null) return;
    if (this.#nesting >= MAX_NESTED_SCRIPTS) {
      this.error =
        `scripts nested in "bash -c" or "eval" more than ${MAX_NESTED_SCRIPTS} deep cannot be checked`;
      return;
    }
    this.analyze(script, this.#nesting + 1);
  }

  #redirect(node: Redirect): void {
    if (!writesFile(node) || node.target === undefined) return;
    const target = renderWord(node.target);
    const text = `${node.operator}${node.target.text}`;
    if (target.dynamic) {
      this.writes.push({ text, target: null });
      return;
    }
    const path = target.text;
    if (HARMLESS_TARGETS.has(path) || path.startsWith("/dev/fd/")) return;
    if (node.operator === ">&" && (path === "-" || isDigits(path))) return;
    if (!target.tilde) {
      this.writes.push({ text, target: { path, fromHome: false } });
      return;
    }
    const fromHome = path === "~" || path.startsWith("~/");
    this.writes.push({ text, target: fromHome ? { path: path.slice(2), fromHome } : null });
  }
}

function writesFile(node: Redirect): boolean {
  switch (node.operator) {
    case ">":
    case ">>":
    case ">|":
    case "&>":
    case "&>>":
    case "<>":
    case ">&":
      return true;
    case "<":
    case "<&":
      return false;
    default:
      return assertNever(node.operator);
  }
}

function form(words: readonly RenderedWord[], allowable: boolean, appendsArguments: boolean): CommandForm {
  const texts = words.map((word) => word.text);
  return { text: texts.join(" "), words: texts, allowable, appendsArguments };
}

function hasSubstitution(text: string): boolean {
  return text.includes("$") || text.includes("`");
}

function isDigits(text: string): boolean {
  if (text === "") return false;
  for (const char of text) if (char < "0" || char > "9") return false;
  return true;
}
