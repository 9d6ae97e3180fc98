/**
 * mewcode's entry point: parse argv, wire the parts, run the command, set the exit code.
 * This is the only place that decides the process's exit status.
 *
 * @module
 */
import denoConfig from "./deno.json" with { type: "json" };
import { type CliOptions, helpText, parseCli, UsageError } from "./src/cli/args.ts";
import { EXIT, type InterruptSignal, interruptStatus } from "./src/cli/exit_codes.ts";
import { assertNever } from "./src/common/errors.ts";
import { lazyImport } from "./src/common/lazy_import.ts";
import type { Workspace } from "./src/session/workspace.ts";

async function main(argv: string[]): Promise<number> {
  dropLauncherTuning();
  let options: CliOptions;
  try {
    options = parseCli(argv, {
      stdinIsTerminal: Deno.stdin.isTerminal(),
      stdoutIsTerminal: Deno.stdout.isTerminal(),
      ci: environmentValue("CI"),
    });
  } catch (error) {
    return await usageFailure(error);
  }
  const command = options.command;
  switch (command.kind) {
    case "help":
      console.log(helpText());
      return EXIT.ok;
    case "version":
      console.log(`mewcode ${denoConfig.version} (deno ${Deno.version.deno})`);
      return EXIT.ok;
    case "completions": {
      const { completionScript } = await lazyImport<typeof import("./src/cli/completions_command.ts")>(
        new URL("./src/cli/completions_command.ts", import.meta.url),
      );
      console.log(completionScript(command.shell));
      return EXIT.ok;
    }
    default:
      break;
  }
  // A one-shot prompt's mode loads while the workspace is found (its files are read off the main thread):
  // measured, its request left ~2 ms sooner than with the mode loaded after.
  const loadPrintMode = () =>
    lazyImport<typeof import("./src/cli/print_mode.ts")>(new URL("./src/cli/print_mode.ts", import.meta.url));
  const printMode = command.kind === "prompt" && command.headless ? loadPrintMode() : null;
  printMode?.catch(() => {}); // Awaited (and its failure reported) where it runs.
  const override = runtimeOverride(Deno.env.toObject()) ?? unreadableVariable();
  if (override !== null) {
    console.error(`mewcode: ${override}`);
    return EXIT.usage;
  }
  // Loaded here, not above: `--version` and `--help` need nothing but the parser (node:path alone costs
  // more than they do).
  const { resolveWorkspace, WorkspaceError } = await lazyImport<typeof import("./src/session/workspace.ts")>(
    new URL("./src/session/workspace.ts", import.meta.url),
  );
  let workspace: Workspace;
  try {
    workspace = await resolveWorkspace(options.cd, { pwd: environmentValue("PWD") });
  } catch (error) {
    if (error instanceof WorkspaceError) return await usageFailure(new UsageError(error.message));
    throw error;
  }
  // A command that cannot stop part-way (it takes no signal) stops at once on the first signal.
  const interruption = new Interruption({ atOnce: !TAKES_SIGNAL.has(command.kind) });
  try {
    switch (command.kind) {
      // Every command is loaded on demand (lazy_import.ts): `--version` and `--help` load none of them.
      case "tools": {
        const { renderTools } = await lazyImport<typeof import("./src/cli/tools_command.ts")>(
          new URL("./src/cli/tools_command.ts", import.meta.url),
        );
        const { sessionSetup } = await lazyImport<typeof import("./src/cli/session_options.ts")>(
          new URL("./src/cli/session_options.ts", import.meta.url),
        );
        // The rules a session would have: a deny rule naming a tool whole takes it out of the listing too.
        const setup = await sessionSetup(workspace, options, Deno.env.toObject());
        const listing = renderTools({
          json: command.json,
          readOnly: options.readOnly,
          rules: setup.options.rules ?? [],
        });
        console.log(listing.stdout);
        for (const line of listing.stderr) console.error(line);
        return EXIT.ok;
      }
      case "tool": {
        const { parseToolInput, runToolCommand, toolOutputText } = await lazyImport<
          typeof import("./src/cli/tool_command.ts")
        >(new URL("./src/cli/tool_command.ts", import.meta.url));
        let input: unknown;
        try {
          input = parseToolInput(command.input);
        } catch (error) {
          return await usageFailure(error);
        }
        const { output, exitCode } = await runToolCommand(workspace, options, { name: command.name, input }, {
          signal: interruption.signal,
        });
        console.log(toolOutputText(output));
        return exitCode;
      }
      case "doctor": {
        const { runDoctor } = await lazyImport<typeof import("./src/cli/doctor_command.ts")>(
          new URL("./src/cli/doctor_command.ts", import.meta.url),
        );
        return await runDoctor({ workspace, options });
      }
      case "sessions": {
        const { runSessionsCommand } = await lazyImport<typeof import("./src/cli/sessions_command.ts")>(
          new URL("./src/cli/sessions_command.ts", import.meta.url),
        );
        return await runSessionsCommand({ workspace, json: command.json });
      }
      case "permissions":
      case "permissions-test":
      case "trust": {
        const { runPermissionsCommand } = await lazyImport<typeof import("./src/cli/permissions_command.ts")>(
          new URL("./src/cli/permissions_command.ts", import.meta.url),
        );
        const status = await runPermissionsCommand({
          workspace,
          options,
          command,
          signal: interruption.signal,
        });
        // A question a signal interrupted: 130, or the status of the signal that came (SIGTERM, SIGHUP).
        return status === EXIT.interrupted ? interruptStatus(interruption.received) : status;
      }
      case "prompt": {
        if (!command.headless) {
          const { runInteractive } = await lazyImport<
            typeof import("./src/cli/interactive/interactive_session.ts")
          >(new URL("./src/cli/interactive/interactive_session.ts", import.meta.url));
          return await runInteractive({ workspace, options, signal: interruption.signal, interruption });
        }
        const { runPrintMode } = await (printMode ?? loadPrintMode());
        return await runPrintMode({ workspace, options, signal: interruption.signal, interruption });
      }
      default:
        return assertNever(command);
    }
  } catch (error) {
    if (error instanceof UsageError) return await usageFailure(error);
    if (isAdditionalDirectoryError(error)) return await usageFailure(new UsageError(error.message));
    throw error;
  } finally {
    interruption.dispose();
  }
}

