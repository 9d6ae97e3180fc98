/**
 * mewcode's entry point: parse argv, wire the parts, run the command, set the exit code.
 * This is the only place that decides the process's exit status.
 *
 * @module
 */
import denoConfig from "./deno.json" with { type: "json" };
import { type CliOptions, HELP, parseCli, UsageError } from "./src/cli/args.ts";
import { EXIT } from "./src/cli/exit_codes.ts";
import { isAbsolute, resolve } from "node:path";
import { runtimeOptionsFrom, type Workspace } from "./src/cli/runtime_options.ts";
import { renderTools } from "./src/cli/tools_command.ts";
import { parseToolInput, runToolCommand } from "./src/cli/tool_command.ts";
import { assertNever } from "./src/tools/errors.ts";
import { createToolRuntime, sessionRegistry } from "./src/execution/runtime.ts";
import { APPROVE_ALL } from "./src/permissions/decision.ts";

async function main(argv: string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(argv);
  } catch (error) {
    return usageFailure(error);
  }
  const command = options.command;
  switch (command.kind) {
    case "help":
      console.log(HELP);
      return EXIT.ok;
    case "version":
      console.log(`mewcode ${denoConfig.version} (deno ${Deno.version.deno})`);
      return EXIT.ok;
    default:
      break;
  }
  const override = runtimeOverride(Deno.env.toObject());
  if (override !== null) {
    console.error(`mewcode: ${override}`);
    return EXIT.usage;
  }
  const workspace = await resolveWorkspace(options.cd);
  if ("error" in workspace) return usageFailure(workspace.error);
  const controller = new AbortController();
  const onSignal = () => controller.abort(new DOMException("interrupted", "AbortError"));
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    switch (command.kind) {
      case "tools":
        console.log(renderTools(sessionRegistry({ readOnly: options.readOnly }), { json: command.json }));
        return EXIT.ok;
      case "tool": {
        let input: unknown;
        try {
          input = parseToolInput(command.input);
        } catch (error) {
          return usageFailure(error);
        }
        await using runtime = await createToolRuntime({
          ...await runtimeOptionsFrom(workspace, options, Deno.env.toObject()),
          // The user typed this call: "ask" counts as approved; deny rules and the sandbox still apply.
          approver: APPROVE_ALL,
          // ...and the user is the authority on the files they name: no "read it first" for their writes,
          // and they may write protected paths by naming them (the shell still sees them read-only).
          requireRead: false,
          protectedPaths: [],
        });
        const { output, exitCode } = await runToolCommand(runtime.pipeline, { name: command.name, input }, {
          signal: controller.signal,
        });
        console.log(JSON.stringify(output, null, 2));
        return exitCode;
      }
      // Loaded on demand: the SDK alone costs ~150 ms of start-up that `tools` and `tool` do not need.
      case "doctor": {
        const { runDoctor } = await import("./src/cli/doctor_command.ts");
        return await runDoctor({ workspace, options });
      }
      case "print": {
        const { runPrintMode } = await import("./src/cli/print_mode.ts");
        return await runPrintMode({ workspace, options, signal: controller.signal });
      }
      default:
        return assertNever(command);
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
}

/**
 * The workspace: the real path of `-C DIR` or the current directory, plus the names the user gave it when
 * they differ (a symlink), so that paths under those names still count as inside.
 */
async function resolveWorkspace(cd: string | null): Promise<Workspace | { error: UsageError }> {
  const wanted = cd ?? Deno.cwd();
  let root: string;
  try {
    root = await Deno.realPath(wanted);
    const info = await Deno.stat(root);
    if (!info.isDirectory) {
      return { error: new UsageError(`Cannot use "${wanted}" as the workspace: not a directory`) };
    }
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such directory" : String(error);
    return { error: new UsageError(`Cannot use "${wanted}" as the workspace: ${reason}`) };
  }
  const names = [resolve(wanted)];
  // The shell's logical current directory, when mewcode was started inside a symlinked folder.
  const logical = cd === null ? Deno.env.get("PWD") : undefined;
  if (logical !== undefined && isAbsolute(logical)) {
    const real = await Deno.realPath(logical).catch(() => null);
    if (real === root) names.push(resolve(logical));
  }
  return { root, aliases: [...new Set(names)].filter((name) => name !== root) };
}

/**
 * Deno reads some variables before mewcode runs: a permission broker overrides every worker's grant and
 * an audit log records every permission check. The launcher clears them; a binary started with them set
 * refuses to run rather than run without its sandbox.
 */
function runtimeOverride(env: Record<string, string>): string | null {
  const set = ["DENO_PERMISSION_BROKER_PATH", "DENO_AUDIT_PERMISSIONS"].filter((name) =>
    env[name] !== undefined
  );
  if (set.length === 0) return null;
  return `Refusing to start: ${set.join(" and ")} ${
    set.length === 1 ? "is" : "are"
  } set, which would override ` +
    "the permissions of every tool worker: unset it and run mewcode again";
}

function usageFailure(error: unknown): number {
  if (!(error instanceof UsageError)) throw error;
  console.error(`mewcode: ${error.message}\nRun "mewcode --help" for usage.`);
  return EXIT.usage;
}

if (import.meta.main) {
  // Exit explicitly: idle pooled workers must not keep the process alive.
  Deno.exit(await main(Deno.args));
}
