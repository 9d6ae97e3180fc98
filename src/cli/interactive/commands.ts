/**
 * What each slash command of the interactive session does. The commands and their help are in
 * slash_commands.ts; the session in interactive_session.ts.
 *
 * @module
 */
import { describeError } from "../../common/errors.ts";
import { formatUsd } from "../../llm/prices.ts";
import { saveLocalRules } from "../../config/local_settings.ts";
import { describeRules } from "../../permissions/explain.ts";
import { PERMISSION_MODES, type PermissionMode } from "../../permissions/modes.ts";
import { formatRule, parseRule, type RuleAction } from "../../permissions/rules.ts";
import { findSession, listSessions } from "../../session/session_index.ts";
import { sanitize, sanitizeLines } from "../_terminal_text.ts";
import { tokens } from "./footer.ts";
import { loadContinued } from "../session_resume.ts";
import { type InteractiveSession, pickSession } from "./interactive_session.ts";
import { type SlashCommand, slashHelp } from "./slash_commands.ts";
import { loadShellParser } from "../../permissions/shell_parser.ts";

/** The prompt /init sends: the model explores the repository and writes AGENTS.md (asking to, as usual). */
export const INIT_PROMPT =
  "Write an AGENTS.md for this repository, for coding agents that will work in it. " +
  "First look around: the README, the build and package files, the test setup, the directory layout, the " +
  "main entry points and a few representative source files. Then write AGENTS.md at the workspace root with " +
  "WriteFile (keep what is true in an existing AGENTS.md): what the project is, how to build, run and test it " +
  "(exact commands), the code layout, conventions the code follows, and pitfalls. Be concrete and short; no " +
  "generic advice.";

/** Runs a slash command in the session. */
export async function runSlashCommand(ui: InteractiveSession, command: SlashCommand): Promise<void> {
  const { style } = ui.parts;
  if (command.kind === "unknown") {
    const hint = command.suggestion === null ? "" : `; did you mean /${command.suggestion}?`;
    ui.print(style.yellow(`Unknown command /${sanitize(command.name)}${hint} (/help lists them)`));
    return;
  }
  try {
    await run(ui, command.name, command.argument);
  } catch (error) {
    ui.print(style.red(`/${command.name}: ${sanitize(describeError(error))}`));
  }
}

async function run(ui: InteractiveSession, name: string, argument: string): Promise<void> {
  const { style, workspace } = ui.parts;
  switch (name) {
    case "help":
      ui.print(slashHelp());
      return;
    case "exit":
      ui.requestExit();
      return;
    case "clear":
      await ui.replaceSession(null);
      ui.print(style.dim(`New conversation (session ${ui.session.id.slice(0, 8)}).`));
      return;
    case "resume": {
      const info = argument === ""
        ? await pickSession(ui.parts, await listSessions(ui.home, workspace.root))
        : await findSession(ui.home, workspace.root, argument);
      if (info === null) return;
      await ui.replaceSession(await loadContinued(info));
      ui.print(style.dim(`Resumed session ${info.id.slice(0, 8)} (${ui.session.messages.length} messages).`));
      return;
    }
    case "model":
      if (argument === "") {
        ui.print(`Model: ${sanitize(ui.session.model)}`);
        return;
      }
      ui.session.setModel(argument);
      ui.print(style.dim(`Model: ${sanitize(argument)} from the next request on.`));
      return;
    case "cost":
      ui.print(costText(ui));
      return;
    case "permissions":
      await permissions(ui, argument);
      return;
    case "compact":
      await compact(ui);
      return;
    case "init":
      await ui.turn(INIT_PROMPT, []);
      return;
    default:
      ui.print(style.yellow(`/${name} is not available here`));
  }
}

function costText(ui: InteractiveSession): string {
  const { usage, costUsd } = ui.totals;
  return [
    `Session ${ui.session.id}`,
    `  input:  ${tokens(usage.inputTokens)} tokens, cache reads ${tokens(usage.cacheReadInputTokens)}, ` +
    `cache writes ${tokens(usage.cacheCreationInputTokens)}`,
    `  output: ${tokens(usage.outputTokens)} tokens`,
    `  cost:   ${costUsd === null ? "unknown (no price for this model)" : formatUsd(costUsd)}`,
  ].join("\n");
}

/** /permissions: show; allow|deny|ask RULE (saved to settings.local.json); remove RULE; mode MODE. */
async function permissions(ui: InteractiveSession, argument: string): Promise<void> {
  const { style, workspace } = ui.parts;
  const live = ui.session.permissions;
  if (argument === "") {
    // Rules come from settings and from answers to questions, which quote what the model sent.
    ui.print(
      sanitizeLines([`Permission mode: ${live.mode}`, ...describeRules(live.policy.rules)].join("\n")),
    );
    return;
  }
  const [verb = "", ...rest] = argument.split(/\s+/);
  const text = rest.join(" ").trim();
  if (verb === "mode") {
    if (!(PERMISSION_MODES as readonly string[]).includes(text)) {
      throw new Error(`unknown mode "${text}": use ${PERMISSION_MODES.join(", ")}`);
    }
    live.setMode(text as PermissionMode);
    ui.print(style.dim(`Permission mode: ${text} for this session.`));
    return;
  }
  const action = verb as RuleAction | "remove";
  if (!["allow", "deny", "ask", "remove"].includes(action) || text === "") {
    throw new Error("usage: /permissions [allow|deny|ask RULE | remove RULE | mode MODE]");
  }
  await loadShellParser();
  const parsed = parseRule(text);
  if (!parsed.ok) throw new Error(parsed.error);
  const rule = formatRule(parsed.value);
  for (const warning of parsed.warnings) ui.print(style.yellow(`⚠ ${warning}`));
  if (action === "remove") {
    const removed = live.removeRules((candidate) => formatRule(candidate) === rule);
    const saved = await saveLocalRules({
      home: ui.home,
      root: workspace.root,
      rules: {},
      remove: { allow: [rule], deny: [rule], ask: [rule] },
    });
    const fromFile = saved.ok && saved.value.removed.length > 0
      ? " and from .mewcode/settings.local.json"
      : "";
    ui.print(
      removed === 0 && fromFile === ""
        ? style.yellow(`No rule ${rule} to remove (rules in other settings files stay: edit them there)`)
        : style.dim(`Removed ${rule} from this session${fromFile}.`),
    );
    return;
  }
  live.addRules([{ ...parsed.value, action, source: { layer: "local" } }]);
  const saved = await saveLocalRules({ home: ui.home, root: workspace.root, rules: { [action]: [rule] } });
  ui.print(
    saved.ok
      ? style.dim(`${action} ${rule}: saved to .mewcode/settings.local.json and applied now.`)
      : style.yellow(`${action} ${rule}: applied for this session; not saved: ${saved.error}`),
  );
}

async function compact(ui: InteractiveSession): Promise<void> {
  const controller = new AbortController();
  const view = ui.view();
  ui.parts.screen.startStatus();
  try {
    const steps = ui.session.compact({ signal: controller.signal });
    let step = await steps.next();
    while (!step.done) {
      await view.show(step.value);
      step = await steps.next();
    }
    // The next request sends the compacted conversation: its size is known after that request.
    if (step.value.status === "compacted") ui.totals = { ...ui.totals, contextTokens: null };
  } finally {
    ui.parts.screen.stopStatus();
  }
  ui.addTotals(view.totals);
}
