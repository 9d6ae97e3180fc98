/**
 * Runs one Bash call in this process and prints its result as JSON; the memory test starts it with a small
 * V8 heap limit, so buffering the command's whole output would crash it.
 *
 * Usage: deno run --v8-flags=--max-old-space-size=N -A bash_memory_probe.ts ROOT COMMAND
 *
 * @module
 */
import { defaultLimits } from "../../src/sandbox/limits.ts";
import { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { toolContext } from "./tool_context.ts";

const [root = "", command = ""] = Deno.args;
const sandbox = await ShellSandbox.open({
  root,
  mode: "workspace-write",
  network: false,
  env: Deno.env.toObject(),
  limits: defaultLimits(),
  excluded: [],
  protectedPaths: PROTECTED_PATHS,
});
const call = await sandbox.prepareCall();
const result = await bashTool.execute(toolContext(root, { shell: call.plan }), { command });
await call.finish();
await sandbox.close();
console.log(JSON.stringify(result));
