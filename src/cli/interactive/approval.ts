/**
 * The approval question of the interactive session: when the permission gate says "ask", the call is shown
 * (the diff for an edit, the command and why it needs approval for Bash) with three answers —
 *
 *   1. Yes
 *   2. Yes, and don't ask again for `<rule>` in this project   (saved to .mewcode/settings.local.json)
 *   3. No, and tell mewcode what to do instead                  (the text reaches the model)
 *
 * chosen with the arrow keys and Enter, or a single key (1/2/3, y, n); Esc answers No. One question at a
 * time: other calls of the batch wait for the answer.
 *
 * @module
 */
import { relative } from "node:path";
import { describeError } from "../../common/errors.ts";
import { saveLocalRules } from "../../config/local_settings.ts";
import type { Approval, ApprovalDetails, Approver, PermissionRequest } from "../../permissions/decision.ts";
import { parseRule, type Rule } from "../../permissions/rules.ts";
import { cut, sanitize } from "../_terminal_text.ts";
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

type Choice = { kind: "yes" } | { kind: "always" } | { kind: "no"; feedback: string | null };

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

  async #ask(request: PermissionRequest, reason: string, rules: readonly string[]): Promise<Approval> {
    const { screen, style } = this.#context;
    const hadStatus = screen.statusShown;
    screen.stopStatus();
    const width = screen.columns;
    const lines = [
      "",
      style.bold(style.yellow(`? ${request.tool.name} needs your approval`)),
      ...(await this.#preview(request, width)).map((line) => `  ${line}`),
      style.dim(`  ${cut(sanitize(reason), width - 3, "start")}`),
    ];
    screen.print(`${lines.join("\n")}\n`);
    const rule = rules.length === 0 ? null : rules.join(", ");
    const options = [
      "Yes",
      ...(rule === null ? [] : [`Yes, and don't ask again for ${rule} in this project`]),
      "No, and tell mewcode what to do instead",
    ];
    const choice = await this.#choose(options, rule !== null);
    const approval = await this.#answer(choice, rules);
    if (hadStatus) screen.startStatus();
    return approval;
  }

  async #answer(choice: Choice, rules: readonly string[]): Promise<Approval> {
    const { screen, style } = this.#context;
    switch (choice.kind) {
      case "yes":
        screen.print(`${style.green("  ✓ allowed")}\n`);
        return { approved: true };
      case "always": {
        const saved = await this.#save(rules);
        screen.print(`${style.green(`  ✓ allowed; ${saved}`)}\n`);
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
  async #choose(options: readonly string[], hasAlways: boolean): Promise<Choice> {
    const { screen, router, style } = this.#context;
    let selected = 0;
    const draw = (first: boolean) => {
      const rows = options.map((option, index) =>
        index === selected ? style.cyan(`❯ ${index + 1}. ${option}`) : `  ${index + 1}. ${option}`
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
    if (picked === 0) return { kind: "yes" };
    if (hasAlways && picked === 1) return { kind: "always" };
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

  /** The call as the person should see it: the diff of an edit, the command of Bash, else the input. */
  async #preview(request: PermissionRequest, width: number): Promise<string[]> {
    const { style, root } = this.#context;
    const input = (request.input ?? {}) as Record<string, unknown>;
    const name = request.tool.name;
    if ((name === "WriteFile" || name === "EditFile") && typeof input.path === "string") {
      const path = input.path;
      const shown = path.startsWith(`${root}/`) ? relative(root, path) : path;
      const before = await readSource(path);
      if (before === "too-large") {
        return [style.bold(sanitize(shown)), style.dim("(too large to show a diff)")];
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
          return [style.bold(sanitize(shown)), style.dim(`(the edit would fail: ${preview.reason})`)];
        }
        after = preview.after;
      }
      const diff = editDiff({ before, after, width: width - 2, style, maxLines: 30 });
      this.#context.diffShown(request.callId);
      return [style.bold(`${before === null ? "new file " : ""}${sanitize(shown)}`), ...diff.lines];
    }
    if (name === "Bash" && typeof input.command === "string") {
      return commandRows(input.command, width - 3, style);
    }
    return [cut(sanitize(JSON.stringify(request.input) ?? ""), width - 3, "start")];
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
export function commandRows(command: string, width: number, style: Style): string[] {
  const rows = command.split("\n").flatMap((line, index) =>
    breakSpans([{ text: `${index === 0 ? "$ " : "  "}${sanitize(line)}`, styles: [] }], Math.max(width, 8))
      .map((spans) => spans.map((span) => span.text).join(""))
  );
  if (rows.length <= MAX_COMMAND_ROWS) return rows;
  const head = rows.slice(0, MAX_COMMAND_ROWS - 11);
  const tail = rows.slice(-10);
  const hidden = rows.length - head.length - tail.length;
  return [
    ...head,
    style.bold(`  … ${hidden} more rows not shown (${rows.length} in all) …`),
    ...tail,
  ];
}

/** A file's text for a diff: null when it does not exist, "too-large" above the limit. */
async function readSource(path: string): Promise<string | null | "too-large"> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return null;
    if (info.size > MAX_DIFF_SOURCE_BYTES) return "too-large";
    return new TextDecoder().decode(await Deno.readFile(path));
  } catch {
    return null;
  }
}
