/**
 * The approval question of the interactive session: when the permission gate says "ask", the call is shown
 * (the diff for an edit, the command and why it needs approval for Bash) with three answers —
 *
 *   1. Yes
 *   2. Yes, and don't ask again for `<rule>` in this project   (saved to .mewcode/settings.local.json)
 *   3. Show the whole change                                    (when the question shows only part of it)
 *   4. No, and tell mewcode what to do instead                  (the text reaches the model)
 *
 * chosen with the arrow keys and Enter, or a single key (1–4, y, n); Esc answers No. One question at a
 * time: other calls of the batch wait for the answer. A diff's long lines are wrapped, never cut, and a
 * change longer than the question shows can always be seen whole before it is answered.
 *
 * @module
 */
import { relative } from "node:path";
import { describeError } from "../../common/errors.ts";
import { saveLocalRules } from "../../config/local_settings.ts";
import type { Approval, ApprovalDetails, Approver, PermissionRequest } from "../../permissions/decision.ts";
import { parseRule, type Rule } from "../../permissions/rules.ts";
import { cut, sanitize, sanitizeLines } from "../_terminal_text.ts";
import { decodeFile } from "../../tools/_text.ts";
import { editDiff, previewEdit } from "./diff.ts";
import { readLine } from "./line_editor.ts";
import { isCancelKey, type KeyRouter, type Screen } from "./screen.ts";
import { breakSpans, type Style } from "./style.ts";
import { loadShellParser } from "../../permissions/shell_parser.ts";

/** What the approver needs from the session. */
export interface ApprovalContext {
  screen: Screen;
  router: KeyRouter;
  style: Style;
  /** Real path of the workspace root. */
  root: string;
  /** `$MEWCODE_HOME`. */
  home: string;
  /** Makes saved rules count at once, in this session. */
  addRules(rules: Rule[]): void;
  /** The question showed this call's diff: the line after it ran need not show it again. */
  diffShown(callId: string): void;
}

/** The most of a file read to show an edit's diff. */
const MAX_DIFF_SOURCE_BYTES = 1024 * 1024;

type Choice = { kind: "yes" } | { kind: "always" } | { kind: "show" } | {
  kind: "no";
  feedback: string | null;
};

/** Rows of a diff the question shows before it offers to show the whole change. */
const QUESTION_DIFF_ROWS = 40;

