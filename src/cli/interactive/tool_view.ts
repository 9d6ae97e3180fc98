/**
 * How tool calls look in the interactive session: one live line while a call runs (`⠋ Bash npm test 2.1 s`)
 * and, when it ends, a line with its outcome (`✓ ReadFile src/a.ts · 120 lines (12 ms)`, `✗ Bash npm test —
 * exit code 1 (2.3 s)`, `⊘ … — denied`) followed by what people need to see of it: the diff of a file
 * change, the end of a command's output, the first lines of an error, the reason for a denial.
 *
 * Every glyph comes with words or a shape of its own, so nothing relies on colour alone; all text from the
 * model or a tool is made safe for the terminal and every line is cut to the width.
 *
 * @module
 */
import type { AgentEvent, CallStatus } from "../../agent/events.ts";
import { assertNever } from "../../common/errors.ts";
import { cut, sanitize } from "../_terminal_text.ts";
import { callArgument } from "../call_label.ts";
import { editDiff } from "./diff.ts";
import {
  cutSpans,
  expandTabs,
  renderSpans,
  type Span,
  span,
  spansWidth,
  type Style,
  type StyleName,
  wrapSpans,
} from "./style.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
const SPINNER_FRAME_MS = 80;
/** The fewest cells a call's argument keeps before the rest of the line is cut instead. */
const MIN_ARGUMENT_WIDTH = 12;
const INDENT = "  ";

/** Where tool lines go: the terminal's width, the style, and the workspace root paths are shown against. */
export interface ToolViewOptions {
  style: Style;
  /** Terminal columns; every line is cut to it. */
  width: number;
  /** Real path of the workspace root; paths inside it are shown relative to it. */
  root: string;
}

/** A call that is running. */
export interface RunningCall {
  name: string;
  input: unknown;
  /** When it started, in ms since the epoch. */
  startedAt: number;
}

/** The line of a running call: spinner, tool, key argument and elapsed time at `now` (ms since the epoch). */
export function runningToolLine(call: RunningCall, now: number, options: ToolViewOptions): string {
  const elapsed = Math.max(0, now - call.startedAt);
  const frame = SPINNER[Math.floor(elapsed / SPINNER_FRAME_MS) % SPINNER.length]!;
  return header([span(frame, "cyan")], call, [], ` ${formatSeconds(elapsed)}`, options);
}

/** A call that ended: the fields of a `tool-call-end` event that its lines show. */
export type FinishedCall = Pick<
  Extract<AgentEvent, { type: "tool-call-end" }>,
  "name" | "input" | "result" | "outcome" | "durationMs"
>;

/** What to show below a finished call's line. */
export interface FinishedViewOptions extends ToolViewOptions {
  /** The file's text before and after a WriteFile or EditFile call (before: null for a new file). */
  diff?: { before: string | null; after: string };
  /** Lines of a diff shown at most; default 20. */
  diffLines?: number;
  /** Last lines of a command's output shown; default 5. */
  outputLines?: number;
  /** First lines of an error message shown; default 3. */
  errorLines?: number;
}

/** The lines of a finished call: its outcome line, then its diff, output, error or denial. */
export function finishedToolLines(call: FinishedCall, options: FinishedViewOptions): string[] {
  const { style } = options;
  const { status } = call.outcome;
  const exitCode = bashExitCode(call);
  const commandFailed = status === "completed" && exitCode !== null && exitCode !== 0;
  const [glyph, color] = commandFailed ? ["✗", "red"] as const : GLYPHS[status];
  const diff = status === "completed" && options.diff !== undefined && isFileWrite(call.name)
    ? editDiff({
      before: options.diff.before,
      after: options.diff.after,
      width: options.width - INDENT.length,
      style,
      maxLines: options.diffLines ?? 20,
    })
    : null;
  const summary = commandFailed ? [] : summaryOf(call, diff, options.diff?.before === null);
  const suffix = commandFailed ? ` — exit code ${exitCode}` : statusWords(status);
  const duration = call.outcome.gate === "execute" ? ` (${formatDuration(call.durationMs)})` : "";
  const lines = [header([span(glyph, color)], call, [...summary, span(suffix, color)], duration, options)];
  const indent = (line: string): string => `${INDENT}${line}`;
  if (diff !== null) lines.push(...diff.lines.map(indent));
  if (status === "denied" && call.outcome.denial !== undefined) {
    const { reason, hint } = call.outcome.denial;
    lines.push(...wrapped(reason, [], options, 3));
    if (hint !== null) {
      lines.push(...wrapped(hint.startsWith("--") ? `run with ${hint}` : hint, ["dim"], options, 2));
    }
  }
  const output = call.name === "Bash" ? bashOutput(call.result.content) : null;
  if (output !== null) lines.push(...outputTail(output, options.outputLines ?? 5, options));
  else if (call.result.isError && (status === "failed" || status === "invalid" || status === "timed-out")) {
    lines.push(...errorHead(call.result.content, options.errorLines ?? 3, options));
  }
  return lines;
}

