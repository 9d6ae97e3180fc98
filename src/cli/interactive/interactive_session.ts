/**
 * `mewcode` in a terminal: the interactive session. It opens (after the trust question for a repository
 * whose settings would loosen anything, and the session picker for `-r` without an id), then reads prompts
 * with the line editor and runs each as a turn: the answer streams as Markdown, tool calls show what they
 * touched, approvals are asked with the diff, and Esc or Ctrl-C stop the turn at once. The footer above the
 * prompt shows the model, modes, tokens, cost and context. Slash commands are in commands.ts.
 *
 * The terminal is always restored (raw mode off, cursor shown): at the end, on an error, on SIGTERM.
 *
 * @module
 */
import denoConfig from "../../../deno.json" with { type: "json" };
import { describeError } from "../../common/errors.ts";
import { resolveMewcodeHome } from "../../config/home.ts";
import { trustWorkspace } from "../../config/trust.ts";
import { contextWindowOf } from "../../llm/models.ts";
import { costOf } from "../../llm/prices.ts";
import { emptyUsage, type Usage } from "../../llm/provider.ts";
import { type ExecutorKind, openSession, type Provider, type Session } from "../../session/session.ts";
import { latestSession, listSessions, type SessionInfo } from "../../session/session_index.ts";
import type { Workspace } from "../../session/workspace.ts";
import { cut, sanitize } from "../_terminal_text.ts";
import type { CliOptions, SessionChoice } from "../args.ts";
import { EXIT, type InterruptSignal, interruptStatus } from "../exit_codes.ts";
import {
  continuedSetup,
  requireEndpoint,
  requireModel,
  type SessionSetup,
  sessionSetup,
} from "../session_options.ts";
import { type ContinuedSession, loadContinued, sessionToContinue } from "../session_resume.ts";
import { TerminalApprover } from "./approval.ts";
import { runSlashCommand } from "./commands.ts";
import { EventView, readText } from "./event_view.ts";
import { footerLine } from "./footer.ts";
import { type History, openHistory } from "./history.ts";
import { readLine } from "./line_editor.ts";
import { workspacePathCompleter } from "./path_completion.ts";
import { isCancelKey, KeyRouter, Screen } from "./screen.ts";
import { parseSlashCommand } from "./slash_commands.ts";
import { createStyle, type Style } from "./style.ts";
import { Terminal } from "./terminal.ts";
import { withAttachments } from "./_attachments.ts";

/** What the interactive session needs; everything after `signal` is injectable for tests. */
export interface InteractiveInput {
  workspace: Workspace;
  options: CliOptions;
  /** Aborted by SIGINT, SIGTERM or SIGHUP sent to the process (main.ts); `received` says which. */
  signal: AbortSignal;
  interruption?: { readonly received: InterruptSignal | null };
  env?: Record<string, string>;
  terminal?: Terminal;
  provider?: Provider;
  executor?: ExecutorKind;
}

/** Ctrl-C twice on an empty prompt within this exits. */
const DOUBLE_INTERRUPT_MS = 2_000;

/** Runs the interactive session until the user leaves; returns the exit status. */
export async function runInteractive(input: InteractiveInput): Promise<number> {
  const env = input.env ?? Deno.env.toObject();
  const terminal = input.terminal ?? new Terminal();
  terminal.restoreOnExit({ exitOnSignal: false });
  const style = createStyle({ colors: terminal.colors !== "none" });
  const screen = new Screen(terminal);
  terminal.setRawMode(true);
  terminal.setBracketedPaste(true);
  try {
    const ui = await InteractiveSession.start({ ...input, env, terminal, screen, style });
    if (ui === null) return EXIT.interrupted;
    try {
      return await ui.loop();
    } finally {
      await ui.close();
    }
  } catch (error) {
    screen.stopStatus();
    screen.print(`${style.red(`mewcode: ${sanitize(describeError(error))}`)}\n`);
    return error instanceof Error && error.name === "MissingApiKeyError" ? EXIT.auth : EXIT.error;
  } finally {
    terminal.restore();
  }
}

interface Parts extends InteractiveInput {
  env: Record<string, string>;
  terminal: Terminal;
  screen: Screen;
  style: Style;
}