/** Asks the person at the terminal. */
export class TerminalApprover implements Approver {
  #context: ApprovalContext;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(context: ApprovalContext) {
    this.#context = context;
  }

  approve(request: PermissionRequest, reason: string, details?: ApprovalDetails): Promise<Approval> {
    // One question at a time; the next waits for this one's answer.
    const answer = this.#queue.then(() => this.#ask(request, reason, details?.rules ?? []));
    this.#queue = answer.catch(() => {});
    return answer;
  }

  async #ask(request: PermissionRequest, reason: string, offered: readonly string[]): Promise<Approval> {
    const { screen, style } = this.#context;
    const hadStatus = screen.statusShown;
    screen.stopStatus();
    const width = screen.columns;
    const preview = await this.#preview(request, width);
    const lines = [
      "",
      style.bold(style.yellow(`? ${request.tool.name} needs your approval`)),
      ...preview.lines.map((line) => `  ${line}`),
      style.dim(`  ${cut(sanitize(reason), width - 3, "start")}`),
    ];
    screen.print(`${lines.join("\n")}\n`);
    // A rule is made from what the model sent (a command's first words, a path): one that a terminal would
    // not show as written is never offered, since the person could not see what they would allow.
    const rules = offered.some((text) => sanitize(text) !== text) ? [] : offered;
    const rule = rules.length === 0 ? null : rules.join(", ");
    const options: { text: string; choice: Choice["kind"] }[] = [
      { text: "Yes", choice: "yes" },
      ...(rule === null ? [] : [{
        text: `Yes, and don't ask again for ${rule} in this project`,
        choice: "always" as const,
      }]),
      ...(preview.whole === null ? [] : [{ text: "Show the whole change", choice: "show" as const }]),
      { text: "No, and tell mewcode what to do instead", choice: "no" },
    ];
    let choice = await this.#choose(options);
    while (choice.kind === "show") {
      screen.print(
        `${[style.bold("  The whole change:"), ...preview.whole!.map((line) => `  ${line}`)].join("\n")}\n`,
      );
      choice = await this.#choose(options);
    }
    const approval = await this.#answer(choice, rules);
    if (hadStatus) screen.startStatus();
    return approval;
  }

  async #answer(choice: Exclude<Choice, { kind: "show" }>, rules: readonly string[]): Promise<Approval> {
    const { screen, style } = this.#context;
    switch (choice.kind) {
      case "yes":
        screen.print(`${style.green("  ✓ allowed")}\n`);
        return { approved: true };
      case "always": {
        const saved = await this.#save(rules);
        screen.print(`${style.green(`  ✓ allowed; ${sanitize(saved)}`)}\n`);
        return { approved: true };
      }
      case "no":
        screen.print(`${style.red("  ✗ denied")}\n`);
        return choice.feedback === null || choice.feedback.trim() === ""
          ? { approved: false }
          : { approved: false, feedback: choice.feedback.trim() };
    }
  }

  /** Saves the rules to the project's local settings and applies them now; a line for the user. */
  async #save(texts: readonly string[]): Promise<string> {
    const rules: Rule[] = [];
    await loadShellParser();
    for (const text of texts) {
      const parsed = parseRule(text);
      if (parsed.ok) rules.push({ ...parsed.value, action: "allow", source: { layer: "local" } });
    }
    this.#context.addRules(rules);
    try {
      const saved = await saveLocalRules({
        home: this.#context.home,
        root: this.#context.root,
        rules: { allow: texts },
      });
      if (!saved.ok) return `not saved (${saved.error}); it applies for this session`;
      const where = relative(this.#context.root, saved.value.path);
      const later = saved.value.trusted ? "" : " (applies in later sessions once you trust this folder)";
      return `saved ${texts.join(", ")} to ${where}${later}`;
    } catch (error) {
      return `not saved (${describeError(error)}); it applies for this session`;
    }
  }

  /** Lets the person pick an option; the last one asks for what to do instead. */
  async #choose(choices: readonly { text: string; choice: Choice["kind"] }[]): Promise<Choice> {
    const options = choices.map((option) => option.text);
    const { screen, router, style } = this.#context;
    let selected = 0;
    const draw = (first: boolean) => {
      const rows = options.map((option, index) =>
        index === selected
          ? style.cyan(`❯ ${index + 1}. ${sanitize(option)}`)
          : `  ${index + 1}. ${sanitize(option)}`
      ).map((row) => cut(row, screen.columns - 1, "start"));
      // Back to the first option row to draw them again.
      if (!first) screen.terminal.write(`\x1b[${options.length}A\r`);
      screen.print(rows.map((row) => `\x1b[2K${row}`).join("\n") + "\n");
    };
    draw(true);
    const picked = await new Promise<number | "cancel">((resolve) => {
      const remove = router.push((key) => {
        if (isCancelKey(key)) return done("cancel");
        if (key.type === "text") {
          const text = key.text.toLowerCase();
          if (/^[1-9]$/.test(text) && Number(text) <= options.length) return done(Number(text) - 1);
          if (text === "y") return done(0);
          if (text === "n") return done(options.length - 1);
          return true;
        }
        if (key.type !== "key") return true;
        if (key.name === "up" || (key.name === "p" && key.ctrl)) selected = Math.max(0, selected - 1);
        else if (key.name === "down" || (key.name === "n" && key.ctrl)) {
          selected = Math.min(options.length - 1, selected + 1);
        } else if (key.name === "enter") return done(selected);
        else return true;
        draw(false);
        return true;
      }, () => draw(true));
      function done(result: number | "cancel"): boolean {
        remove();
        resolve(result);
        return true;
      }
    });
    if (picked === "cancel") return { kind: "no", feedback: null };
    const kind = choices[picked]!.choice;
    if (kind !== "no") return { kind };
    return { kind: "no", feedback: await this.#feedback() };
  }

  /** Reads what mewcode should do instead (empty: just no). */
  async #feedback(): Promise<string | null> {
    const { router, screen, style } = this.#context;
    await router.suspend();
    try {
      const read = await readLine({
        terminal: screen.terminal,
        prompt: style.bold("  What should mewcode do instead? "),
      });
      return read.kind === "line" ? read.text : null;
    } finally {
      router.resume();
    }
  }

  /**
   * The call as the person should see it: the diff of an edit, the command of Bash, else the input; and,
   * when that is not all of it, the whole change (every row of the diff, or the text the call writes).
   */
  async #preview(
    request: PermissionRequest,
    width: number,
  ): Promise<{ lines: string[]; whole: string[] | null }> {
    const { style, root } = this.#context;
    const input = (request.input ?? {}) as Record<string, unknown>;
    const name = request.tool.name;
    if ((name === "WriteFile" || name === "EditFile") && typeof input.path === "string") {
      const path = input.path;
      const shown = path.startsWith(`${root}/`) ? relative(root, path) : path;
      const before = await readSource(path);
      const written = () => writtenText(input, width - 2, style);
      if (before === "too-large") {
        return {
          lines: [style.bold(sanitize(shown)), style.dim("(too large to show a diff)")],
          whole: written(),
        };
      }
      if (before === "undecodable") {
        return {
          lines: [style.bold(sanitize(shown)), style.dim("(not valid UTF-16 text: no diff to show)")],
          whole: written(),
        };
      }
      let after: string;
      if (name === "WriteFile") {
        after = typeof input.content === "string" ? input.content : "";
      } else {
        const preview = previewEdit(before, {
          old_string: String(input.old_string ?? ""),
          new_string: String(input.new_string ?? ""),
          replace_all: input.replace_all === true,
        });
        if (!preview.ok) {
          // The reason may quote the file's lines: shown, never obeyed by the terminal.
          const reason = sanitizeLines(`(the edit would fail: ${preview.reason})`).split("\n");
          return {
            lines: [style.bold(sanitize(shown)), ...reason.map((line) => style.dim(line))],
            whole: null,
          };
        }
        after = preview.after;
      }
      const diffOf = (maxLines: number) =>
        editDiff({ before, after, width: width - 2, style, maxLines, wrap: true });
      const diff = diffOf(QUESTION_DIFF_ROWS);
      this.#context.diffShown(request.callId);
      const title = style.bold(`${before === null ? "new file " : ""}${sanitize(shown)}`);
      // The diff above ignores line endings and a byte order mark, as a person reads a file; the question
      // must not hide a change of them (a CR that kept a line from running, removed), so it says so.
      const exact = editDiff({
        before,
        after,
        width: width - 2,
        style,
        maxLines: Infinity,
        wrap: true,
        exact: true,
      });
      if (!diff.partial && exact.added + exact.removed !== diff.added + diff.removed) {
        const note = "Line endings or the byte order mark change too (␍ marks a CR): see the whole change";
        return {
          lines: [title, ...diff.lines, style.yellow(note)],
          whole: exact.partial ? written() : exact.lines,
        };
      }
      const whole = !diff.partial
        ? null
        : diff.added + diff.removed === 0
        ? written()
        : diffOf(Infinity).lines;
      return { lines: [title, ...diff.lines], whole };
    }
    if (name === "Bash" && typeof input.command === "string") {
      const rows = commandRows(input.command, width - 3, style);
      const all = commandRows(input.command, width - 3, style, Infinity);
      return { lines: rows, whole: rows.length === all.length ? null : all };
    }
    return { lines: [cut(sanitize(JSON.stringify(request.input) ?? ""), width - 3, "start")], whole: null };
  }
}