const GLYPHS: Readonly<Record<CallStatus, readonly [string, StyleName]>> = {
  completed: ["✓", "green"],
  failed: ["✗", "red"],
  invalid: ["✗", "red"],
  "timed-out": ["✗", "red"],
  denied: ["⊘", "yellow"],
  cancelled: ["○", "gray"],
  aborted: ["■", "yellow"],
};

function statusWords(status: CallStatus): string {
  switch (status) {
    case "completed":
    case "failed":
      return "";
    case "invalid":
      return " — invalid input";
    case "timed-out":
      return " — timed out";
    case "denied":
      return " — denied";
    case "cancelled":
      return " — cancelled";
    case "aborted":
      return " — interrupted";
    default:
      return assertNever(status);
  }
}

/** glyph, tool, key argument (cut first when the line is too long), details, and a dim tail. */
function header(
  lead: Span[],
  call: RunningCall | FinishedCall,
  after: Span[],
  tail: string,
  options: ToolViewOptions,
): string {
  const argument = callArgument(call.name, call.input);
  const name = sanitize(call.name);
  const fixed = [...lead, span(` ${name}`, "bold"), ...after, span(tail, "dim")];
  if (argument === null) return renderSpans(cutSpans(fixed, options.width), options.style);
  const text = isFilePath(call.name) ? shownPath(argument.text, options.root) : argument.text;
  const room = Math.max(MIN_ARGUMENT_WIDTH, options.width - spansWidth(fixed) - 1);
  const line = [
    ...lead,
    span(` ${name}`, "bold"),
    span(` ${cut(sanitize(text), room, argument.keep)}`),
    ...after,
  ];
  return renderSpans(cutSpans([...line, span(tail, "dim")], options.width), options.style);
}

function isFilePath(name: string): boolean {
  return name === "ReadFile" || isFileWrite(name);
}

function isFileWrite(name: string): boolean {
  return name === "WriteFile" || name === "EditFile";
}

/** A path relative to the workspace root when it lies inside it. */
function shownPath(path: string, root: string): string {
  const base = root.replace(/[\\/]+$/, "");
  if (base === "") return path;
  if (path === base) return ".";
  if (path.startsWith(`${base}/`) || path.startsWith(`${base}\\`)) return path.slice(base.length + 1);
  return path;
}

/** What a completed call found or changed, from its result's metadata. */
function summaryOf(
  call: FinishedCall,
  diff: { added: number; removed: number } | null,
  created: boolean,
): Span[] {
  if (call.outcome.status !== "completed" || call.result.isError) return [];
  const metadata = call.result.metadata;
  const dot = (text: string): Span[] => [span(` · ${text}`, "dim")];
  switch (call.name) {
    case "ReadFile": {
      const total = numberField(metadata, "totalLines");
      if (total === null) return [];
      const start = numberField(metadata, "startLine");
      const end = numberField(metadata, "endLine");
      if (metadata.truncated === true && start !== null && end !== null) {
        return dot(`lines ${start}-${end} of ${total}`);
      }
      return dot(plural(total, "line"));
    }
    case "Glob": {
      const count = numberField(metadata, "count");
      return count === null ? [] : dot(plural(count, "file"));
    }
    case "Grep": {
      const matches = numberField(metadata, "matches");
      const files = numberField(metadata, "files");
      if (matches === null || files === null) return [];
      return dot(`${plural(matches, "match", "matches")} in ${plural(files, "file")}`);
    }
    case "WriteFile":
    case "EditFile": {
      const isNew = created || metadata.created === true;
      if (diff === null) return isNew ? dot("new file") : [];
      const added = span(`+${diff.added}`, "green");
      if (isNew) return [span(" · new file ", "dim"), added];
      return [span(" · ", "dim"), added, span(" "), span(`-${diff.removed}`, "red")];
    }
    default:
      return [];
  }
}

