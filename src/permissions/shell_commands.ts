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
import {
  innerScript,
  isRiskyAssignment,
  isRiskyVariable,
  programName,
  unwrap,
  withoutGitOptions,
} from "./_wrappers.ts";
import { builtinRisk } from "./_builtin_risks.ts";

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
  /**
   * The index of the first argument the shell computes (`git $(echo push)`, `rm -rf "$dir"`), whose words
   * are known only when it runs; absent when none is.
   */
  computedFrom?: number;
}

/** A simple command: its forms, the full one first, then one per wrapper looked through. */
export interface SimpleCommand {
  text: string;
  forms: readonly CommandForm[];
  /**
   * Why no allow rule may allow it, when none may (then every form is not allowable): bash evaluates part of
   * it as code (`${x@P}`, `$((x))`, `printf -v 'a[$(id)]'`), or it sets a variable that changes what later
   * commands run (`PATH=.:$PATH;`). Such a part of a line is a command of its own, named by its text.
   */
  unallowable?: string;
  /**
   * Why the program it runs is known only when it runs (`$x -f y`, `{rm,-f,x}`, `eval "$cmd"`, an awk
   * program calling system()): deny and ask rules cannot be checked against it.
   */
  computed?: string;
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
    } else if (node.type === "For" || node.type === "Select") {
      if (isRiskyVariable(node.name.value)) {
        this.#refuse(
          `for ${node.name.value}`,
          `the loop sets ${node.name.value}, which changes what later commands run`,
        );
      }
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
    const risk = evaluationRisk(node);
    if (risk !== null) this.#refuse(risk.text, risk.reason);
    shellParser().forEachChild(node, this.#visit);
  };

  #command(
    prefix: readonly SyntaxNode[],
    name: Word | undefined,
    suffix: readonly SyntaxNode[],
  ): void {
    const assignmentNodes = prefix.flatMap((node) => node.type === "Assignment" ? [node] : []);
    if (name === undefined) {
      // An assignment statement sets the variable for every later command of the line.
      for (const node of assignmentNodes) {
        if (isRiskyVariable(node.name)) {
          this.#refuse(node.text, `it sets ${node.name}, which changes what later commands run`);
        }
      }
      return;
    }
    const assignments = assignmentNodes.map(renderAssignment);
    const words = [renderWord(name)];
    for (const node of suffix) {
      if (node.type === "Word") words.push(renderWord(node));
      else if (node.type === "Assignment") words.push(renderAssignment(node));
    }
    this.#simple(assignments, words);
  }

  // One simple command, from its words (the line's, or a `find -exec` command's).
  #simple(assignments: readonly RenderedWord[], words: readonly RenderedWord[]): void {
    const forms: CommandForm[] = [];
    let allowable = !words[0]!.dynamic;
    forms.push(form([...assignments, ...words], allowable, false));
    if (assignments.length > 0) {
      allowable &&= assignments.every((assignment) =>
        !assignment.dynamic && !isRiskyAssignment(assignment.text)
      );
      forms.push(form(words, allowable, false));
    }
    const wordLists: (readonly RenderedWord[])[] = [words];
    const appendsAt = [false];
    const allowableAt = [allowable];
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
        unwrapped.assignments.every((word) => !word.dynamic && !isRiskyAssignment(word.text));
      forms.push(form(current, allowable, appendsArguments));
      wordLists.push(current);
      appendsAt.push(appendsArguments);
      allowableAt.push(allowable);
    }
    // "git -C sub --no-pager push" is "git push" to every rule (to allow rules only without -c and the like).
    wordLists.forEach((list, index) => {
      const git = withoutGitOptions(list);
      if (git === null) return;
      const bare = !list[0]!.text.includes("/");
      forms.push(form(git.words, allowableAt[index]! && git.allowsThrough && bare, appendsAt[index]!));
      if (!bare) {
        forms.push(
          form([{ ...git.words[0]!, text: "git" }, ...git.words.slice(1)], false, appendsAt[index]!),
        );
      }
    });
    // "/bin/rm -rf /" is "rm -rf /" to deny and ask rules; an allow rule for "rm" does not allow "./rm".
    wordLists.forEach((list, index) => {
      const program = list[0]!;
      if (program.dynamic || !program.text.includes("/") || programName(program.text) === "") return;
      const renamed = [{ ...program, text: programName(program.text) }, ...list.slice(1)];
      forms.push(form(renamed, false, appendsAt[index]!));
    });
    const simple: SimpleCommand = { text: forms[0]!.text, forms };
    this.commands.push(simple);
    const last = wordLists[wordLists.length - 1]!;
    if (last[0]!.dynamic) simple.computed = `its command name "${last[0]!.text}" is known only when it runs`;
    for (const list of wordLists) {
      const risk = builtinRisk(list);
      if (risk !== null && simple.unallowable === undefined) {
        simple.unallowable = risk;
        simple.forms = forms.map((each) => ({ ...each, allowable: false }));
      }
    }
    for (const list of wordLists) {
      const computed = this.#inspect(list);
      if (computed !== null) simple.computed ??= computed;
      if (this.error !== null) return;
    }
  }

  // A part of the line no allow rule may allow, as a command of its own.
  #refuse(text: string, reason: string): void {
    const refused = { text, words: [text], allowable: false, appendsArguments: false };
    this.commands.push({ text, forms: [refused], unallowable: reason });
  }

  // Notes a change of directory, and follows a script run from a string and the commands `find -exec` runs;
  // returns why the command it runs is known only when it runs.
  #inspect(words: readonly RenderedWord[]): string | null {
    const first = words[0];
    if (first !== undefined && !first.dynamic && DIRECTORY_CHANGERS.has(programName(first.text))) {
      this.changesDirectory = true;
    }
    if (first !== undefined && !first.dynamic && programName(first.text) === "find") {
      for (const executed of findExecs(words)) this.#simple([], executed);
    }
    const script = innerScript(words);
    if (script === null) return null;
    if (script.kind === "computed") return script.reason;
    if (this.#nesting >= MAX_NESTED_SCRIPTS) {
      this.error =
        `scripts nested in "bash -c" or "eval" more than ${MAX_NESTED_SCRIPTS} deep cannot be checked`;
      return null;
    }
    this.analyze(script.text, this.#nesting + 1);
    return null;
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
  const computedFrom = words.findIndex((word, index) => index > 0 && word.dynamic);
  return {
    text: texts.join(" "),
    words: texts,
    allowable,
    appendsArguments,
    ...(computedFrom === -1 ? {} : { computedFrom }),
  };
}