/** What the session has used, for the footer and /cost. */
export interface SessionTotals {
  usage: Usage;
  costUsd: number | null;
  contextTokens: number | null;
}

/** The longest line taken as a slash command: a longer paste is shown as a "[Pasted text]" chip. */
const MAX_COMMAND_LINE = 1000;

/** One interactive session: its open Session, and what it shows. */
export class InteractiveSession {
  readonly parts: Parts;
  readonly router: KeyRouter;
  readonly home: string;
  setup: SessionSetup;
  session: Session;
  history: History;
  totals: SessionTotals = { usage: emptyUsage(), costUsd: 0, contextTokens: null };
  /** The text of files a write is about to change, by call id (for the diff once it ran). */
  readonly #before = new Map<string, string | null>();
  #exitRequested = false;
  #lastInterrupt = 0;

  private constructor(parts: Parts, setup: SessionSetup, session: Session, history: History) {
    this.parts = parts;
    this.router = new KeyRouter(parts.screen);
    this.home = resolveMewcodeHome(parts.env);
    this.setup = setup;
    this.session = session;
    this.history = history;
  }

  /**
   * Opens the session the flags ask for; null when the user interrupted the trust question (Ctrl-C) before
   * it opened (a declined picker or trust question is not that).
   */
  static async start(parts: Parts): Promise<InteractiveSession | null> {
    const { workspace, options, env, screen, style } = parts;
    const asked = await askTrust(parts, await sessionSetup(workspace, options, env));
    if (asked === null) return null;
    let setup = asked;
    requireModel(setup);
    requireEndpoint(setup, env);
    for (const notice of setup.notices) screen.print(`${style.yellow(`⚠ ${sanitize(notice)}`)}\n`);
    const home = resolveMewcodeHome(env);
    const history = await openHistory(home, workspace.root, {
      onWarning: (message) => screen.print(`${style.yellow(`⚠ ${sanitize(message)}`)}\n`),
    });
    // The session exists before its approver needs it: the approver reads it lazily.
    let ui: InteractiveSession | null = null;
    const resume = await chooseSession(parts, options.session, home);
    if (resume !== null) {
      // The recorded provider and model, unless the flags name others (the history is converted then).
      const continued = continuedSetup(setup, options, resume);
      setup = continued.setup;
      resume.messages = continued.messages;
      if (continued.notice !== null) {
        screen.print(`${style.yellow(`⚠ ${sanitize(continued.notice)}`)}
`);
      }
    }
    const session = await openInteractiveSession(parts, setup, resume, () => ui);
    ui = new InteractiveSession(parts, setup, session, history);
    ui.#banner();
    return ui;
  }