function numberField(metadata: Record<string, unknown>, key: string): number | null {
  const value = metadata[key];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

function bashExitCode(call: FinishedCall): number | null {
  if (call.name !== "Bash") return null;
  const code = numberField(call.result.metadata, "exitCode");
  if (code !== null) return code;
  const match = /<exit_code>(-?\d+)<\/exit_code>\s*$/.exec(call.result.content);
  return match === null ? null : Number(match[1]);
}

/** The command output inside Bash's `<output>…</output>`, or null when the result has none. */
function bashOutput(content: string): string | null {
  const start = content.indexOf("<output>");
  const end = content.lastIndexOf("</output>");
  if (start === -1 || end < start) return null;
  return content.slice(start + "<output>".length, end);
}

function outputTail(output: string, count: number, options: ToolViewOptions): string[] {
  const lines = output.replace(/\n+$/, "").split("\n");
  if (count <= 0 || (lines.length === 1 && lines[0] === "")) return [];
  const shown = lines.slice(-count);
  const hidden = lines.length - shown.length;
  const bar = span("│ ", "dim");
  const room = Math.max(1, options.width - INDENT.length - 2);
  const rendered = shown.map((line) =>
    renderSpans(
      [span(INDENT), bar, span(cut(sanitize(expandTabs(line)), room, "start"), "dim")],
      options.style,
    )
      .trimEnd()
  );
  if (hidden === 0) return rendered;
  const more = renderSpans(
    [span(INDENT), bar, span(`… ${plural(hidden, "line")} above`, "dim")],
    options.style,
  );
  return [more, ...rendered];
}

function errorHead(message: string, count: number, options: ToolViewOptions): string[] {
  const lines = message.replace(/\n+$/, "").split("\n");
  const shown = detail(lines.slice(0, Math.max(1, count)).join("\n"), ["red"], options);
  if (lines.length <= count) return shown;
  return [...shown, renderSpans([span(`${INDENT}…`, "dim")], options.style)];
}

/** Indented lines of tool or policy text, each made safe and cut to the width. */
function detail(text: string, styles: StyleName[], options: ToolViewOptions): string[] {
  const room = Math.max(1, options.width - INDENT.length);
  return text.split("\n").map((line) =>
    renderSpans(
      [span(INDENT), span(cut(sanitize(expandTabs(line)), room, "start"), ...styles)],
      options.style,
    )
  );
}

/** Tool or policy text wrapped to the width below a call, at most `count` lines. */
function wrapped(text: string, styles: StyleName[], options: ToolViewOptions, count: number): string[] {
  const spans = text.split("\n").flatMap((line, index) => [
    ...(index > 0 ? [span("\n")] : []),
    span(sanitize(line), ...styles),
  ]);
  const lines = wrapSpans(spans, Math.max(1, options.width - INDENT.length));
  const shown = lines.length > count
    ? [
      ...lines.slice(0, count - 1),
      cutSpans([...lines[count - 1]!, span(" …")], options.width - INDENT.length),
    ]
    : lines;
  return shown.map((line) => renderSpans([span(INDENT), ...line], options.style));
}

/** A finished call's duration: `12 ms`, `2.3 s`, `45 s`, `1m 05s`. */
export function formatDuration(ms: number): string {
  const value = Math.max(0, ms);
  if (value < 1000) return `${Math.round(value)} ms`;
  return formatSeconds(value);
}

function formatSeconds(ms: number): string {
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}