function hasSubstitution(text: string): boolean {
  return text.includes("$") || text.includes("`");
}

function isDigits(text: string): boolean {
  if (text === "") return false;
  for (const char of text) if (char < "0" || char > "9") return false;
  return true;
}

const FIND_ACTIONS: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

// The commands `find … -exec CMD {} ;` runs (also -execdir, -ok, -okdir; ended by ";" or "+").
function findExecs(words: readonly RenderedWord[]): RenderedWord[][] {
  const commands: RenderedWord[][] = [];
  for (let index = 1; index < words.length; index++) {
    if (!FIND_ACTIONS.has(words[index]!.text)) continue;
    const start = index + 1;
    let end = start;
    while (end < words.length && words[end]!.text !== ";" && words[end]!.text !== "+") end++;
    if (end > start) commands.push(words.slice(start, end));
    index = end;
  }
  return commands;
}

const NUMBER = /^(?:[0-9]+|0[xX][0-9a-fA-F]+)$/;

/**
 * Why bash evaluates part of a word as code, when it does: arithmetic on a variable (`$((x))`, `((x++))`,
 * `a[x]`, `${s:x}`, `[[ x -eq 1 ]]`) evaluates the variable's value as an expression, whose subscripts run
 * command substitutions; `${x@P}` and the other transformations, and `${!x}`, read a value as a prompt,
 * code, or a variable name. Plain `$x` and `${x}` are not re-evaluated.
 */
function evaluationRisk(node: SyntaxNode): { text: string; reason: string } | null {
  switch (node.type) {
    case "ArithmeticWord":
      return NUMBER.test(node.value) ? null : {
        text: node.value,
        reason: "bash evaluates the variable's value as an arithmetic expression, which can run commands",
      };
    case "ArithmeticExpansion":
    case "ArithmeticCommand": {
      if (node.expression !== undefined) return null;
      const body = node.type === "ArithmeticCommand" ? node.body : node.text;
      return /[A-Za-z_$`[]/.test(body.replace(/^\$\(\(|\)\)$/g, "").replace(/0[xX][0-9a-fA-F]+/g, ""))
        ? {
          text: node.type === "ArithmeticCommand" ? `((${body}))` : node.text,
          reason: "arithmetic on variables can run commands",
        }
        : null;
    }
    case "ParameterExpansion":
      return parameterRisk(node);
    case "Assignment":
      return node.index === undefined || NUMBER.test(node.index.text) ? null : {
        text: node.text,
        reason: `the subscript "${node.index.text}" is evaluated as arithmetic, which can run commands`,
      };
    case "TestUnary":
      return (node.operator === "-v" || node.operator === "-R") &&
          (node.operand.text.includes("[") || node.operand.text.includes("$"))
        ? {
          text: `[[ ${node.operator} ${node.operand.text} ]]`,
          reason: "the variable name's subscript is evaluated as arithmetic, which can run commands",
        }
        : null;
    case "TestBinary":
      if (!ARITHMETIC_TESTS.has(node.operator)) return null;
      for (const operand of [node.left, node.right]) {
        if (!NUMBER.test(operand.text.replace(/^[-+]/, ""))) {
          return {
            text: `[[ ${node.left.text} ${node.operator} ${node.right.text} ]]`,
            reason:
              `"[[ … ${node.operator} … ]]" evaluates "${operand.text}" as arithmetic, which can run commands`,
          };
        }
      }
      return null;
    default:
      return null;
  }
}

const ARITHMETIC_TESTS: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

function parameterRisk(
  node: Extract<SyntaxNode, { type: "ParameterExpansion" }>,
): { text: string; reason: string } | null {
  const { text, operation, index } = node;
  const listing = operation?.type === "Names" || index?.text === "@" || index?.text === "*";
  if (node.prefix === "!" && !listing) {
    return {
      text,
      reason: "it reads the variable the value names, whose subscript bash evaluates as arithmetic",
    };
  }
  if (index !== undefined && index.text !== "@" && index.text !== "*" && !NUMBER.test(index.text)) {
    return {
      text,
      reason: `the subscript "${index.text}" is evaluated as arithmetic, which can run commands`,
    };
  }
  if (operation?.type === "Transform") {
    return {
      text,
      reason: "it transforms the value (@P expands it as a prompt), which can run commands",
    };
  }
  if (operation?.type === "Slice") {
    for (const word of [operation.offset, operation.length]) {
      if (word !== undefined && !NUMBER.test(word.text.trim().replace(/^-\s*/, ""))) {
        return {
          text,
          reason: `the offset "${word.text}" is evaluated as arithmetic, which can run commands`,
        };
      }
    }
  }
  return null;
}