  /** Reads and runs prompts until the user leaves. */
  async loop(): Promise<number> {
    const first = this.parts.options.command.kind === "prompt" ? this.parts.options.command.prompt : null;
    if (first !== null) await this.turn(first, []);
    while (!this.#exitRequested) {
      if (this.parts.signal.aborted) return this.#signalStatus();
      this.#footer();
      let read;
      try {
        read = await readLine({
          terminal: this.parts.terminal,
          prompt: this.parts.style.bold(this.parts.style.cyan("› ")),
          history: this.history.entries,
          complete: workspacePathCompleter(this.parts.workspace.root),
          signal: this.parts.signal,
        });
      } catch {
        return this.#signalStatus();
      }
      switch (read.kind) {
        case "eof":
          return EXIT.ok;
        case "interrupt": {
          const now = Date.now();
          if (read.empty && now - this.#lastInterrupt < DOUBLE_INTERRUPT_MS) return EXIT.ok;
          this.#lastInterrupt = now;
          if (read.empty) this.print(this.parts.style.dim("(press Ctrl-C again to exit, or Ctrl-D)"));
          continue;
        }
        case "line":
          break;
      }
      const text = read.text;
      if (text.trim() === "") continue;
      // Only a line the person could see whole is a command: a paste shown as "[Pasted text: 30 lines]"
      // with `/permissions mode bypassPermissions` between blank lines (a page may set the clipboard) would
      // otherwise change the session unseen. Anything else starting with "/" is a prompt.
      const seen = !text.includes("\n") && text.length <= MAX_COMMAND_LINE;
      const command = seen ? parseSlashCommand(text) : null;
      if (!seen && text.trimStart().startsWith("/")) {
        this.print(this.parts.style.dim("(Sent as a prompt: a command is one line, typed or pasted whole.)"));
      }
      await this.history.add(text);
      if (command !== null) {
        await runSlashCommand(this, command);
        continue;
      }
      await this.turn(text, read.attachments);
    }
    return EXIT.ok;
  }

  /** Runs one prompt as a turn; Esc or Ctrl-C stop it. */
  async turn(text: string, attachments: readonly string[]): Promise<void> {
    const { prompt, skipped } = await withAttachments(text, attachments, this.parts.workspace.root);
    for (const { path, reason } of skipped) {
      this.print(this.parts.style.yellow(`⚠ ${sanitize(`@${path} not attached: ${reason}`)}`));
    }
    const controller = new AbortController();
    const stop = () => controller.abort(new DOMException("interrupted by the user", "AbortError"));
    this.parts.signal.addEventListener("abort", stop, { once: true });
    const remove = this.router.push((key) => {
      if (!isCancelKey(key)) return false;
      stop();
      return true;
    });
    const view = this.view();
    this.parts.screen.startStatus();
    this.router.resume();
    try {
      for await (const event of this.session.run(prompt, { signal: controller.signal })) {
        await view.show(event);
      }
    } catch (error) {
      this.parts.screen.print(`${this.parts.style.red(`✗ ${sanitize(describeError(error))}`)}\n`);
    } finally {
      remove();
      await this.router.suspend();
      this.parts.screen.stopStatus();
      this.parts.signal.removeEventListener("abort", stop);
      this.#before.clear();
    }
    this.addTotals(view.totals);
  }

  /** A view of the events of a turn (or a compaction). */
  view(): EventView {
    return new EventView({
      screen: this.parts.screen,
      style: this.parts.style,
      root: this.parts.workspace.root,
      before: (id) => this.#before.get(id),
    });
  }

  /** Adds what a turn used to the session's totals. */
  addTotals(turn: EventView["totals"]): void {
    const usage = turn.usage;
    if (usage === null) return;
    const cost = turn.costUsd ?? costOf(usage, this.session.model);
    this.totals = {
      usage: {
        inputTokens: this.totals.usage.inputTokens + usage.inputTokens,
        outputTokens: this.totals.usage.outputTokens + usage.outputTokens,
        cacheCreationInputTokens: this.totals.usage.cacheCreationInputTokens + usage.cacheCreationInputTokens,
        cacheReadInputTokens: this.totals.usage.cacheReadInputTokens + usage.cacheReadInputTokens,
      },
      costUsd: this.totals.costUsd === null || cost === null ? null : this.totals.costUsd + cost,
      contextTokens: turn.contextTokens ?? this.totals.contextTokens,
    };
  }

  /** Replaces the session (/clear, /resume): the old one is closed, its transcript kept. */
  async replaceSession(resume: ContinuedSession | null): Promise<void> {
    if (resume !== null && resume.id === this.session.id) {
      throw new Error(`session ${resume.id.slice(0, 8)} is the one you are in`);
    }
    let ui: InteractiveSession | null = null;
    let setup = this.setup;
    if (resume !== null) {
      const continued = continuedSetup(setup, this.parts.options, resume);
      setup = continued.setup;
      resume = { ...resume, messages: continued.messages };
      if (continued.notice !== null) this.print(this.parts.style.yellow(`⚠ ${sanitize(continued.notice)}`));
    }
    // Opened before this one closes: when it cannot open (another run holds it, a transcript that cannot be
    // written), the conversation the user is in goes on instead of ending with nothing in its place.
    const next = await openInteractiveSession(this.parts, setup, resume, () => ui);
    await this.session.close();
    this.session = next;
    ui = this;
    this.totals = { usage: emptyUsage(), costUsd: 0, contextTokens: resume?.contextTokens ?? null };
  }

  /** Asks to leave after the current command. */
  requestExit(): void {
    this.#exitRequested = true;
  }

  /** Prints a line above the prompt. */
  print(line: string): void {
    this.parts.screen.print(`${line}\n`);
  }

  /** Keeps the text of the file a write is about to change (see SessionOptions.observeCall). */
  async observe(call: { id: string; name: string; input: unknown }): Promise<void> {
    if (call.name !== "WriteFile" && call.name !== "EditFile") return;
    const path = (call.input as { path?: unknown } | null)?.path;
    if (typeof path !== "string") return;
    this.#before.set(call.id, await readText(path));
  }

  /** The approval already showed this call's diff: its result line shows only the summary. */
  forgetBefore(callId: string): void {
    this.#before.delete(callId);
  }

  /** Closes the session: the end-of-session checks, then the session. */
  async close(): Promise<void> {
    try {
      for (const line of await this.session.finish()) {
        this.print(this.parts.style.yellow(`⚠ ${sanitize(line)}`));
      }
    } finally {
      await this.session.close();
    }
  }

  #signalStatus(): number {
    return interruptStatus(this.parts.interruption?.received ?? null);
  }

