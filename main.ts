/**
 * mewcode's entry point: parse argv, wire the parts, run the command, set the exit code.
 * This is the only place that decides the process's exit status.
 *
 * @module
 */
import denoConfig from "./deno.json" with { type: "json" };
import { type CliOptions, HELP, parseCli, UsageError } from "./src/cli/args.ts";
import { EXIT } from "./src/cli/exit_codes.ts";
import { runtimeOptionsFrom } from "./src/cli/runtime_options.ts";
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
  const root = await resolveRoot(options.cd);
  if (typeof root !== "string") return usageFailure(root.error);
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
          ...runtimeOptionsFrom(root, options, Deno.env.toObject()),
          // The user typed this call: "ask" counts as approved; deny rules and the sandbox still apply.
          approver: APPROVE_ALL,
          // ...and the user is the authority on the files they name: no "read it first" for their writes.
          requireRead: false,
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
        return await runDoctor({ root, options });
      }
      case "print": {
        const { runPrintMode } = await import("./src/cli/print_mode.ts");
        return await runPrintMode({ root, options, signal: controller.signal });
      }
      default:
        return assertNever(command);
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
}

async function resolveRoot(cd: string | null): Promise<string | { error: UsageError }> {
  const wanted = cd ?? Deno.cwd();
  try {
    const root = await Deno.realPath(wanted);
    const info = await Deno.stat(root);
    if (!info.isDirectory) {
      return { error: new UsageError(`Cannot use "${wanted}" as the workspace: not a directory`) };
    }
    return root;
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such directory" : String(error);
    return { error: new UsageError(`Cannot use "${wanted}" as the workspace: ${reason}`) };
  }
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