/** The commands that stop part-way when their signal aborts (a run, a tool call, a question). */
const TAKES_SIGNAL: ReadonlySet<string> = new Set([
  "prompt",
  "tool",
  "permissions",
  "permissions-test",
  "trust",
]);

/**
 * SIGINT, SIGTERM and SIGHUP abort the run (its tools' processes are killed, the partial result is printed,
 * the transcript gets its end record, the sandbox's temporary files are removed); a second signal while that
 * happens exits at once. Left to its default, SIGHUP (a closed terminal, a dropped SSH session) would end
 * the process with none of that. With `atOnce` (a command that takes no signal: `doctor` waiting for the
 * API, `sessions`), the first signal exits at once, with the same status: aborting a signal no one
 * listens to would have let the command run on to its end. Windows delivers only SIGINT (and SIGBREAK) to
 * Deno.
 */
class Interruption {
  readonly #controller = new AbortController();
  #received: InterruptSignal | null = null;
  readonly #listeners: [Deno.Signal, () => void][] = [];
  readonly #atOnce: boolean;

  constructor(options: { atOnce: boolean }) {
    this.#atOnce = options.atOnce;
    const names: readonly InterruptSignal[] = Deno.build.os === "windows"
      ? ["SIGINT"]
      : ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const name of names) {
      const listener = () => this.#receive(name);
      Deno.addSignalListener(name, listener);
      this.#listeners.push([name, listener]);
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The signal that interrupted the run, or null. */
  get received(): InterruptSignal | null {
    return this.#received;
  }

  dispose(): void {
    for (const [name, listener] of this.#listeners) Deno.removeSignalListener(name, listener);
  }

  #receive(name: InterruptSignal): void {
    if (this.#received !== null || this.#atOnce) Deno.exit(interruptStatus(name));
    this.#received = name;
    this.#controller.abort(new DOMException(`interrupted by ${name}`, "AbortError"));
  }
}

/**
 * Variables whose value decides where mewcode keeps its state, which settings apply, what the home's
 * protections cover or where the conversation goes. The runtime leaves a variable that is not UTF-8 out of
 * the environment it gives (`Deno.env.toObject()`), as if unset.
 */
const READ_VARIABLES = [
  "HOME",
  "MEWCODE_HOME",
  "MEWCODE_TRUST_WORKSPACE",
  "XDG_CONFIG_HOME",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "TMPDIR",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
];

/** Why mewcode refuses to start when one of READ_VARIABLES is set but not UTF-8, or null. */
function unreadableVariable(): string | null {
  for (const name of READ_VARIABLES) {
    try {
      Deno.env.get(name);
    } catch {
      return `Refusing to start: ${name} is set but is not UTF-8, which the runtime cannot read, so mewcode ` +
        `would run as if it were unset: set ${name} to UTF-8 text, or unset it`;
    }
  }
  return null;
}

/**
 * Takes out of the environment what scripts/mewcode set for this process's own start only: glibc read
 * MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_ and MALLOC_ARENA_MAX before any JavaScript ran, and the programs
 * mewcode starts as the user (hooks, the approval command, git) get the caller's environment, not the
 * launcher's tuning. Values the caller set themselves stay (the launcher then sets nothing and says so by
 * leaving MEWCODE_LAUNCHER_MALLOC unset).
 */
function dropLauncherTuning(): void {
  if (environmentValue("MEWCODE_LAUNCHER_MALLOC") !== "1") return;
  Deno.env.delete("MALLOC_MMAP_THRESHOLD_");
  Deno.env.delete("MALLOC_TOP_PAD_");
  Deno.env.delete("MALLOC_ARENA_MAX");
  Deno.env.delete("MEWCODE_LAUNCHER_MALLOC");
}

/**
 * A variable's value, or undefined when it is unset or not UTF-8, which the runtime cannot give as text
 * (it throws): a shell started in a folder whose name is not UTF-8 sets PWD to that name.
 */
function environmentValue(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The Node options Deno honours from NODE_OPTIONS that run code or let another process run it. */
const NODE_CODE_OPTION = /^(?:-r|--require|--import|--(?:experimental-)?loader|--inspect)/;

/**
 * Deno reads some variables before mewcode runs: a permission broker overrides every worker's grant and
 * an audit log records every permission check, NODE_OPTIONS may preload code or open a debugger. The
 * launcher clears them; a binary started with them set refuses to run rather than run without its sandbox
 * (a preload has run by then: the refusal keeps the session from going on beside it).
 */
function runtimeOverride(env: Record<string, string>): string | null {
  const set = ["DENO_PERMISSION_BROKER_PATH", "DENO_AUDIT_PERMISSIONS"].filter((name) =>
    env[name] !== undefined
  );
  const nodeOption = nodeOptionWords(env.NODE_OPTIONS ?? "").find((word) => NODE_CODE_OPTION.test(word));
  if (set.length === 0 && nodeOption !== undefined) {
    return `Refusing to start: NODE_OPTIONS holds ${nodeOption}, with which the runtime loads code or opens ` +
      "a debugger beside mewcode, with all of its permissions: unset NODE_OPTIONS (scripts/mewcode does) " +
      "and run mewcode again";
  }
  if (set.length === 0) return null;
  return `Refusing to start: ${set.join(" and ")} ${
    set.length === 1 ? "is" : "are"
  } set, which would override ` +
    "the permissions of every tool worker: unset it and run mewcode again";
}

/**
 * The words of NODE_OPTIONS as the runtime reads them: split at whitespace, where a double-quoted part is one
 * word (`"--require" x` is `--require` and `x`) and a backslash in it keeps the next character.
 */
function nodeOptionWords(value: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quoted = false;
  for (let index = 0; index < value.length; index++) {
    const character = value[index]!;
    if (quoted && character === "\\" && index + 1 < value.length) {
      word = (word ?? "") + value[++index];
    } else if (character === '"') {
      quoted = !quoted;
      word ??= "";
    } else if (!quoted && /\s/.test(character)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? "") + character;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** A bad `--add-dir` (checked when the session opens): a usage error, without loading the session module. */
function isAdditionalDirectoryError(error: unknown): error is Error {
  return error instanceof Error && error.name === "AdditionalDirectoryError";
}

/**
 * Prints a usage error. Its message may quote what the workspace's settings hold (a folder to add, once the
 * folder is trusted): shown, never obeyed by the terminal. The sanitizer loads only on this path.
 */
async function usageFailure(error: unknown): Promise<number> {
  if (!(error instanceof UsageError)) throw error;
  const { sanitizeLines } = await lazyImport<typeof import("./src/cli/_terminal_text.ts")>(
    new URL("./src/cli/_terminal_text.ts", import.meta.url),
  );
  console.error(sanitizeLines(`mewcode: ${error.message}\nRun "mewcode --help" for usage.`));
  return EXIT.usage;
}

if (import.meta.main) {
  // Exit explicitly: idle pooled workers must not keep the process alive.
  Deno.exit(await main(Deno.args));
}