  #banner(): void {
    const { style, workspace } = this.parts;
    const resumed = this.session.messages.length > 0 ? ` · resumed ${this.session.id.slice(0, 8)}` : "";
    this.print(
      `${style.bold("mewcode")} ${denoConfig.version} · ${sanitize(workspace.root)}${resumed}\n` +
        style.dim("/help for commands · Esc stops a turn · Ctrl-D exits"),
    );
  }

  #footer(): void {
    const options = this.setup.options;
    this.print(footerLine({
      model: this.session.model,
      permissionMode: this.session.permissions.mode,
      sandbox: options.readOnly ? "read-only tools" : options.sandbox,
      usage: this.totals.usage,
      costUsd: this.totals.costUsd,
      contextTokens: this.totals.contextTokens,
      contextWindow: contextWindowOf(this.session.model),
    }, { width: this.parts.screen.columns, style: this.parts.style }));
  }
}

async function openInteractiveSession(
  parts: Parts,
  setup: SessionSetup,
  resume: ContinuedSession | null,
  ui: () => InteractiveSession | null,
): Promise<Session> {
  const { screen, style, workspace, env } = parts;
  if (resume?.notice) screen.print(`${style.yellow(`⚠ ${sanitize(resume.notice)}`)}\n`);
  let session: Session | null = null;
  const router = () => ui()?.router ?? new KeyRouter(parts.screen);
  const approver = new TerminalApprover({
    screen,
    get router() {
      return router();
    },
    style,
    root: workspace.root,
    home: resolveMewcodeHome(env),
    addRules: (rules) => session?.permissions.addRules(rules),
    diffShown: (callId) => ui()?.forgetBefore(callId),
  });
  session = await openSession({
    ...setup.options,
    needsModel: true,
    headless: false,
    approver,
    observeCall: (call) => ui()?.observe(call) ?? Promise.resolve(),
    ...(resume === null ? {} : {
      resume: {
        id: resume.id,
        messages: resume.messages,
        ...(resume.contextTokens === null ? {} : { contextTokens: resume.contextTokens }),
        stamp: resume.stamp,
      },
    }),
    ...(parts.provider === undefined ? {} : { provider: parts.provider }),
    ...(parts.executor === undefined ? {} : { executor: parts.executor }),
  });
  return session;
}

/** The session `-c`, `-r ID` or `-r` (a picker) ask for; null for a new one. */
async function chooseSession(
  parts: Parts,
  choice: SessionChoice,
  home: string,
): Promise<ContinuedSession | null> {
  const root = parts.workspace.root;
  switch (choice.kind) {
    case "new":
      return null;
    case "continue": {
      const latest = await latestSession(home, root);
      if (latest === null) {
        parts.screen.print(
          `${parts.style.dim("No earlier session in this workspace: starting a new one")}\n`,
        );
        return null;
      }
      return await loadContinued(latest);
    }
    case "resume":
      return await sessionToContinue(parts.workspace, choice, parts.env);
    case "pick": {
      const picked = await pickSession(parts, await listSessions(home, root));
      return picked === null ? null : await loadContinued(picked);
    }
  }
}