/** Rows of a command the approval question shows at most; a longer one shows its start and its end. */
export const MAX_COMMAND_ROWS = 40;

/**
 * A Bash command as the person approving it sees it: every line, each broken into rows of `width` cells
 * (never cut: what a cut hid, `touch` at the end of a long line or a 21st line, ran unseen once "Yes" was
 * answered). One longer than `MAX_COMMAND_ROWS` rows shows its start and its end around a line that says
 * how many rows are not shown, so that no one approves it thinking they saw it all.
 */
export function commandRows(
  command: string,
  width: number,
  style: Style,
  maxRows = MAX_COMMAND_ROWS,
): string[] {
  const rows = command.split("\n").flatMap((line, index) =>
    breakSpans([{ text: `${index === 0 ? "$ " : "  "}${sanitize(line)}`, styles: [] }], Math.max(width, 8))
      .map((spans) => spans.map((span) => span.text).join(""))
  );
  if (rows.length <= maxRows) return rows;
  const head = rows.slice(0, MAX_COMMAND_ROWS - 11);
  const tail = rows.slice(-10);
  const hidden = rows.length - head.length - tail.length;
  return [
    ...head,
    style.bold(`  … ${hidden} more rows not shown (${rows.length} in all) …`),
    ...tail,
  ];
}

/**
 * What a WriteFile or EditFile call writes, in full, when no diff shows it all (a file too large to diff, or
 * a change too large): WriteFile's content, or EditFile's old and new text; every line, wrapped.
 */
function writtenText(input: Record<string, unknown>, width: number, style: Style): string[] {
  const rows = (label: string, text: unknown) => [
    style.bold(label),
    ...String(text ?? "").split("\n").flatMap((line) =>
      breakSpans([{ text: `  ${sanitize(line)}`, styles: [] }], Math.max(width, 8))
        .map((spans) => spans.map((span) => span.text).join(""))
    ),
  ];
  if (typeof input.content === "string") return rows("content:", input.content);
  return [
    ...rows(input.replace_all === true ? "every occurrence of:" : "replaces:", input.old_string),
    ...rows("with:", input.new_string),
  ];
}

/**
 * A file's text for a diff, decoded as EditFile decodes it (UTF-8, UTF-16 with a byte order mark, or
 * Windows-1252 for bytes that are not UTF-8), so the question shows the edit the tool will make: null when it
 * does not exist, "too-large" above the limit, "undecodable" for UTF-16 that is not.
 */
async function readSource(path: string): Promise<string | null | "too-large" | "undecodable"> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return null;
    if (info.size > MAX_DIFF_SOURCE_BYTES) return "too-large";
    const decoded = decodeFile(await Deno.readFile(path));
    return decoded.ok ? decoded.text : "undecodable";
  } catch {
    return null;
  }
}
