/**
 * Runs one Bash call in this process and prints its result as JSON; the memory test starts it with a small
 * V8 heap limit, so buffering the command's whole output would crash it.
 *
 * Usage: deno run --v8-flags=--max-old-space-size=N -A bash_memory_probe.ts ROOT COMMAND
 *
 * @module
 */
import { planShell } from "../../src/execution/os_sandbox.ts";
import { bashTool } from "../../src/tools/bash.ts";
import { toolContext } from "./tool_context.ts";

const [root = "", command = ""] = Deno.args;
const shell = await planShell({
  root,
  mode: "workspace-write",
  network: false,
  home: Deno.env.get("HOME"),
  env: Deno.env.toObject(),
});
const result = await bashTool.execute(toolContext(root, { shell }), { command });
console.log(JSON.stringify(result));