/** Lets the user pick one of the workspace's sessions with the arrow keys; null for a new session. */
export async function pickSession(
  parts: { screen: Screen; style: Style; terminal: Terminal },
  sessions: readonly SessionInfo[],
): Promise<SessionInfo | null> {
  const { screen, style } = parts;
  if (sessions.length === 0) {
    screen.print(`${style.dim("No sessions in this workspace yet: starting a new one")}\n`);
    return null;
  }
  const shown = sessions.slice(0, 15);
  let selected = 0;
  const rows = () =>
    shown.map((info, index) => {
      const date = info.updatedAt.toISOString().slice(0, 16).replace("T", " ");
      const text = `${info.id.slice(0, 8)}  ${date}  ${String(info.turns).padStart(3)} turns  ${
        sanitize(info.firstPrompt ?? "-")
      }`;
      const line = cut(text, screen.columns - 4, "start");
      return index === selected ? style.cyan(`❯ ${line}`) : `  ${line}`;
    });
  screen.print(
    `${style.bold("Resume which session? (↑/↓, Enter; Esc for a new one)")}\n${rows().join("\n")}\n`,
  );
  const router = new KeyRouter(parts.screen);
  const picked = await new Promise<SessionInfo | null>((resolve) => {
    router.push((key) => {
      if (isCancelKey(key)) resolve(null);
      else if (key.type === "key" && key.name === "enter") resolve(shown[selected] ?? null);
      else if (key.type === "key" && (key.name === "up" || key.name === "down")) {
        selected = Math.max(0, Math.min(shown.length - 1, selected + (key.name === "up" ? -1 : 1)));
        parts.terminal.write(`\x1b[${shown.length}A\r`);
        screen.print(`${rows().map((row) => `\x1b[2K${row}`).join("\n")}\n`);
      }
      return true;
    }, () => screen.print(`${rows().join("\n")}\n`));
    router.resume();
  });
  await router.suspend();
  return picked;
}

/**
 * The trust question, before anything else, for a repository whose own settings would loosen something
 * until trusted; the settings again when the user trusts it; null when Ctrl-C interrupted it (no answer:
 * the session does not open).
 */
async function askTrust(parts: Parts, setup: SessionSetup): Promise<SessionSetup | null> {
  const { settings } = setup;
  const loosening = settings.ignored.filter((item) => item.kind === "needs-trust");
  if (settings.trusted || loosening.length === 0) return setup;
  const { screen, style, workspace, env } = parts;
  const lines = [
    style.bold(style.yellow(`? This folder's settings would enable more than mewcode allows by default:`)),
    ...loosening.map((item) => `  ${sanitize(item.item)}  ${style.dim(sanitize(item.path))}`),
    style.dim("  Trusted repository hooks run inside the sandbox. Trust this folder? [y/N]"),
  ];
  screen.print(`${lines.join("\n")}\n`);
  const router = new KeyRouter(parts.screen);
  const yes = await new Promise<boolean | null>((resolve) => {
    router.push((key) => {
      resolve(
        key.type === "key" && key.name === "c" && key.ctrl
          ? null
          : key.type === "text" && /^y$/i.test(key.text),
      );
      return true;
    }, () => screen.print(`${lines.at(-1)}\n`));
    router.resume();
  });
  await router.suspend();
  if (yes === null) {
    screen.print(`${style.dim("Interrupted: the session did not open")}\n`);
    return null;
  }
  if (!yes) {
    screen.print(
      `${style.dim("Not trusted: its settings only tighten (mewcode trust to change your mind)")}\n`,
    );
    return { ...setup, notices: [] };
  }
  const home = resolveMewcodeHome(env);
  const recorded = await trustWorkspace({ home, root: workspace.root, fingerprint: settings.fingerprint });
  if (!recorded.ok) {
    screen.print(`${style.red(sanitize(recorded.error))}\n`);
    return setup;
  }
  screen.print(`${style.green("Trusted.")}\n`);
  return await sessionSetup(workspace, parts.options, env);
}
