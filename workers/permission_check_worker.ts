/**
 * `mewcode doctor`'s probe: started with a tool profile's permissions, it tries a few operations with
 * Deno's own APIs and reports how each went, so the doctor can show that Deno enforces the profile.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />

import { assertNever } from "../src/common/errors.ts";
import type { PermissionCheck, PermissionCheckOutcome } from "../src/tools/worker_protocol.ts";

self.onmessage = async (event: MessageEvent<PermissionCheck[]>) => {
  const outcomes: PermissionCheckOutcome[] = [];
  for (const check of event.data) outcomes.push(await attempt(check));
  self.postMessage(outcomes);
};

async function attempt(check: PermissionCheck): Promise<PermissionCheckOutcome> {
  try {
    switch (check.kind) {
      case "read-file":
        await Deno.readFile(check.path);
        break;
      case "read-dir":
        for await (const _entry of Deno.readDir(check.path)) break;
        break;
      case "spawn":
        await new Deno.Command(check.program, {
          args: check.args,
          stdin: "null",
          stdout: "null",
          stderr: "null",
        })
          .output();
        break;
      default:
        return assertNever(check);
    }
    return { ok: true };
  } catch (error) {
    return error instanceof Error
      ? { ok: false, name: error.name, message: error.message }
      : { ok: false, name: "Error", message: String(error) };
  }
}
